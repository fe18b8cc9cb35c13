//! The one router serving REST and gRPC: every generated service over the
//! store, plus gRPC reflection and health.

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
use generated::platform::vulnerabilities::v2::{AdvisoryServiceApi, advisory_service_routes};
use runtime::Caller;
use runtime::paging::PageTokens;
use tonic::server::NamedService;
use tonic::service::Routes;
use tonic_health::ServingStatus;

use crate::store::SqlStore;

/// Adds each generated service to the gRPC routes and its REST routes to the
/// REST router, and reports it serving.
macro_rules! serve_apis {
    ($store:expr, $tokens:expr, $grpc:ident, $rest:ident, $health:ident; $($api:ident => $routes:ident),* $(,)?) => {$(
        let api = $api::new(Arc::clone(&$store), $tokens.clone());
        let grpc = api.clone().into_grpc();
        $health.set_service_status(service_name(&grpc), ServingStatus::Serving).await;
        $grpc = $grpc.add_service(grpc);
        $rest = $rest.merge($routes(api));
    )*};
}

fn service_name<S: NamedService>(_: &S) -> &'static str {
    S::NAME
}

pub async fn router(store: SqlStore, page_tokens: PageTokens) -> Router {
    let store = Arc::new(store);
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
        store, page_tokens, grpc, rest, health;
        GroupServiceApi => group_service_routes,
        RoleServiceApi => role_service_routes,
        IdentityServiceApi => identity_service_routes,
        RoleBindingServiceApi => role_binding_service_routes,
        RepoServiceApi => repo_service_routes,
        AdvisoryServiceApi => advisory_service_routes,
        ArtifactServiceApi => artifact_service_routes,
        DocumentServiceApi => document_service_routes,
    }

    grpc.into_axum_router()
        .merge(rest)
        .fallback(runtime::rest::fallback)
        .method_not_allowed_fallback(runtime::rest::method_not_allowed)
        .layer(axum::middleware::from_fn(runtime::rest::catch_panic))
        // Authentication arrives with its own middleware; until then every
        // request acts with full local access.
        .layer(axum::Extension(Caller::System))
}
