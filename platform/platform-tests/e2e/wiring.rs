//! The generated wiring of the platform API: a service left without a
//! handler is named when the router is built, not answered 404 at runtime.

use std::sync::Arc;

use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::memory::MemoryStore;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::store::Backend;

fn context() -> ApiContext {
    ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all())
}

#[test]
fn a_service_without_its_handler_is_named_by_the_builder() {
    let missing = platform_api::Services::new(context())
        .store(Arc::new(MemoryStore::default()))
        .build()
        .unwrap_err();
    let slots: Vec<(&str, &str)> = missing
        .services
        .iter()
        .map(|slot| (slot.name, slot.served_by))
        .collect();
    assert_eq!(slots, [("platform.sts.v1.TokenService", "token_exchange")]);
    assert_eq!(
        missing.to_string(),
        "services without a handler: platform.sts.v1.TokenService (`.token_exchange(…)`)"
    );
}

#[test]
fn without_a_store_every_resource_service_is_named() {
    let missing = platform_api::Services::new(context()).build().unwrap_err();
    let stored: Vec<&str> = missing
        .services
        .iter()
        .filter(|slot| slot.served_by == "store")
        .map(|slot| slot.name)
        .collect();
    assert!(
        stored.contains(&"platform.iam.v2.GroupService"),
        "{missing}"
    );
    assert!(
        stored.contains(&"platform.iam.v1.GroupService"),
        "{missing}"
    );
    assert_eq!(missing.services.len(), platform_api::API.services.len());
}

/// The memory store keeping everything but documents.
struct WithoutDocuments(MemoryStore);

impl Backend for WithoutDocuments {
    fn keeps(&self, resource_type: &str) -> bool {
        resource_type != "advisory.platform/Document"
    }

    async fn insert<R: protoapi_runtime::resource::Resource>(
        &self,
        resource: &R,
    ) -> Result<(), protoapi_runtime::store::StoreError> {
        Backend::insert(&self.0, resource).await
    }

    async fn get<R: protoapi_runtime::resource::Resource>(
        &self,
        uid: &str,
    ) -> Result<Option<R>, protoapi_runtime::store::StoreError> {
        Backend::get(&self.0, uid).await
    }

    async fn list<R: protoapi_runtime::resource::Resource>(
        &self,
        query: &protoapi_runtime::store::ListQuery,
    ) -> Result<protoapi_runtime::store::Page<R>, protoapi_runtime::store::StoreError> {
        Backend::list(&self.0, query).await
    }

    async fn update<R: protoapi_runtime::resource::Resource>(
        &self,
        uid: &str,
        update: &protoapi_runtime::mask::Update<R>,
    ) -> Result<Option<R>, protoapi_runtime::store::StoreError> {
        Backend::update(&self.0, uid, update).await
    }

    async fn delete<R: protoapi_runtime::resource::Resource>(
        &self,
        uid: &str,
        etag: Option<&str>,
    ) -> Result<bool, protoapi_runtime::store::StoreError> {
        Backend::delete::<R>(&self.0, uid, etag).await
    }
}

/// Operations are not what this test is about: none are kept.
impl protoapi_runtime::operation::OperationStore for WithoutDocuments {}

#[test]
fn a_store_that_does_not_keep_a_served_type_is_named_by_the_builder() {
    let missing = platform_api::Services::new(context())
        .store(Arc::new(WithoutDocuments(MemoryStore::default())))
        .build()
        .unwrap_err();
    assert_eq!(missing.unkept, ["advisory.platform/Document"]);
    assert!(
        missing
            .to_string()
            .ends_with("; resource types the store does not keep: advisory.platform/Document"),
        "{missing}"
    );
}

#[tokio::test]
async fn the_platform_sql_store_keeps_every_served_type() {
    let dir = tempfile::tempdir().unwrap();
    let store = platform_server::store::open_sqlite(dir.path())
        .await
        .unwrap();
    let missing = platform_api::Services::new(context())
        .store(Arc::new(store))
        .build()
        .unwrap_err();
    assert!(missing.unkept.is_empty(), "{missing}");
    assert_eq!(
        missing.services.len(),
        1,
        "only the token service: {missing}"
    );
}
