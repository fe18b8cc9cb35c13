//! The `platform-server` binary.
//!
//! ```text
//! cargo run --release -p platform-server -- --data-dir ./data --listen 127.0.0.1:8080
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
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
    /// Trust identity tokens from ISSUER, verified with the keys in JWKS_FILE (repeatable).
    #[arg(long, value_name = "ISSUER=JWKS_FILE", value_parser = parse_issuer)]
    trust_issuer: Vec<(String, PathBuf)>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print a one-hour API token for an identity, signed with the data dir's key (local use).
    MintToken {
        /// The identity's UIDP.
        #[arg(long)]
        identity: String,
    },
}

fn parse_issuer(value: &str) -> Result<(String, PathBuf), String> {
    value
        .rsplit_once('=')
        .filter(|(issuer, file)| !issuer.is_empty() && !file.is_empty())
        .map(|(issuer, file)| (issuer.to_owned(), PathBuf::from(file)))
        .ok_or_else(|| "expected ISSUER=JWKS_FILE".to_owned())
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    let args = Args::parse();
    let base_url = args
        .base_url
        .clone()
        .unwrap_or_else(|| format!("http://{}", args.listen));
    if let Some(Command::MintToken { identity }) = &args.command {
        return match platform_server::mint_token(&args.data_dir, &base_url, identity) {
            Ok(token) => {
                println!("{token}");
                std::process::ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error: {error}");
                std::process::ExitCode::FAILURE
            }
        };
    }
    let config = platform_server::Config {
        data_dir: args.data_dir,
        database_url: args.database_url,
        base_url: args.base_url,
        trusted_issuers: args.trust_issuer,
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
