//! The generated wiring of the platform API: a service left without a
//! handler is named when the router is built, not answered 404 at runtime.

use std::sync::Arc;

use runtime::auth::Authorizer;
use runtime::memory::MemoryStore;
use runtime::paging::PageTokens;
use runtime::standard::ApiContext;

fn context() -> ApiContext {
    ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all())
}

#[test]
fn a_service_without_its_handler_is_named_by_the_builder() {
    let missing = generated::Services::new(context())
        .store(Arc::new(MemoryStore::default()))
        .build()
        .unwrap_err();
    let slots: Vec<(&str, &str)> = missing
        .services
        .iter()
        .map(|slot| (slot.name, slot.served_by))
        .collect();
    assert_eq!(slots, [("platform.sts.v1.TokenService", "token_service")]);
    assert_eq!(
        missing.to_string(),
        "services without a handler: platform.sts.v1.TokenService (`.token_service(…)`)"
    );
}

#[test]
fn without_a_store_every_resource_service_is_named() {
    let missing = generated::Services::new(context()).build().unwrap_err();
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
    assert_eq!(missing.services.len(), generated::API.services.len());
}
