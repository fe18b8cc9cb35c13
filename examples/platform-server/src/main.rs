//! The Platform API server: REST and gRPC on one port, over embedded SQLite
//! (default) or PostgreSQL.
//!
//! ```text
//! cargo run --release -p platform-server -- --data-dir ./data --listen 127.0.0.1:8080
//! ```
//!
//! Everything between the wire and storage is generated (`generated`) or
//! runtime support (`runtime`); this crate only wires the generated routers
//! and tonic services to a storage implementation.

mod app;
mod keys;
mod store;

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use crate::store::SqlStore;

/// Serves the Platform API (REST + gRPC) on one port.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Address to listen on.
    #[arg(long, env = "PLATFORM_LISTEN", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Directory for the embedded database and server keys.
    #[arg(long, env = "PLATFORM_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
    /// Use PostgreSQL at this URL instead of the embedded database.
    #[arg(long, env = "PLATFORM_DATABASE_URL")]
    database_url: Option<String>,
    /// Base URL of the API (the audience of its tokens); `http://<listen>` by default.
    #[arg(long, env = "PLATFORM_BASE_URL")]
    base_url: Option<String>,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    match run(Args::parse()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(&args.data_dir)
        .map_err(|e| format!("cannot create data dir {}: {e}", args.data_dir.display()))?;
    let store = match &args.database_url {
        Some(url) => SqlStore::open_postgres(url).await?,
        None => SqlStore::open_sqlite(&args.data_dir).await?,
    };
    let page_tokens = keys::page_tokens(&args.data_dir)?;
    let router = app::router(store.clone(), page_tokens).await;

    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    let address = listener.local_addr()?;
    let base_url = args.base_url.unwrap_or_else(|| format!("http://{address}"));
    tracing::info!(%address, %base_url, "listening (REST and gRPC)");
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    // In-flight requests have finished; close the database cleanly.
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown_signal() {
    let interrupt = async {
        tokio::signal::ctrl_c().await.ok();
    };
    #[cfg(unix)]
    let terminate = async {
        if let Ok(mut signal) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            signal.recv().await;
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}
