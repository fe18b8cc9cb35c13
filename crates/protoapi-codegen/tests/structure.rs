//! The shape of the hand-written library code: no function in the library
//! crates grows past what a reader takes in at once, no module of theirs
//! is in a circle at any depth, and their crates depend one way.

use std::fs;
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;

/// The longest function, in lines from its signature to its closing brace.
const MAX_FUNCTION_LINES: usize = 120;

/// The library crates: every crate under `crates/` (the generator, its
/// derive macros, the runtime's façade and the runtime's crates).
fn library_crates(workspace: &Path) -> Vec<PathBuf> {
    let mut crates: Vec<PathBuf> = fs::read_dir(workspace.join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    crates.sort();
    crates
}

fn rust_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_sources(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// Every function with a body in `items`, nested modules and impls included,
/// as (name, first line, last line).
fn functions(items: &[syn::Item], out: &mut Vec<(String, usize, usize)>) {
    fn push(out: &mut Vec<(String, usize, usize)>, name: &syn::Ident, span: proc_macro2::Span) {
        out.push((name.to_string(), span.start().line, span.end().line));
    }
    for item in items {
        match item {
            syn::Item::Fn(f) => push(out, &f.sig.ident, f.span()),
            syn::Item::Impl(block) => {
                for item in &block.items {
                    if let syn::ImplItem::Fn(f) = item {
                        push(out, &f.sig.ident, f.span());
                    }
                }
            }
            syn::Item::Trait(t) => {
                for item in &t.items {
                    if let syn::TraitItem::Fn(f) = item
                        && f.default.is_some()
                    {
                        push(out, &f.sig.ident, f.span());
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    functions(items, out);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn no_library_function_is_longer_than_a_screenful_or_two() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap();
    let mut files = Vec::new();
    for dir in library_crates(workspace) {
        rust_sources(&dir.join("src"), &mut files);
    }
    let mut long = Vec::new();
    for file in &files {
        let source = fs::read_to_string(file).unwrap();
        let parsed = syn::parse_file(&source).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut found = Vec::new();
        functions(&parsed.items, &mut found);
        for (name, first, last) in found {
            let lines = last - first + 1;
            if lines > MAX_FUNCTION_LINES {
                let path = file.strip_prefix(workspace).unwrap().display();
                long.push(format!("{path}:{first}: `{name}` has {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[path = "structure/modules.rs"]
mod modules;

#[test]
fn no_module_is_in_a_circle_at_any_depth() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap();
    let mut circles = Vec::new();
    for dir in library_crates(workspace) {
        let src = dir.join("src");
        let mut files = Vec::new();
        rust_sources(&src, &mut files);
        let tree = modules::Tree::read(&src, &files);
        let name = dir.strip_prefix(workspace).unwrap().display().to_string();
        circles.extend(tree.circles().into_iter().map(|c| format!("{name}: {c}")));
    }
    assert!(
        circles.is_empty(),
        "module circles (`.` is a module's own file, the others its children):\n{}",
        circles.join("\n")
    );
}

/// The emitters (`crates/protoapi-codegen/src/emit/*`) each write one output from the model:
/// none imports another; what several spell alike is in `emit::shared`.
#[test]
fn no_emitter_imports_another() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_sources(&src, &mut files);
    let tree = modules::Tree::read(&src, &files);
    let emit = ["emit".to_owned()];
    let crossing: Vec<String> = tree
        .edges(&emit)
        .into_iter()
        .flat_map(|(from, to)| to.into_iter().map(move |to| (from.clone(), to)))
        .filter(|(from, to)| from != "." && to != "." && to != "shared")
        .map(|(from, to)| format!("emit::{from} → emit::{to}"))
        .collect();
    assert!(
        crossing.is_empty(),
        "emitters importing each other:\n{}",
        crossing.join("\n")
    );
}

/// The library's crates from the bottom up: each may depend only on crates
/// listed before it. The generator depends on none of the runtime's.
const CRATE_LAYERS: &[&str] = &[
    "protoapi-core",
    "protoapi-http",
    "protoapi-client",
    "protoapi-terraform",
    "protoapi-console",
    "protoapi-server",
    "protoapi-sql",
    "protoapi-registry",
    "protoapi-testing",
    "protoapi-runtime",
    "protoapi-macros",
    "protoapi-codegen-model",
    "protoapi-codegen",
];

#[test]
fn library_crates_depend_downwards_only() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap();
    let runtime = CRATE_LAYERS
        .iter()
        .position(|c| *c == "protoapi-runtime")
        .unwrap();
    let mut wrong = Vec::new();
    for dir in library_crates(workspace) {
        let manifest: toml::Table = fs::read_to_string(dir.join("Cargo.toml"))
            .unwrap()
            .parse()
            .unwrap();
        let name = manifest["package"]["name"].as_str().unwrap();
        let layer = CRATE_LAYERS
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("{name} is not in CRATE_LAYERS"));
        let dependencies = manifest.get("dependencies").and_then(|d| d.as_table());
        for (key, spec) in dependencies.into_iter().flatten() {
            let package = spec.get("package").and_then(|p| p.as_str()).unwrap_or(key);
            let Some(below) = CRATE_LAYERS.iter().position(|c| *c == package) else {
                continue;
            };
            let generator_on_runtime = name.starts_with("protoapi-codegen") && below <= runtime;
            if below >= layer || generator_on_runtime {
                wrong.push(format!("{name} → {package}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "dependencies pointing up the crate layers:\n{}",
        wrong.join("\n")
    );
}
