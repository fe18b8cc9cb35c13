//! What the library API's Terraform provider offers: resources for its
//! collections whose standard writes answer at once; branches, whose writes
//! are long-running operations the provider does not wait on yet, are only
//! read (data sources).

use protoapi_runtime::terraform::Provider;

#[test]
fn collections_written_through_operations_are_only_read() {
    let provider = Provider::new(&library::SCHEMA, "library", |connection, _| connection);
    let managed: Vec<&str> = provider
        .types()
        .iter()
        .filter(|t| t.managed)
        .map(|t| t.name.as_str())
        .collect();
    assert!(managed.contains(&"library_shelf"), "{managed:?}");
    assert!(managed.contains(&"library_book"), "{managed:?}");
    assert!(
        !managed.iter().any(|name| name.contains("branch")),
        "{managed:?}"
    );
    let branch = provider.types().iter().find(|t| t.name == "library_branch");
    assert!(branch.is_some_and(|t| !t.managed));
}

/// Shelves and books keyed by resource names, with ids chosen by the
/// configuration, applied, changed in place, imported by name and deleted
/// by a real Terraform (`$TERRAFORM`, else `terraform` on the `PATH`; without
/// either the test says so and passes without running).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shelves_and_books_are_managed_by_their_names() {
    use std::sync::Arc;

    use protoapi_runtime::Caller;
    use protoapi_runtime::auth::Authorizer;
    use protoapi_runtime::paging::PageTokens;
    use protoapi_runtime::standard::ApiContext;
    use protoapi_runtime::terraform::testing::{Workspace, terraform};

    let Some(terraform) = terraform() else {
        return;
    };
    let context = ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all());
    let app = library::Services::new(context)
        .store(Arc::new(library::MemoryStore::new()))
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap();
    let endpoint = protoapi_runtime::testing::served::on_free_port(app).await;
    let workspace = Workspace::new(
        terraform,
        env!("CARGO_BIN_EXE_terraform-provider-library").as_ref(),
        "library",
        &endpoint,
        &[],
    );
    let config = |title: &str| {
        format!(
            "resource \"library_shelf\" \"fiction\" {{\n  shelf_id = \"fiction\"\n  theme = \"Fiction\"\n}}\n\n\
             resource \"library_book\" \"dune\" {{\n  parent_id = library_shelf.fiction.id\n  \
             book_id = \"dune\"\n  title = \"{title}\"\n  author = \"Frank Herbert\"\n}}\n"
        )
    };
    let step = |args: &[&str]| tokio::task::block_in_place(|| workspace.ok(args));
    let no_changes =
        |after: &str| tokio::task::block_in_place(|| workspace.assert_no_changes(after));

    workspace.configure(&config("Dune"));
    let applied = step(&["apply", "-auto-approve"]);
    assert!(applied.contains("2 added"), "{applied}");
    assert!(
        applied.contains("id=shelves/fiction/books/dune"),
        "{applied}"
    );
    no_changes("apply");

    workspace.configure(&config("Dune Messiah"));
    let (changes, plan) = tokio::task::block_in_place(|| workspace.plan());
    assert!(
        changes && plan.contains("1 to change, 0 to destroy"),
        "{plan}"
    );
    step(&["apply", "-auto-approve"]);
    no_changes("the update");

    step(&["state", "rm", "library_book.dune"]);
    step(&["import", "library_book.dune", "shelves/fiction/books/dune"]);
    no_changes("import");

    // A deleted book is kept, soft-deleted (AIP-164), and keeps its shelf
    // from being deleted without `force`: destroy says so, and the shelf
    // stays managed.
    let refused = tokio::task::block_in_place(|| workspace.run(&["destroy", "-auto-approve"]));
    assert_ne!(refused.code, 0, "{}", refused.output);
    assert!(
        refused.output.contains("shelves/fiction/books/dune"),
        "{}",
        refused.output
    );
    let left = tokio::task::block_in_place(|| workspace.state());
    assert_eq!(left, ["library_shelf.fiction"]);
}
