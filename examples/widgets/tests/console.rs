//! The widgets example serves a console of its own, generated from its
//! protos like the Platform API's: UIDP keys under a parent the API does
//! not store (asked for on the create form), a nested message's fields
//! (an enum among them, as choices), an IMMUTABLE field editable only at
//! creation, and the server's own rules refusing a delete, in words.

use std::sync::Arc;

use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::console::Console;
use protoapi_runtime::console::testing::Browser;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;

const PARENT: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

#[tokio::test]
async fn widgets_have_a_console_of_their_own() {
    let context = ApiContext::new(PageTokens::random(), Authorizer::allow_all());
    let app = widgets::Services::new(context)
        .store(Arc::new(widgets::MemoryStore::default()))
        .drawing_service(Arc::new(widgets::Drawings::default()))
        .console(Console::new(&widgets::SCHEMA))
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap();
    let mut browser = Browser::new(protoapi_runtime::testing::served::on_free_port(app).await);
    browser.sign_in("").await;
    let home = browser.get("/console/").await;
    assert!(
        home.html.contains("<h1 id=\"title\">widgets</h1>"),
        "{}",
        home.html
    );
    assert!(home.html.contains("data-collection=\"widgets\""));

    let form = browser.get("/console/widgets/new").await;
    assert!(
        form.html.contains("name=\"_parent\""),
        "the parent is asked for: {}",
        form.html
    );
    assert!(
        form.html.contains("<option value=\"GLOSS\">GLOSS</option>"),
        "an enum's values: {}",
        form.html
    );
    let made = browser
        .submit(
            "/console/widgets/new",
            &[
                ("_parent", PARENT),
                ("name", "gear"),
                ("colour", "red"),
                ("stock", "3"),
                ("specification.finishes", "GLOSS"),
                ("specification.finishes", "MATTE"),
            ],
        )
        .await;
    assert_eq!(made.status, 303, "{}", made.html);
    let item = browser.get(made.location()).await;
    assert!(
        item.html.contains("<h1 id=\"title\">gear</h1>"),
        "{}",
        item.html
    );
    assert!(item.html.contains("GLOSS"), "{}", item.html);

    let made_at = made.location().strip_suffix("?done=created").unwrap();
    let uid = made_at.rsplit_once("/item/").unwrap().1.to_owned();
    let edit = browser.get(&format!("/console/widgets/edit/{uid}")).await;
    assert!(
        edit.html.contains("<output id=\"f-colour\">red</output>"),
        "IMMUTABLE: read-only once made: {}",
        edit.html
    );
    let saved = browser
        .submit(&format!("/console/widgets/edit/{uid}"), &[("stock", "7")])
        .await;
    assert_eq!(saved.status, 303, "{}", saved.html);
    let item = browser.get(&format!("/console/widgets/item/{uid}")).await;
    assert!(
        item.html.contains("<dd data-field=\"stock\">7</dd>"),
        "{}",
        item.html
    );
    assert!(item.html.contains("<dd data-field=\"colour\">red</dd>"));

    let refused = browser
        .submit(
            "/console/widgets/new",
            &[("_parent", PARENT), ("stock", "many")],
        )
        .await;
    assert_eq!(refused.status, 400);
    assert!(
        refused
            .html
            .contains("class=\"violation\" data-field=\"stock\""),
        "{}",
        refused.html
    );
}
