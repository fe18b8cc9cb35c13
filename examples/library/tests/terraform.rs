//! What the library API's Terraform provider offers: its collections whose
//! standard writes answer at once, and no resource type for branches, whose
//! writes are long-running operations the provider does not wait on yet.

use protoapi_runtime::terraform::Provider;

#[test]
fn collections_written_through_operations_are_not_offered() {
    let provider = Provider::new(&library::SCHEMA, "library", |connection, _| connection);
    let names: Vec<&str> = provider.types().iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"library_shelf"), "{names:?}");
    assert!(names.contains(&"library_book"), "{names:?}");
    assert!(!names.iter().any(|name| name.contains("branch")), "{names:?}");
}
