//! List costs that must not grow with the table (CONTRACT §2, §4):
//!
//! - `paging/*`: the first page against a page 1,000,000 items deep, in the
//!   default (uid) order and ordered by name. Keyset continuation makes the
//!   deep page cost what the first does. Both pay `totalCount`, which counts
//!   the rows matching the filter.
//! - `subtree/*`: `children_of` / `descendants_of` of a 10-group subtree in
//!   tables of 10,000 and 100,000 groups.
//!
//! `cargo bench -p platform-server --bench listing` (set `LISTING_ROWS` to
//! change the 1,000,000).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use platform_api::platform::iam::v2::{Group, GroupServiceApi, ListGroupsRequest};
use platform_api::protoapi::v1::UidpFilter;
use platform_server::store::SqlStore;
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::paging::{PageTokens, QueryBinding};
use protoapi_runtime::resource::{Resource, SortValue};
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::store::{Hierarchy, Matching, OrderBy};
use tokio::runtime::Runtime;

const PAGE: i32 = 50;

fn group(uid: String, name: String) -> Group {
    let now = protoapi_runtime::time::now();
    Group {
        uid,
        name,
        create_time: Some(now),
        update_time: Some(now),
        etag: "e".into(),
        ..Default::default()
    }
}

/// A store with one root holding `children` children, plus a separate root
/// holding a 10-group subtree (3 children, 7 grandchildren).
async fn seed(
    dir: &std::path::Path,
    children: usize,
) -> (GroupServiceApi<SqlStore>, String, String, Vec<Group>) {
    let store = platform_server::store::open_sqlite(dir).await.unwrap();
    let root = protoapi_runtime::uidp::new_root();
    let small = protoapi_runtime::uidp::new_root();
    let mut rows = vec![
        group(root.clone(), "root".into()),
        group(small.clone(), "small".into()),
    ];
    for i in 0..children {
        rows.push(group(
            protoapi_runtime::uidp::new_child(&root),
            format!("group {:07}", (i * 7919) % children),
        ));
    }
    let mut subtree = Vec::new();
    for i in 0..3 {
        let child = protoapi_runtime::uidp::new_child(&small);
        for j in 0..if i == 0 { 3 } else { 2 } {
            subtree.push(group(
                protoapi_runtime::uidp::new_child(&child),
                format!("g{j}"),
            ));
        }
        subtree.push(group(child, format!("c{i}")));
    }
    rows.extend(subtree);
    for chunk in rows.chunks(100_000) {
        store.import(chunk).await.unwrap();
    }
    let mut children_rows: Vec<Group> = rows
        .into_iter()
        .filter(|g| g.uid.starts_with(&format!("{root}/")))
        .collect();
    children_rows.sort_by(|a, b| a.uid.cmp(&b.uid));
    let api = GroupServiceApi::new(
        Arc::new(store),
        ApiContext::new(PageTokens::new([9; 32]), Authorizer::allow_all()),
    );
    (api, root, small, children_rows)
}

fn list(root: &str, order_by: &str, token: String) -> ListGroupsRequest {
    ListGroupsRequest {
        uidp: Some(UidpFilter {
            children_of: root.into(),
            ..Default::default()
        }),
        page_size: PAGE,
        page_token: token,
        order_by: order_by.into(),
        ..Default::default()
    }
}

/// A token positioned after `last` in `order`, as the previous page would issue.
fn token_after(root: &str, order: &[(&str, bool)], last: &Group) -> String {
    let mut terms: Vec<OrderBy> = order
        .iter()
        .map(|(field, descending)| OrderBy {
            field: (*field).into(),
            descending: *descending,
        })
        .collect();
    if !terms.iter().any(|t| t.field == "uid") {
        terms.push(OrderBy {
            field: "uid".into(),
            descending: false,
        });
    }
    let binding = QueryBinding::new(
        Group::TYPE,
        &Hierarchy::ChildrenOf(root.into()),
        &Matching::default(),
        &terms,
        false,
    );
    let after: Vec<SortValue> = terms.iter().map(|t| last.sort_value(&t.field)).collect();
    PageTokens::new([9; 32]).issue(&binding, after)
}

fn paging(c: &mut Criterion) {
    let rows: usize = std::env::var("LISTING_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let runtime = Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (api, root, _, children) = runtime.block_on(seed(dir.path(), rows));
    let caller = Caller::System;

    let deep_uid = &children[rows - PAGE as usize - 1];
    let mut by_name = children.clone();
    by_name.sort_by(|a, b| a.name.cmp(&b.name).then(a.uid.cmp(&b.uid)));
    let deep_name = &by_name[rows - PAGE as usize - 1];

    let mut group = c.benchmark_group("paging");
    group.sample_size(20);
    for (label, order_by, token) in [
        ("uid/first", "", String::new()),
        ("uid/deep", "", token_after(&root, &[], deep_uid)),
        ("name/first", "name", String::new()),
        (
            "name/deep",
            "name",
            token_after(&root, &[("name", false)], deep_name),
        ),
    ] {
        // The deep page really is the last full page.
        let page = runtime
            .block_on(api.list_groups(&caller, list(&root, order_by, token.clone())))
            .unwrap();
        assert_eq!(page.items.len(), PAGE as usize, "{label}");
        group.bench_function(label, |b| {
            b.to_async(&runtime).iter(|| async {
                black_box(
                    api.list_groups(&caller, list(&root, order_by, token.clone()))
                        .await
                        .unwrap(),
                )
            })
        });
    }
    group.finish();
}

fn subtree(c: &mut Criterion) {
    let runtime = Runtime::new().unwrap();
    let mut group = c.benchmark_group("subtree");
    group.sample_size(30);
    for rows in [10_000, 100_000] {
        let dir = tempfile::tempdir().unwrap();
        let (api, _, small, _) = runtime.block_on(seed(dir.path(), rows));
        let caller = Caller::System;
        for (label, filter) in [
            (
                "children_of",
                UidpFilter {
                    children_of: small.clone(),
                    ..Default::default()
                },
            ),
            (
                "descendants_of",
                UidpFilter {
                    descendants_of: small.clone(),
                    ..Default::default()
                },
            ),
        ] {
            let request = ListGroupsRequest {
                uidp: Some(filter),
                ..Default::default()
            };
            let page = runtime
                .block_on(api.list_groups(&caller, request.clone()))
                .unwrap();
            assert_eq!(
                page.total_count,
                if label == "children_of" { 3 } else { 10 }
            );
            group.bench_function(format!("{label}/{rows}"), |b| {
                b.to_async(&runtime).iter(|| async {
                    black_box(api.list_groups(&caller, request.clone()).await.unwrap())
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, paging, subtree);
criterion_main!(benches);
