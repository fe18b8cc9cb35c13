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
