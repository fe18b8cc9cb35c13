//! Errors that point into the user's files.
//!
//! Each [`Diagnostic`] has a [`Location`] (a file named as it is found under
//! an import root, a line and a column). Its `Display` form is one line,
//! `file:line:col: message`; [`render`] shows it as rustc shows its own
//! errors, with the path relative to the crate and the line underlined:
//!
//! ```text
//! error: `bookshelf.v1.Book` is used as a resource but has no `google.api.resource` option
//!   --> proto/bookshelf/v1/books.proto:16:1
//!    |
//! 16 | message Book {
//!    | ^^^^^^^^^^^^
//!    |
//!    = note: ...
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use prost_reflect::FileDescriptor;

/// A position in a source file (1-based line and column).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

impl Location {
    /// Where the element at descriptor `path` is declared in `file`.
    pub fn of(file: &FileDescriptor, path: &[i32]) -> Location {
        let span = file
            .file_descriptor_proto()
            .source_code_info
            .as_ref()
            .and_then(|info| info.location.iter().find(|l| l.path == path))
            .map(|l| l.span.clone())
            .unwrap_or_default();
        Location {
            file: file.name().to_owned(),
            line: span.first().map_or(0, |l| *l as usize + 1),
            column: span.get(1).map_or(0, |c| *c as usize + 1),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}:{}", self.file, self.line, self.column)
        }
    }
}

/// How bad a [`Diagnostic`] is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Severity {
    /// Generation fails.
    #[default]
    Error,
    /// Generation succeeds, but something the inputs declare is served
    /// partially or differently than they say (for example a method left to
    /// a handler): the user should know.
    Warning,
}

/// One problem found in the inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Where it is; an empty `file` for problems with no place in a file.
    pub location: Location,
    pub message: String,
    /// Places to underline, each with what to say beside it. Without a
    /// primary one, the word (or quoted string) at `location` is underlined.
    pub labels: Vec<Label>,
    /// Further explanations, shown under the source excerpt.
    pub notes: Vec<String>,
}

/// A place a diagnostic underlines, and what is there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub location: Location,
    /// How many bytes to underline; the word or quoted string there if `None`.
    pub length: Option<usize>,
    /// Shown beside the underline (may be empty).
    pub text: String,
    /// The place the diagnostic is about (`^^^`), rather than one that
    /// explains it (`---`, e.g. the first of two duplicates).
    pub primary: bool,
}

impl Diagnostic {
    /// An error at `location`.
    pub fn new(location: Location, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            location,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// A warning at `location`: generation goes on.
    pub fn warning(location: Location, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::new(location, message)
        }
    }

    /// Whether generation fails on it.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Adds a place to underline.
    pub fn label(mut self, label: Label) -> Self {
        self.labels.push(label);
        self
    }

    /// Adds an explanation shown as `= note: ...`.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.location.file.is_empty() {
            write!(f, "{}: ", self.location)?;
        }
        if !self.is_error() {
            write!(f, "warning: ")?;
        }
        write!(f, "{}", self.message)
    }
}

/// Every problem found; generation stops if any is an error.
#[derive(Debug, Default)]
pub struct Diagnostics {
    found: Vec<Diagnostic>,
    fatal: bool,
}

impl Diagnostics {
    /// Adds a problem; the same problem at the same place is reported once
    /// (several methods may point at one cause).
    pub fn push(&mut self, diagnostic: Diagnostic) {
        if !self.found.contains(&diagnostic) {
            self.found.push(diagnostic);
        }
    }

    /// Adds a problem that later checks would only report consequences of:
    /// they are skipped (see [`Diagnostics::fatal`]).
    pub fn push_fatal(&mut self, diagnostic: Diagnostic) {
        self.fatal = true;
        self.push(diagnostic);
    }

    /// How many errors were found so far.
    pub fn len(&self) -> usize {
        self.found.iter().filter(|d| d.is_error()).count()
    }

    /// Whether no error was found so far (warnings may have been).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether a problem was added with [`Diagnostics::push_fatal`].
    pub fn fatal(&self) -> bool {
        self.fatal
    }

    /// `Ok` with the warnings when no error was reported, else `Err` with
    /// everything (errors and warnings, in the order found).
    pub fn finish(self) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
        if self.is_empty() {
            Ok(self.found)
        } else {
            Err(self.found)
        }
    }
}

/// The text of the files diagnostics point into, read when they were
/// reported, and where each file is on disk.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    files: BTreeMap<String, Source>,
}

#[derive(Clone, Debug)]
struct Source {
    path: PathBuf,
    text: Option<String>,
}

impl Sources {
    /// Finds each file `names` (as diagnostics name them, relative to an
    /// import root) under the first of `includes` that has it, as protox and
    /// the annotation loader do, and keeps its text.
    pub fn read<'a>(includes: &[PathBuf], names: impl IntoIterator<Item = &'a str>) -> Sources {
        let mut sources = Sources::default();
        for name in names {
            if name.is_empty() || sources.files.contains_key(name) {
                continue;
            }
            let path = includes
                .iter()
                .map(|include| include.join(name))
                .find(|path| path.is_file())
                .unwrap_or_else(|| PathBuf::from(name));
            let text = std::fs::read_to_string(&path).ok();
            sources.insert(name, path, text);
        }
        sources
    }

    /// Adds (or replaces) the file named `name`, found at `path`.
    pub fn insert(&mut self, name: &str, path: PathBuf, text: Option<String>) {
        self.files.insert(name.to_owned(), Source { path, text });
    }

    /// How to show file `name`: its path relative to `root` when it lies
    /// under it (so that editors and terminals can open it), else the path
    /// it was read from.
    pub fn display_path(&self, name: &str, root: &Path) -> String {
        let Some(source) = self.files.get(name) else {
            return name.to_owned();
        };
        let absolute = |path: &Path| std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
        let path = absolute(&source.path);
        let shown = match path.strip_prefix(absolute(root)) {
            Ok(relative) => relative.to_owned(),
            Err(_) => path,
        };
        shown.to_string_lossy().replace('\\', "/")
    }

    fn text(&self, name: &str) -> Option<&str> {
        self.files.get(name)?.text.as_deref()
    }
}

/// Whether [`render`] colours its output (for terminals).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    Colored,
}

/// `diagnostics` as rustc shows its errors: `error: message` (or
/// `warning: message`), then
/// ` --> path:line:col` with the path relative to `root` (the crate's
/// directory for `build.rs`, the current directory for the CLI), the source
/// line with the place underlined, and the notes. One block per diagnostic,
/// separated by blank lines.
pub fn render(diagnostics: &[Diagnostic], sources: &Sources, root: &Path, style: Style) -> String {
    let renderer = match style {
        Style::Plain => Renderer::plain(),
        Style::Colored => Renderer::styled(),
    };
    let mut blocks = Vec::new();
    for diagnostic in diagnostics {
        let level = match diagnostic.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        let mut group = Group::with_title(level.primary_title(diagnostic.message.as_str()));
        // The primary place first, then the others: one excerpt per file.
        let word = Label {
            location: diagnostic.location.clone(),
            length: None,
            text: String::new(),
            primary: true,
        };
        let has_primary = diagnostic.labels.iter().any(|label| label.primary);
        let mut places: Vec<&Label> = (!has_primary).then_some(&word).into_iter().collect();
        places.extend(&diagnostic.labels);
        places.retain(|label| !label.location.file.is_empty());
        places.sort_by_key(|label| !label.primary);
        let mut files: Vec<&str> = Vec::new();
        for label in &places {
            if !files.contains(&label.location.file.as_str()) {
                files.push(&label.location.file);
            }
        }
        for file in files {
            let path = sources.display_path(file, root);
            let here = places.iter().filter(|label| label.location.file == file);
            let mut annotations = Vec::new();
            for label in here.clone() {
                let Some(span) = sources
                    .text(file)
                    .and_then(|text| span_of(text, &label.location, label.length))
                else {
                    continue;
                };
                let kind = if label.primary {
                    AnnotationKind::Primary
                } else {
                    AnnotationKind::Context
                };
                let text = Some(label.text.as_str()).filter(|t| !t.is_empty());
                annotations.push(kind.span(span).label(text));
            }
            group = match sources.text(file) {
                Some(text) if !annotations.is_empty() => {
                    group.element(Snippet::source(text).path(path).annotations(annotations))
                }
                _ => {
                    let location = &here.clone().next().expect("a place in the file").location;
                    let origin = Origin::path(path);
                    group.element(if location.line > 0 {
                        origin
                            .line(location.line)
                            .char_column(location.column.max(1))
                    } else {
                        origin
                    })
                }
            };
        }
        for note in &diagnostic.notes {
            group = group.element(Level::NOTE.message(note.as_str()));
        }
        blocks.push(renderer.render(&[group]));
    }
    let mut text = blocks.join("\n\n");
    text.push('\n');
    text
}

/// The bytes of `text` to underline for a place at `location`.
fn span_of(text: &str, location: &Location, length: Option<usize>) -> Option<Range<usize>> {
    let index = location.line.checked_sub(1)?;
    let mut offset = 0;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        if number == index {
            let line = line.trim_end_matches(['\n', '\r']);
            let span = underline(line, location, length);
            return Some(offset + span.start..offset + span.end);
        }
        offset += line.len();
    }
    None
}

/// The bytes of `line` to underline for a diagnostic at `location`: `length`
/// bytes when known; else a quoted string, a declaration's keyword and name
/// (`message Book`), a proto field up to its `;`, or the word at the column.
fn underline(line: &str, location: &Location, length: Option<usize>) -> Range<usize> {
    let mut start = location.column.saturating_sub(1).min(line.len());
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    let rest = &line[start..];
    let end_of = |len: usize| {
        let mut end = (start + len).min(line.len());
        while !line.is_char_boundary(end) {
            end += 1;
        }
        end
    };
    if let Some(length) = length {
        return start..end_of(length.max(1));
    }
    let word = |text: &str| {
        text.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(text.len())
    };
    if let Some(quoted) = rest.strip_prefix('"') {
        let len = quoted.find('"').map_or(rest.len(), |close| close + 2);
        return start..end_of(len);
    }
    let first = word(rest);
    if first == 0 {
        return start..end_of(1);
    }
    if location.file.ends_with(".proto") {
        let keyword = &rest[..first];
        let after = &rest[first..];
        let name_at = after.len() - after.trim_start().len();
        if matches!(keyword, "message" | "service" | "rpc" | "enum" | "oneof") && name_at > 0 {
            let name = word(&after[name_at..]);
            return start..end_of(first + name_at + name);
        }
        if let Some(semicolon) = rest.find(';') {
            return start..end_of(rest[..semicolon].trim_end().len());
        }
    }
    start..end_of(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: &str, column: usize) -> Location {
        Location {
            file: file.to_owned(),
            line: 1,
            column,
        }
    }

    fn underlined(file: &str, line: &str, column: usize) -> String {
        let span = underline(line, &at(file, column), None);
        line[span].to_owned()
    }

    #[test]
    fn underlines_the_thing_at_the_column() {
        assert_eq!(underlined("a.proto", "message Book {", 1), "message Book");
        assert_eq!(
            underlined(
                "a.proto",
                "  rpc GetBook(GetBookRequest) returns (Book) {",
                3
            ),
            "rpc GetBook"
        );
        assert_eq!(
            underlined("a.proto", "  string author = 5;", 3),
            "string author = 5"
        );
        assert_eq!(
            underlined("a.toml", r#"order_by = ["name", "colour"]"#, 21),
            r#""colour""#
        );
        assert_eq!(underlined("a.toml", "pagesize = 3", 1), "pagesize");
        assert_eq!(underlined("a.toml", "x = [", 5), "[");
        assert_eq!(underlined("a.toml", "short", 40), "");
    }

    #[test]
    fn paths_are_relative_to_the_root_when_under_it() {
        let mut sources = Sources::default();
        sources.insert("v1/a.proto", PathBuf::from("/crate/proto/v1/a.proto"), None);
        assert_eq!(
            sources.display_path("v1/a.proto", Path::new("/crate")),
            "proto/v1/a.proto"
        );
        assert_eq!(
            sources.display_path("v1/a.proto", Path::new("/elsewhere")),
            "/crate/proto/v1/a.proto"
        );
        assert_eq!(
            sources.display_path("unknown.proto", Path::new("/crate")),
            "unknown.proto"
        );
    }

    #[test]
    fn renders_without_source_text_or_place() {
        let mut sources = Sources::default();
        sources.insert("a.proto", PathBuf::from("/crate/a.proto"), None);
        let diagnostics = [
            Diagnostic::new(at("a.proto", 3), "gone"),
            Diagnostic::new(Location::default(), "nowhere").note("a note"),
        ];
        let text = render(&diagnostics, &sources, Path::new("/crate"), Style::Plain);
        assert_eq!(
            text,
            "error: gone\n--> a.proto:1:3\n\nerror: nowhere\n |\n = note: a note\n"
        );
        assert_eq!(diagnostics[0].to_string(), "a.proto:1:3: gone");
        assert_eq!(diagnostics[1].to_string(), "nowhere");
    }
}
