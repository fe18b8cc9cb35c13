//! The generated command line of a long-running write (AIP-151): it waits
//! until the operation is done and prints what it made, or with `--async`
//! prints the operation as soon as it starts.
#![cfg(feature = "cli")]

use std::sync::Arc;

use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::cli::Answer;
use protoapi_runtime::cli::clap::{self, Parser};
use protoapi_runtime::client::Connection;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use serde_json::Value;

/// A command line of the generated commands alone.
#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    command: library::cli::Command,
}

fn parse(args: &str) -> Result<library::cli::Command, clap::Error> {
    let args = std::iter::once("library").chain(args.split_whitespace());
    Cli::try_parse_from(args).map(|cli| cli.command)
}

async fn serve() -> String {
    let context = ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all());
    let app = library::Services::new(context)
        .store(Arc::new(library::MemoryStore::new()))
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(app).await
}

fn item(answer: Answer) -> Value {
    match answer {
        Answer::Item(item) => item,
        other => panic!("an item: {other:?}"),
    }
}

#[tokio::test]
async fn long_running_commands_wait_unless_async() {
    for connection in [Connection::rest, Connection::grpc] {
        let client = library::Client::new(connection(&serve().await).unwrap());
        let run = |args: String| {
            let client = client.clone();
            async move { parse(&args).unwrap().run(&client).await }
        };
        let location = "projects/p/locations/l";
        let create =
            format!("branches create --parent {location} --set address=here --set region=r");
        let branch = item(run(create.clone()).await.unwrap());
        let name = branch["name"].as_str().unwrap().to_owned();
        assert!(
            name.starts_with(&format!("{location}/branches/")),
            "{branch}"
        );
        assert_eq!(branch["address"], "here");

        let operation = item(run(format!("{create} --async")).await.unwrap());
        assert!(
            operation["name"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{location}/operations/")),
            "{operation}"
        );

        let changed = item(
            run(format!("branches update {name} --set address=there"))
                .await
                .unwrap(),
        );
        assert_eq!(changed["address"], "there");
        let deleted = run(format!("branches delete {name}")).await.unwrap();
        assert!(
            matches!(&deleted, Answer::Deleted(uid) if *uid == name),
            "{deleted:?}"
        );
        let refused = run(format!("branches get {name}")).await.unwrap_err();
        assert_eq!(refused.code(), protoapi_runtime::Code::NotFound);
        assert!(
            parse("branches get x --async").is_err(),
            "only writes take --async"
        );
    }
}
