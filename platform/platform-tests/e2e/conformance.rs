//! The storage conformance suite: what every backend of the generated storage
//! traits must do, written once and run against the embedded SQLite store and,
//! when `E2E_DATABASE_URL` names one, PostgreSQL.

use std::sync::Arc;

use platform_api::platform::iam::v2::{
    Group, GroupStore, Identity, IdentityStore, Role, RoleBinding, RoleBindingStore, RoleStore,
};
use platform_api::platform::registry::v2::{Repo, RepoStore};
use platform_server::store::SqlStore;
use protoapi_runtime::Caller;
use protoapi_runtime::mask::Update;
use protoapi_runtime::resource::{Resource, SortValue};
use protoapi_runtime::standard::prepare_create;
use protoapi_runtime::store::{Hierarchy, ListQuery, OrderBy, StoreError};

/// Every backend under test, each with a fresh data directory.
async fn backends() -> Vec<(&'static str, SqlStore, tempfile::TempDir)> {
    let dir = tempfile::tempdir().unwrap();
    let mut backends = vec![(
        "sqlite",
        platform_server::store::open_sqlite(dir.path())
            .await
            .unwrap(),
        dir,
    )];
    if let Ok(url) = std::env::var("E2E_DATABASE_URL") {
        let store = platform_server::store::open_postgres(&url).await.unwrap();
        backends.push(("postgres", store, tempfile::tempdir().unwrap()));
    }
    backends
}

fn new<R: Resource>(parent: &str, edit: impl FnOnce(&mut R)) -> R {
    let mut resource = R::default();
    edit(&mut resource);
    prepare_create(&Caller::System, parent, Some(resource), "resource").unwrap()
}

fn group(parent: &str, name: &str) -> Group {
    new(parent, |g: &mut Group| g.name = name.into())
}

fn query(filter: Hierarchy, order: &[(&str, bool)], limit: u64) -> ListQuery {
    let mut order_by: Vec<OrderBy> = order
        .iter()
        .map(|(field, descending)| OrderBy {
            field: (*field).into(),
            descending: *descending,
        })
        .collect();
    order_by.push(OrderBy {
        field: "uid".into(),
        descending: false,
    });
    ListQuery {
        filter,
        matching: Default::default(),
        order_by,
        after: None,
        skip: 0,
        limit,
        byte_budget: u64::MAX,
        public: None,
    }
}

fn uids(items: &[Group]) -> Vec<&str> {
    items.iter().map(|g| g.uid.as_str()).collect()
}

#[tokio::test]
async fn stores_and_reads_back_every_field() {
    for (backend, store, _dir) in backends().await {
        let root = group("", "root");
        store.insert_group(&root).await.unwrap();
        let mut child = group(&root.uid, "child");
        child.description = "described".into();
        child.resource_limits = Some(platform_api::platform::iam::v2::ResourceLimits {
            clusters: 3,
            idps: 2,
            repositories: 1,
        });
        store.insert_group(&child).await.unwrap();
        assert_eq!(
            store.get_group(&child.uid).await.unwrap(),
            Some(child.clone()),
            "{backend}"
        );
        assert_eq!(
            store
                .get_group(&format!("{}/0000000000000000", root.uid))
                .await
                .unwrap(),
            None,
            "{backend}"
        );

        let repo: Repo = new(&root.uid, |r: &mut Repo| {
            r.name = "images".into();
            r.public = true;
            r.aliases = vec!["img".into(), "pictures".into()];
        });
        store.insert_repo(&repo).await.unwrap();
        assert_eq!(
            store.get_repo(&repo.uid).await.unwrap(),
            Some(repo),
            "{backend}"
        );
    }
}

#[tokio::test]
async fn insert_checks_parent_and_uniqueness() {
    for (backend, store, _dir) in backends().await {
        let root = group("", "root");
        store.insert_group(&root).await.unwrap();
        let orphan = group(&format!("{}/0123456789abcdef", root.uid), "orphan");
        assert!(
            matches!(
                store.insert_group(&orphan).await,
                Err(StoreError::ParentNotFound)
            ),
            "{backend}"
        );
        let repo: Repo = new(&orphan.uid, |r: &mut Repo| r.name = "x".into());
        assert!(
            matches!(
                store.insert_repo(&repo).await,
                Err(StoreError::ParentNotFound)
            ),
            "{backend}"
        );
        assert!(
            matches!(
                store.insert_group(&root).await,
                Err(StoreError::AlreadyExists)
            ),
            "{backend}"
        );
    }
}

#[tokio::test]
async fn lists_filter_order_count_and_continue_by_key() {
    for (backend, store, _dir) in backends().await {
        let root = group("", "root");
        store.insert_group(&root).await.unwrap();
        let mut children = Vec::new();
        for name in ["b", "a", "c", "a"] {
            let child = group(&root.uid, name);
            store.insert_group(&child).await.unwrap();
            children.push(child);
        }
        let grandchild = group(&children[0].uid, "z");
        store.insert_group(&grandchild).await.unwrap();
        let other_root = group("", "other");
        store.insert_group(&other_root).await.unwrap();

        let page = store
            .list_groups(&query(Hierarchy::ChildrenOf(root.uid.clone()), &[], 10))
            .await
            .unwrap();
        let mut expected: Vec<&str> = children.iter().map(|g| g.uid.as_str()).collect();
        expected.sort_unstable();
        assert_eq!(
            uids(&page.items),
            expected,
            "{backend}: children in uid order"
        );
        assert_eq!(page.total_count, 4, "{backend}");

        let page = store
            .list_groups(&query(Hierarchy::DescendantsOf(root.uid.clone()), &[], 10))
            .await
            .unwrap();
        assert_eq!(
            page.total_count, 5,
            "{backend}: descendants include the grandchild"
        );
        assert!(
            !uids(&page.items).contains(&root.uid.as_str()),
            "{backend}: strictly below"
        );
        assert!(
            !uids(&page.items).contains(&other_root.uid.as_str()),
            "{backend}"
        );

        // Ordered by name descending, ties by uid; limited; continued by key.
        let mut by_name = children.clone();
        by_name.sort_by(|a, b| b.name.cmp(&a.name).then(a.uid.cmp(&b.uid)));
        let mut first = query(
            Hierarchy::ChildrenOf(root.uid.clone()),
            &[("name", true)],
            2,
        );
        let page = store.list_groups(&first).await.unwrap();
        assert_eq!(uids(&page.items), uids(&by_name[..2]), "{backend}");
        assert_eq!(
            page.total_count, 4,
            "{backend}: the count ignores the limit"
        );
        let last = &page.items[1];
        first.after = Some(vec![
            last.sort_value("name"),
            SortValue::Text(last.uid.clone()),
        ]);
        let page = store.list_groups(&first).await.unwrap();
        assert_eq!(
            uids(&page.items),
            uids(&by_name[2..4]),
            "{backend}: continues after the key"
        );
        first.skip = 1;
        let page = store.list_groups(&first).await.unwrap();
        assert_eq!(
            uids(&page.items),
            uids(&by_name[3..4]),
            "{backend}: skip counts after the key"
        );

        let by_time = query(
            Hierarchy::ChildrenOf(root.uid.clone()),
            &[("createTime", false)],
            10,
        );
        let page = store.list_groups(&by_time).await.unwrap();
        assert_eq!(
            uids(&page.items),
            uids(&children),
            "{backend}: creation order"
        );

        // A byte budget smaller than one item: reading stops one item past it.
        let tight = ListQuery {
            byte_budget: 1,
            ..by_time
        };
        let page = store.list_groups(&tight).await.unwrap();
        assert_eq!(
            uids(&page.items),
            uids(&children[..2]),
            "{backend}: stops past the budget"
        );
        assert_eq!(page.total_count, 4, "{backend}");
    }
}

#[tokio::test]
async fn updates_apply_atomically_and_check_etags() {
    for (backend, store, _dir) in backends().await {
        let root = group("", "root");
        store.insert_group(&root).await.unwrap();
        let store = Arc::new(store);

        let patch = |description: &str| Group {
            description: description.into(),
            ..Default::default()
        };
        let mask = prost_types::FieldMask {
            paths: vec!["description".into()],
        };
        let update = Update::plan(Some(&mask), patch("new"), "group").unwrap();
        let updated = store
            .update_group(&root.uid, &update)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(updated.description, "new", "{backend}");
        assert_eq!(
            store.get_group(&root.uid).await.unwrap(),
            Some(updated.clone()),
            "{backend}"
        );
        let missing = format!("{}/0000000000000000", root.uid);
        assert_eq!(
            store.update_group(&missing, &update).await.unwrap(),
            None,
            "{backend}"
        );

        let stale = Group {
            etag: root.etag.clone(),
            description: "stale".into(),
            ..Default::default()
        };
        let update = Update::plan(None, stale, "group").unwrap();
        match store.update_group(&root.uid, &update).await {
            Err(StoreError::Rejected(error)) => {
                assert_eq!(error.code(), protoapi_runtime::Code::Aborted, "{backend}")
            }
            other => panic!("{backend}: stale etag accepted: {other:?}"),
        }

        // Concurrent updates of disjoint fields all take effect.
        let mut tasks = Vec::new();
        for round in 0..10 {
            let (shared, uid) = (Arc::clone(&store), root.uid.clone());
            tasks.push(tokio::spawn(async move {
                let store = shared;
                let mask = prost_types::FieldMask {
                    paths: vec!["description".into()],
                };
                let description = Group {
                    description: format!("d{round}"),
                    ..Default::default()
                };
                store
                    .update_group(
                        &uid,
                        &Update::plan(Some(&mask), description, "group").unwrap(),
                    )
                    .await
                    .unwrap();
            }));
            let (shared, uid) = (Arc::clone(&store), root.uid.clone());
            tasks.push(tokio::spawn(async move {
                let store = shared;
                let mask = prost_types::FieldMask {
                    paths: vec!["resource_limits.clusters".into()],
                };
                let limits = Group {
                    resource_limits: Some(platform_api::platform::iam::v2::ResourceLimits {
                        clusters: 7,
                        ..Default::default()
                    }),
                    ..Default::default()
                };
                store
                    .update_group(&uid, &Update::plan(Some(&mask), limits, "group").unwrap())
                    .await
                    .unwrap();
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        let stored = store.get_group(&root.uid).await.unwrap().unwrap();
        assert!(stored.description.starts_with('d'), "{backend}");
        assert_eq!(stored.resource_limits.unwrap().clusters, 7, "{backend}");
    }
}

#[tokio::test]
async fn deletes_respect_dependents_and_etags() {
    for (backend, store, _dir) in backends().await {
        let root = group("", "root");
        store.insert_group(&root).await.unwrap();
        let child = group(&root.uid, "child");
        store.insert_group(&child).await.unwrap();
        match store.delete_group(&root.uid, None).await {
            Err(StoreError::HasDependents(dependents)) => {
                assert_eq!(
                    dependents,
                    vec![("iam.platform/Group".to_owned(), child.uid.clone())],
                    "{backend}"
                )
            }
            other => panic!("{backend}: parent deleted: {other:?}"),
        }

        let role: Role = new(&root.uid, |r: &mut Role| r.name = "viewer".into());
        store.insert_role(&role).await.unwrap();
        let identity: Identity = new(&root.uid, |i: &mut Identity| i.name = "bound".into());
        store.insert_identity(&identity).await.unwrap();
        let dangling: RoleBinding = new(&child.uid, |b: &mut RoleBinding| {
            b.role = role.uid.clone();
            b.identity = format!("{}/1111111111111111", root.uid);
        });
        assert!(
            matches!(
                store.insert_role_binding(&dangling).await,
                Err(StoreError::ReferenceNotFound("identity"))
            ),
            "{backend}: a binding of a missing identity is stored"
        );
        let binding: RoleBinding = new(&child.uid, |b: &mut RoleBinding| {
            b.name = "binding".into();
            b.role = role.uid.clone();
            b.identity = identity.uid.clone();
        });
        store.insert_role_binding(&binding).await.unwrap();
        match store.delete_role(&role.uid, None).await {
            Err(StoreError::HasDependents(dependents)) => assert_eq!(
                dependents,
                vec![("iam.platform/RoleBinding".to_owned(), binding.uid.clone())],
                "{backend}"
            ),
            other => panic!("{backend}: referenced role deleted: {other:?}"),
        }
        assert!(
            store.get_role(&role.uid).await.unwrap().is_some(),
            "{backend}: nothing deleted"
        );

        assert!(
            matches!(
                store.delete_role_binding(&binding.uid, Some("stale")).await,
                Err(StoreError::EtagMismatch)
            ),
            "{backend}"
        );
        assert!(
            store
                .delete_role_binding(&binding.uid, Some(&binding.etag))
                .await
                .unwrap(),
            "{backend}"
        );
        assert!(
            store.delete_role(&role.uid, None).await.unwrap(),
            "{backend}"
        );
        assert!(
            !store.delete_role(&role.uid, None).await.unwrap(),
            "{backend}: already gone"
        );
        let children = query(Hierarchy::ChildrenOf(root.uid.clone()), &[], 10);
        assert_eq!(
            store.list_groups(&children).await.unwrap().total_count,
            1,
            "{backend}"
        );
        assert!(
            store.delete_group(&child.uid, None).await.unwrap(),
            "{backend}"
        );
        let after = store.list_groups(&children).await.unwrap().total_count;
        assert_eq!(after, 0, "{backend}: counts follow deletes");
        assert!(
            store.delete_identity(&identity.uid, None).await.unwrap(),
            "{backend}"
        );
        assert!(
            store.delete_group(&root.uid, None).await.unwrap(),
            "{backend}"
        );
    }
}

/// The library's suite (`protoapi_runtime::conformance`) for every collection of the
/// Platform API, over each SQL backend and the memory store.
#[tokio::test]
async fn every_collection_conforms_on_every_store() {
    for (_backend, store, _dir) in backends().await {
        library_suite(&store).await;
    }
    library_suite(&protoapi_runtime::memory::MemoryStore::new()).await;
}

async fn library_suite<B: protoapi_runtime::store::Backend>(store: &B) {
    use platform_api::platform::advisory::v2::Document;
    use platform_api::platform::libraries::v2::Artifact;
    use platform_api::platform::vulnerabilities::v2::Advisory;
    use protoapi_runtime::conformance::run;

    macro_rules! suite {
        ($($resource:ident),*) => {$(
            run::<B, Group, $resource>(store, |n| $resource {
                name: format!("item {n}"),
                description: format!("sample {n}"),
                ..Default::default()
            })
            .await;
        )*};
    }
    suite!(
        Group,
        Role,
        Identity,
        RoleBinding,
        Repo,
        Advisory,
        Artifact,
        Document
    );
}
