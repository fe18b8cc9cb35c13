//! Long-running operations (AIP-151) over a real socket: branches are
//! opened, changed and closed by operations that run in the background,
//! read, listed, waited for, cancelled and forgotten through
//! `google.longrunning.Operations` over REST and gRPC, in memory, on SQLite
//! and (when `E2E_DATABASE_URL` names a server) on PostgreSQL. A cancelled
//! operation's write is never made; an operation whose server stopped
//! reads `ABORTED` after a restart, its write absent.

#[path = "common/postgres.rs"]
mod postgres;

use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use library::MemoryStore;
use library::google::longrunning::operations_client::OperationsClient;
use library::google::longrunning::{WaitOperationRequest, operation};
use library::library::v1::branch_service_client::BranchServiceClient;
use library::library::v1::{Branch, CreateBranchRequest};
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::console::Console;
use protoapi_runtime::console::testing::Browser;
use protoapi_runtime::mask::Update;
use protoapi_runtime::operation::{OperationStore, StoredOperation};
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::resource::Resource;
use protoapi_runtime::standard::{ApiContext, DryRun, Recorded};
use protoapi_runtime::store::{Backend, ListQuery, Page, StoreError};
use serde_json::{Value, json};

const LOCATION: &str = "/v1/projects/p/locations/l";

/// Serves the API over `store` on an ephemeral port, running operations
/// with `lease`; its base URL.
async fn serve<S: library::Stores>(store: Arc<S>, lease: Duration) -> String {
    let context = ApiContext::new(PageTokens::new([9; 32]), Authorizer::allow_all())
        .with_operation_lease(lease);
    let router = library::Services::new(context)
        .store(store)
        .console(Console::new(&library::SCHEMA))
        .layer(axum::middleware::from_fn(caller))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(router).await
}

/// `x-anonymous` calls as nobody; other requests as the system.
async fn caller(
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let caller = match request.headers().contains_key("x-anonymous") {
        true => Caller::Anonymous,
        false => Caller::System,
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// One REST call as nobody: the status and the JSON body.
async fn anonymous(base: &str, method: &str, path: &str) -> (u16, Value) {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http();
    let request = axum::http::Request::builder()
        .method(method)
        .uri(format!("{base}{path}"))
        .header("x-anonymous", "1")
        .body(if method == "GET" {
            String::new()
        } else {
            "{}".to_owned()
        })
        .unwrap();
    let response = client.request(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// One REST call: the status and the JSON body.
async fn call(base: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http();
    let request = axum::http::Request::builder()
        .method(method)
        .uri(format!("{base}{path}"))
        .body(body.map(|b| b.to_string()).unwrap_or_default())
        .unwrap();
    let response = client.request(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// Starts an operation over REST; the operation answered.
async fn start(base: &str, method: &str, path: &str, body: Option<Value>) -> Value {
    let (status, operation) = call(base, method, path, body).await;
    assert_eq!(status, 200, "{path}: {operation}");
    operation
}

/// Waits for operation `operation` over REST; the operation once done.
async fn wait(base: &str, operation: &Value) -> Value {
    let name = operation["name"].as_str().unwrap();
    let (status, done) = call(base, "POST", &format!("/v1/{name}:wait"), Some(json!({}))).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["done"], true, "{done}");
    done
}

async fn lifecycle(base: &str) {
    // Opening: the operation is named under the location, says what it
    // does, and ends with the branch.
    let path = format!("{LOCATION}/branches?branchId=main");
    let opened = start(
        base,
        "POST",
        &path,
        Some(json!({"address": "1 Main St", "region": "north"})),
    )
    .await;
    let name = opened["name"].as_str().unwrap().to_owned();
    assert!(
        name.starts_with("projects/p/locations/l/operations/operation-"),
        "{opened}"
    );
    let metadata = &opened["metadata"];
    assert_eq!(
        metadata["@type"],
        "type.googleapis.com/library.v1.OperationMetadata"
    );
    assert_eq!(
        (&metadata["verb"], &metadata["target"]),
        (&json!("create"), &json!("projects/p/locations/l"))
    );
    assert!(metadata["createTime"].is_string(), "{opened}");
    let done = wait(base, &opened).await;
    assert_eq!(
        done["response"]["@type"],
        "type.googleapis.com/library.v1.Branch"
    );
    assert_eq!(
        done["response"]["name"],
        "projects/p/locations/l/branches/main"
    );
    assert!(done["metadata"]["endTime"].is_string(), "{done}");
    let (status, read) = call(base, "GET", &format!("/v1/{name}"), None).await;
    assert_eq!((status, &read), (200, &done));
    let (status, branch) = call(base, "GET", &format!("{LOCATION}/branches/main"), None).await;
    assert_eq!((status, &branch["address"]), (200, &json!("1 Main St")));

    // What is wrong with a request is answered before any operation starts,
    // what only storage finds (a taken id) included: the flow runs as a dry
    // run first.
    let (status, taken) = call(
        base,
        "POST",
        &path,
        Some(json!({"address": "2 Main St", "region": "north"})),
    )
    .await;
    assert_eq!(status, 409, "ALREADY_EXISTS: {taken}");
    let bad = format!("{LOCATION}/branches?branchId=Main!");
    let (status, refused) = call(base, "POST", &bad, Some(json!({"region": "north"}))).await;
    assert_eq!(status, 400, "{refused}");
    // A field both REQUIRED and IMMUTABLE is both.
    let unset = format!("{LOCATION}/branches?branchId=unset");
    let (status, refused) = call(base, "POST", &unset, Some(json!({"address": "x"}))).await;
    assert_eq!(status, 400, "region is required: {refused}");
    assert_eq!(
        refused["error"]["details"][1]["fieldViolations"][0]["field"], "branch.region",
        "{refused}"
    );
    let moved = format!("{LOCATION}/branches/main?updateMask=region");
    let (status, refused) = call(base, "PATCH", &moved, Some(json!({"region": "south"}))).await;
    assert_eq!(status, 400, "region is immutable: {refused}");

    // Changing, then closing.
    let path = format!("{LOCATION}/branches/main?updateMask=address");
    let changed = start(base, "PATCH", &path, Some(json!({"address": "3 Elm St"}))).await;
    assert_eq!(changed["metadata"]["verb"], "update");
    let changed = wait(base, &changed).await;
    assert_eq!(changed["response"]["address"], "3 Elm St");
    let closed = start(base, "DELETE", &format!("{LOCATION}/branches/main"), None).await;
    let closed = wait(base, &closed).await;
    assert_eq!(
        closed["response"]["@type"],
        "type.googleapis.com/google.protobuf.Empty"
    );
    let (status, _) = call(base, "GET", &format!("{LOCATION}/branches/main"), None).await;
    assert_eq!(status, 404);
    let (status, missing) = call(base, "DELETE", &format!("{LOCATION}/branches/main"), None).await;
    assert_eq!(status, 404, "{missing}");

    // Every operation of the location, a page at a time, oldest first.
    let mut listed = Vec::new();
    let mut token = String::new();
    loop {
        let path = format!("{LOCATION}/operations?pageSize=2&pageToken={token}");
        let (status, page) = call(base, "GET", &path, None).await;
        assert_eq!(status, 200, "{page}");
        for operation in page["operations"].as_array().unwrap() {
            listed.push(operation["name"].as_str().unwrap().to_owned());
        }
        token = page["nextPageToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if token.is_empty() {
            break;
        }
    }
    let started = [&opened, &changed, &closed];
    let started: Vec<String> = started
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(listed, started);
    // Filtered (AIP-160) by `done` and `name`.
    let filtered = |filter: String| {
        let filter = filter.replace(' ', "%20").replace('"', "%22");
        let path = format!("{LOCATION}/operations?filter={filter}");
        async move { call(base, "GET", &path, None).await }
    };
    let (status, page) = filtered("done = true".into()).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["operations"].as_array().unwrap().len(), 3, "{page}");
    let (_, page) = filtered("done = false OR NOT name:*".into()).await;
    assert_eq!(page["operations"], json!([]), "{page}");
    let last = started.last().unwrap();
    let (_, page) = filtered(format!("name = \"{last}\"")).await;
    let names: Vec<&str> = page["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [last.as_str()], "{page}");
    let (status, refused) = filtered("verb = create".into()).await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused.to_string().contains("filterable: name, done"),
        "{refused}"
    );
    let (status, refused) = call(
        base,
        "GET",
        &format!("{LOCATION}/operations?pageToken=bm9wZQ"),
        None,
    )
    .await;
    assert_eq!(status, 400, "{refused}");

    // Nobody reads, cancels or forgets an operation, nor starts one: an
    // unauthenticated write is refused before anything is stored.
    for (method, path) in [
        ("GET", format!("/v1/{name}")),
        ("POST", format!("/v1/{name}:cancel")),
        ("POST", format!("/v1/{name}:wait")),
        ("DELETE", format!("/v1/{name}")),
        ("GET", format!("{LOCATION}/operations")),
        ("POST", format!("{LOCATION}/branches?branchId=anonymous")),
    ] {
        let (status, refused) = anonymous(base, method, &path).await;
        assert_eq!(status, 401, "{method} {path}: {refused}");
    }
    let (_, page) = call(base, "GET", &format!("{LOCATION}/operations"), None).await;
    assert_eq!(page["operations"].as_array().unwrap().len(), started.len());

    // A done operation is forgotten on request.
    let (status, _) = call(base, "DELETE", &format!("/v1/{name}"), None).await;
    assert_eq!(status, 200);
    let (status, gone) = call(base, "GET", &format!("/v1/{name}"), None).await;
    assert_eq!(status, 404, "{gone}");
}

async fn over_grpc(base: &str) {
    let channel = tonic::transport::Channel::from_shared(base.to_owned())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut branches = BranchServiceClient::new(channel.clone());
    let mut operations = OperationsClient::new(channel);
    let request = CreateBranchRequest {
        parent: "projects/p/locations/grpc".into(),
        branch_id: "north".into(),
        branch: Some(Branch {
            address: "9 North Rd".into(),
            region: "north".into(),
            ..Default::default()
        }),
        request_id: String::new(),
    };
    let started = branches.create_branch(request).await.unwrap().into_inner();
    assert!(
        started
            .name
            .starts_with("projects/p/locations/grpc/operations/")
    );
    let done = operations
        .wait_operation(WaitOperationRequest {
            name: started.name.clone(),
            timeout: Some(prost_types::Duration {
                seconds: 5,
                nanos: 0,
            }),
        })
        .await
        .unwrap()
        .into_inner();
    let Some(operation::Result::Response(response)) = done.result else {
        panic!("a response: {done:?}")
    };
    let branch = <Branch as prost::Message>::decode(response.value.as_slice()).unwrap();
    assert_eq!(branch.name, "projects/p/locations/grpc/branches/north");
    let status = operations
        .get_operation(library::google::longrunning::GetOperationRequest {
            name: "projects/p/locations/grpc/operations/none".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound);
}

#[tokio::test]
async fn operations_run_in_memory_over_rest_and_grpc() {
    let base = serve(Arc::new(MemoryStore::new()), Duration::from_secs(30)).await;
    lifecycle(&base).await;
    over_grpc(&base).await;
}

#[tokio::test]
async fn operations_run_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("library.db").display()
    );
    let base = serve(
        Arc::new(library::open(&url).await.unwrap()),
        Duration::from_secs(30),
    )
    .await;
    lifecycle(&base).await;
    over_grpc(&base).await;
}

#[tokio::test]
async fn operations_run_on_postgres() {
    let Ok(server) = std::env::var("E2E_DATABASE_URL") else {
        eprintln!("skipped: E2E_DATABASE_URL is not set");
        return;
    };
    let database = postgres::Database::create(&server).await;
    let store = Arc::new(library::open(&database.url).await.unwrap());
    let base = serve(store, Duration::from_secs(30)).await;
    lifecycle(&base).await;
    over_grpc(&base).await;
    cancelled(library::open(&database.url).await.unwrap()).await;
    restarted(&database.url).await;
    database.drop_it().await;
}

/// A store whose writes (but dry runs) start only after `delay`: long
/// enough to cancel an operation, or stop its server, before its write.
struct Slow<B> {
    inner: B,
    delay: Duration,
}

impl<B> Slow<B> {
    async fn pause(&self) {
        if !DryRun::current() {
            tokio::time::sleep(self.delay).await;
        }
    }
}

impl<B: Backend> Backend for Slow<B> {
    fn dry_runs(&self) -> bool {
        self.inner.dry_runs()
    }
    async fn insert<R: Resource>(&self, resource: &R) -> Result<(), StoreError> {
        self.pause().await;
        self.inner.insert(resource).await
    }
    async fn get<R: Resource>(&self, key: &str) -> Result<Option<R>, StoreError> {
        self.inner.get(key).await
    }
    async fn list<R: Resource>(&self, query: &ListQuery) -> Result<Page<R>, StoreError> {
        self.inner.list(query).await
    }
    async fn update<R: Resource>(
        &self,
        key: &str,
        update: &Update<R>,
    ) -> Result<Option<R>, StoreError> {
        self.pause().await;
        self.inner.update(key, update).await
    }
    async fn delete<R: Resource>(&self, key: &str, etag: Option<&str>) -> Result<bool, StoreError> {
        self.pause().await;
        self.inner.delete::<R>(key, etag).await
    }
    async fn recorded(&self, key: &str) -> Result<Option<Recorded>, StoreError> {
        self.inner.recorded(key).await
    }
}

impl<B: OperationStore> OperationStore for Slow<B> {
    async fn insert_operation(&self, operation: &StoredOperation) -> Result<(), StoreError> {
        self.inner.insert_operation(operation).await
    }
    async fn get_operation(&self, name: &str) -> Result<Option<StoredOperation>, StoreError> {
        self.inner.get_operation(name).await
    }
    async fn list_operations(
        &self,
        prefix: &str,
        after: &str,
        limit: usize,
    ) -> Result<Vec<StoredOperation>, StoreError> {
        self.inner.list_operations(prefix, after, limit).await
    }
    async fn finish_operation(&self, name: &str, body: &[u8]) -> Result<bool, StoreError> {
        self.inner.finish_operation(name, body).await
    }
    async fn renew_operation(&self, name: &str, lease: i64) -> Result<(), StoreError> {
        self.inner.renew_operation(name, lease).await
    }
    async fn delete_operation(&self, name: &str) -> Result<bool, StoreError> {
        self.inner.delete_operation(name).await
    }
    async fn operation_started_under(&self, key: &str) -> Result<Option<Recorded>, StoreError> {
        self.inner.operation_started_under(key).await
    }
}

/// An operation cancelled before its write ends `CANCELLED`, and its write
/// is never made; a running operation cannot be forgotten.
async fn cancelled<B: Backend + OperationStore>(inner: B) {
    let slow = Slow {
        inner,
        delay: Duration::from_millis(500),
    };
    let base = serve(Arc::new(slow), Duration::from_secs(30)).await;
    let path = format!("{LOCATION}/branches?branchId=cancelled");
    let started = start(
        &base,
        "POST",
        &path,
        Some(json!({"address": "nowhere", "region": "north"})),
    )
    .await;
    assert_eq!(started["done"], false, "{started}");
    let name = started["name"].as_str().unwrap();
    let (status, refused) = call(&base, "DELETE", &format!("/v1/{name}"), None).await;
    assert_eq!(status, 400, "FAILED_PRECONDITION while running: {refused}");
    let (status, _) = call(
        &base,
        "POST",
        &format!("/v1/{name}:cancel"),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 200);
    let done = wait(&base, &started).await;
    assert_eq!(done["error"]["code"], 1, "CANCELLED: {done}");
    // Past the delay, the write found its operation ended.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let (status, _) = call(
        &base,
        "GET",
        &format!("{LOCATION}/branches/cancelled"),
        None,
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(
        call(&base, "GET", &format!("/v1/{name}"), None).await.1,
        done
    );
}

#[tokio::test]
async fn cancelled_operations_write_nothing() {
    cancelled(MemoryStore::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("library.db").display()
    );
    cancelled(library::open(&url).await.unwrap()).await;
}

/// A create retried under its AIP-155 request id, while its operation
/// runs and after it ended, is answered with the first operation, and one
/// branch is made; the id with another request is refused.
async fn retried<B: Backend + OperationStore>(inner: B) {
    let slow = Slow {
        inner,
        delay: Duration::from_millis(500),
    };
    let base = serve(Arc::new(slow), Duration::from_secs(30)).await;
    let path = format!("{LOCATION}/branches?requestId=6f1c2a4e-8b3d-4e5f-9a7b-1c2d3e4f5a6b");
    let body = json!({"address": "2 Retry Rd", "region": "south"});
    let first = start(&base, "POST", &path, Some(body.clone())).await;
    assert_eq!(first["done"], false, "{first}");
    let again = start(&base, "POST", &path, Some(body.clone())).await;
    assert_eq!(again["name"], first["name"], "{again}");
    assert_eq!(
        again["done"], false,
        "the first operation, still running: {again}"
    );
    let other = json!({"address": "3 Other St", "region": "south"});
    let (status, refused) = call(&base, "POST", &path, Some(other)).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(
        refused["error"]["details"][1]["fieldViolations"][0]["field"], "requestId",
        "{refused}"
    );
    let done = wait(&base, &first).await;
    let ended = start(&base, "POST", &path, Some(body)).await;
    assert_eq!(ended, done, "the first operation, ended");
    let (status, page) = call(&base, "GET", &format!("{LOCATION}/branches"), None).await;
    assert_eq!(status, 200, "{page}");
    let made: Vec<&Value> = page["branches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["address"] == "2 Retry Rd")
        .collect();
    assert_eq!(made.len(), 1, "{page}");
    assert_eq!(made[0]["name"], done["response"]["name"], "{done}");
}

#[tokio::test]
async fn retried_creates_answer_their_first_operation() {
    retried(MemoryStore::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("library.db").display()
    );
    retried(library::open(&url).await.unwrap()).await;
    let Ok(server) = std::env::var("E2E_DATABASE_URL") else {
        eprintln!("E2E_DATABASE_URL is not set: PostgreSQL skipped");
        return;
    };
    let database = postgres::Database::create(&server).await;
    retried(library::open(&database.url).await.unwrap()).await;
    database.drop_it().await;
}

/// An operation whose server stopped before its write reads `ABORTED` once
/// its lease passes, from the server that replaces it; its write is absent.
async fn restarted(url: &str) {
    // The first server runs on a runtime of its own, stopped mid-operation.
    let first = tokio::runtime::Runtime::new().unwrap();
    let store = Slow {
        inner: library::open(url).await.unwrap(),
        delay: Duration::from_secs(5),
    };
    let base = first
        .spawn(serve(Arc::new(store), Duration::from_millis(300)))
        .await
        .unwrap();
    let path = format!("{LOCATION}/branches?branchId=interrupted");
    let started = start(
        &base,
        "POST",
        &path,
        Some(json!({"address": "half", "region": "north"})),
    )
    .await;
    first.shutdown_background();
    let base = serve(
        Arc::new(library::open(url).await.unwrap()),
        Duration::from_secs(30),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let name = started["name"].as_str().unwrap();
    let (status, read) = call(&base, "GET", &format!("/v1/{name}"), None).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["done"], true, "{read}");
    assert_eq!(read["error"]["code"], 10, "ABORTED: {read}");
    let (status, _) = call(
        &base,
        "GET",
        &format!("{LOCATION}/branches/interrupted"),
        None,
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn abandoned_operations_end_aborted_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("library.db").display()
    );
    drop(library::open(&url).await.unwrap());
    restarted(&url).await;
}

/// The generated client's `*_and_wait`: the operation polled until done,
/// and what it made or the error it ended with, over either transport.
async fn client_waits(
    base: &str,
    connection: protoapi_runtime::client::Connection,
    location: &str,
) {
    let client = library::Client::new(connection);
    let branches = client.branches();
    let request = CreateBranchRequest {
        parent: location.to_owned(),
        branch_id: "south".into(),
        branch: Some(Branch {
            address: "1 South St".into(),
            region: "south".into(),
            ..Default::default()
        }),
        request_id: String::new(),
    };
    let made = branches.create_and_wait(request).await.unwrap();
    assert_eq!(made.name, format!("{location}/branches/south"));
    let request = library::library::v1::DeleteBranchRequest {
        name: made.name.clone(),
    };
    branches.delete_and_wait(request).await.unwrap();
    let (status, _) = call(base, "GET", &format!("/v1/{}", made.name), None).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn the_client_waits_for_operations() {
    use protoapi_runtime::client::Connection;
    let base = serve(Arc::new(MemoryStore::new()), Duration::from_secs(30)).await;
    let rest = Connection::rest(&base).unwrap();
    client_waits(&base, rest, "projects/p/locations/rest").await;
    let grpc = Connection::grpc(&base).unwrap();
    client_waits(&base, grpc, "projects/p/locations/grpc").await;
}

/// An item's page in the console shows the operations still running on it,
/// and no longer once they are done.
#[tokio::test]
async fn the_console_shows_operations_running_on_an_item() {
    let slow = Slow {
        inner: MemoryStore::new(),
        delay: Duration::from_secs(2),
    };
    let base = serve(Arc::new(slow), Duration::from_secs(30)).await;
    let made = start(
        &base,
        "POST",
        &format!("{LOCATION}/branches?branchId=main"),
        Some(json!({"address": "high street", "region": "north"})),
    )
    .await;
    wait(&base, &made).await;
    let started = start(
        &base,
        "PATCH",
        &format!("{LOCATION}/branches/main?updateMask=address"),
        Some(json!({"address": "low street"})),
    )
    .await;
    assert_eq!(started["done"], false, "{started}");
    let mut browser = Browser::new(base.clone());
    browser.sign_in("").await;
    let page = "/console/branches/item/projects/p/locations/l/branches/main";
    let item = browser.get(page).await;
    assert_eq!(item.status, 200, "{}", item.html);
    let name = started["name"].as_str().unwrap();
    assert!(
        item.html.contains("<h2>Running operations</h2>"),
        "{}",
        item.html
    );
    assert!(
        item.html.contains(&format!("<code>{name}</code> update")),
        "{}",
        item.html
    );
    wait(&base, &started).await;
    let done = browser.get(page).await;
    assert!(done.html.contains("low street"), "{}", done.html);
    assert!(!done.html.contains("Running operations"), "{}", done.html);
}
