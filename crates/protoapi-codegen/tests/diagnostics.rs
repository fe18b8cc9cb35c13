//! How mistakes are shown: one rustc-like report per mistake, compared with
//! the golden files in `tests/diagnostics/`.
//!
//! Each case copies `proto/` into a temporary crate directory (as
//! `<dir>/proto`), adds the `bookshelf.v1` package of
//! `tests/diagnostics/bookshelf/`, breaks it in one place and renders the
//! error relative to that directory. `UPDATE_GOLDEN=1 cargo test -p protoapi-codegen
//! --test diagnostics` rewrites the golden files.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_owned()
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diagnostics")
}

fn copy(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy(&path, &target);
        } else {
            fs::copy(&path, &target).unwrap();
        }
    }
}

/// A crate directory whose `proto/` is the workspace's plus `bookshelf/`.
fn crate_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy(
        &workspace().join("platform/proto"),
        &dir.path().join("proto"),
    );
    copy(
        &fixtures().join("bookshelf"),
        &dir.path().join("proto/bookshelf"),
    );
    dir
}

fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let path = dir.join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} does not contain {from:?}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

fn config_for(proto: &Path) -> protoapi_codegen::Config {
    let mut config = protoapi_codegen::Config::new();
    config.include(proto);
    config.files_under(proto).unwrap();
    config
}

/// Compares `actual` with golden file `name`, or rewrites it under `UPDATE_GOLDEN=1`.
fn assert_golden(name: &str, actual: &str) {
    let path = fixtures().join(format!("{name}.stderr"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::write(&path, actual).unwrap();
        return;
    }
    let expected = fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create it)",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{name}: the rendered error differs from {} (run with UPDATE_GOLDEN=1 to accept it)\n\
         --- expected\n{expected}\n--- actual\n{actual}",
        path.display()
    );
}

const BOOKS: &str = "proto/bookshelf/v1/books.proto";
const ANNOTATIONS: &str = "proto/bookshelf/v1/annotations.toml";

struct Case {
    /// The golden file's name.
    name: &'static str,
    file: &'static str,
    from: &'static str,
    to: &'static str,
    /// The one diagnostic expected, as its `Display` line.
    expected: &'static str,
}

const CASES: &[Case] = &[
    Case {
        // prost keeps a oneof's members in one enum field, which ordering
        // (and field rules, references) cannot read as a field.
        name: "order_by_oneof_member",
        file: BOOKS,
        from: "  string author = 5;",
        to: "  oneof credit {\n    string author = 5;\n    string editor = 7;\n  }",
        expected: "bookshelf/v1/annotations.toml:4:21: `author` is a member of oneof `credit`: \
                   annotations name fields outside a oneof",
    },
    Case {
        name: "annotation_typo",
        file: ANNOTATIONS,
        from: "max = 100",
        to: "maximum = 100",
        expected: "bookshelf/v1/annotations.toml:5:29: unknown field `maximum`, expected \
                   `default` or `max`",
    },
    Case {
        name: "unknown_order_by_field",
        file: ANNOTATIONS,
        from: r#""author""#,
        to: r#""publisher""#,
        expected: "bookshelf/v1/annotations.toml:4:21: `order_by` names `publisher`, \
                   which is not a field of `bookshelf.v1.Book`",
    },
    Case {
        name: "unknown_permissions_method",
        file: ANNOTATIONS,
        from: "DeleteBook = \"books.delete\"\n",
        to: "DeleteBook = \"books.delete\"\nArchiveBook = \"books.archive\"\n",
        expected: "bookshelf/v1/annotations.toml:13:1: `permissions` names `ArchiveBook`, \
                   which is not a method on `books` (methods: CreateBook, GetBook, ListBooks, \
                   UpdateBook, DeleteBook)",
    },
    Case {
        // One error for a misspelt name, not a second for the method it
        // leaves without a permission (named in a note instead).
        name: "misspelt_permissions_method",
        file: ANNOTATIONS,
        from: "DeleteBook = ",
        to: "DeleteBok = ",
        expected: "bookshelf/v1/annotations.toml:12:1: `permissions` names `DeleteBok`, \
                   which is not a method on `books` (methods: CreateBook, GetBook, ListBooks, \
                   UpdateBook, DeleteBook)",
    },
    Case {
        name: "template_variable_names_no_field",
        file: BOOKS,
        from: r#"{get: "/v1/books/{uid=**}"}"#,
        to: r#"{get: "/v1/books/{id=**}"}"#,
        expected: "bookshelf/v1/books.proto:52:3: path variable `id` of `GetBook` names no \
                   string, integer or enum field of `bookshelf.v1.GetBookRequest`",
    },
    Case {
        name: "missing_resource_option",
        file: BOOKS,
        from: r#"  option (google.api.resource) = {
    type: "bookshelf.example/Book"
    pattern: "{uid}"
    plural: "books"
    singular: "book"
  };
"#,
        to: "",
        expected: "bookshelf/v1/books.proto:14:1: `bookshelf.v1.Book` is used as a resource \
                   but has no `google.api.resource` option",
    },
];

/// The fixture is valid: every failure below comes from its one edit.
#[test]
fn bookshelf_fixture_generates() {
    let dir = crate_copy();
    config_for(&dir.path().join("proto"))
        .generate()
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn each_mistake_renders_once_as_its_golden_file() {
    let mut failures = Vec::new();
    for case in CASES {
        let dir = crate_copy();
        edit(dir.path(), case.file, case.from, case.to);
        let error = config_for(&dir.path().join("proto"))
            .generate()
            .expect_err(case.name);
        let lines = error.to_string();
        if error.diagnostics().len() != 1 || !lines.starts_with(case.expected) {
            failures.push(format!(
                "{}: expected exactly\n  {}\ngot {} diagnostic(s):\n  {}",
                case.name,
                case.expected,
                error.diagnostics().len(),
                lines.replace('\n', "\n  ")
            ));
            continue;
        }
        let rendered = error.render(dir.path());
        assert_eq!(
            rendered.matches("error: ").count(),
            1,
            "{}: {rendered}",
            case.name
        );
        assert_golden(case.name, &rendered);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A proto syntax error keeps its place (protox's span), in both forms.
#[test]
fn syntax_errors_keep_their_location() {
    let dir = crate_copy();
    edit(dir.path(), BOOKS, "string author = 5;", "string author = 5");
    let error = config_for(&dir.path().join("proto"))
        .generate()
        .expect_err("a missing `;`");
    let lines = error.to_string();
    assert!(
        lines.starts_with("bookshelf/v1/books.proto:38:3: "),
        "{lines}"
    );
    assert_golden("syntax_error", &error.render(dir.path()));
}

/// Set by [`build_script_prints_the_rendered_form`] for its child process.
const BUILD_SCRIPT_CHILD: &str = "CODEGEN_DIAGNOSTICS_BUILD_SCRIPT_CHILD";

/// What a user's `build.rs` does, with `main`'s way of reporting an `Err`.
/// Runs only as [`build_script_prints_the_rendered_form`]'s child process,
/// where cargo's build script environment is set up.
#[test]
fn build_script_child() {
    if std::env::var_os(BUILD_SCRIPT_CHILD).is_none() {
        return;
    }
    fn main() -> Result<(), Box<dyn std::error::Error>> {
        protoapi_codegen::Config::new()
            .include("proto")
            .files_under("proto")?
            .build_script()?;
        Ok(())
    }
    let code = std::process::Termination::report(main());
    std::process::exit(if code == std::process::ExitCode::SUCCESS {
        0
    } else {
        1
    });
}

/// `fn main() -> Result<(), Box<dyn Error>>` in build.rs prints the
/// rendered form, relative to the crate, not the `Debug` of the error.
#[test]
fn build_script_prints_the_rendered_form() {
    let case = CASES
        .iter()
        .find(|c| c.name == "missing_resource_option")
        .unwrap();
    let dir = crate_copy();
    edit(dir.path(), case.file, case.from, case.to);
    let out_dir = dir.path().join("out");
    fs::create_dir_all(&out_dir).unwrap();
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "build_script_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .current_dir(dir.path())
        .env(BUILD_SCRIPT_CHILD, "1")
        .env("CARGO_MANIFEST_DIR", dir.path())
        .env("OUT_DIR", &out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("Error: could not generate code: 1 error\n\nerror: `bookshelf.v1.Book` is used as a resource"),
        "{stderr}"
    );
    assert!(
        stderr.contains(" --> proto/bookshelf/v1/books.proto:14:1\n"),
        "{stderr}"
    );
    assert!(stderr.contains("14 | message Book {"), "{stderr}");
    assert!(!stderr.contains("Diagnostic {"), "{stderr}");
    assert!(!stderr.contains("Location {"), "{stderr}");
}

/// The CLI prints the same rendered form, relative to the current directory.
#[test]
fn cli_prints_the_rendered_form() {
    let dir = crate_copy();
    edit(dir.path(), ANNOTATIONS, r#""author""#, r#""publisher""#);
    let output = Command::new(env!("CARGO_BIN_EXE_protoapi-codegen"))
        .arg("check")
        .arg("--proto")
        .arg(dir.path().join("proto"))
        .arg("--out")
        .arg(workspace().join("platform/platform-api/src"))
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!output.status.success(), "{stderr}");
    let golden = fs::read_to_string(fixtures().join("unknown_order_by_field.stderr")).unwrap();
    assert!(stderr.starts_with(&golden), "{stderr}");
    assert!(
        stderr.ends_with("error: aborting due to 1 previous error\n"),
        "{stderr}"
    );
    assert!(!stderr.contains("Diagnostic {"), "{stderr}");
}
