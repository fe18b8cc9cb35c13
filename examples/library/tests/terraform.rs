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
