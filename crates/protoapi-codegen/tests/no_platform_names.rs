//! The generator and the runtime are for anyone's API: nothing in them names
//! the Platform API this workspace also builds (its packages, domains,
//! collections or wording).

use std::fs;
use std::path::{Path, PathBuf};

/// Words of the Platform API's contract, matched as whole words, any case.
const PLATFORM_WORDS: &[&str] = &[
    "platform",
    "organization",
    "organizations",
    "iam",
    "rolebinding",
    "rolebindings",
    "sts",
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|ext| {
            matches!(ext.to_str(), Some("rs" | "toml" | "proto" | "html" | "css"))
        }) {
            out.push(path);
        }
    }
}

#[test]
fn library_crates_name_nothing_of_the_platform_api() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap();
    let mut files = Vec::new();
    let mut crates = Vec::new();
    for entry in fs::read_dir(workspace.join("crates")).unwrap() {
        crates.push(entry.unwrap().path());
    }
    for dir in &crates {
        for sub in ["src", "proto", "templates", "assets"] {
            let dir = dir.join(sub);
            if dir.exists() {
                sources(&dir, &mut files);
            }
        }
        files.push(dir.join("Cargo.toml"));
    }
    let mut found = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        // The shipped googleapis protos keep googleapis' names (a field
        // `organization`); their comments are the project's own.
        let googleapis = file.starts_with(workspace.join("crates/protoapi-codegen/proto/google"));
        // Tests are not scanned, and a manifest's dev-dependencies are what
        // they build on (the macros' UI tests derive rows of the Platform
        // API's messages); a published crate leaves them behind.
        let manifest = file.ends_with("Cargo.toml");
        let mut dev_dependencies = false;
        for (number, line) in text.lines().enumerate() {
            if manifest && line.starts_with('[') {
                dev_dependencies = line.trim() == "[dev-dependencies]";
            }
            if dev_dependencies || googleapis && !line.trim_start().starts_with("//") {
                continue;
            }
            // googleapis' own package, which the generator serves, is no
            // name of the Platform API's.
            let line = [
                "google/iam/v1/iam_policy",
                "google/iam/",
                "google.iam.",
                "google::iam::",
            ]
            .iter()
            .fold(line.to_owned(), |line, package| {
                line.replace(package, "google/")
            });
            let words = line
                .split(|c: char| !c.is_ascii_alphanumeric())
                .map(str::to_ascii_lowercase);
            for word in words {
                if PLATFORM_WORDS.contains(&word.as_str()) {
                    let file = file.strip_prefix(workspace).unwrap().display();
                    found.push(format!("{file}:{}: `{word}`: {}", number + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "platform names in the library:\n{}",
        found.join("\n")
    );
}
