//! The Press API over a real socket, REST and gRPC, in memory and on SQLite:
//! a Google-style proto served as written, with no annotation file.

use std::sync::Arc;

use futures_util::StreamExt;
use http_body_util::BodyExt;
use press::press::v1::{
    Book, CreateBookRequest, CreatePublisherRequest, DeleteReviewRequest, ExportBooksRequest,
    GetBookRequest, ListBooksRequest, Publisher, book,
};
use press::{Catalog, MemoryStore};
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::client::Connection;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::store::Backend;
use serde_json::{Value, json};

/// Serves the API over `store` on an ephemeral port; its base URL.
async fn serve<B: Backend>(store: B) -> String {
    // Every request acts as the system; a real server authenticates here.
    serve_as(store, Authorizer::allow_all(), Caller::System).await
}

/// Serves the API over `store`, every request from `caller`, decided by
/// `authorizer`; its base URL.
async fn serve_as<B: Backend>(store: B, authorizer: Authorizer, caller: Caller) -> String {
    let context = ApiContext::new(PageTokens::new([3; 32]), authorizer);
    let router = press::Services::new(context)
        .press(Arc::new(Catalog::new(store)))
        .layer(axum::Extension(caller))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(router).await
}

/// One HTTP exchange: status, content type and body bytes.
async fn exchange(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, String, Vec<u8>) {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http();
    let mut request = axum::http::Request::builder()
        .method(method)
        .uri(format!("{base}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = client
        .request(
            request
                .body(http_body_util::Full::new(bytes(body)))
                .unwrap(),
        )
        .await
        .unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, content_type, body.to_vec())
}

fn bytes(body: Vec<u8>) -> axum::body::Bytes {
    axum::body::Bytes::from(body)
}

/// One REST call with a JSON body (or none); the status and the JSON answer.
async fn call(base: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let body = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    let (status, _, answer) = exchange(base, method, path, &[], body).await;
    let text = String::from_utf8(answer).unwrap();
    let value = if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    };
    (status, value)
}

/// The `reason` of an error answer.
fn reason(error: &Value) -> &str {
    error["error"]["details"]
        .as_array()
        .and_then(|details| details.iter().find_map(|d| d["reason"].as_str()))
        .unwrap_or_default()
}

#[tokio::test]
async fn in_memory() {
    walk(&serve(MemoryStore::default()).await).await;
}

#[tokio::test]
async fn on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = press::open_sqlite(&dir.path().join("press.db"))
        .await
        .unwrap();
    walk(&serve(store).await).await;
}

/// Every construct of the proto, over REST and then the generated client
/// on both transports.
async fn walk(base: &str) {
    publishers(base).await;
    books(base).await;
    reviews(base).await;
    custom_methods(base).await;
    covers(base).await;
    exports(base).await;
    deletes(base).await;
    generated_client(base).await;
}

/// A top-level collection: client-chosen and generated ids, `google.type`
/// fields, plural list fields with `total_size` and page tokens, a
/// REQUIRED update mask.
async fn publishers(base: &str) {
    let penguin = json!({
        "displayName": "Penguin",
        "headquarters": {"latitude": 51.5, "longitude": -0.12},
        "founded": {"year": 1935, "month": 7, "day": 30}
    });
    let (status, created) = call(
        base,
        "POST",
        "/v1/publishers?publisherId=penguin",
        Some(penguin),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["name"], "publishers/penguin");
    assert_eq!(
        created["headquarters"],
        json!({"latitude": 51.5, "longitude": -0.12})
    );
    assert_eq!(
        created["founded"],
        json!({"year": 1935, "month": 7, "day": 30})
    );
    assert!(created["createTime"].is_string() && created["etag"].is_string());

    let (status, again) = call(
        base,
        "POST",
        "/v1/publishers?publisherId=penguin",
        Some(json!({"displayName": "x"})),
    )
    .await;
    assert_eq!((status, reason(&again)), (409, "ALREADY_EXISTS"), "{again}");
    let (status, bad) = call(
        base,
        "POST",
        "/v1/publishers?publisherId=Not_An_Id",
        Some(json!({"displayName": "x"})),
    )
    .await;
    assert_eq!(status, 400, "{bad}");
    assert_eq!(
        bad["error"]["details"][1]["fieldViolations"][0]["field"], "publisherId",
        "{bad}"
    );

    let (status, chosen) = call(
        base,
        "POST",
        "/v1/publishers",
        Some(json!({"displayName": "Faber"})),
    )
    .await;
    assert_eq!(status, 200, "{chosen}");
    let generated = chosen["name"].as_str().unwrap();
    assert!(
        generated.starts_with("publishers/") && generated != "publishers/",
        "{chosen}"
    );

    let (status, got) = call(base, "GET", "/v1/publishers/penguin", None).await;
    assert_eq!((status, &got), (200, &created));

    // Plural list field, total size, page tokens.
    let (status, page) = call(base, "GET", "/v1/publishers?pageSize=1", None).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["publishers"].as_array().unwrap().len(), 1, "{page}");
    assert_eq!(page["totalSize"], 2, "{page}");
    let token = page["nextPageToken"].as_str().unwrap();
    let (_, next) = call(
        base,
        "GET",
        &format!("/v1/publishers?pageSize=1&pageToken={token}"),
        None,
    )
    .await;
    assert_eq!(next["publishers"].as_array().unwrap().len(), 1, "{next}");
    assert_ne!(next["publishers"][0]["name"], page["publishers"][0]["name"]);
    // The last page has no next one.
    assert_eq!(
        next["nextPageToken"].as_str().unwrap_or_default(),
        "",
        "{next}"
    );

    // The mask is REQUIRED; the name in the path says which.
    let (status, unmasked) = call(
        base,
        "PATCH",
        "/v1/publishers/penguin",
        Some(json!({"displayName": "Penguin Books"})),
    )
    .await;
    assert_eq!(status, 400, "{unmasked}");
    assert!(unmasked.to_string().contains("updateMask"), "{unmasked}");
    let (status, updated) = call(
        base,
        "PATCH",
        "/v1/publishers/penguin?updateMask=displayName",
        Some(json!({"displayName": "Penguin Books"})),
    )
    .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["displayName"], "Penguin Books");
    assert_eq!(updated["founded"], created["founded"]);
}

/// A nested collection: parents from the pattern, scoped lists, batch get.
async fn books(base: &str) {
    let dune = json!({
        "title": "Dune", "authors": ["Frank Herbert"], "format": "PAPERBACK",
        "price": {"currencyCode": "GBP", "units": "9", "nanos": 990000000},
        "published": {"year": 1965, "month": 8, "day": 1}
    });
    let (status, created) = call(
        base,
        "POST",
        "/v1/publishers/penguin/books?bookId=dune",
        Some(dune),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["name"], "publishers/penguin/books/dune");
    assert_eq!(
        created["price"],
        json!({"currencyCode": "GBP", "units": "9", "nanos": 990000000})
    );
    for (id, title, format) in [
        ("emma", "Emma", "HARDCOVER"),
        ("dune-messiah", "Dune Messiah", "EBOOK"),
    ] {
        let body = json!({"title": title, "format": format});
        let (status, answer) = call(
            base,
            "POST",
            &format!("/v1/publishers/penguin/books?bookId={id}"),
            Some(body),
        )
        .await;
        assert_eq!(status, 200, "{answer}");
    }
    let (status, orphan) = call(
        base,
        "POST",
        "/v1/publishers/nobody/books?bookId=x",
        Some(json!({"title": "x"})),
    )
    .await;
    assert_eq!(status, 404, "{orphan}");

    // Another publisher's book is not in this one's list.
    let (_, faber) = call(
        base,
        "POST",
        "/v1/publishers?publisherId=faber",
        Some(json!({"displayName": "Faber"})),
    )
    .await;
    assert_eq!(faber["name"], "publishers/faber");
    let (status, _) = call(
        base,
        "POST",
        "/v1/publishers/faber/books?bookId=ulysses",
        Some(json!({"title": "Ulysses"})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, list) = call(base, "GET", "/v1/publishers/penguin/books", None).await;
    assert_eq!(status, 200, "{list}");
    let names: Vec<&str> = list["books"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 3, "{list}");
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("publishers/penguin/books/")),
        "{names:?}"
    );
    let (status, every) = call(base, "GET", "/v1/publishers/-/books", None).await;
    assert_eq!(
        (status, every["books"].as_array().unwrap().len()),
        (200, 4),
        "{every}"
    );

    let (status, got) = call(base, "GET", "/v1/publishers/penguin/books/dune", None).await;
    assert_eq!((status, got["title"].as_str()), (200, Some("Dune")));
    let (status, missing) = call(base, "GET", "/v1/publishers/penguin/books/nope", None).await;
    assert_eq!(status, 404, "{missing}");

    // A nested field path in the template: `book.name`.
    let (status, updated) = call(
        base,
        "PATCH",
        "/v1/publishers/penguin/books/emma?updateMask=authors",
        Some(json!({"authors": ["Jane Austen"]})),
    )
    .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["name"], "publishers/penguin/books/emma");
    assert_eq!(updated["authors"], json!(["Jane Austen"]));

    // AIP-231: in the order asked, all or nothing.
    let batch = "/v1/publishers/penguin/books:batchGet?names=publishers/penguin/books/emma&names=publishers/penguin/books/dune";
    let (status, found) = call(base, "GET", batch, None).await;
    assert_eq!(status, 200, "{found}");
    let titles: Vec<&str> = found["books"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Emma", "Dune"]);
    let (status, none) = call(
        base,
        "GET",
        &format!("{batch}&names=publishers/penguin/books/nope"),
        None,
    )
    .await;
    assert_eq!(status, 404, "{none}");
    let (status, elsewhere) = call(
        base,
        "GET",
        "/v1/publishers/penguin/books:batchGet?names=publishers/faber/books/ulysses",
        None,
    )
    .await;
    assert_eq!(status, 400, "{elsewhere}");
}

/// `:verb` methods and an additional binding: the same search as a query
/// string (a repeated enum) and as a body.
async fn custom_methods(base: &str) {
    let (status, found) = call(
        base,
        "GET",
        "/v1/publishers/penguin/books:search?query=dune&formats=PAPERBACK&formats=HARDCOVER",
        None,
    )
    .await;
    assert_eq!(status, 200, "{found}");
    let titles: Vec<&str> = found["books"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Dune"]);
    let (status, posted) = call(
        base,
        "POST",
        "/v1/publishers/penguin/books:search",
        Some(json!({"query": "DUNE"})),
    )
    .await;
    assert_eq!(status, 200, "{posted}");
    assert_eq!(posted["books"].as_array().unwrap().len(), 2, "{posted}");
    let (status, empty) = call(base, "GET", "/v1/publishers/penguin/books:search", None).await;
    assert_eq!(status, 400, "{empty}");
    // The verb is part of the route: an unknown one is no route.
    let (status, unknown) = call(base, "GET", "/v1/publishers/penguin/books:burn", None).await;
    assert_eq!(status, 404, "{unknown}");
}

/// `google.api.HttpBody` up and down, raw.
async fn covers(base: &str) {
    let png = vec![0x89, b'P', b'N', b'G', 0, 1, 2, 3];
    let path = "/v1/publishers/penguin/books/dune/cover";
    let (status, _, body) = exchange(
        base,
        "PUT",
        path,
        &[("content-type", "image/png")],
        png.clone(),
    )
    .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let (status, content_type, body) = exchange(base, "GET", path, &[], Vec::new()).await;
    assert_eq!(
        (status, content_type.as_str(), body),
        (200, "image/png", png)
    );
    let (status, _, body) = exchange(
        base,
        "PUT",
        path,
        &[("content-type", "text/html")],
        b"<script>".to_vec(),
    )
    .await;
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));
    // An SVG may hold script: not a cover served on the API's origin.
    let svg = b"<svg><script>alert(1)</script></svg>".to_vec();
    let svg_type = [("content-type", "image/svg+xml")];
    let (status, _, body) = exchange(base, "PUT", path, &svg_type, svg).await;
    assert_eq!(status, 400, "{}", String::from_utf8_lossy(&body));
    let (status, _, _) = exchange(
        base,
        "GET",
        "/v1/publishers/penguin/books/emma/cover",
        &[],
        Vec::new(),
    )
    .await;
    assert_eq!(status, 404);
}

/// A server stream over REST: NDJSON, or Server-Sent Events when asked.
async fn exports(base: &str) {
    let path = "/v1/publishers/penguin/books:export";
    let (status, content_type, body) = exchange(base, "GET", path, &[], Vec::new()).await;
    assert_eq!(
        (status, content_type.as_str()),
        (200, "application/x-ndjson")
    );
    let lines: Vec<Value> = String::from_utf8(body)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let names: Vec<&str> = lines.iter().map(|b| b["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "publishers/penguin/books/dune",
            "publishers/penguin/books/dune-messiah",
            "publishers/penguin/books/emma"
        ]
    );
    let (status, content_type, body) = exchange(
        base,
        "GET",
        path,
        &[("accept", "text/event-stream")],
        Vec::new(),
    )
    .await;
    assert_eq!((status, content_type.as_str()), (200, "text/event-stream"));
    assert_eq!(
        String::from_utf8(body).unwrap().matches("data: ").count(),
        3
    );
    let (status, missing) = call(base, "GET", "/v1/publishers/nobody/books:export", None).await;
    assert_eq!(status, 404, "{missing}");
}

/// Soft delete (AIP-164): a withdrawn book is still read, hidden from
/// lists unless asked for, frozen, and restored by `:undelete`; a parent
/// with children is deleted only with `force`.
async fn deletes(base: &str) {
    let book = "/v1/publishers/penguin/books/dune-messiah";
    let (status, deleted) = call(base, "DELETE", book, None).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(deleted["title"], "Dune Messiah");
    assert!(deleted["deleteTime"].is_string(), "{deleted}");
    let (status, got) = call(base, "GET", book, None).await;
    assert_eq!((status, &got["deleteTime"]), (200, &deleted["deleteTime"]));
    let count = |list: &Value| list["books"].as_array().map_or(0, Vec::len);
    let (_, live) = call(base, "GET", "/v1/publishers/penguin/books", None).await;
    assert_eq!(count(&live), 2, "{live}");
    let (_, every) = call(
        base,
        "GET",
        "/v1/publishers/penguin/books?showDeleted=true",
        None,
    )
    .await;
    assert_eq!(count(&every), 3, "{every}");
    // Search and export leave a withdrawn book out, as List does.
    let (_, found) = call(
        base,
        "POST",
        "/v1/publishers/penguin/books:search",
        Some(json!({"query": "dune"})),
    )
    .await;
    assert_eq!(count(&found), 1, "{found}");
    let export = "/v1/publishers/penguin/books:export";
    let (_, _, lines) = exchange(base, "GET", export, &[], Vec::new()).await;
    assert_eq!(String::from_utf8(lines).unwrap().lines().count(), 2);
    let (status, frozen) = call(
        base,
        "PATCH",
        &format!("{book}?updateMask=title"),
        Some(json!({"title": "x"})),
    )
    .await;
    assert_eq!(
        (status, frozen["error"]["status"].as_str()),
        (400, Some("FAILED_PRECONDITION")),
        "{frozen}"
    );
    let (status, again) = call(base, "DELETE", book, None).await;
    assert_eq!(status, 404, "{again}");
    let (status, restored) = call(base, "POST", &format!("{book}:undelete"), Some(json!({}))).await;
    assert_eq!(status, 200, "{restored}");
    assert!(restored.get("deleteTime").is_none(), "{restored}");
    let (status, twice) = call(base, "POST", &format!("{book}:undelete"), Some(json!({}))).await;
    assert_eq!(status, 409, "{twice}");
    let (_, live) = call(base, "GET", "/v1/publishers/penguin/books", None).await;
    assert_eq!(count(&live), 3, "{live}");

    let (status, refused) = call(base, "DELETE", "/v1/publishers/faber", None).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(
        refused["error"]["status"], "FAILED_PRECONDITION",
        "{refused}"
    );
    let (status, _) = call(base, "DELETE", "/v1/publishers/faber?force=true", None).await;
    assert_eq!(status, 200);
    let (status, _) = call(base, "GET", "/v1/publishers/faber/books/ulysses", None).await;
    assert_eq!(status, 404);
}

/// Shapes as published APIs write them: names in fields the HTTP rules
/// bind (`book`, `review`), a plural (`bookReviews`) other than the
/// collection id, list items named by the collection id, and a Delete
/// without an HTTP rule, served over gRPC only.
async fn reviews(base: &str) {
    let (status, _) = call(
        base,
        "POST",
        "/v1/publishers?publisherId=critics",
        Some(json!({"displayName": "Critics"})),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = call(
        base,
        "POST",
        "/v1/publishers/critics/books?bookId=emma",
        Some(json!({"title": "Emma"})),
    )
    .await;
    assert_eq!(status, 200);
    let book = "/v1/publishers/critics/books/emma";
    let (status, created) = call(
        base,
        "POST",
        &format!("{book}/reviews?reviewId=first"),
        Some(json!({"text": "Witty"})),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(
        created["name"],
        "publishers/critics/books/emma/reviews/first"
    );
    let (status, got) = call(base, "GET", &format!("{book}/reviews/first"), None).await;
    assert_eq!((status, &got), (200, &created));
    let (status, listed) = call(base, "GET", &format!("{book}/reviews"), None).await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["reviews"], json!([created]));
    // An `int64` total is a JSON string, as canonical JSON writes 64-bit integers.
    assert_eq!(listed["totalSize"], "1", "{listed}");
    // The field the rule binds is the one named in errors.
    let (status, error) = call(base, "GET", &format!("{book}/reviews/Not_An_Id"), None).await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(
        error["error"]["details"][1]["fieldViolations"][0]["field"], "review",
        "{error}"
    );
    // A review of a book that does not exist is refused.
    let (status, error) = call(
        base,
        "POST",
        "/v1/publishers/critics/books/nope/reviews",
        Some(json!({"text": "?"})),
    )
    .await;
    assert_eq!(status, 404, "{error}");
    // No HTTP rule: no route; the generated client over REST says why.
    let (status, _) = call(base, "DELETE", &format!("{book}/reviews/first"), None).await;
    assert!(status == 404 || status == 405, "{status}");
    let delete = DeleteReviewRequest {
        name: "publishers/critics/books/emma/reviews/first".into(),
    };
    let rest = press::Client::new(Connection::rest(base).unwrap()).publishers();
    let refused = rest.delete_review(delete.clone()).await.unwrap_err();
    assert_eq!(refused.code(), protoapi_runtime::error::Code::Unimplemented);
    let grpc = press::Client::new(Connection::grpc(base).unwrap()).publishers();
    grpc.delete_review(delete).await.unwrap();
    let (status, _) = call(base, "GET", &format!("{book}/reviews/first"), None).await;
    assert_eq!(status, 404);
}

/// The generated client speaks both transports the same.
async fn generated_client(base: &str) {
    let connections = [
        ("grpc", Connection::grpc(base).unwrap()),
        ("rest", Connection::rest(base).unwrap()),
    ];
    for (id, connection) in connections {
        let press = press::Client::new(connection).publishers();
        let publisher = press
            .create_publisher(CreatePublisherRequest {
                publisher: Some(Publisher {
                    display_name: format!("{id} house"),
                    ..Default::default()
                }),
                publisher_id: format!("{id}-house"),
            })
            .await
            .unwrap();
        assert_eq!(publisher.name, format!("publishers/{id}-house"));
        let book = press
            .create_book(CreateBookRequest {
                parent: publisher.name.clone(),
                book: Some(Book {
                    title: "Persuasion".into(),
                    format: book::Format::Hardcover.into(),
                    ..Default::default()
                }),
                book_id: "persuasion".into(),
            })
            .await
            .unwrap();
        let got = press
            .get_book(GetBookRequest {
                name: book.name.clone(),
            })
            .await
            .unwrap();
        assert_eq!(got, book);
        let listed = press
            .list_books(ListBooksRequest {
                parent: publisher.name.clone(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(listed.books, std::slice::from_ref(&book));
        let exported: Vec<Book> = press
            .export_books(ExportBooksRequest {
                parent: publisher.name.clone(),
            })
            .await
            .unwrap()
            .map(Result::unwrap)
            .collect()
            .await;
        assert_eq!(exported, [book]);
        let missing = press
            .get_book(GetBookRequest {
                name: format!("{}/books/nope", publisher.name),
            })
            .await
            .unwrap_err();
        assert_eq!(missing.code(), protoapi_runtime::error::Code::NotFound);
    }
}

/// Grants nothing to anyone.
struct NoGrants;

impl protoapi_runtime::auth::Access for NoGrants {
    fn grants<'a>(
        &'a self,
        _identity: &'a str,
    ) -> protoapi_runtime::auth::BoxFuture<
        'a,
        Result<protoapi_runtime::auth::Grants, protoapi_runtime::Error>,
    > {
        Box::pin(async { Ok(protoapi_runtime::auth::Grants::default()) })
    }
}

/// An API without annotation files declares no access rules: an
/// authenticated identity holding no grant at all calls every method.
#[tokio::test]
async fn no_annotation_file_means_any_authenticated_caller() {
    let caller = Caller::Identity {
        uid: "1".repeat(40),
        admin: false,
    };
    let authorizer = Authorizer::new(Arc::new(NoGrants));
    let base = serve_as(MemoryStore::default(), authorizer, caller).await;
    let (status, created) = call(
        &base,
        "POST",
        "/v1/publishers?publisherId=p",
        Some(json!({"displayName": "P"})),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    for (method, path) in [
        ("GET", "/v1/publishers/p"),
        ("GET", "/v1/publishers"),
        ("PATCH", "/v1/publishers/p?updateMask=displayName"),
        ("DELETE", "/v1/publishers/p"),
    ] {
        let (status, answer) = call(&base, method, path, Some(json!({"displayName": "Q"}))).await;
        assert_eq!(status, 200, "{method} {path}: {answer}");
    }
}

/// Without annotation files every method needs an authenticated caller:
/// behind an authentication layer that lets anonymous callers through (as
/// one must for public reads), nobody without a token reads or writes,
/// over REST or gRPC, standard and custom methods alike, whichever
/// authorizer the server uses.
#[tokio::test]
async fn no_annotation_file_refuses_anonymous_callers() {
    for authorizer in [Authorizer::allow_all(), Authorizer::new(Arc::new(NoGrants))] {
        let base = serve_as(MemoryStore::default(), authorizer, Caller::Anonymous).await;
        let (publisher, book) = (json!({"displayName": "Q"}), json!({"title": "Q"}));
        for (method, path, body) in [
            ("POST", "/v1/publishers?publisherId=p", Some(&publisher)),
            ("GET", "/v1/publishers/p", None),
            ("GET", "/v1/publishers", None),
            (
                "PATCH",
                "/v1/publishers/p?updateMask=displayName",
                Some(&publisher),
            ),
            ("DELETE", "/v1/publishers/p", None),
            ("POST", "/v1/publishers/p/books?bookId=b", Some(&book)),
            (
                "POST",
                "/v1/publishers/p/books/b:undelete",
                Some(&json!({})),
            ),
            ("GET", "/v1/publishers/p/books:search?query=x", None),
            ("GET", "/v1/publishers/p/books:export", None),
        ] {
            let (status, answer) = call(&base, method, path, body.cloned()).await;
            assert_eq!(status, 401, "{method} {path}: {answer}");
            assert_eq!(answer["error"]["status"], "UNAUTHENTICATED", "{answer}");
        }
        let (status, _, _) = exchange(
            &base,
            "PUT",
            "/v1/publishers/p/books/b/cover",
            &[("content-type", "image/png")],
            b"png".to_vec(),
        )
        .await;
        assert_eq!(status, 401, "an anonymous upload");

        let press = press::Client::new(Connection::grpc(&base).unwrap()).publishers();
        let created = press
            .create_publisher(CreatePublisherRequest {
                publisher: Some(Publisher::default()),
                publisher_id: "p".into(),
            })
            .await;
        assert_eq!(
            created.unwrap_err().code(),
            protoapi_runtime::Code::Unauthenticated
        );
        let read = press
            .get_book(GetBookRequest {
                name: "publishers/p/books/b".into(),
            })
            .await;
        assert_eq!(
            read.unwrap_err().code(),
            protoapi_runtime::Code::Unauthenticated
        );
    }
}
