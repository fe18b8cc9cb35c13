//! Golden fixtures: small APIs and the exact output of every emitter, or the
//! exact diagnostics, in `tests/fixtures/<case>/`.
//!
//! A case directory is an import root: its `.proto` files and
//! `annotations.toml` files, in it or in subdirectories, are the input. It
//! holds one of:
//!
//! - `expected.stderr`: generation fails, rendered as rustc shows errors
//!   (paths relative to the case directory), as `tests/diagnostics.rs` does;
//! - `expected/`: generation succeeds, and every generated file but the
//!   binary descriptor set is there, with each package's API file split by
//!   emitter (`expected/<package>.api/<emitter>.rs`, see
//!   `Config::generate_by_emitter`), so that a change to one emitter shows
//!   as a small diff in its own file, and the warnings, if any, in
//!   `expected/warnings.stderr`.
//!
//! `UPDATE_GOLDEN=1 cargo test -p protoapi-codegen --test fixtures` rewrites the
//! expected files (and removes those no longer generated); a new case needs
//! only its input and an empty `expected/` (or `expected.stderr`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use protoapi_codegen::DESCRIPTOR_FILE;

/// The file of `expected/` holding the warnings.
const WARNINGS: &str = "warnings.stderr";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn update() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some()
}

/// Every file under `dir`, by path relative to it (`/`-separated).
fn files(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let relative = path.strip_prefix(root).unwrap();
                let name = relative.to_string_lossy().replace('\\', "/");
                out.insert(name, fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A line diff short enough to read in a test failure: the first differing
/// line with a few lines of context either side.
fn first_difference(expected: &str, actual: &str) -> String {
    let expected: Vec<&str> = expected.lines().collect();
    let actual: Vec<&str> = actual.lines().collect();
    let at = expected
        .iter()
        .zip(&actual)
        .position(|(e, a)| e != a)
        .unwrap_or(expected.len().min(actual.len()));
    let from = at.saturating_sub(3);
    let show = |lines: &[&str], sign: char| {
        lines
            .iter()
            .enumerate()
            .skip(from)
            .take(at - from + 4)
            .map(|(n, line)| format!("{sign}{:>5} | {line}", n + 1))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!(
        "first difference at line {}:\n{}\n{}",
        at + 1,
        show(&expected, '-'),
        show(&actual, '+')
    )
}

/// Compares one case with its golden files (or rewrites them); the problems found.
fn run_case(case: &Path) -> Vec<String> {
    let name = case.file_name().unwrap().to_string_lossy().into_owned();
    let mut config = protoapi_codegen::Config::new();
    config.include(case);
    config.files_under(case).unwrap();
    let result = config.generate_by_emitter();
    let stderr_path = case.join("expected.stderr");
    let expected_dir = case.join("expected");
    let mut problems = Vec::new();
    match (result, stderr_path.exists(), expected_dir.is_dir()) {
        (_, true, true) | (_, false, false) => problems.push(format!(
            "{name}: holds neither or both of `expected.stderr` and `expected/`"
        )),
        (Ok(_), true, false) => problems.push(format!(
            "{name}: generation succeeded, but `expected.stderr` expects it to fail"
        )),
        (Err(error), false, true) => problems.push(format!(
            "{name}: generation failed, but `expected/` expects it to succeed:\n{}",
            error.render(case)
        )),
        (Err(error), true, false) => {
            let actual = error.render(case);
            if update() {
                fs::write(&stderr_path, &actual).unwrap();
            } else {
                let expected = fs::read_to_string(&stderr_path).unwrap();
                if expected != actual {
                    problems.push(format!(
                        "{name}/expected.stderr differs (UPDATE_GOLDEN=1 accepts it)\n\
                         --- expected\n{expected}\n--- actual\n{actual}"
                    ));
                }
            }
        }
        (Ok((output, warnings)), false, true) => {
            let mut actual: BTreeMap<String, String> = output
                .into_iter()
                .filter(|(path, _)| path != Path::new(DESCRIPTOR_FILE))
                .map(|(path, bytes)| {
                    let path = path.to_string_lossy().replace('\\', "/");
                    (path, String::from_utf8(bytes).unwrap())
                })
                .collect();
            if !warnings.is_empty() {
                actual.insert(WARNINGS.to_owned(), warnings.render(case));
            }
            let expected = files(&expected_dir);
            if update() {
                for stale in expected.keys().filter(|p| !actual.contains_key(*p)) {
                    fs::remove_file(expected_dir.join(stale)).unwrap();
                }
                for (path, text) in &actual {
                    let target = expected_dir.join(path);
                    fs::create_dir_all(target.parent().unwrap()).unwrap();
                    if expected.get(path) != Some(text) {
                        fs::write(target, text).unwrap();
                    }
                }
                return problems;
            }
            for (path, text) in &actual {
                match expected.get(path) {
                    None => problems.push(format!("{name}/expected/{path}: missing")),
                    Some(golden) if golden != text => problems.push(format!(
                        "{name}/expected/{path} differs (UPDATE_GOLDEN=1 accepts it); {}",
                        first_difference(golden, text)
                    )),
                    Some(_) => {}
                }
            }
            for stale in expected.keys().filter(|p| !actual.contains_key(*p)) {
                problems.push(format!("{name}/expected/{stale}: no longer generated"));
            }
        }
    }
    problems
}

#[test]
fn every_case_matches_its_golden_files() {
    let mut cases: Vec<PathBuf> = fs::read_dir(fixtures())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no cases in {}", fixtures().display());
    let problems: Vec<String> = cases.iter().flat_map(|case| run_case(case)).collect();
    assert!(
        problems.is_empty(),
        "{} problem(s):\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

/// The split output is the API file cut up: the same code, in the same order.
#[test]
fn split_output_is_the_api_file() {
    let case = fixtures().join("minimal_api");
    let mut config = protoapi_codegen::Config::new();
    config.include(&case);
    config.files_under(&case).unwrap();
    let whole = config.generate().unwrap();
    let (split, _) = config.generate_by_emitter().unwrap();
    let api = String::from_utf8(whole[Path::new("shop.v1.api.rs")].clone()).unwrap();
    let mut rest = api.as_str();
    let order = [
        "imports", "reflect", "json", "resource", "legacy", "store", "rows", "backend", "service",
        "rest", "client",
    ];
    let mut sections = 0;
    for emitter in order {
        let path = format!("shop.v1.api/{emitter}.rs");
        let Some(code) = split.get(Path::new(&path)) else {
            continue;
        };
        sections += 1;
        for item in String::from_utf8(code.clone()).unwrap().split("\n\n") {
            let at = rest
                .find(item)
                .unwrap_or_else(|| panic!("{path}: not in order in the API file:\n{item}"));
            rest = &rest[at + item.len()..];
        }
    }
    assert_eq!(
        split
            .keys()
            .filter(|p| p.starts_with("shop.v1.api"))
            .count(),
        sections,
        "a section of an emitter this test does not know"
    );
}

/// Generated code reaches the runtime through its one hidden surface, by
/// absolute path (`::protoapi_runtime::__private`, which a module of the API's own
/// named `protoapi-runtime` cannot shadow), so the runtime's public modules may
/// change without breaking a generated crate; doc comments name the public
/// paths.
#[test]
fn generated_code_names_only_the_private_surface() {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut offending = Vec::new();
    for (path, text) in files(&fixtures())
        .iter()
        .filter(|(path, _)| path.ends_with(".rs"))
    {
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            for (at, _) in code.match_indices("protoapi_runtime::") {
                let before = &code[..at];
                let absolute = before.strip_suffix("::");
                let inner = match absolute {
                    Some(outer) => outer.ends_with(ident),
                    None => before.ends_with(ident),
                };
                let after = &code[at + "protoapi_runtime::".len()..];
                if !inner && (absolute.is_none() || !after.starts_with("__private::")) {
                    offending.push(format!("{path}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        offending.is_empty(),
        "runtime paths other than `::protoapi_runtime::__private`:\n{}",
        offending.join("\n")
    );
}
