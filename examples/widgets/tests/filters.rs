//! AIP-160 filters on gadgets (`filterable` in annotations.toml): the same
//! answers from the memory store, SQLite and (when `E2E_DATABASE_URL` names
//! a server) PostgreSQL for generated expressions, and the filter over REST
//! and gRPC: results, errors with their position, page tokens bound to it.

use std::sync::Arc;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::filter;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::store::{Backend, Hierarchy, ListQuery, Matching, OrderBy};
use serde_json::Value;
use widgets::widgets::v1::gadget_service_client::GadgetServiceClient;
use widgets::widgets::v1::{Dimensions, Gadget};
use widgets::{MemoryStore, SqlStore};

const WORKSHOP: &str = "1111111111111111111111111111111111111111";
const NAMES: &[&str] = &[
    "a", "ab", "abc", "b*?", "B", "a_c", "%x", "a b", "é", "[a]", "a\\b",
];
const TIMES: &[&str] = &[
    "1969-12-31T23:59:59Z",
    "2026-01-02T03:04:05Z",
    "2026-01-02T03:04:05.5Z",
    "2030-06-01T00:00:00Z",
];

const UNITS: &[&str] = &["mm", "cm", "in", "m*", ""];
const TAGS: &[&str] = &["red", "blue", "a*b", "é"];
const ENVS: &[&str] = &["prod", "dev", "test"];

/// Gadget `n`: every combination of the values above comes up.
fn gadget(n: usize) -> Gadget {
    let made = (n % 5)
        .checked_sub(1)
        .map(|i| TIMES[i].parse().expect("a time"));
    let small = |m: usize| i64::try_from(n % m).unwrap();
    let dimensions = (!n.is_multiple_of(6)).then(|| Dimensions {
        unit: UNITS[n % UNITS.len()].to_owned(),
        width: small(5) - 2,
    });
    let cure = (!n.is_multiple_of(4)).then(|| prost_types::Duration {
        seconds: small(3),
        nanos: i32::try_from(n % 2).unwrap() * 500_000_000,
    });
    let tags = (0..TAGS.len())
        .filter(|bit| (n / 2) & (1 << bit) != 0)
        .map(|bit| TAGS[bit].to_owned())
        .collect();
    let mut labels = std::collections::HashMap::new();
    if n.is_multiple_of(2) {
        labels.insert("env".to_owned(), ENVS[n % 3].to_owned());
    }
    if n.is_multiple_of(5) {
        labels.insert("a.b".to_owned(), "x".to_owned());
    }
    if n.is_multiple_of(7) {
        labels.insert("team".to_owned(), "core".to_owned());
    }
    let gadget = Gadget {
        display_name: NAMES[n % NAMES.len()].to_owned(),
        size: i32::try_from(n % 7).unwrap() - 3,
        finish: i32::try_from(n % 4).unwrap(),
        spare: n.is_multiple_of(3),
        made_time: made,
        dimensions,
        cure,
        tags,
        labels,
        coats: [vec![], vec![1], vec![1, 2]][n % 3].clone(),
        ..Default::default()
    };
    protoapi_runtime::standard::prepare_create(&Caller::System, WORKSHOP, Some(gadget), "gadget")
        .unwrap()
}

/// Ninety gadgets, the same (uids included) in every store.
static GADGETS: std::sync::LazyLock<Vec<Gadget>> =
    std::sync::LazyLock::new(|| (0..90).map(gadget).collect());

async fn stocked<B: Backend>(store: B) -> B {
    for gadget in GADGETS.iter() {
        store.insert(gadget).await.unwrap();
    }
    store
}

/// A list of up to `limit` gadgets meeting `condition`, in uid order.
fn filtered(condition: filter::Condition, limit: u64) -> ListQuery {
    ListQuery {
        filter: Hierarchy::All,
        matching: Matching {
            condition: Some(condition),
            ..Matching::default()
        },
        order_by: vec![OrderBy {
            field: "uid".into(),
            descending: false,
        }],
        after: None,
        skip: 0,
        limit,
        byte_budget: u64::MAX,
        public: None,
    }
}

/// The uids a filter selects, in uid order, and the total count.
async fn selected<B: Backend>(store: &B, condition: &filter::Condition) -> (Vec<String>, u64) {
    let page = store
        .list::<Gadget>(&filtered(condition.clone(), 1000))
        .await
        .unwrap();
    let uids = page.items.into_iter().map(|g| g.uid).collect();
    (uids, page.total_count)
}

/// Filters over every filterable field, of every comparator, nested.
fn expression() -> impl Strategy<Value = String> {
    let comparator = prop::sample::select(vec!["=", "!=", "<", "<=", ">", ">=", ":"]);
    let text = prop::sample::select(vec![
        "\"a\"",
        "\"ab\"",
        "\"a*\"",
        "\"*b\"",
        "\"*\"",
        "\"a*c\"",
        "\"b*?\"",
        "\"a_c\"",
        "\"%*\"",
        "\"\"",
        "\"é\"",
        "\"[a]\"",
        "\"[*\"",
        "\"a\\\\b\"",
        "B",
        "*",
        "a*",
    ]);
    let number = prop::sample::select(vec!["-4", "-3", "-1", "0", "2", "3", "9"]);
    let finish = prop::sample::select(vec![
        "MATTE",
        "GLOSS",
        "FINISH_UNSPECIFIED",
        "3",
        "\"GLOSS\"",
    ]);
    let flag = prop::sample::select(vec!["true", "false", "TRUE"]);
    let time = prop::sample::select(vec![
        "\"2026-01-02T03:04:05Z\"",
        "\"2026-01-02T03:04:05.5Z\"",
        "\"1970-01-01T00:00:00Z\"",
        "\"2029-01-01T00:00:00+02:00\"",
    ]);
    let leaf = prop_oneof![
        (
            prop::sample::select(vec!["displayName", "display_name"]),
            comparator.clone(),
            text
        )
            .prop_map(|(f, c, v)| format!("{f} {c} {v}")),
        (comparator.clone(), number).prop_map(|(c, v)| format!("size {c} {v}")),
        (comparator.clone(), finish).prop_map(|(c, v)| format!("finish {c} {v}")),
        (comparator.clone(), flag).prop_map(|(c, v)| format!("spare{c}{v}")),
        (comparator, time).prop_map(|(c, v)| format!("madeTime {c} {v}")),
        prop::sample::select(vec![
            "made_time = NULL",
            "madeTime != null",
            "size:*",
            "finish:*"
        ])
        .prop_map(str::to_owned),
        nested_and_repeated(),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} AND {b}")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} OR {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("{a} {b}")),
            inner.clone().prop_map(|a| format!("NOT ({a})")),
            inner.prop_map(|a| format!("-({a})")),
        ]
    })
}

/// Filters on a field one message down, a duration, a list and a map.
fn nested_and_repeated() -> impl Strategy<Value = String> {
    let comparator = prop::sample::select(vec!["=", "!=", "<", "<=", ">", ">=", ":"]);
    let unit = prop::sample::select(vec!["mm", "\"cm\"", "\"*m\"", "\"m*\"", "\"\"", "in"]);
    let width = prop::sample::select(vec!["-2", "0", "1", "3"]);
    let cure = prop::sample::select(vec!["0s", "0.5s", "1s", "1.5s", "\"2s\"", "2.5s"]);
    let element = prop::sample::select(vec![
        "tags:red",
        "tags:\"a*b\"",
        "tags:\"a*\"",
        "tags:*",
        "tags:\"é\"",
        "tags:\"*e*\"",
        "coats:MATTE",
        "coats:GLOSS",
        "coats:2",
        "coats:*",
        "labels:env",
        "labels:team",
        "labels:\"a.b\"",
        "labels:\"e*\"",
        "labels:*",
        "labels.team:*",
        "labels.\"a.b\" = x",
        "cure = NULL",
        "cure != NULL",
    ]);
    let env = prop::sample::select(vec!["prod", "dev", "\"d*\"", "x", "\"t\""]);
    prop_oneof![
        (comparator.clone(), unit).prop_map(|(c, v)| format!("dimensions.unit {c} {v}")),
        (comparator.clone(), width).prop_map(|(c, v)| format!("dimensions.width {c} {v}")),
        (comparator.clone(), cure).prop_map(|(c, v)| format!("cure {c} {v}")),
        (comparator, env).prop_map(|(c, v)| format!("labels.env {c} {v}")),
        element.prop_map(str::to_owned),
    ]
}

/// Every generated filter selects the same gadgets in each store.
async fn agree(stores: &[&SqlStore]) {
    let memory = stocked(MemoryStore::default()).await;
    // A fixed seed: the same filters on every run.
    let mut runner = TestRunner::deterministic();
    let strategy = expression();
    let cases: Vec<String> = (0..300)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect();
    let mut selective = 0;
    for text in &cases {
        let condition = filter::check::<Gadget>(text)
            .unwrap_or_else(|error| panic!("{text}: {error:?}"))
            .expect("not empty");
        let expected = selected(&memory, &condition).await;
        if !expected.0.is_empty() && expected.0.len() < 90 {
            selective += 1;
        }
        assert_eq!(expected.1, expected.0.len() as u64, "{text}");
        for store in stores {
            assert_eq!(
                selected(*store, &condition).await,
                expected,
                "{text} ({condition})"
            );
        }
    }
    assert!(
        selective > cases.len() / 3,
        "{selective} of {} filters select some gadgets",
        cases.len()
    );
}

#[tokio::test]
async fn memory_sqlite_and_postgres_select_the_same_gadgets() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = stocked(
        widgets::open_sqlite(&dir.path().join("w.db"))
            .await
            .unwrap(),
    )
    .await;
    let Ok(server) = std::env::var("E2E_DATABASE_URL") else {
        eprintln!("E2E_DATABASE_URL is not set: PostgreSQL skipped");
        return agree(&[&sqlite]).await;
    };
    let database = postgres::Database::create(&server).await;
    let options = protoapi_runtime::sql::SqlOptions::new(widgets::tables());
    let pg = stocked(SqlStore::open(&database.url, options).await.unwrap()).await;
    agree(&[&sqlite, &pg]).await;
    database.drop_it().await;
}

#[path = "../../library/tests/common/postgres.rs"]
mod postgres;

async fn serve(store: SqlStore) -> String {
    let context = ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all());
    let app = widgets::Services::new(context)
        .store(Arc::new(store))
        .drawing_service(Arc::new(widgets::Drawings::default()))
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(app).await
}

async fn get(url: &str) -> (u16, Value) {
    use http_body_util::BodyExt;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Empty<bytes::Bytes>>();
    let response = client.get(url.parse().unwrap()).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap())
}

fn query(filter: &str) -> String {
    let mut out = String::new();
    for byte in filter.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[tokio::test]
async fn lists_filter_over_rest_and_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let store = stocked(
        widgets::open_sqlite(&dir.path().join("w.db"))
            .await
            .unwrap(),
    )
    .await;
    let base = serve(store).await;
    let wanted = "size >= 2 AND finish = GLOSS AND NOT spare = true";
    let expected: Vec<&Gadget> = GADGETS
        .iter()
        .filter(|g| g.size >= 2 && g.finish == 2 && !g.spare)
        .collect();
    assert!(!expected.is_empty());

    // REST, page by page: the token carries the filter's binding.
    let mut seen = 0;
    let mut token = String::new();
    loop {
        let url = format!(
            "{base}/v1/gadgets?filter={}&pageSize=2&pageToken={token}",
            query(wanted)
        );
        let (status, body) = get(&url).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["totalSize"], expected.len());
        for gadget in body["gadgets"].as_array().unwrap() {
            assert!(gadget["size"].as_i64().unwrap() >= 2, "{gadget}");
            assert_eq!(gadget["finish"], "GLOSS");
            seen += 1;
        }
        token = body["nextPageToken"].as_str().unwrap().to_owned();
        if token.is_empty() {
            break;
        }
        // The next page under another filter is refused.
        let other = format!("{base}/v1/gadgets?filter=size%3E0&pageSize=2&pageToken={token}");
        assert_eq!(get(&other).await.0, 400);
    }
    assert_eq!(seen, expected.len());

    // gRPC: the same filter, the same gadgets.
    let mut client = GadgetServiceClient::connect(base.clone()).await.unwrap();
    let response = client
        .list_gadgets(widgets::widgets::v1::ListGadgetsRequest {
            filter: wanted.into(),
            page_size: 100,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(response.gadgets.len(), expected.len());
    assert_eq!(response.total_size as usize, expected.len());

    // What is wrong is named, with where it was written.
    for (filter, says) in [
        (
            "colour = \"red\"",
            "`colour` is not a field widgets.example/Gadget lists can be filtered by; filterable: displayName, size, finish, spare, madeTime, dimensions.unit, dimensions.width, cure, tags, labels, coats (at character 1)",
        ),
        (
            "tags = red",
            "`tags` is a list: `tags:value` asks whether it holds a value; other comparisons do not apply to it (at character 1)",
        ),
        (
            "labels = x",
            "`labels` is a map: `labels:key` asks whether it has a key, `labels.key = value` compares an entry's value; other comparisons do not apply to it (at character 1)",
        ),
        (
            "labels.a.b = x",
            "`labels` is a map: one key follows it (`labels.key`, or `labels.\"a.b\"` for a key holding dots) (at character 1)",
        ),
        (
            "dimensions.depth > 2",
            "`dimensions.depth` is not a field widgets.example/Gadget lists can be filtered by",
        ),
        (
            "size.width > 2",
            "`size` has no fields: `size.width` names nothing (at character 1)",
        ),
        (
            "cure > 5m",
            "`cure` is a duration in seconds (`90s`, `1.5s`); `5m` is not one (at character 8)",
        ),
        ("tags = NULL", "`tags` is a list"),
        (
            "labels.env = NULL",
            "`labels` always has a value: it is never NULL (at character 14)",
        ),
        (
            "size > big",
            "`size` is a 64-bit integer; `big` is not one (at character 8)",
        ),
        (
            "finish = SHINY",
            "`finish` is one of FINISH_UNSPECIFIED, MATTE, GLOSS; `SHINY` is not one (at character 10)",
        ),
        (
            "size > 1 AND (spare = true",
            "this `(` has no matching `)` (at character 14)",
        ),
        ("hello", "`hello` compares no field"),
    ] {
        let (status, body) = get(&format!("{base}/v1/gadgets?filter={}", query(filter))).await;
        assert_eq!(status, 400, "{filter}: {body}");
        let violation = &body["error"]["details"][1]["fieldViolations"][0];
        assert_eq!(violation["field"], "filter", "{body}");
        let description = violation["description"].as_str().unwrap();
        assert!(description.starts_with(says), "{filter}: {description}");
        let status = client
            .list_gadgets(widgets::widgets::v1::ListGadgetsRequest {
                filter: filter.into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{filter}");
    }
}

/// A filter no index serves scans within the store's budget: the list is
/// refused, naming `filter`, once it would examine more rows than allowed,
/// while indexed filters and unfiltered lists on the same table answer.
#[tokio::test]
async fn an_unindexed_filter_scans_within_the_budget() {
    use protoapi_runtime::sql::{FilterBudget, SqlOptions};
    use protoapi_runtime::store::StoreError;
    let dir = tempfile::tempdir().unwrap();
    // About 1,000 rows examined (an infix pattern reads about 5 steps a row
    // through the name's index).
    let budget = FilterBudget {
        sqlite_steps: 5_000,
        ..FilterBudget::default()
    };
    let options = SqlOptions::new(widgets::tables()).filter_budget(budget);
    let store = SqlStore::open_sqlite(&dir.path().join("w.db"), options)
        .await
        .unwrap();
    for n in 0..3_000 {
        store.insert(&gadget(n)).await.unwrap();
    }
    let list = |text: &str| {
        let query = filtered(
            filter::check::<Gadget>(text).unwrap().expect("not empty"),
            50,
        );
        let store = &store;
        async move { store.list::<Gadget>(&query).await }
    };
    // An infix pattern: every row is examined.
    match list("displayName = \"*b*\"").await {
        Err(StoreError::Rejected(error)) => {
            assert_eq!(error.code(), protoapi_runtime::Code::InvalidArgument);
            assert_eq!(error.field_violations()[0].field, "filter");
        }
        other => panic!(
            "an unbounded scan answered: {:?}",
            other.map(|p| p.total_count)
        ),
    }
    // An indexed comparison examines what it selects.
    let page = list("size = -3 AND finish = GLOSS").await.unwrap();
    assert_eq!(
        page.total_count,
        (0..3_000).filter(|n| n % 7 == 0 && n % 4 == 2).count() as u64
    );
    // Within the budget, the same scan answers.
    let small = SqlOptions::new(widgets::tables());
    let other = SqlStore::open_sqlite(&dir.path().join("small.db"), small)
        .await
        .unwrap();
    for n in 0..300 {
        other.insert(&gadget(n)).await.unwrap();
    }
    let condition = filter::check::<Gadget>("displayName = \"*b*\"")
        .unwrap()
        .unwrap();
    assert!(!selected(&other, &condition).await.0.is_empty());
}

/// The columns of the filterable fields `indexed` leaves out have no index
/// (`spare`), the others do, and a filter on either answers alike.
#[tokio::test]
async fn only_the_declared_filterable_fields_are_indexed() {
    use sqlx::Connection;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.db");
    let store = stocked(widgets::open_sqlite(&path).await.unwrap()).await;
    sqlx::any::install_default_drivers();
    let url = format!("sqlite://{}", path.display());
    let mut connection = sqlx::AnyConnection::connect(&url).await.unwrap();
    let indexes: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'gadgets'",
    )
    .fetch_all(&mut connection)
    .await
    .unwrap();
    for indexed in [
        "gadgets_by_size",
        "gadgets_by_finish",
        "gadgets_by_display_name",
    ] {
        assert!(
            indexes.iter().any(|i| i == indexed),
            "{indexed}: {indexes:?}"
        );
    }
    assert!(!indexes.iter().any(|i| i.contains("spare")), "{indexes:?}");
    let memory = stocked(MemoryStore::default()).await;
    for text in ["spare = true", "finish = GLOSS"] {
        let condition = filter::check::<Gadget>(text).unwrap().unwrap();
        assert_eq!(
            selected(&store, &condition).await,
            selected(&memory, &condition).await,
            "{text}"
        );
    }
}
