//! A filtered list page (AIP-160) on 100,000 gadgets in SQLite, through the
//! generated method (parse, check, count, page): unfiltered as the
//! baseline, then filters the columns' indexes serve, and the same filters
//! once those indexes are dropped.
//!
//! `cargo bench -p widgets --bench filters` (set `FILTER_ROWS` to change the
//! 100,000).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use tokio::runtime::Runtime;
use widgets::SqlStore;
use widgets::widgets::v1::{Gadget, GadgetServiceApi, ListGadgetsRequest};

const WORKSHOP: &str = "1111111111111111111111111111111111111111";

async fn seed(dir: &std::path::Path, rows: usize) -> SqlStore {
    let store = widgets::open_sqlite(&dir.join("gadgets.db")).await.unwrap();
    let gadgets: Vec<Gadget> = (0..rows)
        .map(|n| Gadget {
            uid: protoapi_runtime::uidp::new_child(WORKSHOP),
            display_name: format!("gadget {n:06}"),
            size: i32::try_from(n % 1000).unwrap(),
            finish: i32::try_from(n % 3).unwrap(),
            spare: n % 2 == 0,
            ..Default::default()
        })
        .collect();
    for chunk in gadgets.chunks(50_000) {
        store.import(chunk).await.unwrap();
    }
    store
}

/// The filters measured: (label, expression).
const FILTERS: &[(&str, &str)] = &[
    ("none", ""),
    ("size-eq", "size = 7"),
    ("size-range", "size >= 10 AND size < 20"),
    ("name-prefix", "displayName = \"gadget 0012*\""),
    ("name-infix", "displayName = \"*777*\""),
];

fn pages(c: &mut Criterion) {
    let rows: usize = std::env::var("FILTER_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let runtime = Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(runtime.block_on(seed(dir.path(), rows)));
    let api = GadgetServiceApi::new(
        Arc::clone(&store),
        ApiContext::new(PageTokens::new([9; 32]), Authorizer::allow_all()),
    );
    let caller = Caller::System;
    let request = |filter: &str| ListGadgetsRequest {
        filter: filter.into(),
        page_size: 50,
        ..Default::default()
    };
    let mut group = c.benchmark_group("filtered-page");
    group.sample_size(20);
    for indexes in ["indexed", "unindexed"] {
        if indexes == "unindexed" {
            for index in ["gadgets_by_size", "gadgets_by_parent_size"] {
                let sql = format!("DROP INDEX {index}");
                runtime
                    .block_on(sqlx::query(sqlx::AssertSqlSafe(sql)).execute(store.pool()))
                    .unwrap();
            }
        }
        for (label, filter) in FILTERS {
            let page = runtime
                .block_on(api.list_gadgets(&caller, request(filter)))
                .unwrap();
            assert!(!page.gadgets.is_empty(), "{label}");
            group.bench_function(format!("{indexes}/{label}"), |b| {
                b.to_async(&runtime).iter(|| async {
                    black_box(api.list_gadgets(&caller, request(filter)).await.unwrap())
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, pages);
criterion_main!(benches);
