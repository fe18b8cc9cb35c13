//! The bookshelf API over a real socket, REST and gRPC, on SQLite and in
//! memory: everything it does comes from `proto/` and `annotations.toml`.

use std::sync::Arc;

use bookshelf::bookshelf::v1::book_service_client::BookServiceClient;
use bookshelf::bookshelf::v1::shelf_service_client::ShelfServiceClient;
use bookshelf::bookshelf::v1::{Book, DeleteShelfRequest, GetBookRequest, ListBooksRequest, Shelf};
use bookshelf::protoapi::v1::UidpFilter;
use bookshelf::{MemoryStore, SqlStore};
use http_body_util::BodyExt;
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::store::Backend;
use serde_json::{Value, json};

/// Serves the API over `store` on an ephemeral port; its base URL.
async fn serve(store: Arc<impl bookshelf::Stores>) -> String {
    let context = ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all());
    let router = bookshelf::Services::new(context)
        .store(store)
        // Every request acts as the system; a real server authenticates here.
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(router).await
}

/// Nothing the API answers (bodies, errors, the OpenAPI document) names the
/// Platform API that the generator's own repository also builds.
fn assert_neutral(text: &str) {
    for word in ["platform", "Platform", "organization", "iam."] {
        assert!(!text.contains(word), "`{word}` in {text}");
    }
}

/// One REST call; the status and the JSON body (checked by [`assert_neutral`]).
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
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    assert_neutral(&text);
    (status, serde_json::from_str(&text).unwrap())
}

/// Creates a shelf or a book over REST; its uid.
async fn create(base: &str, path: &str, body: Value) -> String {
    let (status, created) = call(base, "POST", path, Some(body)).await;
    assert_eq!(status, 200, "{created}");
    created["uid"].as_str().unwrap().to_owned()
}

async fn rest(base: &str) {
    let fiction = create(base, "/v1/shelves", json!({"name": "fiction"})).await;
    let empty = create(base, "/v1/shelves", json!({"name": "empty"})).await;
    let books = format!("/v1/books/{fiction}");
    let dune = json!({"name": "Dune", "author": "Herbert", "isbn": "978-0441013593"});
    let dune = create(base, &books, dune).await;
    create(base, &books, json!({"name": "Emma", "author": "Austen"})).await;
    create(
        base,
        &books,
        json!({"name": "Anathem", "author": "Stephenson"}),
    )
    .await;

    let (status, book) = call(base, "GET", &format!("/v1/books/{dune}"), None).await;
    assert_eq!(status, 200, "{book}");
    assert_eq!(
        (&book["name"], &book["isbn"]),
        (&json!("Dune"), &json!("978-0441013593"))
    );

    // A shelf's books, in a declared order; a declared filter.
    let list = format!("/v1/books?uidp.children_of={fiction}&order_by=author%20desc");
    let (status, listed) = call(base, "GET", &list, None).await;
    assert_eq!(status, 200, "{listed}");
    let authors: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|book| book["author"].as_str().unwrap())
        .collect();
    assert_eq!(authors, ["Stephenson", "Herbert", "Austen"]);
    assert_eq!(listed["totalCount"], 3);
    let (_, listed) = call(base, "GET", "/v1/books?name=Emma", None).await;
    assert_eq!(listed["items"][0]["author"], "Austen", "{listed}");
    let (status, body) = call(base, "GET", "/v1/books?order_by=isbn", None).await;
    assert_eq!(status, 400, "isbn is not declared in order_by: {body}");

    // The isbn is IMMUTABLE.
    let patch = format!("/v1/books/{dune}?updateMask=isbn,author");
    let (status, body) = call(
        base,
        "PATCH",
        &patch,
        Some(json!({"isbn": "0", "author": "F. Herbert"})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
    assert_eq!(
        body["error"]["details"][1]["fieldViolations"][0]["field"],
        "book.isbn"
    );

    // A book needs an existing shelf; a shelf with books cannot be deleted.
    let nowhere = format!("/v1/books/{}", "1".repeat(40));
    let (status, body) = call(base, "POST", &nowhere, Some(json!({"name": "Lost"}))).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["details"][0]["reason"], "PARENT_NOT_FOUND");
    let (status, body) = call(base, "DELETE", &format!("/v1/shelves/{fiction}"), None).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["status"], "FAILED_PRECONDITION");
    assert!(
        body.to_string().contains(&dune),
        "names the books on it: {body}"
    );
    let (status, body) = call(base, "DELETE", &format!("/v1/shelves/{empty}"), None).await;
    assert_eq!((status, body), (200, json!({})));

    // Errors outside every service, and the OpenAPI document.
    let (status, _) = call(base, "GET", "/v1/magazines", None).await;
    assert_eq!(status, 404);
    let (status, openapi) = call(base, "GET", "/openapi.json", None).await;
    assert_eq!(status, 200);
    assert!(openapi["paths"]["/v1/books/{uid}"].is_object(), "{openapi}");
}

/// The same API over gRPC, on the same port.
async fn grpc(base: &str) {
    let shelf = create(base, "/v1/shelves", json!({"name": "poetry"})).await;
    let books = format!("/v1/books/{shelf}");
    let odyssey = create(base, &books, json!({"name": "Odyssey", "author": "Homer"})).await;
    create(base, &books, json!({"name": "Aeneid", "author": "Virgil"})).await;

    let channel = tonic::transport::Endpoint::from_shared(base.to_owned())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut books = BookServiceClient::new(channel.clone());
    let book = books
        .get_book(GetBookRequest { uid: odyssey })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(book.author, "Homer");
    let page = books
        .list_books(ListBooksRequest {
            uidp: Some(UidpFilter {
                children_of: shelf.clone(),
                ..Default::default()
            }),
            order_by: "name".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let names: Vec<&str> = page.items.iter().map(|book| book.name.as_str()).collect();
    assert_eq!(names, ["Aeneid", "Odyssey"]);

    let mut shelves = ShelfServiceClient::new(channel);
    let status = shelves
        .delete_shelf(DeleteShelfRequest {
            uid: shelf,
            etag: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert_neutral(status.message());
    assert_neutral(&String::from_utf8_lossy(status.details()));
}

#[tokio::test]
async fn served_from_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let base = serve(Arc::new(sqlite(&dir).await)).await;
    rest(&base).await;
    grpc(&base).await;
}

#[tokio::test]
async fn served_from_memory() {
    let base = serve(Arc::new(MemoryStore::default())).await;
    rest(&base).await;
    grpc(&base).await;
}

async fn sqlite(dir: &tempfile::TempDir) -> SqlStore {
    bookshelf::open_sqlite(&dir.path().join("books.db"))
        .await
        .unwrap()
}

/// The library's storage conformance suite, on both stores.
async fn conforms<B: Backend>(store: &B) {
    let shelf = |n| Shelf {
        name: format!("shelf {n}"),
        ..Default::default()
    };
    let book = |n| Book {
        name: format!("book {n}"),
        author: format!("author {}", n % 3),
        isbn: format!("isbn {n}"),
        ..Default::default()
    };
    protoapi_runtime::conformance::run::<B, Shelf, Shelf>(store, shelf).await;
    protoapi_runtime::conformance::run::<B, Shelf, Book>(store, book).await;
}

#[tokio::test]
async fn the_stores_conform() {
    conforms(&MemoryStore::default()).await;
    let dir = tempfile::tempdir().unwrap();
    conforms(&sqlite(&dir).await).await;
}
