//! The one router serving REST and gRPC: generated routes and services over
//! the store, plus gRPC reflection and health.

use axum::Router;
use generated::platform::iam::v2::{GroupServiceApi, group_service_routes};
use runtime::Caller;
use runtime::paging::PageTokens;

use crate::store::SqlStore;

pub async fn router(store: SqlStore, page_tokens: PageTokens) -> Router {
    let store = std::sync::Arc::new(store);
    let groups = GroupServiceApi::new(store, page_tokens);

    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_serving::<generated::platform::iam::v2::group_service_server::GroupServiceServer<
            GroupServiceApi<SqlStore>,
        >>()
        .await;
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(generated::FILE_DESCRIPTOR_SET)
        .build_v1()
        .expect("the embedded descriptor set is valid");
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(generated::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .expect("the embedded descriptor set is valid");

    let grpc = tonic::service::Routes::new(groups.clone().into_grpc())
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .into_axum_router();

    grpc.merge(group_service_routes(groups))
        .fallback(runtime::rest::fallback)
        .method_not_allowed_fallback(runtime::rest::method_not_allowed)
        .layer(axum::middleware::from_fn(runtime::rest::catch_panic))
        // Authentication arrives with its own middleware; until then every
        // request acts with full local access.
        .layer(axum::Extension(Caller::System))
}
