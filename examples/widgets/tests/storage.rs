//! Widgets stored by the library: the conformance suite on the memory and
//! SQLite stores, the declared delete rule on both, persistence across
//! restarts over REST, and a row field added to an existing database.

use std::sync::Arc;

use protoapi_macros::Row;
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::conformance;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::sql::{SqlOptions, Table};
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::store::{Backend, StoreError};
use widgets::widgets::v1::widget::Delivery;
use widgets::widgets::v1::{Part, Widget};
use widgets::{MemoryStore, SqlStore};

fn widget(n: usize) -> Widget {
    Widget {
        name: format!("widget {n}"),
        colour: ["red", "green", "blue"][n % 3].into(),
        stock: i32::try_from(n).unwrap(),
        delivery: Some(if n.is_multiple_of(2) {
            Delivery::Address(format!("{n} Mill Lane"))
        } else {
            Delivery::Locker(i32::try_from(n).unwrap())
        }),
        ..Default::default()
    }
}

fn part(n: usize) -> Part {
    Part {
        name: format!("part {n}"),
        ..Default::default()
    }
}

async fn conforms<B: Backend>(store: &B) {
    conformance::run::<B, Widget, Widget>(store, widget).await;
    conformance::run::<B, Widget, Part>(store, part).await;
}

#[tokio::test]
async fn the_memory_store_conforms() {
    conforms(&MemoryStore::default()).await;
}

#[tokio::test]
async fn the_sqlite_store_conforms() {
    let dir = tempfile::tempdir().unwrap();
    conforms(
        &widgets::open_sqlite(&dir.path().join("widgets.db"))
            .await
            .unwrap(),
    )
    .await;
}

/// `delete_blocked_by` in annotations.toml, kept by both stores with no
/// storage code in this crate.
async fn parts_block_deleting_their_widget<B: Backend>(store: &B) {
    let gear = created(widget(1), "");
    store.insert(&gear).await.unwrap();
    let cog = created(
        Part {
            widget: gear.uid.clone(),
            ..part(1)
        },
        "",
    );
    store.insert(&cog).await.unwrap();
    match store.delete::<Widget>(&gear.uid, None).await {
        Err(StoreError::HasDependents(dependents)) => {
            assert_eq!(
                dependents,
                [("widgets.example/Part".to_owned(), cog.uid.clone())]
            )
        }
        other => panic!("a widget with parts was deleted: {other:?}"),
    }
    assert!(store.delete::<Part>(&cog.uid, None).await.unwrap());
    assert!(store.delete::<Widget>(&gear.uid, None).await.unwrap());
    let orphan = created(
        Part {
            widget: gear.uid.clone(),
            ..part(2)
        },
        "",
    );
    assert!(matches!(
        store.insert(&orphan).await,
        Err(StoreError::ReferenceNotFound("widget"))
    ));
}

fn created<R: protoapi_runtime::resource::Resource>(value: R, parent: &str) -> R {
    let parent = if parent.is_empty() {
        "1".repeat(40)
    } else {
        parent.to_owned()
    };
    protoapi_runtime::standard::prepare_create(&Caller::System, &parent, Some(value), "item")
        .unwrap()
}

#[tokio::test]
async fn declared_dependents_block_deletes_in_every_store() {
    parts_block_deleting_their_widget(&MemoryStore::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let store = widgets::open_sqlite(&dir.path().join("widgets.db"))
        .await
        .unwrap();
    parts_block_deleting_their_widget(&store).await;
}

/// Serves the widgets over `store`; the address.
async fn serve(store: SqlStore) -> (String, tokio::task::JoinHandle<()>) {
    let context = ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all());
    let app = widgets::Services::new(context)
        .store(Arc::new(store))
        .drawing_service(Arc::new(widgets::Drawings::default()))
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (address, server)
}

async fn call(
    method: &str,
    url: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    use http_body_util::BodyExt;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = http::Request::builder()
        .method(method)
        .uri(url)
        .header("content-type", "application/json")
        .body(http_body_util::Full::new(bytes::Bytes::from(body)))
        .unwrap();
    let response = client.request(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap_or_default())
}

#[tokio::test]
async fn widgets_outlive_a_restart_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("widgets.db");
    let workshop = "2".repeat(40);

    let (address, server) = serve(widgets::open_sqlite(&path).await.unwrap()).await;
    let (status, created) = call(
        "POST",
        &format!("{address}/v1/widgets/{workshop}"),
        Some(serde_json::json!({"name": "gear", "colour": "red", "stock": 3})),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    server.abort();

    let store = widgets::open_sqlite(&path).await.unwrap();
    let (address, _server) = serve(store).await;
    let uid = created["uid"].as_str().unwrap();
    let (status, read) = call("GET", &format!("{address}/v1/widgets/{uid}"), None).await;
    assert_eq!((status, &read), (200, &created));
    let (status, list) = call(
        "GET",
        &format!("{address}/v1/widgets?uidp.childrenOf={workshop}&orderBy=stock%20desc"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["items"][0], created);
}

/// The first release's declaration of widget columns, before `colour` was
/// kept in a column.
#[derive(Row)]
#[row(message = Widget)]
struct FirstWidgetRow {
    name: String,
    stock: i32,
    #[row(timestamp, output_only)]
    create_time: i64,
}

#[derive(Row)]
#[row(message = Widget)]
struct WidgetRowWithColour {
    name: String,
    stock: i32,
    #[row(timestamp, output_only)]
    create_time: i64,
    colour: String,
}

#[tokio::test]
async fn a_row_field_added_later_becomes_a_filled_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("widgets.db");
    let tables =
        |widgets: Table| SqlOptions::new([widgets, Table::of::<widgets::widgets::v1::PartRow>()]);

    let first = SqlStore::open_sqlite(&path, tables(Table::of::<FirstWidgetRow>()))
        .await
        .unwrap();
    let mut stored = Vec::new();
    for n in 0..3 {
        let item = created(widget(n), "");
        first.insert(&item).await.unwrap();
        stored.push(item);
    }
    first.close().await;

    let upgraded = SqlStore::open_sqlite(&path, tables(Table::of::<WidgetRowWithColour>()))
        .await
        .unwrap();
    let colours: Vec<(String, String)> =
        sqlx::query_as("SELECT uid, colour FROM widgets ORDER BY uid")
            .fetch_all(upgraded.pool())
            .await
            .unwrap();
    let mut expected: Vec<(String, String)> = stored
        .iter()
        .map(|w| (w.uid.clone(), w.colour.clone()))
        .collect();
    expected.sort();
    assert_eq!(colours, expected);
    let index: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'widgets_by_colour'",
    )
    .fetch_one(upgraded.pool())
    .await
    .unwrap();
    assert_eq!(index, 1, "the new column is indexed");
    // Items written after the upgrade fill the column too.
    let item = created(widget(4), "");
    upgraded.insert(&item).await.unwrap();
    let colour: String = sqlx::query_scalar("SELECT colour FROM widgets WHERE uid = $1")
        .bind(item.uid.clone())
        .fetch_one(upgraded.pool())
        .await
        .unwrap();
    assert_eq!(colour, item.colour);
}

#[tokio::test]
async fn declarations_that_cannot_keep_the_rules_are_refused_at_open() {
    #[derive(Row)]
    #[row(message = Widget)]
    struct NoOrderRow {
        name: String,
    }
    let dir = tempfile::tempdir().unwrap();
    let error = SqlStore::open_sqlite(
        &dir.path().join("widgets.db"),
        SqlOptions::new([Table::of::<NoOrderRow>()]),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("`widgets` needs a column for `stock` (order_by)"),
        "{error}"
    );
    assert!(
        error.contains("names `widgets.example/Part`, which has no table"),
        "{error}"
    );
}
