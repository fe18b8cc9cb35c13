//! The shape of the hand-written library code: no function in the generator
//! or the runtime grows past what a reader takes in at once.

use std::fs;
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;

/// The longest function, in lines from its signature to its closing brace.
const MAX_FUNCTION_LINES: usize = 120;

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
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    for dir in ["codegen/src", "runtime/src"] {
        rust_sources(&workspace.join(dir), &mut files);
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

/// The runtime's top-level module a source file belongs to.
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next().unwrap().as_os_str();
    Path::new(first)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The top-level modules a piece of code names through `crate::`, in code
/// and in documentation links (a link to a layer above is a dependency of
/// the documentation on it), but not in plain comments.
fn crate_references(source: &str) -> Vec<String> {
    let code: String = source
        .lines()
        .map(|line| {
            let doc = ["///", "//!"]
                .iter()
                .any(|d| line.trim_start().starts_with(d));
            if doc {
                line
            } else {
                line.split("//").next().unwrap()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        found.push(ident(&group[start..i]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.push(ident(&group[start..i]));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            found.push(ident(rest));
        }
    }
    found.retain(|name| !name.is_empty());
    found
}

#[test]
fn runtime_modules_depend_one_way() {
    use std::collections::{BTreeMap, BTreeSet};
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/src");
    let mut files = Vec::new();
    rust_sources(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(&src, file);
        for to in crate_references(&fs::read_to_string(file).unwrap()) {
            if to != from && modules.contains(&to) && from != "lib" {
                uses.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    // A module that reaches itself through the modules it uses is in a cycle.
    let path_back = |start: &str| -> Option<Vec<String>> {
        let mut stack = vec![vec![start.to_string()]];
        let mut seen = BTreeSet::new();
        while let Some(path) = stack.pop() {
            for next in uses.get(path.last().unwrap()).into_iter().flatten() {
                let mut longer = path.clone();
                longer.push(next.clone());
                if next == start {
                    return Some(longer);
                }
                if seen.insert(next.clone()) {
                    stack.push(longer);
                }
            }
        }
        None
    };
    let cycles: Vec<String> = modules
        .iter()
        .filter_map(|m| path_back(m))
        .map(|cycle| cycle.join(" → "))
        .collect();
    assert!(
        cycles.is_empty(),
        "module cycles in the runtime:\n{}",
        cycles.join("\n")
    );
}
