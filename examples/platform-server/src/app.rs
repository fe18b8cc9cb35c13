//! The one router serving REST and gRPC: every generated service over the
//! store, the token service, gRPC reflection and health, behind the
//! authentication middleware.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use generated::platform::advisory::v2::{DocumentServiceApi, document_service_routes};
use generated::platform::iam::v2::{
    GroupServiceApi, IdentityServiceApi, RoleBindingServiceApi, RoleServiceApi,
    group_service_routes, identity_service_routes, role_binding_service_routes,
    role_service_routes,
};
use generated::platform::libraries::v2::{ArtifactServiceApi, artifact_service_routes};
use generated::platform::registry::v2::{RepoServiceApi, repo_service_routes};
use generated::platform::sts::v1::{TokenServiceApi, token_service_routes};
use generated::platform::vulnerabilities::v2::{AdvisoryServiceApi, advisory_service_routes};
// v1, kept beside v2 over the same storage (CONTRACT §8).
use generated::platform::advisory::v1 as advisory_v1;
use generated::platform::iam::v1 as iam_v1;
use generated::platform::libraries::v1 as libraries_v1;
use generated::platform::registry::v1 as registry_v1;
use generated::platform::vulnerabilities::v1 as vulnerabilities_v1;
use runtime::auth::{ApiTokens, Authorizer};
use runtime::paging::PageTokens;
use runtime::standard::ApiContext;
use tonic::server::NamedService;
use tonic::service::Routes;
use tonic_health::ServingStatus;

use crate::auth::{Authentication, TokenExchange, TrustedIssuer};
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
    pub issuers: HashMap<String, TrustedIssuer>,
}

/// Adds each generated service to the gRPC routes and its REST routes to the
/// REST router, and reports it serving.
macro_rules! serve_apis {
    ($handler:expr, $context:expr, $grpc:ident, $rest:ident, $health:ident; $($($api:ident)::+ => $($routes:ident)::+),* $(,)?) => {$(
        let api = $($api)::+::new(Arc::clone(&$handler), $context.clone());
        let grpc = api.clone().into_grpc();
        $health.set_service_status(service_name(&grpc), ServingStatus::Serving).await;
        $grpc = $grpc.add_service(grpc);
        $rest = $rest.merge($($routes)::+(api));
    )*};
}

fn service_name<S: NamedService>(_: &S) -> &'static str {
    S::NAME
}

/// Every capability a method of the API requires (the built-in roles grant them).
pub fn capabilities() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = [
        GroupServiceApi::<SqlStore>::CAPABILITIES,
        RoleServiceApi::<SqlStore>::CAPABILITIES,
        IdentityServiceApi::<SqlStore>::CAPABILITIES,
        RoleBindingServiceApi::<SqlStore>::CAPABILITIES,
        RepoServiceApi::<SqlStore>::CAPABILITIES,
        AdvisoryServiceApi::<SqlStore>::CAPABILITIES,
        ArtifactServiceApi::<SqlStore>::CAPABILITIES,
        DocumentServiceApi::<SqlStore>::CAPABILITIES,
        vulnerabilities_v1::AdvisoryServiceApi::<SqlStore>::CAPABILITIES,
    ]
    .concat();
    all.sort_unstable();
    all.dedup();
    all
}

/// The OpenAPI document of the REST routes (readable without a token).
async fn openapi() -> impl axum::response::IntoResponse {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        generated::OPENAPI_JSON,
    )
}

pub async fn router(parts: Parts) -> Router {
    runtime::error::set_default_domain(generated::ERROR_DOMAIN);
    let store = Arc::new(parts.store);
    let access: Arc<dyn runtime::auth::Access> = store.clone();
    let mut context =
        ApiContext::new(parts.page_tokens, Authorizer::new(access)).with_shared_scope(parts.root);
    if let Some(bytes) = parts.list_budget {
        context = context.with_list_budget(bytes);
    }
    let (health, health_service) = tonic_health::server::health_reporter();
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(generated::FILE_DESCRIPTOR_SET)
        .build_v1()
        .expect("the embedded descriptor set is valid");
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(generated::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .expect("the embedded descriptor set is valid");

    let mut grpc = Routes::new(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha);
    let mut rest = Router::new();
    serve_apis! {
        store, context, grpc, rest, health;
        GroupServiceApi => group_service_routes,
        RoleServiceApi => role_service_routes,
        IdentityServiceApi => identity_service_routes,
        RoleBindingServiceApi => role_binding_service_routes,
        RepoServiceApi => repo_service_routes,
        AdvisoryServiceApi => advisory_service_routes,
        ArtifactServiceApi => artifact_service_routes,
        DocumentServiceApi => document_service_routes,
        iam_v1::GroupServiceApi => iam_v1::group_service_routes,
        iam_v1::RoleServiceApi => iam_v1::role_service_routes,
        iam_v1::IdentityServiceApi => iam_v1::identity_service_routes,
        iam_v1::RoleBindingServiceApi => iam_v1::role_binding_service_routes,
        registry_v1::RepoServiceApi => registry_v1::repo_service_routes,
        vulnerabilities_v1::AdvisoryServiceApi => vulnerabilities_v1::advisory_service_routes,
        libraries_v1::ArtifactServiceApi => libraries_v1::artifact_service_routes,
        advisory_v1::DocumentServiceApi => advisory_v1::document_service_routes,
    }
    let exchange = Arc::new(TokenExchange {
        store: Arc::clone(&store),
        tokens: parts.api_tokens.clone(),
        issuers: parts.issuers,
    });
    serve_apis! {
        exchange, context, grpc, rest, health;
        TokenServiceApi => token_service_routes,
    }

    let authentication = Arc::new(Authentication {
        tokens: parts.api_tokens,
        admin: parts.admin,
    });
    grpc.into_axum_router()
        .merge(rest)
        .route("/openapi.json", axum::routing::get(openapi))
        .fallback(runtime::rest::fallback)
        .method_not_allowed_fallback(runtime::rest::method_not_allowed)
        .layer(axum::middleware::from_fn(runtime::grpc::request_errors))
        .layer(axum::middleware::from_fn(runtime::rest::catch_panic))
        .layer(axum::middleware::from_fn_with_state(
            authentication,
            crate::auth::authenticate,
        ))
}
