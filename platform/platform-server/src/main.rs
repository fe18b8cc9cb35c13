//! The `platform-server` binary: the server crate's flags (`protoapi_runtime::flags`,
//! each also read from `PLATFORM_<FLAG>`), and the Platform API's own.
//!
//! ```text
//! cargo run --release -p platform-server -- --data-dir ./data --listen 127.0.0.1:8080
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use protoapi_runtime::flags::{ConsoleFlags, Env, RateLimitFlags, ServeFlags, Telemetry};
use protoapi_runtime::observe::Build;
use protoapi_runtime::registry::Limits;
use protoapi_runtime::sql::StorageFlags;

/// What the server's metrics say of it (`platform_build_info`, the series' prefix).
const BUILD: Build = Build {
    name: "platform",
    version: env!("CARGO_PKG_VERSION"),
};

/// jemalloc: against the system allocator it served a List page 1.55× as fast,
/// GET 1.07× and the 404 route 1.11×, for 2.7 MiB more resident memory
/// (BENCHMARKS.md, "Fast by default, second step").
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Serves the Platform API (REST + gRPC) on one port.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Directory for the embedded database and server keys.
    #[arg(long, default_value = "./data", global = true)]
    data_dir: PathBuf,
    /// Directory of the signing keys for API tokens and page tokens (default:
    /// the data dir). Replicas of one service share it, so each accepts the
    /// others' tokens.
    #[arg(long, global = true)]
    keys_dir: Option<PathBuf>,
    /// Keep the registry's blobs and uploads in S3-compatible object storage
    /// (`s3://<bucket>[/<prefix>]`; credentials, region and endpoint from the
    /// `AWS_*` variables) instead of under the data dir: replicas on one
    /// database then act as one registry.
    #[arg(long, value_name = "URL", global = true)]
    registry_blobs: Option<String>,
    /// The largest blob a registry upload may grow to, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_blob_bytes,
          value_parser = clap::value_parser!(u64).range(1..), global = true)]
    registry_max_blob_bytes: u64,
    /// How long a registry upload may stay unfinished before garbage
    /// collection forgets it.
    #[arg(long, value_name = "DURATION", default_value = "24h",
          value_parser = protoapi_runtime::time::parse_duration, global = true)]
    registry_upload_timeout: std::time::Duration,
    /// Trust identity tokens from ISSUER, verified with the keys in JWKS_FILE (repeatable).
    #[arg(long, value_name = "ISSUER=JWKS_FILE", value_parser = parse_issuer)]
    trust_issuer: Vec<(String, PathBuf)>,
    #[command(flatten)]
    serve: ServeFlags,
    #[command(flatten)]
    storage: StorageFlags,
    #[command(flatten)]
    telemetry: Telemetry,
    #[command(flatten)]
    rate: RateLimitFlags,
    #[command(flatten)]
    console: ConsoleFlags,
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
    /// Remove the registry's garbage once: blobs no manifest refers to and
    /// uploads left unfinished for a day (safe beside a running server).
    CollectGarbage {
        /// Keep what is younger than this (pushes in progress upload blobs
        /// before their manifest).
        #[arg(long, default_value = "1h", value_parser = protoapi_runtime::time::parse_duration)]
        grace: std::time::Duration,
    },
}

/// Where the flags' environment variables begin.
const ENV: &str = "PLATFORM";

fn parse_issuer(value: &str) -> Result<(String, PathBuf), String> {
    value
        .rsplit_once('=')
        .filter(|(issuer, file)| !issuer.is_empty() && !file.is_empty())
        .map(|(issuer, file)| (issuer.to_owned(), PathBuf::from(file)))
        .ok_or_else(|| "expected ISSUER=JWKS_FILE".to_owned())
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Args = Env::prefix(ENV).parse();
    // Logs go to stderr, coloured only for a terminal (not into a file).
    let telemetry = args.telemetry.clone();
    let work = async move {
        match &args.command {
            Some(Command::MintToken { identity }) => mint_token(&args, identity).await,
            Some(Command::CollectGarbage { grace }) => collect_garbage(&args, *grace).await,
            None => serve(args).await,
        }
    };
    telemetry.run("platform-server", work).await
}

/// Prints a token for a stored identity, from the server's key and
/// storage (the same `--data-dir`, `--keys-dir` and `--database-url`).
async fn mint_token(args: &Args, identity: &str) -> Result<(), String> {
    let keys_dir = args.keys_dir.as_deref().unwrap_or(&args.data_dir);
    let token = platform_server::mint_token(keys_dir, &args.serve.base_url(), identity)
        .map_err(|e| e.to_string())?;
    let store = match &args.storage.database_url {
        Some(url) => platform_server::store::open_postgres(url).await,
        None => platform_server::store::open_sqlite(&args.data_dir).await,
    }
    .map_err(|e| format!("cannot open the server's storage: {e}"))?;
    let found = platform_server::identity_exists(&store, identity).await;
    store.close().await;
    if !found.map_err(|e| e.to_string())? {
        return Err(format!(
            "no identity `{identity}`: create it first (`POST /iam/v2/identities/<group>`)"
        ));
    }
    println!("{token}");
    Ok(())
}

/// Collects the registry's garbage in the server's storage (the same
/// `--data-dir` and `--database-url`) and prints what went.
async fn collect_garbage(args: &Args, grace: std::time::Duration) -> Result<(), String> {
    let store = match &args.storage.database_url {
        Some(url) => platform_server::store::open_postgres(url).await,
        None => platform_server::store::open_sqlite(&args.data_dir).await,
    }
    .map_err(|e| format!("cannot open the server's storage: {e}"))?;
    let storage =
        platform_server::registry::storage(&store, &args.data_dir, registry_blobs(args).as_ref())?
            .limits(registry_limits(args));
    let collected = storage.collect_garbage(grace).await;
    store.close().await;
    let collected = collected.map_err(|e| e.to_string())?;
    println!(
        "removed {} unfinished uploads, {} blobs from repositories, {} blobs from storage",
        collected.uploads, collected.links, collected.blobs
    );
    Ok(())
}

/// What one client may make the registry hold.
fn registry_limits(args: &Args) -> Limits {
    Limits {
        max_blob_bytes: args.registry_max_blob_bytes,
        upload_timeout: args.registry_upload_timeout,
    }
}

/// The object storage `--registry-blobs` names.
fn registry_blobs(args: &Args) -> Option<platform_server::registry::ObjectStorage> {
    let url = args.registry_blobs.clone()?;
    Some(platform_server::registry::ObjectStorage {
        url,
        options: Vec::new(),
    })
}

async fn serve(args: Args) -> Result<(), String> {
    let registry_blobs = registry_blobs(&args);
    let registry_limits = registry_limits(&args);
    let config = platform_server::Config {
        console: args.console.settings()?,
        cors: args.serve.cors.cors().map_err(|e| e.to_string())?,
        metrics: args.telemetry.metrics(BUILD).await?,
        serve_metrics: args.telemetry.metrics_on_api_port(),
        rate_limit: args.rate.rate_limit(),
        data_dir: args.data_dir,
        keys_dir: args.keys_dir,
        database_url: args.storage.database_url.clone(),
        db_acquire_timeout: Some(args.storage.db_acquire_timeout),
        base_url: args.serve.base_url.clone(),
        trusted_issuers: args.trust_issuer,
        timeouts: args.serve.timeouts(),
        limits: args.serve.limits(),
        list_budget: Some(args.serve.list_budget),
        operation_lease: Some(args.serve.operation_lease),
        tls: args.serve.tls.files(),
        audit: args.telemetry.audit_log()?,
        registry_blobs,
        registry_limits,
    };
    let listener = args.serve.bind().await?;
    platform_server::serve(config, listener, protoapi_runtime::serve::shutdown_signal())
        .await
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_reads_the_variable_it_always_read() {
        let command = Env::prefix(ENV).command::<Args>();
        let env = |id: &str| {
            let arg = command.get_arguments().find(|a| a.get_id() == id);
            let arg = arg.unwrap_or_else(|| panic!("no flag {id}"));
            arg.get_env().unwrap().to_str().unwrap().to_owned()
        };
        for (id, variable) in [
            ("listen", "PLATFORM_LISTEN"),
            ("data_dir", "PLATFORM_DATA_DIR"),
            ("keys_dir", "PLATFORM_KEYS_DIR"),
            ("registry_blobs", "PLATFORM_REGISTRY_BLOBS"),
            (
                "registry_max_blob_bytes",
                "PLATFORM_REGISTRY_MAX_BLOB_BYTES",
            ),
            (
                "registry_upload_timeout",
                "PLATFORM_REGISTRY_UPLOAD_TIMEOUT",
            ),
            ("database_url", "PLATFORM_DATABASE_URL"),
            ("base_url", "PLATFORM_BASE_URL"),
            ("header_timeout", "PLATFORM_HEADER_TIMEOUT"),
            ("drain_timeout", "PLATFORM_DRAIN_TIMEOUT"),
            ("max_connections", "PLATFORM_MAX_CONNECTIONS"),
            ("max_streams", "PLATFORM_MAX_STREAMS"),
            ("list_budget", "PLATFORM_LIST_BUDGET"),
            ("operation_lease", "PLATFORM_OPERATION_LEASE"),
            ("log_format", "PLATFORM_LOG_FORMAT"),
            ("metrics", "PLATFORM_METRICS"),
            ("metrics_listen", "PLATFORM_METRICS_LISTEN"),
            ("otlp_endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT"),
            ("rate_limit", "PLATFORM_RATE_LIMIT"),
            ("rate_burst", "PLATFORM_RATE_BURST"),
            ("db_acquire_timeout", "PLATFORM_DB_ACQUIRE_TIMEOUT"),
            ("cors_origins", "PLATFORM_CORS_ORIGINS"),
            ("no_console", "PLATFORM_NO_CONSOLE"),
            ("console_oidc_authorize", "PLATFORM_CONSOLE_OIDC_AUTHORIZE"),
            (
                "console_oidc_client_secret_file",
                "PLATFORM_CONSOLE_OIDC_CLIENT_SECRET_FILE",
            ),
            ("tls_cert", "PLATFORM_TLS_CERT"),
            ("tls_key", "PLATFORM_TLS_KEY"),
        ] {
            assert_eq!(env(id), variable);
        }
    }

    #[test]
    fn issuers_name_their_keys() {
        let args: Args = Env::prefix("UNSET_PLATFORM")
            .try_parse_from(["platform-server", "--trust-issuer", "https://i=jwks.json"])
            .unwrap();
        assert_eq!(
            args.trust_issuer,
            [("https://i".to_owned(), PathBuf::from("jwks.json"))]
        );
        for wrong in ["https://i", "=jwks.json", "https://i="] {
            let parsed = Env::prefix("UNSET_PLATFORM").try_parse_from::<Args>([
                "p",
                "--trust-issuer",
                wrong,
            ]);
            assert!(parsed.is_err(), "{wrong}");
        }
    }

    #[test]
    fn mint_token_takes_the_global_flags_after_it() {
        let args: Args = Env::prefix("UNSET_PLATFORM")
            .try_parse_from([
                "platform-server",
                "mint-token",
                "--identity",
                "a",
                "--data-dir",
                "/d",
                "--listen",
                "127.0.0.1:1",
            ])
            .unwrap();
        assert_eq!(args.data_dir, PathBuf::from("/d"));
        assert_eq!(args.serve.base_url(), "http://127.0.0.1:1");
    }
}
