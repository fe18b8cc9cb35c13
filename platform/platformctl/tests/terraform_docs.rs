//! The provider's documentation in `terraform/docs/` is what the provider
//! writes (`terraform-provider-platform docs terraform/docs`); with
//! `UPDATE_GOLDEN=1` this test writes it.

use std::path::Path;

use protoapi_runtime::terraform::{Provider, docs};

#[test]
fn the_committed_documentation_is_the_providers() {
    let provider = Provider::new(&platform_api::SCHEMA, "platform", |connection, _| {
        connection
    });
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("terraform/docs");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let _ = std::fs::remove_dir_all(&dir);
        docs::write(&provider, &dir).unwrap();
    }
    let pages = docs::pages(&provider);
    assert!(
        pages
            .iter()
            .any(|(path, _)| path == "resources/role_binding.md")
    );
    for (path, text) in &pages {
        let committed = std::fs::read_to_string(dir.join(path)).unwrap_or_default();
        assert_eq!(&committed, text, "{path} differs: run with UPDATE_GOLDEN=1");
    }
    let committed = walk(&dir);
    assert_eq!(
        committed.len(),
        pages.len(),
        "stale pages in {}: {committed:?}",
        dir.display()
    );
}

fn walk(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        match path.is_dir() {
            true => found.extend(walk(&path)),
            false => found.push(path.display().to_string()),
        }
    }
    found
}
