//! AIP-155 request ids on gadgets (`request_id` in their Create, Update and
//! Delete requests), on the memory store, SQLite and (when
//! `E2E_DATABASE_URL` names a server) PostgreSQL, over real sockets: a
//! retry after the connection was cut past the write makes one gadget and
//! gets the first answer; an id reused for another request is refused;
//! ids are per caller; concurrent twins write once; an SQLite record
//! outlives a restart.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::Next;
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::mask::Update;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::resource::Resource;
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::standard::Recorded;
use protoapi_runtime::store::{Backend, ListQuery, Page, StoreError};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use widgets::widgets::v1::gadget_service_client::GadgetServiceClient;
use widgets::{MemoryStore, SqlStore};

const WORKSHOP: &str = "1111111111111111111111111111111111111111";
const ID: &str = "0b8e8f2c-3c57-4d67-9d61-7f3a3c1b2a90";

/// A store whose inserts take a while after they commit: long enough for
/// a client to hang up between the write and its answer.
struct SlowInserts<B>(B);

impl<B: Backend> Backend for SlowInserts<B> {
    async fn insert<R: Resource>(&self, resource: &R) -> Result<(), StoreError> {
        self.0.insert(resource).await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        Ok(())
    }
    async fn get<R: Resource>(&self, key: &str) -> Result<Option<R>, StoreError> {
        self.0.get(key).await
    }
    async fn list<R: Resource>(&self, query: &ListQuery) -> Result<Page<R>, StoreError> {
        self.0.list(query).await
    }
    async fn update<R: Resource>(
        &self,
        key: &str,
        update: &Update<R>,
    ) -> Result<Option<R>, StoreError> {
        self.0.update(key, update).await
    }
    async fn delete<R: Resource>(&self, key: &str, etag: Option<&str>) -> Result<bool, StoreError> {
        self.0.delete::<R>(key, etag).await
    }
    async fn recorded(&self, key: &str) -> Result<Option<Recorded>, StoreError> {
        self.0.recorded(key).await
    }
}

/// `x-identity: <uid>` acts as that identity; no header as the system.
async fn identity(mut request: Request, next: Next) -> axum::response::Response {
    let caller = match request
        .headers()
        .get("x-identity")
        .and_then(|v| v.to_str().ok())
    {
        Some(uid) => Caller::Identity {
            uid: uid.to_owned(),
            admin: true,
        },
        None => Caller::System,
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

async fn serve<B: Backend>(store: B) -> String {
    let context = ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all());
    let app = widgets::Services::new(context)
        .store(Arc::new(SlowInserts(store)))
        .drawing_service(Arc::new(widgets::Drawings::default()))
        .layer(axum::middleware::from_fn(identity))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(app).await
}

async fn call(base: &str, method: &str, path: &str, who: &str, body: Value) -> (u16, Value) {
    use http_body_util::BodyExt;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Full<bytes::Bytes>>();
    let mut request = http::Request::builder()
        .method(method)
        .uri(format!("{base}{path}"))
        .header("content-type", "application/json");
    if !who.is_empty() {
        request = request.header("x-identity", who);
    }
    let request = request
        .body(http_body_util::Full::new(bytes::Bytes::from(
            body.to_string(),
        )))
        .unwrap();
    let response = client.request(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// A create's body (the gadget; the request id goes in the query).
fn create(name: &str) -> Value {
    json!({"displayName": name, "size": 1})
}

fn create_path(id: &str) -> String {
    format!("/v1/gadgets/{WORKSHOP}?requestId={id}")
}

async fn gadgets(base: &str) -> Vec<Value> {
    let (status, body) = call(base, "GET", "/v1/gadgets?pageSize=100", "", json!({})).await;
    assert_eq!(status, 200, "{body}");
    body["gadgets"].as_array().cloned().unwrap_or_default()
}

/// Sends a create on a socket of its own and hangs up once the write has
/// committed, before any answer.
async fn create_and_hang_up(base: &str, id: &str) {
    let body = json!({"displayName": "cut", "size": 1}).to_string();
    let request = format!(
        "POST {} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        create_path(id),
        body.len()
    );
    let address = base.trim_start_matches("http://");
    let before = gadgets(base).await.len();
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    // The store answers 300 ms after the insert commits: hang up once the
    // gadget is there, then give the server time to finish.
    for _ in 0..200 {
        if gadgets(base).await.len() > before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(socket);
    tokio::time::sleep(Duration::from_millis(400)).await;
}

async fn walk<B: Backend>(store: B) {
    let base = serve(store).await;

    // A retry after a cut connection: one gadget, answered as the first.
    create_and_hang_up(&base, ID).await;
    let stored = gadgets(&base).await;
    assert_eq!(
        stored.len(),
        1,
        "the write happened before the cut: {stored:?}"
    );
    let (status, retried) = call(
        &base,
        "POST",
        &create_path(ID),
        "",
        json!({"displayName": "cut", "size": 1}),
    )
    .await;
    assert_eq!(status, 200, "{retried}");
    assert_eq!(
        retried["uid"], stored[0]["uid"],
        "the first answer, not a new gadget"
    );
    assert_eq!(gadgets(&base).await.len(), 1);

    // The same id with another request is refused, naming the field.
    let (status, refused) = call(
        &base,
        "POST",
        &create_path(ID),
        "",
        json!({"displayName": "other", "size": 1}),
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(
        refused["error"]["details"][1]["fieldViolations"][0]["field"],
        "requestId"
    );
    // Not a UUID: refused before anything is written.
    let (status, _) = call(&base, "POST", &create_path("seven"), "", create("x")).await;
    assert_eq!(status, 400);

    // Ids are per caller: another caller's same id is a request of its own.
    let id = "6f1d3a52-0c1e-4b0e-8c43-1d2f3e4a5b6c";
    let (status, alice) = call(&base, "POST", &create_path(id), "alice", create("a")).await;
    assert_eq!(status, 200, "{alice}");
    let (status, bob) = call(&base, "POST", &create_path(id), "bob", create("a")).await;
    assert_eq!(status, 200, "{bob}");
    assert_ne!(alice["uid"], bob["uid"]);
    assert_eq!(gadgets(&base).await.len(), 3);

    // Concurrent twins write once: the other answers the same gadget, or
    // ABORTED while the first is being written.
    let twin = "9a4c6e1f-2b3d-4c5e-8f7a-0b1c2d3e4f5a";
    let twin_path = create_path(twin);
    let (first, second) = tokio::join!(
        call(&base, "POST", &twin_path, "", create("twin")),
        call(&base, "POST", &twin_path, "", create("twin")),
    );
    let answered: Vec<&(u16, Value)> = [&first, &second]
        .into_iter()
        .filter(|(s, _)| *s == 200)
        .collect();
    assert!(!answered.is_empty(), "{first:?} {second:?}");
    for (status, body) in [&first, &second] {
        assert!(*status == 200 || *status == 409, "{status}: {body}");
    }
    assert_eq!(gadgets(&base).await.len(), 4, "{first:?} {second:?}");

    // An update retried after another change answers what it wrote then
    // and does not write again.
    let uid = alice["uid"].as_str().unwrap().to_owned();
    // Its request id is not declared a UUID: any id will do.
    let update = "resize-to-5";
    let path = format!("/v1/gadgets/{uid}?updateMask=size&requestId={update}");
    let (status, first) = call(&base, "PATCH", &path, "alice", json!({"size": 5})).await;
    assert_eq!((status, &first["size"]), (200, &json!(5)), "{first}");
    let other = format!("/v1/gadgets/{uid}?updateMask=size");
    assert_eq!(
        call(&base, "PATCH", &other, "alice", json!({"size": 6}))
            .await
            .0,
        200
    );
    let (status, retried) = call(&base, "PATCH", &path, "alice", json!({"size": 5})).await;
    assert_eq!((status, &retried["size"]), (200, &json!(5)), "{retried}");
    let (_, now) = call(
        &base,
        "GET",
        &format!("/v1/gadgets/{uid}"),
        "alice",
        json!({}),
    )
    .await;
    assert_eq!(now["size"], 6, "the retry wrote nothing: {now}");

    // A delete retried answers the deleted gadget again, not NOT_FOUND.
    let delete = "5c4b3a29-1807-4f6e-9d5c-4b3a29180706";
    let path = format!("/v1/gadgets/{uid}?requestId={delete}");
    let (status, deleted) = call(&base, "DELETE", &path, "alice", json!({})).await;
    assert_eq!((status, &deleted["uid"]), (200, &json!(uid)), "{deleted}");
    let (status, again) = call(&base, "DELETE", &path, "alice", json!({})).await;
    assert_eq!((status, &again["uid"]), (200, &json!(uid)), "{again}");
    let plain = format!("/v1/gadgets/{uid}");
    assert_eq!(
        call(&base, "DELETE", &plain, "alice", json!({})).await.0,
        404
    );

    // gRPC: the same rules through the same method.
    let mut client = GadgetServiceClient::connect(base.clone()).await.unwrap();
    let request = || widgets::widgets::v1::CreateGadgetRequest {
        parent: WORKSHOP.into(),
        gadget: Some(widgets::widgets::v1::Gadget {
            display_name: "grpc".into(),
            ..Default::default()
        }),
        request_id: "77777777-7777-4777-8777-777777777777".into(),
    };
    let first = client.create_gadget(request()).await.unwrap().into_inner();
    let second = client.create_gadget(request()).await.unwrap().into_inner();
    assert_eq!(first.uid, second.uid);
}

#[tokio::test]
async fn retries_write_once_in_memory() {
    walk(MemoryStore::default()).await;
}

#[tokio::test]
async fn retries_write_once_in_sqlite_and_postgres() {
    let dir = tempfile::tempdir().unwrap();
    walk(
        widgets::open_sqlite(&dir.path().join("w.db"))
            .await
            .unwrap(),
    )
    .await;
    let Ok(server) = std::env::var("E2E_DATABASE_URL") else {
        eprintln!("E2E_DATABASE_URL is not set: PostgreSQL skipped");
        return;
    };
    let database = postgres::Database::create(&server).await;
    let options = protoapi_runtime::sql::SqlOptions::new(widgets::tables());
    walk(SqlStore::open(&database.url, options).await.unwrap()).await;
    database.drop_it().await;
}

#[path = "../../library/tests/common/postgres.rs"]
mod postgres;

/// SQLite keeps the record with the write: a retry after a restart is
/// answered from it.
#[tokio::test]
async fn a_record_outlives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.db");
    let base = serve(widgets::open_sqlite(&path).await.unwrap()).await;
    let (status, first) = call(&base, "POST", &create_path(ID), "", create("kept")).await;
    assert_eq!(status, 200, "{first}");
    let base = serve(widgets::open_sqlite(&path).await.unwrap()).await;
    let (status, retried) = call(&base, "POST", &create_path(ID), "", create("kept")).await;
    assert_eq!((status, &retried["uid"]), (200, &first["uid"]), "{retried}");
    assert_eq!(gadgets(&base).await.len(), 1);
}
