//! What authorizing a request costs an identity whose access comes from role
//! bindings (the administrator reads none):
//!
//! - `authorization/cached`: the grants cache, one read of the access
//!   epochs of the identity and its roles per request;
//! - `authorization/uncached`: the bindings, their roles and their epochs in
//!   one statement, what every request would pay without the cache.
//!
//! `cargo bench -p platform-server --bench authorization` (set
//! `AUTHORIZATION_BINDINGS` to change the identity's 3 bindings).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use platform_api::platform::iam::v2::{Group, Role, RoleBinding};
use platform_server::store::SqlStore;
use protoapi_runtime::sql::{GrantsCache, read_grants};
use tokio::runtime::Runtime;

const IDENTITY: &str = "ffffffffffffffffffffffffffffffffffffffff/0000000000000001";

/// A root with one group per binding, a role in each, and `IDENTITY` bound
/// to it, beside 1,000 groups and bindings of other identities.
async fn seed(dir: &std::path::Path, bindings: usize) -> SqlStore {
    let store = platform_server::store::open_sqlite(dir).await.unwrap();
    let now = Some(protoapi_runtime::time::now());
    let root = protoapi_runtime::uidp::new_root();
    let mut groups = vec![Group {
        uid: root.clone(),
        name: "root".into(),
        create_time: now,
        update_time: now,
        ..Default::default()
    }];
    let (mut roles, mut grants) = (Vec::new(), Vec::new());
    for i in 0..1_000 {
        let group = protoapi_runtime::uidp::new_child(&root);
        let role = protoapi_runtime::uidp::new_child(&group);
        roles.push(Role {
            uid: role.clone(),
            name: format!("role {i}"),
            capabilities: vec!["groups.get".into(), "groups.list".into()],
            create_time: now,
            update_time: now,
            ..Default::default()
        });
        let identity = if i < bindings {
            IDENTITY.to_owned()
        } else {
            format!("{}/{i:016x}", "e".repeat(40))
        };
        grants.push(RoleBinding {
            uid: protoapi_runtime::uidp::new_child(&group),
            identity,
            role,
            create_time: now,
            update_time: now,
            ..Default::default()
        });
        groups.push(Group {
            uid: group,
            name: format!("group {i}"),
            create_time: now,
            update_time: now,
            ..Default::default()
        });
    }
    store.import(&groups).await.unwrap();
    store.import(&roles).await.unwrap();
    store.import(&grants).await.unwrap();
    store
}

fn authorization(c: &mut Criterion) {
    let runtime = Runtime::new().unwrap();
    let bindings = std::env::var("AUTHORIZATION_BINDINGS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let dir = tempfile::tempdir().unwrap();
    let store = runtime.block_on(seed(dir.path(), bindings));
    let cache = GrantsCache::<RoleBinding, Role>::default();
    let expected = runtime
        .block_on(read_grants::<RoleBinding, Role>(&store, IDENTITY))
        .unwrap()
        .grants;
    assert_ne!(expected, Default::default(), "the identity holds grants");
    assert_eq!(
        runtime.block_on(cache.grants_of(&store, IDENTITY)).unwrap(),
        expected,
        "the cache answers what the tables grant"
    );
    let mut group = c.benchmark_group("authorization");
    group.bench_function("cached", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(cache.grants_of(&store, IDENTITY).await.unwrap()) });
    });
    group.bench_function("uncached", |b| {
        b.to_async(&runtime).iter(|| async {
            black_box(
                read_grants::<RoleBinding, Role>(&store, IDENTITY)
                    .await
                    .unwrap(),
            )
        });
    });
    group.finish();
}

criterion_group!(benches, authorization);
criterion_main!(benches);
