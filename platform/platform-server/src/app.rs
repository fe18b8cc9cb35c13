//! The one router serving REST and gRPC: every generated service over the
//! store and the token service, and the registry under `/v2/` (which reads
//! its own credentials), behind the access log (with metrics and trace
//! context), the authentication middleware and the rate limit.
//! `platform_api::Services` adds gRPC reflection and health, `/openapi.json`,
//! the error model's fallbacks, and `/healthz` and `/readyz` (ready when
//! the database answers) outside authentication. A [`Mount`] adds routes beside the
//! generated ones (the benchmark's hand-written baseline; the production
//! binary mounts none).

use std::sync::Arc;

use axum::Router;
use platform_api::platform::iam::v2::{Role, RoleBinding};
use protoapi_runtime::auth::{
    ApiTokens, Authentication, Authorizer, TokenExchange, TrustedIssuers,
};
use protoapi_runtime::observe::{Metrics, Observe};
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::probe::Probes;
use protoapi_runtime::ratelimit::{RateLimit, RateLimiter};
use protoapi_runtime::registry::{Registry, Storage};
use protoapi_runtime::router::MissingHandlers;
use protoapi_runtime::sql::StoredAccess;
use protoapi_runtime::standard::ApiContext;

use crate::registry::{Images, Repos};
use crate::store::SqlStore;

/// What the router is built from.
pub struct Parts {
    pub store: SqlStore,
    pub page_tokens: PageTokens,
    pub api_tokens: ApiTokens,
    /// The platform administrator's identity.
    pub admin: String,
    /// The first root organization: its built-in roles and identities may be
    /// bound in every organization.
    pub root: String,
    /// Byte budget of one list page, when not the default.
    pub list_budget: Option<usize>,
    pub operation_lease: Option<std::time::Duration>,
    pub audit: Option<protoapi_runtime::audit::AuditLog>,
    pub issuers: TrustedIssuers,
    /// The registry requests are counted into, when they are.
    pub metrics: Option<Metrics>,
    /// Serve `metrics` at `/metrics` beside the API.
    pub serve_metrics: bool,
    pub rate_limit: Option<RateLimit>,
    /// Origins whose browsers may call the API.
    pub cors: protoapi_runtime::web::Cors,
    /// The web console served at `/console/`, if any.
    pub console: Option<protoapi_runtime::console::Console>,
    /// What the registry keeps.
    pub registry: Storage,
}

/// What routes mounted beside the generated ones are built from: the store
/// and the context (page tokens, authorizer and its grants cache) that the
/// generated services use.
pub struct Shared {
    pub store: Arc<SqlStore>,
    pub context: ApiContext,
}

/// Builds routes served beside the generated ones, behind the same
/// layers (`platform_api::Services::routes`).
pub type Mount = Box<dyn FnOnce(Shared) -> Router + Send>;

/// The routes of the whole server, and its registry (for its upkeep,
/// `registry::upkeep`).
pub fn router(
    parts: Parts,
    mount: Option<Mount>,
) -> Result<(Router, Arc<Registry>), MissingHandlers> {
    let store = Arc::new(parts.store);
    let access: Arc<dyn protoapi_runtime::auth::Access> =
        Arc::new(StoredAccess::<RoleBinding, Role>::new((*store).clone()));
    let mut context =
        ApiContext::new(parts.page_tokens, Authorizer::new(access)).with_shared_scope(parts.root);
    if let Some(bytes) = parts.list_budget {
        context = context.with_list_budget(bytes);
    }
    if let Some(lease) = parts.operation_lease {
        context = context.with_operation_lease(lease);
    }
    if let Some(log) = parts.audit {
        context = context.with_audit(log);
    }
    let exchange = TokenExchange::new(parts.api_tokens.clone(), parts.issuers);
    let authentication =
        Authentication::for_api(&platform_api::API, parts.api_tokens.clone(), parts.admin)
            .except("/v2/");
    let registry = Registry::new(
        authentication.clone(),
        parts.api_tokens,
        Arc::new(Repos::new(Arc::clone(&store), context.clone())),
        parts.registry,
    )
    .with_catalog(Arc::new(Images::new(Arc::clone(&store))));
    let registry = Arc::new(registry);
    let shared = Shared {
        store: Arc::clone(&store),
        context: context.clone(),
    };
    let mut services = platform_api::Services::new(context)
        .routes(registry.router())
        .probes(Probes::new((*store).clone()))
        .cors(parts.cors)
        .store(Arc::clone(&store))
        .token_exchange(store, exchange);
    if let Some(console) = parts.console {
        services = services.console(console);
    }
    // The router's edge runs these in its own order: the access log,
    // authentication, the rate limit, then the handler.
    if let Some(limit) = parts.rate_limit {
        services = services.layer(RateLimiter::new(limit).layer());
    }
    services = services.layer(authentication.layer()).layer(
        Observe::new(&platform_api::API)
            .metrics(parts.metrics.is_some())
            .layer(),
    );
    if let Some(metrics) = parts.metrics.filter(|_| parts.serve_metrics) {
        services = services.routes(metrics.router());
    }
    if let Some(mount) = mount {
        services = services.routes(mount(shared));
    }
    Ok((services.build()?, registry))
}
