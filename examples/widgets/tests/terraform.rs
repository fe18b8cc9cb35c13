//! The widgets API's own Terraform provider, generated from its protos like
//! the console and the CLI, applied and destroyed by a real Terraform
//! (`$TERRAFORM`, else `terraform` on the `PATH`; without either the test
//! says so and passes without running).
#![cfg(feature = "terraform")]

use std::sync::Arc;

use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::terraform::testing::{Workspace, terraform};

/// The API in memory on a socket, every request acting as the system.
async fn serve() -> String {
    let context = ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all());
    let app = widgets::Services::new(context)
        .store(Arc::new(widgets::MemoryStore::default()))
        .drawing_service(Arc::new(widgets::Drawings::default()))
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(app).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_widget_with_nested_maps_lists_and_enums_is_applied_and_destroyed() {
    let Some(terraform) = terraform() else {
        return;
    };
    let endpoint = serve().await;
    let workspace = Workspace::new(
        terraform,
        env!("CARGO_BIN_EXE_terraform-provider-widgets").as_ref(),
        "widgets",
        &endpoint,
        &[],
    );
    let workshop = "a".repeat(40);
    workspace.configure(&format!(
        r#"
resource "widgets_widget" "gear" {{
  parent_id = "{workshop}"
  name      = "gear"
  colour    = "red"
  stock     = 3
  specification = {{
    weight_grams = "1200"
    tolerance    = 0.5
    finishes     = ["GLOSS"]
    limits       = {{ max = "5" }}
    certified    = true
  }}
}}
"#
    ));
    let step = |args: &[&str]| tokio::task::block_in_place(|| workspace.ok(args));
    let applied = step(&["apply", "-auto-approve"]);
    assert!(applied.contains("1 added"), "{applied}");
    tokio::task::block_in_place(|| workspace.assert_no_changes("apply"));
    let id = tokio::task::block_in_place(|| workspace.id("widgets_widget.gear"));
    let got = read(&endpoint, &id).await;
    assert_eq!(
        got["specification"]["finishes"],
        serde_json::json!(["GLOSS"])
    );
    assert_eq!(got["specification"]["limits"]["max"], "5");
    assert_eq!(got["stock"], 3);

    // The colour is fixed once made: changing it replaces the widget.
    let replaced = tokio::task::block_in_place(|| {
        workspace.configure(&format!(
            "resource \"widgets_widget\" \"gear\" {{\n  parent_id = \"{workshop}\"\n  name = \"gear\"\n  colour = \"blue\"\n}}\n"
        ));
        workspace.plan()
    });
    assert!(replaced.1.contains("must be replaced"), "{}", replaced.1);

    let destroyed = step(&["destroy", "-auto-approve"]);
    assert!(destroyed.contains("1 destroyed"), "{destroyed}");
    assert!(tokio::task::block_in_place(|| workspace.state()).is_empty());
}

/// The widget `uid` as the API answers it.
async fn read(endpoint: &str, uid: &str) -> serde_json::Value {
    let get = widgets::SCHEMA.collection("widgets").unwrap().get.unwrap();
    let connection = protoapi_runtime::client::Connection::rest(endpoint).unwrap();
    let mut request = serde_json::Map::new();
    request.insert("uid".to_owned(), uid.into());
    connection.call_json(get.route, request).await.unwrap()
}
