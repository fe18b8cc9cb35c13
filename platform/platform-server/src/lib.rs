//! The Platform API server: REST and gRPC on one port, over embedded SQLite
//! (default) or PostgreSQL.
//!
//! Everything between the wire and storage is generated (`generated`) or
//! runtime support (`protoapi-runtime`); this crate wires the generated routers and
//! tonic services to a storage implementation, and provides the server's
//! policies: authentication, the token exchange, bootstrap. The binary
//! (`src/main.rs`) parses flags; [`serve`] is what it runs, and what the
//! end-to-end tests start on a real socket.

mod app;
pub mod bootstrap;
pub mod registry;
pub mod store;

use std::future::Future;
use std::path::{Path, PathBuf};

use protoapi_runtime::{keys, owner_only};
use tokio::net::TcpListener;

/// What a server instance needs.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Directory for the embedded database, server keys and the admin token,
    /// readable by its owner only (created so, or restricted at start).
    pub data_dir: PathBuf,
    /// Directory of the signing keys (API tokens, page tokens) when not the
    /// data dir; replicas of one service share it.
    pub keys_dir: Option<PathBuf>,
    /// Use PostgreSQL at this URL instead of the embedded database.
    pub database_url: Option<String>,
    /// Base URL of the API (the audience of its tokens); `http://<listen>`
    /// when `None`, `https://<listen>` with [`Config::tls`].
    pub base_url: Option<String>,
    /// OIDC issuers whose identity tokens the token service accepts, with their JWKS files.
    pub trusted_issuers: Vec<(String, PathBuf)>,
    /// Header read, body read, write, stream, idle and drain timeouts of
    /// client connections.
    pub timeouts: protoapi_runtime::serve::Timeouts,
    /// Open connections and concurrent HTTP/2 streams per connection.
    pub limits: protoapi_runtime::serve::Limits,
    /// Byte budget of one list page (default `protoapi_runtime::standard::LIST_BUDGET_BYTES`).
    pub list_budget: Option<usize>,
    /// How long a long-running operation's runner holds it between
    /// renewals (default `protoapi_runtime::operation::OPERATION_LEASE`).
    pub operation_lease: Option<std::time::Duration>,
    /// Count requests (and sample the storage pool) into this registry,
    /// which must be the current `metrics` recorder's.
    pub metrics: Option<protoapi_runtime::observe::Metrics>,
    /// Serve `metrics` at `GET /metrics` on the API port, without
    /// authentication (the binary's `--metrics`).
    pub serve_metrics: bool,
    /// Requests per caller (`protoapi_runtime::ratelimit`); unlimited when `None`.
    pub rate_limit: Option<protoapi_runtime::ratelimit::RateLimit>,
    /// How long a request waits for a database connection before it is
    /// answered `UNAVAILABLE` (default `protoapi_runtime::sql::DEFAULT_ACQUIRE_TIMEOUT`).
    pub db_acquire_timeout: Option<std::time::Duration>,
    /// Origins whose browsers may call the API (REST and gRPC-Web); none by default.
    pub cors: protoapi_runtime::web::Cors,
    /// Serve over TLS with this certificate and key (reloaded when they
    /// change); plain HTTP when `None`.
    pub tls: Option<protoapi_runtime::tls::CertFiles>,
    /// The web console at `/console/`.
    pub console: protoapi_runtime::console::Settings,
    /// Where every write is recorded (`--audit-log`).
    pub audit: Option<protoapi_runtime::audit::AuditLog>,
    /// The registry's blobs and uploads in object storage, shared by
    /// replicas; under the data dir when `None`.
    pub registry_blobs: Option<registry::ObjectStorage>,
    /// What one client may make the registry hold (`--registry-max-blob-bytes`,
    /// `--registry-upload-timeout`).
    pub registry_limits: protoapi_runtime::registry::Limits,
}

/// The console of the API at `base_url`, if served: an identity token from
/// its OIDC issuer is exchanged by the API's declared token exchange.
fn console(
    settings: &protoapi_runtime::console::Settings,
    base_url: &str,
    tls: bool,
) -> Option<protoapi_runtime::console::Console> {
    let exchange = platform_api::API
        .token_exchange
        .and_then(|slot| slot.console(base_url));
    settings.console(&platform_api::SCHEMA, base_url, tls, exchange)
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl Config {
    /// Where the signing keys are kept: `keys_dir`, or the data dir.
    pub fn keys_dir(&self) -> &Path {
        self.keys_dir.as_deref().unwrap_or(&self.data_dir)
    }
}

pub use app::{Mount, Shared};

/// Serves the API on `listener` until `shutdown` completes, then finishes
/// in-flight requests and closes the database.
pub async fn serve(
    config: Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), BoxError> {
    serve_with(config, listener, shutdown, None).await
}

/// [`serve`], with the routes `mount` builds served beside the generated
/// ones, behind the same middleware (authentication included). For
/// benchmarks: `examples/baseline.rs` mounts hand-written handlers this way.
pub async fn serve_with(
    config: Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    mount: Option<Mount>,
) -> Result<(), BoxError> {
    // Checked first: a server that cannot serve TLS does not start.
    let tls = config
        .tls
        .as_ref()
        .map(protoapi_runtime::tls::ServerTls::load)
        .transpose()?;
    owner_only::own_dir(&config.data_dir)
        .map_err(|e| format!("cannot create data dir {}: {e}", config.data_dir.display()))?;
    let keys_dir = config.keys_dir();
    owner_only::create_dir(keys_dir)
        .map_err(|e| format!("cannot create keys dir {}: {e}", keys_dir.display()))?;
    let address = listener.local_addr()?;
    let base_url = config.base_url.clone().unwrap_or_else(|| match tls {
        Some(_) => format!("https://{address}"),
        None => format!("http://{address}"),
    });
    let store = match &config.database_url {
        Some(url) => store::open_postgres_with(url, config.db_acquire_timeout).await?,
        None => store::open_sqlite_with(&config.data_dir, config.db_acquire_timeout).await?,
    };
    if let Some(metrics) = &config.metrics {
        store::sample_pool(&store, metrics);
    }
    let issuers = protoapi_runtime::auth::TrustedIssuers::load(&config.trusted_issuers)?;
    let api_tokens = keys::api_tokens(keys_dir, &base_url)?;
    let state = bootstrap::ensure(&config.data_dir, &store, platform_api::CAPABILITIES).await?;
    bootstrap::write_admin_token(&config.data_dir, &api_tokens, &state)?;
    let registry_storage =
        registry::storage(&store, &config.data_dir, config.registry_blobs.as_ref())?
            .limits(config.registry_limits);
    let (router, registry) = app::router(
        app::Parts {
            store: store.clone(),
            page_tokens: keys::page_tokens(keys_dir)?,
            api_tokens,
            admin: state.admin,
            root: state.root,
            list_budget: config.list_budget,
            operation_lease: config.operation_lease,
            audit: config.audit.clone(),
            issuers,
            metrics: config.metrics.clone(),
            serve_metrics: config.serve_metrics,
            rate_limit: config.rate_limit,
            cors: config.cors,
            console: console(&config.console, &base_url, tls.is_some()),
            registry: registry_storage,
        },
        mount,
    )?;
    let upkeep = tokio::spawn(registry::upkeep(registry));

    let mut server = protoapi_runtime::serve::Server::new(listener, router)
        .timeouts(config.timeouts)
        .limits(config.limits)
        .error_domain(platform_api::ERROR_DOMAIN)
        .uploads_under("/v2/");
    match tls {
        Some(tls) => {
            let cert = tls.files().cert.display().to_string();
            tracing::info!(%address, %base_url, %cert, "listening (REST and gRPC over TLS)");
            server = server.tls(tls);
        }
        None => tracing::info!(%address, %base_url, "listening (REST and gRPC)"),
    }
    server.serve(shutdown).await;
    upkeep.abort();
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Whether `identity` names a stored identity (`mint-token` refuses any
/// other).
pub async fn identity_exists(
    store: &protoapi_runtime::sql::SqlStore,
    identity: &str,
) -> Result<bool, BoxError> {
    use protoapi_runtime::store::Backend as _;
    let found = store
        .get::<platform_api::platform::iam::v2::Identity>(identity)
        .await
        .map_err(|e| format!("cannot read identity `{identity}`: {e}"))?;
    Ok(found.is_some())
}

/// A one-hour API token for `identity`, signed with the key in `keys_dir`
/// (what `platform-server mint-token` prints, once the identity is found).
pub fn mint_token(keys_dir: &Path, base_url: &str, identity: &str) -> Result<String, BoxError> {
    protoapi_runtime::uidp::parse("identity", identity)?;
    if !keys::has_api_token_key(keys_dir) {
        return Err(format!(
            "{} holds no server key: start the server with this --keys-dir (or --data-dir) first",
            keys_dir.display()
        )
        .into());
    }
    Ok(keys::api_tokens(keys_dir, base_url)?.issue(identity))
}
