//! The `platform-server` binary.
//!
//! ```text
//! cargo run --release -p platform-server -- --data-dir ./data --listen 127.0.0.1:8080
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use tracing_subscriber::EnvFilter;

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
    let args = Args::parse();
    let config = platform_server::Config {
        data_dir: args.data_dir,
        database_url: args.database_url,
        base_url: args.base_url,
    };
    let result = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => platform_server::serve(config, listener, shutdown_signal()).await,
        Err(error) => Err(format!("cannot listen on {}: {error}", args.listen).into()),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        tokio::signal::ctrl_c().await.ok();
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut signal) = signal(SignalKind::terminate()) {
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
