//! The generated command-line module of the widgets API, driven against its
//! server: any API built with the generator gets one (`Config::cli`).
#![cfg(feature = "cli")]

use std::sync::Arc;

use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::cli::Answer;
use protoapi_runtime::cli::clap::{self, Parser};
use protoapi_runtime::client::Connection;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use serde_json::json;

/// A command line of the generated commands alone.
#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: widgets::cli::Command,
}

fn parse(args: &str) -> Result<widgets::cli::Command, clap::Error> {
    let args = std::iter::once("widgets").chain(args.split_whitespace());
    Cli::try_parse_from(args).map(|cli| cli.command)
}

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

#[tokio::test]
async fn commands_create_list_update_and_delete_widgets() {
    let client = widgets::Client::new(Connection::rest(&serve().await).unwrap());
    let workshop = "1".repeat(40);
    let run = |args: String| {
        let client = client.clone();
        async move { parse(&args).unwrap().run(&client).await }
    };

    let created = run(format!(
        "widgets create --parent {workshop} --set name=gear --set colour=red"
    ))
    .await
    .unwrap();
    let Answer::Item(gear) = created else {
        panic!("an item: {created:?}");
    };
    assert_eq!(
        (&gear["name"], &gear["colour"]),
        (&json!("gear"), &json!("red"))
    );
    let uid = gear["uid"].as_str().unwrap();

    let page = run(format!(
        "widgets list --children-of {workshop} --page-size 5"
    ))
    .await
    .unwrap()
    .to_json();
    assert_eq!(page["items"][0]["uid"], uid, "{page}");
    assert_eq!(page["totalCount"], 1, "{page}");

    // The `--set` fields are the update mask; a stale etag is refused.
    let etag = gear["etag"].as_str().unwrap();
    let updated = run(format!("widgets update {uid} --set name=cog --etag {etag}"))
        .await
        .unwrap()
        .to_json();
    assert_eq!(
        (&updated["name"], &updated["colour"]),
        (&json!("cog"), &json!("red"))
    );
    let stale = run(format!("widgets update {uid} --set name=x --etag {etag}")).await;
    assert_eq!(stale.unwrap_err().code(), protoapi_runtime::Code::Aborted);
    // A misspelt field is refused before anything is sent.
    let misspelt = run(format!("widgets update {uid} --set nmae=x"))
        .await
        .unwrap_err();
    let fields: Vec<&str> = misspelt
        .field_violations()
        .iter()
        .map(|v| v.field.as_str())
        .collect();
    assert_eq!(fields, ["widget.nmae"], "{misspelt}");

    let deleted = run(format!("widgets delete {uid}")).await.unwrap();
    assert_eq!(deleted, Answer::Deleted(uid.to_owned()));
    let missing = run(format!("widgets get {uid}")).await;
    assert_eq!(
        missing.unwrap_err().code(),
        protoapi_runtime::Code::NotFound
    );
}

#[test]
fn only_the_methods_and_filters_a_collection_has_are_commands() {
    // Parts have no update, and widgets no field filters.
    assert!(parse("parts update u --set name=x").is_err());
    assert!(parse("widgets list --filter name=gear").is_err());
    assert!(parse("widgets list --ancestors-of u").is_err());
    assert!(parse("parts list --descendants-of u --all").is_ok());
}

/// A list whose request has an AIP-160 `filter` takes the expression as
/// one `--filter`, sent as written; its errors come back as the server's.
#[tokio::test]
async fn gadgets_list_takes_a_filter_expression() {
    let client = widgets::Client::new(Connection::rest(&serve().await).unwrap());
    let run = |args: &[&str]| {
        let client = client.clone();
        let args: Vec<String> = std::iter::once("widgets")
            .chain(args.iter().copied())
            .map(str::to_owned)
            .collect();
        async move {
            Cli::try_parse_from(args)
                .unwrap()
                .command
                .run(&client)
                .await
        }
    };
    let workshop = "1".repeat(40);
    for (name, size) in [("small", "1"), ("large", "5"), ("huge", "9")] {
        let display = format!("displayName={name}");
        let size = format!("size={size}");
        run(&[
            "gadgets", "create", "--parent", &workshop, "--set", &display, "--set", &size,
        ])
        .await
        .unwrap();
    }
    let page = run(&[
        "gadgets",
        "list",
        "--filter",
        "size >= 5 AND displayName != \"h*\"",
    ])
    .await
    .unwrap()
    .to_json();
    assert_eq!(page["items"].as_array().unwrap().len(), 1, "{page}");
    assert_eq!(page["items"][0]["displayName"], "large", "{page}");
    let refused = run(&["gadgets", "list", "--filter", "weight > 2"])
        .await
        .unwrap_err();
    assert_eq!(refused.code(), protoapi_runtime::Code::InvalidArgument);
    assert_eq!(refused.field_violations()[0].field, "filter", "{refused}");
}
