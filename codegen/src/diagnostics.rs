//! Errors that point into the user's files as `file:line:col: message`.

use std::fmt;

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
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// One problem found in the inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub location: Location,
    pub message: String,
}

impl Diagnostic {
    pub fn new(location: Location, message: impl Into<String>) -> Self {
        Diagnostic {
            location,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// Every problem found; generation stops if any.
#[derive(Debug, Default)]
pub struct Diagnostics(Vec<Diagnostic>);

impl Diagnostics {
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.0.push(diagnostic);
    }

    /// `Ok` when nothing was reported.
    pub fn finish(self) -> Result<(), Vec<Diagnostic>> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0)
        }
    }
}
