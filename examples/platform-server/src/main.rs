//! The `platform-server` binary.
//!
//! ```text
//! cargo run --release -p platform-server -- --data-dir ./data --listen 127.0.0.1:8080
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::TypedValueParser as _;
use clap::{Parser, Subcommand};

mod console_flags;
mod cors_flags;
mod storage_flags;
mod telemetry;
mod tls_flags;

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
    /// Base URL of the API (the audience of its tokens); `http://<listen>` by
    /// default, `https://<listen>` with TLS.
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
        value_parser = runtime::serve::parse_duration
    )]
    header_timeout: Duration,
    /// Answer 408 / DEADLINE_EXCEEDED when a whole request body takes longer than
    /// this to arrive (REST and gRPC alike, client streams included).
    #[arg(
        long,
        env = "PLATFORM_BODY_TIMEOUT",
        value_name = "DURATION",
        default_value = "30s",
        value_parser = runtime::serve::parse_duration
    )]
    body_timeout: Duration,
    /// Close a connection whose client does not read its response for this long.
    #[arg(
        long,
        env = "PLATFORM_WRITE_TIMEOUT",
        value_name = "DURATION",
        default_value = "30s",
        value_parser = runtime::serve::parse_duration
    )]
    write_timeout: Duration,
    /// End a request still in progress after this long, long-lived gRPC streams
    /// (health Watch, reflection) included: DEADLINE_EXCEEDED.
    #[arg(
        long,
        env = "PLATFORM_STREAM_TIMEOUT",
        value_name = "DURATION",
        default_value = "10m",
        value_parser = runtime::serve::parse_duration
    )]
    stream_timeout: Duration,
    /// Close a connection after this long without a request in progress.
    #[arg(
        long,
        env = "PLATFORM_IDLE_TIMEOUT",
        value_name = "DURATION",
        default_value = "60s",
        value_parser = runtime::serve::parse_duration
    )]
    idle_timeout: Duration,
    /// On SIGINT/SIGTERM, give in-flight requests this long to finish.
    #[arg(
        long,
        env = "PLATFORM_DRAIN_TIMEOUT",
        value_name = "DURATION",
        default_value = "30s",
        value_parser = runtime::serve::parse_duration
    )]
    drain_timeout: Duration,
    /// Most connections open at once; further clients wait until one closes
    /// (idle connections are closed first).
    #[arg(
        long,
        env = "PLATFORM_MAX_CONNECTIONS",
        value_name = "COUNT",
        default_value_t = runtime::serve::Limits::default().max_connections,
        value_parser = clap::value_parser!(u32).range(1..).map(|n| n as usize)
    )]
    max_connections: usize,
    /// Most requests in progress at once on one HTTP/2 connection.
    #[arg(
        long,
        env = "PLATFORM_MAX_STREAMS",
        value_name = "COUNT",
        default_value_t = runtime::serve::Limits::default().max_concurrent_streams,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    max_streams: u32,
    /// Largest encoded size of the items of one list page, in bytes; a page
    /// ends early (with a `nextPageToken`) rather than exceed it.
    #[arg(long, env = "PLATFORM_LIST_BUDGET", value_name = "BYTES", default_value_t = runtime::standard::LIST_BUDGET_BYTES)]
    list_budget: usize,
    #[command(flatten)]
    telemetry: telemetry::Telemetry,
    #[command(flatten)]
    storage: storage_flags::StorageFlags,
    #[command(flatten)]
    cors: cors_flags::CorsFlags,
    #[command(flatten)]
    console: console_flags::ConsoleFlags,
    #[command(flatten)]
    tls: tls_flags::TlsFlags,
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
    let args = Args::parse();
    // Logs go to stderr, coloured only for a terminal (not into a file).
    let traces = match args.telemetry.init_logs() {
        Ok(provider) => provider,
        Err(error) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let base_url = args
        .base_url
        .clone()
        .unwrap_or_else(|| format!("{}://{}", args.tls.scheme(), args.listen));
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
    let metrics = match args.telemetry.metrics().await {
        Ok(metrics) => metrics,
        Err(error) => {
            tracing::error!("{error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let cors = match args.cors.cors() {
        Ok(cors) => cors,
        Err(error) => {
            tracing::error!("{error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let console = match args.console.config() {
        Ok(console) => console,
        Err(error) => {
            tracing::error!("{error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let config = platform_server::Config {
        console,
        data_dir: args.data_dir,
        keys_dir: args.keys_dir,
        database_url: args.database_url,
        base_url: args.base_url,
        trusted_issuers: args.trust_issuer,
        timeouts: runtime::serve::Timeouts {
            header: args.header_timeout,
            body: args.body_timeout,
            write: args.write_timeout,
            stream: args.stream_timeout,
            idle: args.idle_timeout,
            drain: args.drain_timeout,
        },
        limits: runtime::serve::Limits {
            max_connections: args.max_connections,
            max_concurrent_streams: args.max_streams,
        },
        list_budget: Some(args.list_budget),
        metrics,
        serve_metrics: args.telemetry.metrics_on_api_port(),
        rate_limit: args.telemetry.rate_limit(),
        db_acquire_timeout: Some(args.storage.db_acquire_timeout),
        cors,
        tls: args.tls.files(),
    };
    let result = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => {
            platform_server::serve(config, listener, runtime::serve::shutdown_signal()).await
        }
        Err(error) => Err(format!("cannot listen on {}: {error}", args.listen).into()),
    };
    if let Err(error) = traces.shutdown() {
        tracing::warn!(%error, "traces not all exported");
    }
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
                args.write_timeout,
                args.stream_timeout,
                args.idle_timeout,
                args.drain_timeout
            ),
            (
                defaults.header,
                defaults.body,
                defaults.write,
                defaults.stream,
                defaults.idle,
                defaults.drain
            )
        );
        let defaults = runtime::serve::Limits::default();
        assert_eq!(
            (args.max_connections, args.max_streams),
            (defaults.max_connections, defaults.max_concurrent_streams)
        );
    }

    #[test]
    fn observability_is_quiet_and_unlimited_by_default() {
        let args = Args::parse_from(["platform-server"]);
        let telemetry = &args.telemetry;
        assert_eq!(
            telemetry.log_format,
            runtime::observe::trace::LogFormat::Text
        );
        assert!(!telemetry.metrics_on_api_port() && telemetry.rate_limit().is_none());
        let args = Args::parse_from([
            "platform-server",
            "--log-format",
            "json",
            "--rate-limit",
            "20",
            "--rate-burst",
            "50",
        ]);
        let limit = args.telemetry.rate_limit().unwrap();
        assert_eq!(
            (limit.interval, limit.burst.get()),
            (Duration::from_millis(50), 50)
        );
        for wrong in [
            &["platform-server", "--rate-burst", "5"][..],
            &["platform-server", "--rate-limit", "0"],
            &["platform-server", "--log-format", "xml"],
        ] {
            assert!(Args::try_parse_from(wrong).is_err(), "{wrong:?}");
        }
    }

    #[test]
    fn the_default_acquire_timeout_is_the_runtime_default() {
        let args = Args::parse_from(["platform-server"]);
        assert_eq!(
            args.storage.db_acquire_timeout,
            runtime::sql::DEFAULT_ACQUIRE_TIMEOUT
        );
        let args = Args::parse_from(["platform-server", "--db-acquire-timeout", "250ms"]);
        assert_eq!(args.storage.db_acquire_timeout, Duration::from_millis(250));
    }

    #[test]
    fn limits_are_at_least_one() {
        let args = Args::parse_from([
            "platform-server",
            "--max-connections",
            "3",
            "--max-streams",
            "7",
        ]);
        assert_eq!((args.max_connections, args.max_streams), (3, 7));
        for flag in ["--max-connections", "--max-streams"] {
            assert!(Args::try_parse_from(["platform-server", flag, "0"]).is_err());
        }
    }
}
