//! The `platform-server` binary.
//!
//! ```text
//! cargo run --release -p platform-server -- --data-dir ./data --listen 127.0.0.1:8080
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use tracing_subscriber::EnvFilter;

/// Serves the Platform API (REST + gRPC) on one port.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Address to listen on.
    #[arg(
        long,
        env = "PLATFORM_LISTEN",
        default_value = "127.0.0.1:8080",
        global = true
    )]
    listen: SocketAddr,
    /// Directory for the embedded database and server keys.
    #[arg(
        long,
        env = "PLATFORM_DATA_DIR",
        default_value = "./data",
        global = true
    )]
    data_dir: PathBuf,
    /// Directory of the signing keys for API tokens and page tokens (default:
    /// the data dir). Replicas of one service share it, so each accepts the
    /// others' tokens.
    #[arg(long, env = "PLATFORM_KEYS_DIR", global = true)]
    keys_dir: Option<PathBuf>,
    /// Use PostgreSQL at this URL instead of the embedded database.
    #[arg(long, env = "PLATFORM_DATABASE_URL")]
    database_url: Option<String>,
    /// Base URL of the API (the audience of its tokens); `http://<listen>` by default.
    #[arg(long, env = "PLATFORM_BASE_URL", global = true)]
    base_url: Option<String>,
    /// Trust identity tokens from ISSUER, verified with the keys in JWKS_FILE (repeatable).
    #[arg(long, value_name = "ISSUER=JWKS_FILE", value_parser = parse_issuer)]
    trust_issuer: Vec<(String, PathBuf)>,
    /// Close a connection whose request head takes longer than this (e.g. `10s`, `500ms`).
    #[arg(
        long,
        env = "PLATFORM_HEADER_TIMEOUT",
        value_name = "DURATION",
        default_value = "10s",
        value_parser = platform_server::parse_duration
    )]
    header_timeout: Duration,
    /// Answer 408 / DEADLINE_EXCEEDED when a request body takes longer than this
    /// (for gRPC streams: the longest pause between frames).
    #[arg(
        long,
        env = "PLATFORM_BODY_TIMEOUT",
        value_name = "DURATION",
        default_value = "30s",
        value_parser = platform_server::parse_duration
    )]
    body_timeout: Duration,
    /// Close a connection after this long without a request in progress.
    #[arg(
        long,
        env = "PLATFORM_IDLE_TIMEOUT",
        value_name = "DURATION",
        default_value = "60s",
        value_parser = platform_server::parse_duration
    )]
    idle_timeout: Duration,
    /// On SIGINT/SIGTERM, give in-flight requests this long to finish.
    #[arg(
        long,
        env = "PLATFORM_DRAIN_TIMEOUT",
        value_name = "DURATION",
        default_value = "30s",
        value_parser = platform_server::parse_duration
    )]
    drain_timeout: Duration,
    /// Largest encoded size of the items of one list page, in bytes; a page
    /// ends early (with a `nextPageToken`) rather than exceed it.
    #[arg(long, env = "PLATFORM_LIST_BUDGET", value_name = "BYTES", default_value_t = runtime::standard::LIST_BUDGET_BYTES)]
    list_budget: usize,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print a one-hour API token for an identity, signed with the server's key (local use).
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
        return match platform_server::mint_token(
            args.keys_dir.as_deref().unwrap_or(&args.data_dir),
            &base_url,
            identity,
        ) {
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
        keys_dir: args.keys_dir,
        database_url: args.database_url,
        base_url: args.base_url,
        trusted_issuers: args.trust_issuer,
        timeouts: runtime::serve::Timeouts {
            header: args.header_timeout,
            body: args.body_timeout,
            idle: args.idle_timeout,
            drain: args.drain_timeout,
        },
        list_budget: Some(args.list_budget),
    };
    let result = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => {
            platform_server::serve(config, listener, platform_server::shutdown_signal()).await
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_flags_are_the_runtime_default_timeouts() {
        let args = Args::parse_from(["platform-server"]);
        let defaults = runtime::serve::Timeouts::default();
        assert_eq!(
            (
                args.header_timeout,
                args.body_timeout,
                args.idle_timeout,
                args.drain_timeout
            ),
            (
                defaults.header,
                defaults.body,
                defaults.idle,
                defaults.drain
            )
        );
    }

    #[test]
    fn durations_take_a_unit() {
        assert_eq!(
            platform_server::parse_duration("10s"),
            Ok(Duration::from_secs(10))
        );
        assert_eq!(
            platform_server::parse_duration("1500ms"),
            Ok(Duration::from_millis(1500))
        );
        assert_eq!(
            platform_server::parse_duration("2m"),
            Ok(Duration::from_secs(120))
        );
        assert_eq!(
            platform_server::parse_duration("7"),
            Ok(Duration::from_secs(7))
        );
        assert!(platform_server::parse_duration("1h").is_err());
        assert!(platform_server::parse_duration("s").is_err());
    }
}
