//! The contract-first generator: protobuf (+ annotations) in, Rust out.
//!
//! The pipeline has three stages with a typed model between them:
//!
//! 1. Load: parse `.proto` files with protox into descriptors.
//! 2. Model (crate `protoapi-codegen-model`): build the typed model — services, HTTP
//!    rules with parsed [`template`]s, standard methods, resources and field
//!    behaviours — reporting mistakes as [`diagnostics`] (see
//!    [Errors](#errors)).
//! 3. Emit: one emitter per output kind, formatted with prettyplease.
//!
//! [`Config`] drives the pipeline for `build.rs` users and the CLI alike; it,
//! [`Error`] and the diagnostics are the crate's whole surface (the model and
//! the emitters are its own, free to change).
//!
//! # Errors
//!
//! Every mistake in the inputs — a proto syntax or type error (with the
//! place protox gives), a name in an annotation file that does not resolve,
//! a method that does not fit — is one [`Diagnostic`] at a file, line and
//! column, and generation fails with all of them in [`Error::Invalid`]:
//! every check of every method runs whatever the others found (a method
//! without an HTTP rule is still checked for its standard shape), and an
//! annotation file that does not parse is reported beside the protos'
//! problems. A mistake that would make later checks fail in its wake is
//! reported alone:
//! a message used as a resource (a `Get` response, a list's `items`) without
//! a `google.api.resource` option is that one error, at the message, and the
//! annotations are not checked until it is fixed.
//!
//! The error shows them in two forms:
//!
//! - `Display`: one `file:line:col: message` line each, the file named
//!   relative to its import root.
//! - [`Error::render`] (and `Debug`, which a `build.rs` `main` returning
//!   `Result<(), Box<dyn Error>>` prints): as rustc shows its errors, with
//!   the path relative to the crate (`CARGO_MANIFEST_DIR`, else the current
//!   directory) and the line underlined:
//!
//! ```text
//! error: `order_by` names `publisher`, which is not a field of `bookshelf.v1.Book`
//!  --> proto/bookshelf/v1/annotations.toml:4:21
//!   |
//! 4 | order_by = ["name", "publisher", "createTime"]
//!   |                     ^^^^^^^^^^^
//! ```
//!
//! The CLI (`cargo run -p protoapi-codegen -- check|generate`) prints the same, with
//! paths relative to the current directory, in colour on a terminal.

mod config;
mod emit;
mod load;

use protoapi_codegen_model::{annotations, model};
pub use protoapi_codegen_model::{diagnostics, template};

use std::fmt;
use std::path::{Path, PathBuf};

pub use config::{
    ANNOTATION_FILE, BUILD_SCRIPT_ROOT, Config, DESCRIPTOR_FILE, OPENAPI_FILE, Output, VENDORED,
};
pub use diagnostics::Diagnostic;
use diagnostics::{Sources, Style};

/// Why generation failed.
///
/// `Display` gives one `file:line:col: message` line per problem, with files
/// named relative to their import root. `Debug` renders the problems as rustc
/// does (see [`Error::render`]), relative to the crate being built
/// (`CARGO_MANIFEST_DIR`) or else the current directory, so that
/// `fn main() -> Result<(), Box<dyn std::error::Error>>` in `build.rs` prints
/// them readably.
#[derive(thiserror::Error)]
pub enum Error {
    /// Mistakes in the inputs: proto syntax and type errors, and everything
    /// the model and the annotation checks find.
    #[error("{}", .diagnostics.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid {
        diagnostics: Vec<Diagnostic>,
        /// The files they point into, to show them.
        sources: Sources,
    },
    #[error("code generation failed: {0}")]
    Prost(std::io::Error),
    #[error("{path}: {source}", path = .0.display(), source = .1)]
    Io(PathBuf, std::io::Error),
}

impl Error {
    /// Problems in the files found under `includes` (import roots).
    pub fn invalid(diagnostics: Vec<Diagnostic>, includes: &[PathBuf]) -> Error {
        let sources = Sources::read(includes, diagnostic_files(&diagnostics));
        Error::Invalid {
            diagnostics,
            sources,
        }
    }

    /// The problems found in the inputs (none for I/O errors).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Error::Invalid { diagnostics, .. } => diagnostics,
            _ => &[],
        }
    }

    /// The error as rustc shows its own, without colours: for each problem,
    /// `error: message`, ` --> path:line:col` with the path relative to
    /// `root` when the file lies under it, and the source line with the place
    /// underlined.
    pub fn render(&self, root: &Path) -> String {
        self.render_with(root, Style::Plain)
    }

    /// [`Error::render`], coloured for a terminal when `style` says so.
    pub fn render_with(&self, root: &Path, style: Style) -> String {
        match self {
            Error::Invalid {
                diagnostics,
                sources,
            } => diagnostics::render(diagnostics, sources, root, style),
            other => diagnostics::render(
                &[Diagnostic::new(Default::default(), other.to_string())],
                &Sources::default(),
                root,
                style,
            ),
        }
    }
}

/// What a generation that succeeded warns of: declared behaviour that the
/// generated code serves partially or leaves to a handler. Shown as rustc
/// shows its warnings ([`Warnings::render`]); `build.rs` passes them to cargo.
#[derive(Debug, Default)]
pub struct Warnings {
    diagnostics: Vec<Diagnostic>,
    sources: Sources,
}

impl Warnings {
    fn new(diagnostics: Vec<Diagnostic>, includes: &[PathBuf]) -> Warnings {
        let sources = Sources::read(includes, diagnostic_files(&diagnostics));
        Warnings {
            diagnostics,
            sources,
        }
    }

    /// Each warning, at its place.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.diagnostics.is_empty()
    }

    /// As rustc shows its warnings (see [`Error::render`]); empty if none.
    pub fn render(&self, root: &Path) -> String {
        self.render_with(root, Style::Plain)
    }

    /// [`Warnings::render`], coloured for a terminal when `style` says so.
    pub fn render_with(&self, root: &Path, style: Style) -> String {
        if self.is_empty() {
            return String::new();
        }
        diagnostics::render(&self.diagnostics, &self.sources, root, style)
    }
}

/// The files `diagnostics` point into.
fn diagnostic_files(diagnostics: &[Diagnostic]) -> impl Iterator<Item = &str> {
    diagnostics.iter().flat_map(|d| {
        std::iter::once(&d.location)
            .chain(d.labels.iter().map(|label| &label.location))
            .map(|location| location.file.as_str())
    })
}

/// The directory paths are shown relative to: the crate being built (as in
/// `build.rs`), else the current directory.
pub fn crate_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default()
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `main` prints `Error: {:?}`: the count, then the report from a line of its own.
        match self {
            Error::Invalid { diagnostics, .. } => {
                let count = diagnostics.iter().filter(|d| d.is_error()).count();
                let plural = if count == 1 { "" } else { "s" };
                let report = self.render(&crate_root());
                write!(
                    f,
                    "could not generate code: {count} error{plural}\n\n{}",
                    report.trim_end()
                )
            }
            other => write!(f, "{other}"),
        }
    }
}
