//! Tenants cannot slow each other through the grants cache: a role or
//! binding write in one organization leaves every other organization's
//! cached grants in place, and still evicts its own at once. On the
//! embedded database, and on PostgreSQL when `E2E_DATABASE_URL` is set.

use platform_api::platform::iam::v2::{Group, Identity, Role, RoleBinding};
use platform_server::store::SqlStore;
use protoapi_runtime::sql::GrantsCache;
use protoapi_runtime::store::Backend;

async fn open(dir: &std::path::Path) -> SqlStore {
    match std::env::var("E2E_DATABASE_URL") {
        Ok(url) => platform_server::store::open_postgres(&url).await.unwrap(),
        Err(_) => platform_server::store::open_sqlite(dir).await.unwrap(),
    }
}

fn item<R: protoapi_runtime::resource::Resource>(
    parent: Option<&str>,
    fill: impl FnOnce(&mut R),
) -> R {
    let mut item = R::default();
    fill(&mut item);
    item.set_key(match parent {
        Some(parent) => protoapi_runtime::uidp::new_child(parent),
        None => protoapi_runtime::uidp::new_root(),
    });
    let now = protoapi_runtime::time::now();
    item.set_create_time(now);
    item.set_update_time(now);
    item
}

/// An organization with a role of its own and an identity bound to it.
struct Organization {
    root: String,
    role: Role,
    identity: String,
}

async fn organization(store: &SqlStore) -> Organization {
    let root: Group = item(None, |g: &mut Group| g.name = "org".into());
    let role: Role = item(Some(&root.uid), |r: &mut Role| {
        r.name = "reader".into();
        r.capabilities = vec!["groups.get".into()];
    });
    let identity: Identity = item(Some(&root.uid), |i: &mut Identity| i.name = "member".into());
    store.insert(&root).await.unwrap();
    store.insert(&role).await.unwrap();
    store.insert(&identity).await.unwrap();
    bind(store, &root.uid, &identity.uid, &role.uid).await;
    Organization {
        root: root.uid,
        role,
        identity: identity.uid,
    }
}

async fn bind(store: &SqlStore, at: &str, identity: &str, role: &str) -> RoleBinding {
    let binding: RoleBinding = item(Some(at), |b: &mut RoleBinding| {
        b.identity = identity.to_owned();
        b.role = role.to_owned();
    });
    store.insert(&binding).await.unwrap();
    binding
}

#[tokio::test]
async fn a_write_in_one_organization_leaves_the_others_cached_grants() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).await;
    let (a, b) = (organization(&store).await, organization(&store).await);
    let cache = GrantsCache::<RoleBinding, Role>::default();
    for org in [&a, &b] {
        let grants = cache.grants_of(&store, &org.identity).await.unwrap();
        assert!(grants.allows("groups.get", &org.root));
        assert!(cache.holds(&store, &org.identity).await.unwrap());
    }

    // A binding write in A: A's member's grants are re-read, B's hold.
    let binding = bind(&store, &a.root, &a.identity, &a.role.uid).await;
    assert!(
        !cache.holds(&store, &a.identity).await.unwrap(),
        "A's own write evicts A"
    );
    assert!(
        cache.holds(&store, &b.identity).await.unwrap(),
        "B's grants stay cached"
    );
    cache.grants_of(&store, &a.identity).await.unwrap();

    // A role write in A: the same.
    let mut role = a.role.clone();
    role.capabilities.push("groups.list".into());
    let update = protoapi_runtime::mask::Update::plan(
        Some(&prost_types::FieldMask {
            paths: vec!["capabilities".into()],
        }),
        role,
        "role",
    )
    .unwrap()
    .holding(protoapi_runtime::auth::Held::All, a.root.clone());
    Backend::update::<Role>(&store, &a.role.uid, &update)
        .await
        .unwrap()
        .unwrap();
    assert!(
        !cache.holds(&store, &a.identity).await.unwrap(),
        "A's role change evicts A"
    );
    assert!(
        cache.holds(&store, &b.identity).await.unwrap(),
        "B's grants stay cached"
    );
    let grants = cache.grants_of(&store, &a.identity).await.unwrap();
    assert!(
        grants.allows("groups.list", &a.root),
        "the new capability is seen at once"
    );

    // A revocation in A: deleting the binding evicts A only.
    Backend::delete::<RoleBinding>(&store, &binding.uid, None)
        .await
        .unwrap();
    assert!(
        !cache.holds(&store, &a.identity).await.unwrap(),
        "A's revocation evicts A"
    );
    assert!(
        cache.holds(&store, &b.identity).await.unwrap(),
        "B's grants stay cached"
    );

    // A write in B evicts B.
    bind(&store, &b.root, &b.identity, &b.role.uid).await;
    assert!(
        !cache.holds(&store, &b.identity).await.unwrap(),
        "B's own write evicts B"
    );
    store.close().await;
}
