//! The library's console: resources keyed by AIP-122 names, navigated by
//! their pattern (shelves, then the books on a shelf, or on every shelf), created with
//! client-chosen ids, a reference chosen from the referenced collection,
//! edits with the etag read, and a shelf with books refused deletion in
//! words.

use std::sync::Arc;

use library::MemoryStore;
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::console::Console;
use protoapi_runtime::console::testing::Browser;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;

/// Serves the API and its console in memory; a browser signed in to it.
async fn signed_in() -> Browser {
    let context = ApiContext::new(PageTokens::new([9; 32]), Authorizer::allow_all());
    let router = library::Services::new(context)
        .store(Arc::new(MemoryStore::default()))
        .console(Console::new(&library::SCHEMA))
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap();
    let mut browser = Browser::new(protoapi_runtime::testing::served::on_free_port(router).await);
    browser.sign_in("").await;
    browser
}

#[tokio::test]
async fn shelves_and_books_by_name() {
    let browser = signed_in().await;
    let home = browser.get("/console/").await;
    assert!(
        home.html.contains("data-collection=\"shelves\""),
        "{}",
        home.html
    );
    assert!(
        home.html.contains("data-collection=\"books\""),
        "books of every shelf"
    );

    let made = browser
        .submit(
            "/console/shelves/new",
            &[("_id", "fiction"), ("theme", "Fiction")],
        )
        .await;
    assert_eq!(
        made.location(),
        "/console/shelves/item/shelves/fiction?done=created",
        "{}",
        made.html
    );
    let shelf = browser.get("/console/shelves/item/shelves/fiction").await;
    assert!(
        shelf
            .html
            .contains("href=\"/console/books/new?parent=shelves%2Ffiction\""),
        "{}",
        shelf.html
    );

    let book = browser
        .submit(
            "/console/books/new?parent=shelves%2Ffiction",
            &[("_id", "dune"), ("title", "Dune")],
        )
        .await;
    assert_eq!(
        book.location(),
        "/console/books/item/shelves/fiction/books/dune?done=created",
        "{}",
        book.html
    );
    // A reference is chosen among the books.
    let form = browser
        .get("/console/books/new?parent=shelves%2Ffiction")
        .await;
    assert!(
        form.html
            .contains("<select id=\"f-sequel\" name=\"sequel\">"),
        "{}",
        form.html
    );
    assert!(form.html.contains("<option value=\"shelves/fiction/books/dune\">Dune (shelves/fiction/books/dune)</option>"), "{}", form.html);
    let sequel = browser
        .submit(
            "/console/books/new?parent=shelves%2Ffiction",
            &[("_id", "messiah"), ("title", "Dune Messiah")],
        )
        .await;
    assert_eq!(sequel.status, 303, "{}", sequel.html);
    let linked = browser
        .submit(
            "/console/books/edit/shelves/fiction/books/dune",
            &[("sequel", "shelves/fiction/books/messiah")],
        )
        .await;
    assert_eq!(linked.status, 303, "{}", linked.html);
    let dune = browser
        .get("/console/books/item/shelves/fiction/books/dune")
        .await;
    assert!(
        dune.html.contains(
            "<a href=\"/console/books/item/shelves/fiction/books/messiah\">Dune Messiah</a>"
        ),
        "{}",
        dune.html
    );
    let missing = browser
        .submit(
            "/console/books/edit/shelves/fiction/books/dune",
            &[("sequel", "shelves/fiction/books/nothing")],
        )
        .await;
    assert_eq!(missing.status, 400);
    assert!(
        missing
            .html
            .contains("class=\"violation\" data-field=\"sequel\""),
        "{}",
        missing.html
    );

    let list = browser
        .get("/console/books?parent=shelves%2Ffiction&pageSize=1")
        .await;
    assert!(
        list.html.contains("<span id=\"total\">2</span>"),
        "{}",
        list.html
    );
    assert!(list.html.contains("id=\"next\""));
    let next = list
        .html
        .split("id=\"next\" href=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .replace("&#38;", "&")
        .replace("&amp;", "&");
    let second = browser.get(&next).await;
    assert!(
        second.html.contains("id=\"previous\"") && !second.html.contains("id=\"next\""),
        "{}",
        second.html
    );

    // Books of every shelf (AIP-159's `shelves/-`).
    let everywhere = browser.get("/console/books").await;
    assert!(
        everywhere.html.contains("Dune Messiah"),
        "{}",
        everywhere.html
    );

    let refused = browser
        .submit("/console/shelves/delete/shelves/fiction", &[])
        .await;
    assert_eq!(refused.status, 400, "{}", refused.html);
    assert!(
        refused.html.contains("<ul class=\"preconditions\"><li>"),
        "{}",
        refused.html
    );
}
