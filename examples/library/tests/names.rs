//! Resources keyed by AIP-122 names over a real socket, REST and gRPC, in
//! memory, on SQLite and (when `E2E_DATABASE_URL` names a server) on
//! PostgreSQL: client-chosen and generated ids, the parent from the
//! pattern (checked on create, scoping lists), deletes of a parent with
//! children refused, then forced; soft deletes of books (AIP-164).

use std::sync::Arc;

use http_body_util::BodyExt;
use library::archive::v1::RecordRow;
use library::library::v1::book_service_client::BookServiceClient;
use library::library::v1::shelf_service_client::ShelfServiceClient;
use library::library::v1::{
    Book, CreateBookRequest, CreateShelfRequest, DeleteBookRequest, DeleteShelfRequest,
    GetBookRequest, ListBooksRequest, Shelf, UndeleteBookRequest, UpdateBookRequest,
};
use library::library::v1::{BookRow, ShelfRow};
use library::{MemoryStore, SqlStore};
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::sql::{SqlOptions, Table};
use protoapi_runtime::standard::ApiContext;
use serde_json::{Value, json};

/// Serves the API over `store` on an ephemeral port; its base URL.
async fn serve(store: Arc<impl library::Stores>) -> String {
    let context = ApiContext::new(PageTokens::new([9; 32]), Authorizer::allow_all());
    let router = library::Services::new(context)
        .store(store)
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(router).await
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
    (status, serde_json::from_slice(&bytes).unwrap())
}

/// Creates over REST and answers the new item's name.
async fn create(base: &str, path: &str, body: Value) -> String {
    let (status, created) = call(base, "POST", path, Some(body)).await;
    assert_eq!(status, 200, "{path}: {created}");
    created["name"].as_str().unwrap().to_owned()
}

/// The names a list answers, every page of it (`page_size` 1: the page
/// tokens are exercised).
async fn names(base: &str, path: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut token = String::new();
    let join = if path.contains('?') { '&' } else { '?' };
    loop {
        let (status, page) = call(
            base,
            "GET",
            &format!("{path}{join}pageSize=1&pageToken={token}"),
            None,
        )
        .await;
        assert_eq!(status, 200, "{path}: {page}");
        for item in page["items"].as_array().unwrap() {
            names.push(item["name"].as_str().unwrap().to_owned());
        }
        token = page["nextPageToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if token.is_empty() {
            return names;
        }
    }
}

/// The field a 400 answer's BadRequest names first.
fn violated_field(body: &Value) -> &str {
    body["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|detail| detail["fieldViolations"][0]["field"].as_str())
        .unwrap_or_else(|| panic!("no field violation in {body}"))
}

async fn ids_and_parents(base: &str) {
    // A client-chosen id; a name in the body is ignored (AIP-133).
    let body = json!({"theme": "fiction", "name": "shelves/elsewhere"});
    let fiction = create(base, "/v1/shelves?shelfId=fiction", body.clone()).await;
    assert_eq!(fiction, "shelves/fiction");
    let (status, taken) = call(base, "POST", "/v1/shelves?shelfId=fiction", Some(body)).await;
    assert_eq!(status, 409, "{taken}");
    assert_eq!(taken["error"]["status"], "ALREADY_EXISTS");
    for bad in ["Fiction", "1st", "a_b", "ends-"] {
        let path = format!("/v1/shelves?shelfId={bad}");
        let (status, body) = call(base, "POST", &path, Some(json!({"theme": "x"}))).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_eq!(violated_field(&body), "shelfId");
    }
    // A generated id.
    let poetry = create(base, "/v1/shelves", json!({"theme": "poetry"})).await;
    let id = poetry.strip_prefix("shelves/").unwrap();
    assert!(protoapi_runtime::names::is_valid_id(id), "{poetry}");

    let dune = create(
        base,
        "/v1/shelves/fiction/books?bookId=dune",
        json!({"title": "Dune"}),
    )
    .await;
    assert_eq!(dune, "shelves/fiction/books/dune");
    let emma = create(base, "/v1/shelves/fiction/books", json!({"title": "Emma"})).await;
    assert!(emma.starts_with("shelves/fiction/books/"), "{emma}");
    let odyssey = create(
        base,
        &format!("/v1/{poetry}/books?bookId=odyssey"),
        json!({"title": "Odyssey"}),
    )
    .await;

    // The same id under another parent is another book.
    create(
        base,
        &format!("/v1/{poetry}/books?bookId=dune"),
        json!({"title": "Dune (poem)"}),
    )
    .await;

    // The parent must match its pattern (a path the template does not
    // take routes nowhere; gRPC, where any text can be sent, checks the
    // rest), with no wildcard, and exist.
    for bad in ["shelves/fiction/books/dune", "books/fiction"] {
        let path = format!("/v1/{bad}/books");
        let (status, body) = call(base, "POST", &path, Some(json!({"title": "x"}))).await;
        assert_eq!(status, 404, "{bad}: {body}");
        assert_eq!(body["error"]["details"][0]["reason"], "ROUTE_NOT_FOUND");
    }
    let (status, body) = call(
        base,
        "POST",
        "/v1/shelves/-/books",
        Some(json!({"title": "x"})),
    )
    .await;
    assert_eq!((status, violated_field(&body)), (400, "parent"), "{body}");
    let (status, body) = call(
        base,
        "POST",
        "/v1/shelves/missing/books",
        Some(json!({"title": "Lost"})),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(
        body["error"]["details"][0]["reason"], "PARENT_NOT_FOUND",
        "{body}"
    );
    assert!(
        body.to_string().contains("library.example.com/Shelf"),
        "{body}"
    );

    // Get by name; names of another shape are refused before any lookup.
    let (status, book) = call(base, "GET", &format!("/v1/{dune}"), None).await;
    assert_eq!((status, &book["title"]), (200, &json!("Dune")), "{book}");
    let (status, body) = call(base, "GET", "/v1/shelves/fiction/books/nope", None).await;
    assert_eq!(status, 404, "{body}");
    // A shelf's name is a shelf's path, in another service.
    let (status, shelf) = call(base, "GET", "/v1/shelves/fiction", None).await;
    assert_eq!(
        (status, &shelf["theme"]),
        (200, &json!("fiction")),
        "{shelf}"
    );

    // List's parent scopes the list; `shelves/-` is every shelf's.
    let mut on_fiction = names(base, "/v1/shelves/fiction/books").await;
    on_fiction.sort();
    let mut expected = vec![dune.clone(), emma.clone()];
    expected.sort();
    assert_eq!(on_fiction, expected);
    assert_eq!(names(base, &format!("/v1/{poetry}/books")).await.len(), 2);
    assert_eq!(names(base, "/v1/shelves/-/books").await.len(), 4);
    assert_eq!(names(base, "/v1/shelves/empty/books").await.len(), 0);
    let (_, page) = call(base, "GET", "/v1/shelves/fiction/books", None).await;
    assert_eq!(page["totalCount"], 2, "{page}");
    let (status, body) = call(base, "GET", "/v1/shelves/-/books/-/books", None).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(names(base, "/v1/shelves").await.len(), 2);

    // Update names the item in the body; the name itself never changes.
    let patch = json!({"name": "shelves/fiction", "theme": "science fiction"});
    let (status, shelf) = call(
        base,
        "PATCH",
        "/v1/shelves/fiction?updateMask=theme",
        Some(patch),
    )
    .await;
    assert_eq!(
        (status, &shelf["theme"]),
        (200, &json!("science fiction")),
        "{shelf}"
    );
    let patch = json!({"name": "shelves/fiction", "theme": "x"});
    let (status, body) = call(
        base,
        "PATCH",
        "/v1/shelves/fiction?updateMask=name",
        Some(patch),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let patch = json!({"name": "shelves/nope", "theme": "x"});
    let (status, body) = call(
        base,
        "PATCH",
        "/v1/shelves/nope?updateMask=theme",
        Some(patch),
    )
    .await;
    assert_eq!(status, 404, "{body}");

    // A shelf with books is not deleted, unless forced; then its books go too.
    let (status, body) = call(base, "DELETE", "/v1/shelves/fiction", None).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["status"], "FAILED_PRECONDITION");
    assert!(body.to_string().contains(&dune), "names the books: {body}");
    let (status, body) = call(base, "DELETE", "/v1/shelves/fiction?force=true", None).await;
    assert_eq!((status, body), (200, json!({})));
    let (status, _) = call(base, "GET", &format!("/v1/{dune}"), None).await;
    assert_eq!(status, 404);
    let (status, _) = call(base, "GET", "/v1/shelves/fiction", None).await;
    assert_eq!(status, 404);
    let mut left = names(base, "/v1/shelves/-/books").await;
    left.sort();
    assert_eq!(left, [format!("{poetry}/books/dune"), odyssey]);
    let (_, page) = call(base, "GET", "/v1/shelves/fiction/books", None).await;
    assert_eq!(page["totalCount"], 0, "{page}");
    // The id is free again.
    create(
        base,
        "/v1/shelves?shelfId=fiction",
        json!({"theme": "again"}),
    )
    .await;
    assert!(names(base, "/v1/shelves/fiction/books").await.is_empty());
}

/// The same rules over gRPC.
async fn grpc(base: &str) {
    let channel = tonic::transport::Endpoint::from_shared(base.to_owned())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut shelves = ShelfServiceClient::new(channel.clone());
    let mut books = BookServiceClient::new(channel);
    let shelf = shelves
        .create_shelf(CreateShelfRequest {
            shelf_id: "drama".into(),
            shelf: Some(Shelf {
                theme: "drama".into(),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(shelf.name, "shelves/drama");
    let book = |parent: &str, id: &str| CreateBookRequest {
        parent: parent.into(),
        book_id: id.into(),
        book: Some(Book {
            title: "Hamlet".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let hamlet = books
        .create_book(book("shelves/drama", "hamlet"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(hamlet.name, "shelves/drama/books/hamlet");
    let generated = books
        .create_book(book("shelves/drama", ""))
        .await
        .unwrap()
        .into_inner();
    assert!(
        generated.name.starts_with("shelves/drama/books/"),
        "{}",
        generated.name
    );
    let status = books
        .create_book(book("shelves/nowhere", "x"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}");
    let status = books
        .create_book(book("shelves/drama", "hamlet"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::AlreadyExists, "{status:?}");
    for bad in [
        "drama",
        "shelves",
        "shelves/drama/books/hamlet",
        "books/drama",
        "shelves/-",
        "shelves/drama/",
    ] {
        let status = books.create_book(book(bad, "x")).await.unwrap_err();
        assert_eq!(
            status.code(),
            tonic::Code::InvalidArgument,
            "{bad}: {status:?}"
        );
    }
    let status = books
        .get_book(GetBookRequest {
            name: "shelves/drama".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    let status = books
        .list_books(ListBooksRequest {
            parent: "shelves/-/books/-".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");

    let got = books
        .get_book(GetBookRequest {
            name: hamlet.name.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got, hamlet);
    let listed = books
        .list_books(ListBooksRequest {
            parent: "shelves/drama".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.items.len(), 2);
    assert_eq!(listed.total_count, 2);

    let delete = |force| DeleteShelfRequest {
        name: "shelves/drama".into(),
        force,
        ..Default::default()
    };
    let status = shelves.delete_shelf(delete(false)).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    shelves.delete_shelf(delete(true)).await.unwrap();
    let status = books
        .get_book(GetBookRequest { name: hamlet.name })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}");
}

/// Creates under a shelf racing its deletion: each create either lands
/// before the delete (and goes with it, forced) or finds no shelf; no book
/// is left without its shelf. Then an unforced delete racing creates:
/// either it is refused and the shelf stays, or no book is left.
async fn races(base: &str) {
    for force in [true, false] {
        create(base, "/v1/shelves?shelfId=race", json!({"theme": "race"})).await;
        let creates: Vec<_> = (0..16)
            .map(|index| {
                let base = base.to_owned();
                tokio::spawn(async move {
                    let path = format!("/v1/shelves/race/books?bookId=b{index}");
                    call(&base, "POST", &path, Some(json!({"title": "x"})))
                        .await
                        .0
                })
            })
            .collect();
        let path = format!("/v1/shelves/race?force={force}");
        let (deleted, body) = call(base, "DELETE", &path, None).await;
        for create in creates {
            let status = create.await.unwrap();
            assert!(status == 200 || status == 404, "create answered {status}");
        }
        let (shelf, _) = call(base, "GET", "/v1/shelves/race", None).await;
        let left = names(base, "/v1/shelves/race/books").await;
        match deleted {
            200 => {
                assert_eq!(shelf, 404);
                assert!(left.is_empty(), "orphans: {left:?}");
            }
            _ => {
                assert!(!force, "a forced delete failed: {body}");
                assert_eq!(body["error"]["status"], "FAILED_PRECONDITION", "{body}");
                assert_eq!(shelf, 200);
                let path = "/v1/shelves/race?force=true";
                let (status, body) = call(base, "DELETE", path, None).await;
                assert_eq!(status, 200, "{body}");
            }
        }
    }
}

/// Soft delete over REST (AIP-164): a deleted book is still read, hidden
/// from lists unless `showDeleted` (paging and totals count what is
/// shown), cannot change, and comes back by `:undelete`.
async fn soft_delete(base: &str) {
    create(base, "/v1/shelves?shelfId=soft", json!({"theme": "soft"})).await;
    for id in ["a", "b", "c"] {
        let path = format!("/v1/shelves/soft/books?bookId={id}");
        create(base, &path, json!({"title": id})).await;
    }
    let b = "shelves/soft/books/b";
    let (status, deleted) = call(base, "DELETE", &format!("/v1/{b}"), None).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(deleted["name"], b);
    assert!(deleted["deleteTime"].is_string(), "{deleted}");
    // Deleting it again: it is not found (AIP-164).
    let (status, body) = call(base, "DELETE", &format!("/v1/{b}"), None).await;
    assert_eq!(status, 404, "{body}");
    let (status, read) = call(base, "GET", &format!("/v1/{b}"), None).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["deleteTime"], deleted["deleteTime"]);
    assert_eq!(read["etag"], deleted["etag"]);

    let live = names(base, "/v1/shelves/soft/books").await;
    assert_eq!(live, ["shelves/soft/books/a", "shelves/soft/books/c"]);
    let all = names(base, "/v1/shelves/soft/books?showDeleted=true").await;
    assert_eq!(all.len(), 3, "{all:?}");
    let (_, page) = call(base, "GET", "/v1/shelves/soft/books?pageSize=1", None).await;
    assert_eq!(page["totalCount"], 2, "{page}");
    // A token of the list hiding deleted books does not page the other.
    let token = page["nextPageToken"].as_str().unwrap().to_owned();
    let path = format!("/v1/shelves/soft/books?showDeleted=true&pageToken={token}");
    let (status, body) = call(base, "GET", &path, None).await;
    assert_eq!(status, 400, "{body}");
    let path = "/v1/shelves/soft/books?showDeleted=true&pageSize=1";
    let (_, page) = call(base, "GET", path, None).await;
    assert_eq!(page["totalCount"], 3, "{page}");
    assert_eq!(
        names(base, "/v1/shelves/-/books").await.len(),
        names(base, "/v1/shelves/-/books?showDeleted=true")
            .await
            .len()
            - 1
    );

    // A deleted book cannot change (AIP-164: FAILED_PRECONDITION).
    let patch = json!({"name": b, "title": "changed"});
    let path = format!("/v1/{b}?updateMask=title");
    let (status, body) = call(base, "PATCH", &path, Some(patch.clone())).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["status"], "FAILED_PRECONDITION", "{body}");

    // Undelete: a live book is ALREADY_EXISTS (AIP-164), a missing one
    // NOT_FOUND, a stale etag ABORTED.
    let undelete = |name: &str| format!("/v1/{name}:undelete");
    let (status, body) = call(
        base,
        "POST",
        &undelete("shelves/soft/books/a"),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["status"], "ALREADY_EXISTS", "{body}");
    let (status, body) = call(
        base,
        "POST",
        &undelete("shelves/soft/books/nope"),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    let stale = json!({"etag": "\"stale\""});
    let (status, body) = call(base, "POST", &undelete(b), Some(stale)).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["status"], "ABORTED", "{body}");
    let (status, back) = call(
        base,
        "POST",
        &undelete(b),
        Some(json!({"etag": read["etag"]})),
    )
    .await;
    assert_eq!(status, 200, "{back}");
    assert!(back.get("deleteTime").is_none(), "{back}");
    assert_ne!(back["etag"], read["etag"]);
    assert_eq!(names(base, "/v1/shelves/soft/books").await.len(), 3);
    let (status, changed) = call(base, "PATCH", &path, Some(patch)).await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(changed["title"], "changed");
}

/// Soft delete over gRPC.
async fn soft_delete_grpc(base: &str) {
    let channel = tonic::transport::Endpoint::from_shared(base.to_owned())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut shelves = ShelfServiceClient::new(channel.clone());
    let mut books = BookServiceClient::new(channel);
    shelves
        .create_shelf(CreateShelfRequest {
            shelf_id: "soft-grpc".into(),
            shelf: Some(Shelf {
                theme: "soft".into(),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    for id in ["x", "y"] {
        books
            .create_book(CreateBookRequest {
                parent: "shelves/soft-grpc".into(),
                book_id: id.into(),
                book: Some(Book {
                    title: id.into(),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let name = "shelves/soft-grpc/books/x".to_owned();
    let deleted = books
        .delete_book(DeleteBookRequest {
            name: name.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(deleted.delete_time.is_some());
    let list = |show_deleted: bool| ListBooksRequest {
        parent: "shelves/soft-grpc".into(),
        show_deleted,
        ..Default::default()
    };
    let page = books.list_books(list(false)).await.unwrap().into_inner();
    assert_eq!((page.items.len(), page.total_count), (1, 1));
    assert_eq!(page.items[0].name, "shelves/soft-grpc/books/y");
    let page = books.list_books(list(true)).await.unwrap().into_inner();
    assert_eq!((page.items.len(), page.total_count), (2, 2));
    let update = UpdateBookRequest {
        book: Some(Book {
            name: name.clone(),
            title: "changed".into(),
            ..Default::default()
        }),
        update_mask: Some(prost_types::FieldMask {
            paths: vec!["title".into()],
        }),
        ..Default::default()
    };
    let refused = books.update_book(update.clone()).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    let back = books
        .undelete_book(UndeleteBookRequest {
            name: name.clone(),
            etag: deleted.etag.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(back.delete_time.is_none());
    let again = books
        .undelete_book(UndeleteBookRequest {
            name: name.clone(),
            etag: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(again.code(), tonic::Code::AlreadyExists);
    let changed = books.update_book(update).await.unwrap().into_inner();
    assert_eq!(changed.title, "changed");
    let page = books.list_books(list(false)).await.unwrap().into_inner();
    assert_eq!(page.total_count, 2);
}

/// A reference between named resources, declared by the field's
/// `google.api.resource_reference` alone: the book it names must exist when
/// it is set on create or changed on update, over REST and gRPC; an update
/// leaving it alone does not look again.
async fn references(base: &str) {
    create(base, "/v1/shelves?shelfId=series", json!({"theme": "x"})).await;
    create(base, "/v1/shelves?shelfId=gone", json!({"theme": "x"})).await;
    let on = |shelf: &str, id: &str| format!("/v1/shelves/{shelf}/books?bookId={id}");
    let first = create(base, &on("series", "first"), json!({"title": "1"})).await;
    let missing = json!({"title": "2", "sequel": "shelves/series/books/nope"});
    let (status, body) = call(base, "POST", &on("series", "second"), Some(missing)).await;
    assert_eq!(
        (status, violated_field(&body)),
        (400, "book.sequel"),
        "{body}"
    );
    // AIP-148: the server assigns a `uid`, whatever the body says, and it
    // stays.
    let sequel = json!({"title": "2", "sequel": first, "uid": "mine"});
    let (status, created) = call(base, "POST", &on("series", "second"), Some(sequel)).await;
    assert_eq!(status, 200, "{created}");
    let second = created["name"].as_str().unwrap().to_owned();
    let uid = created["uid"].as_str().unwrap().to_owned();
    assert_eq!((uid.len(), &uid[14..15]), (36, "4"), "a UUID v4: {uid}");
    let elsewhere = create(base, &on("gone", "other"), json!({"title": "3"})).await;

    let patch = |sequel: &str| {
        let body = json!({"title": "2", "sequel": sequel});
        let path = format!("/v1/{second}?updateMask=sequel");
        async move { call(base, "PATCH", &path, Some(body)).await }
    };
    let (status, body) = patch("shelves/series/books/nope").await;
    assert_eq!(
        (status, violated_field(&body)),
        (400, "book.sequel"),
        "{body}"
    );
    let (status, body) = patch("").await;
    assert_eq!((status, &body["title"]), (200, &json!("2")), "{body}");
    let (status, body) = patch(&elsewhere).await;
    assert_eq!(
        (status, &body["sequel"]),
        (200, &json!(elsewhere)),
        "{body}"
    );
    // Its target gone, the book still changes where the reference does not.
    let (status, _) = call(base, "DELETE", "/v1/shelves/gone?force=true", None).await;
    assert_eq!(status, 200);
    let path = format!("/v1/{second}?updateMask=title");
    let (status, body) = call(base, "PATCH", &path, Some(json!({"title": "2b"}))).await;
    assert_eq!(
        (status, &body["sequel"]),
        (200, &json!(elsewhere)),
        "{body}"
    );
    assert_eq!(body["uid"], json!(uid), "{body}");

    let channel = tonic::transport::Endpoint::from_shared(base.to_owned())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let status = BookServiceClient::new(channel)
        .create_book(CreateBookRequest {
            parent: "shelves/series".into(),
            book_id: "third".into(),
            book: Some(Book {
                title: "3".into(),
                sequel: "shelves/gone/books/other".into(),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("sequel"), "{status:?}");
}

/// `validate_only` (AIP-163) checks a create, an update and deletes (soft
/// and final) and answers what they would, writing nothing; refusals are
/// the same as the writes', those only storage finds included. `allow_missing` (AIP-135) makes deleting a
/// missing shelf succeed.
async fn dry_runs(base: &str) {
    let (status, shelf) = call(
        base,
        "POST",
        "/v1/shelves?shelfId=dry&validateOnly=true",
        Some(json!({"theme": "dry"})),
    )
    .await;
    assert_eq!(
        (status, &shelf["name"]),
        (200, &json!("shelves/dry")),
        "{shelf}"
    );
    assert_eq!(call(base, "GET", "/v1/shelves/dry", None).await.0, 404);
    let path = "/v1/shelves?shelfId=Dry&validateOnly=true";
    let (status, body) = call(base, "POST", path, Some(json!({"theme": "x"}))).await;
    assert_eq!((status, violated_field(&body)), (400, "shelfId"), "{body}");

    create(base, "/v1/shelves?shelfId=dry", json!({"theme": "dry"})).await;
    let path = "/v1/shelves/dry/books?bookId=b";
    let book = call(base, "POST", path, Some(json!({"title": "b"})))
        .await
        .1;
    let b = "/v1/shelves/dry/books/b";
    // What only storage finds is reported too: the dry run reaches the
    // store, which checks the write and rolls it back.
    let again = "/v1/shelves?shelfId=dry&validateOnly=true";
    let (status, body) = call(base, "POST", again, Some(json!({"theme": "x"}))).await;
    assert_eq!(
        (status, &body["error"]["status"]),
        (409, &json!("ALREADY_EXISTS")),
        "{body}"
    );
    let orphan = "/v1/shelves/nowhere/books?bookId=x&validateOnly=true";
    let (status, body) = call(base, "POST", orphan, Some(json!({"title": "x"}))).await;
    assert_eq!(
        (status, &body["error"]["status"]),
        (404, &json!("NOT_FOUND")),
        "{body}"
    );
    let (status, body) = call(base, "DELETE", "/v1/shelves/dry?validateOnly=true", None).await;
    assert_eq!(
        body["error"]["status"], "FAILED_PRECONDITION",
        "{status}: {body}"
    );
    let (status, body) = call(
        base,
        "DELETE",
        "/v1/shelves/dry?validateOnly=true&force=true",
        None,
    )
    .await;
    assert_eq!(status, 200, "a forced dry run deletes nothing: {body}");
    assert_eq!(call(base, "GET", b, None).await.0, 200);
    assert_eq!(call(base, "GET", "/v1/shelves/dry", None).await.0, 200);
    // AIP-134: an update with `allow_missing` creates a missing book, as
    // `CreateBook` would (a dry run creates nothing), and updates one that
    // exists; without it a missing book is NOT_FOUND.
    let upsert = "/v1/shelves/dry/books/upserted?updateMask=title";
    let (status, body) = call(base, "PATCH", upsert, Some(json!({"title": "u"}))).await;
    assert_eq!(status, 404, "{body}");
    let dry = format!("{upsert}&allowMissing=true&validateOnly=true");
    let (status, would) = call(base, "PATCH", &dry, Some(json!({"title": "u"}))).await;
    assert_eq!(
        (status, &would["name"]),
        (200, &json!("shelves/dry/books/upserted")),
        "{would}"
    );
    let upserted = "/v1/shelves/dry/books/upserted";
    assert_eq!(
        call(base, "GET", upserted, None).await.0,
        404,
        "a dry run creates nothing"
    );
    let upsert_path = format!("{upsert}&allowMissing=true");
    let body = json!({"title": "u", "author": "a"});
    let (status, created) = call(base, "PATCH", &upsert_path, Some(body)).await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(
        (&created["title"], &created["author"]),
        (&json!("u"), &json!("a")),
        "the mask is ignored"
    );
    assert!(
        created["uid"].is_string() && created["createTime"].is_string(),
        "{created}"
    );
    assert_eq!(
        call(base, "GET", upserted, None).await,
        (200, created.clone())
    );
    let (status, updated) = call(
        base,
        "PATCH",
        &upsert_path,
        Some(json!({"title": "v", "author": "b"})),
    )
    .await;
    assert_eq!(
        (status, &updated["title"], &updated["author"]),
        (200, &json!("v"), &json!("a")),
        "{updated}"
    );
    let orphan = "/v1/shelves/nowhere/books/x?updateMask=title&allowMissing=true";
    let (status, body) = call(base, "PATCH", orphan, Some(json!({"title": "x"}))).await;
    assert_eq!(
        (status, &body["error"]["status"]),
        (404, &json!("NOT_FOUND")),
        "{body}"
    );

    let path = format!("{b}?updateMask=title&validateOnly=true");
    let (status, would) = call(base, "PATCH", &path, Some(json!({"title": "new"}))).await;
    assert_eq!((status, &would["title"]), (200, &json!("new")), "{would}");
    let stale = json!({"title": "new", "etag": "\"stale\""});
    let (status, body) = call(base, "PATCH", &path, Some(stale)).await;
    assert_eq!(
        (status, &body["error"]["status"]),
        (409, &json!("ABORTED")),
        "{body}"
    );
    let path = format!("{b}?validateOnly=true");
    let (status, would) = call(base, "DELETE", &path, None).await;
    assert!(status == 200 && would["deleteTime"].is_string(), "{would}");
    let (_, read) = call(base, "GET", b, None).await;
    assert_eq!(read, book, "nothing changed");

    create(base, "/v1/shelves?shelfId=dry-empty", json!({"theme": "x"})).await;
    let path = "/v1/shelves/dry-empty?validateOnly=true";
    assert_eq!(call(base, "DELETE", path, None).await, (200, json!({})));
    assert_eq!(
        call(base, "GET", "/v1/shelves/dry-empty", None).await.0,
        200
    );
    let path = "/v1/shelves/dry-empty?validateOnly=true&etag=stale";
    assert_eq!(call(base, "DELETE", path, None).await.0, 409);

    for path in [
        "/v1/shelves/missing",
        "/v1/shelves/missing?validateOnly=true",
    ] {
        assert_eq!(call(base, "DELETE", path, None).await.0, 404, "{path}");
        let path = format!(
            "{path}{}allowMissing=true",
            if path.contains('?') { '&' } else { '?' }
        );
        assert_eq!(
            call(base, "DELETE", &path, None).await,
            (200, json!({})),
            "{path}"
        );
    }
}

/// The library's tables with each book the subject of access decisions
/// (as an API whose grants derive from books would declare them), so that
/// every write of a book advances its access epoch.
async fn open_guarding_books(url: &str) -> SqlStore {
    let tables = [
        Table::of::<RecordRow>(),
        Table::of::<library::library::v1::BranchRow>(),
        Table::of::<ShelfRow>(),
        Table::of::<BookRow>().guarding_access(),
    ];
    SqlStore::open(url, SqlOptions::new(tables)).await.unwrap()
}

/// A forced delete advances, in its own commit, the access epoch of every
/// item it removes that access decisions derive from: a decision cached
/// while the book existed is stale once its shelf is gone, before anyone
/// creates the name again (which advances it once more).
async fn forced_deletes_advance_access_epochs(base: &str, store: &SqlStore) {
    let epoch = |name: String| async move { store.access_epochs(&[&name]).await.unwrap()[0] };
    create(base, "/v1/shelves?shelfId=held", json!({"theme": "x"})).await;
    let book = create(
        base,
        "/v1/shelves/held/books?bookId=kept",
        json!({"title": "k"}),
    )
    .await;
    let written = epoch(book.clone()).await;
    assert!(written > 0, "a created book has an epoch");
    let (status, body) = call(base, "DELETE", "/v1/shelves/held?force=true", None).await;
    assert_eq!(status, 200, "{body}");
    let removed = epoch(book.clone()).await;
    assert!(
        removed > written,
        "{book}: epoch {written} before, {removed} after"
    );
    create(base, "/v1/shelves?shelfId=held", json!({"theme": "x"})).await;
    create(
        base,
        "/v1/shelves/held/books?bookId=kept",
        json!({"title": "k"}),
    )
    .await;
    assert!(epoch(book).await > removed);
}

async fn exercise(base: &str) {
    ids_and_parents(base).await;
    dry_runs(base).await;
    references(base).await;
    grpc(base).await;
    races(base).await;
    soft_delete(base).await;
    soft_delete_grpc(base).await;
}

#[tokio::test]
async fn served_from_memory() {
    exercise(&serve(Arc::new(MemoryStore::default())).await).await;
}

#[tokio::test]
async fn served_from_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("library.db").display()
    );
    let store = Arc::new(open_guarding_books(&url).await);
    let base = serve(store.clone()).await;
    exercise(&base).await;
    forced_deletes_advance_access_epochs(&base, &store).await;
}

/// On PostgreSQL, in a database of its own, when `E2E_DATABASE_URL` names a
/// server (the role needs CREATEDB); skipped otherwise.
#[tokio::test]
async fn served_from_postgres() {
    let Ok(server) = std::env::var("E2E_DATABASE_URL") else {
        eprintln!("E2E_DATABASE_URL is not set: skipped");
        return;
    };
    let database = postgres::Database::create(&server).await;
    let store = Arc::new(open_guarding_books(&database.url).await);
    let base = serve(store.clone()).await;
    exercise(&base).await;
    forced_deletes_advance_access_epochs(&base, &store).await;
    store_closed(database).await;
}

async fn store_closed(database: postgres::Database) {
    database.drop_it().await;
}

#[path = "common/postgres.rs"]
mod postgres;
