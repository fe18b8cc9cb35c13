//! HTTP path templates of `google.api.http` rules, the whole grammar of
//! `google/api/http.proto`:
//!
//! ```text
//! Template = "/" Segments [ Verb ] ;
//! Segments = Segment { "/" Segment } ;
//! Segment  = "*" | "**" | LITERAL | Variable ;
//! Variable = "{" FieldPath [ "=" Segments ] "}" ;
//! FieldPath = IDENT { "." IDENT } ;
//! Verb     = ":" LITERAL ;
//! ```
//!
//! As the spec says, `**` may only be the last segment (before the verb), a
//! variable's template holds no variable, and `{x}` means `{x=*}`. A field
//! bound by two variables is refused too. Errors carry the 0-based column.

use std::fmt;

/// A parsed path template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathTemplate {
    /// The template as written.
    pub source: String,
    /// Every segment, those of variables' templates inlined.
    pub segments: Vec<Segment>,
    /// The variables, in order, each covering a range of `segments`.
    pub variables: Vec<Variable>,
    /// The custom verb after `:`, if any.
    pub verb: Option<String>,
}

/// What requests a template matches, ordered by precedence
/// ([`PathTemplate::match_key`]).
pub type MatchKey = (Vec<(u8, String)>, bool, Option<String>);

/// One path segment of a template.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Segment {
    /// Matches exactly this text.
    Literal(String),
    /// `*`: any one segment.
    Any,
    /// `**`: any number of segments, none included (only last).
    Rest,
}

/// A `{field=pattern}` variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    /// The request field (dotted path) the variable binds.
    pub field: String,
    /// The first segment it covers.
    pub start: usize,
    /// One past the last segment it covers.
    pub end: usize,
    /// The 0-based column of its `{`.
    pub column: usize,
}

impl Variable {
    /// Whether it may match more than one segment (`{x=a/*}`, `{x=**}`):
    /// such values keep their `/` (and `%2F`) when expanded and matched.
    pub fn multi_segment(&self, template: &PathTemplate) -> bool {
        self.end - self.start != 1 || template.segments[self.start] == Segment::Rest
    }
}

/// Why a template was rejected, with the 0-based column in the template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError {
    pub column: usize,
    pub message: String,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

fn error(column: usize, message: impl Into<String>) -> TemplateError {
    TemplateError {
        column,
        message: message.into(),
    }
}

/// Characters that end a literal (or are not allowed in one).
const SPECIAL: &[u8] = b"/{}*=:";

struct Parser<'a> {
    source: &'a [u8],
    at: usize,
    segments: Vec<Segment>,
    variables: Vec<Variable>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.source.get(self.at).copied()
    }

    /// `Segments`, stopping before `}` (in a variable), `:` or the end.
    fn segments(&mut self, in_variable: bool) -> Result<(), TemplateError> {
        loop {
            self.segment(in_variable)?;
            match self.peek() {
                Some(b'/') => self.at += 1,
                _ => return Ok(()),
            }
        }
    }

    fn segment(&mut self, in_variable: bool) -> Result<(), TemplateError> {
        let start = self.at;
        match self.peek() {
            Some(b'{') if in_variable => Err(error(
                start,
                "a variable's template must not contain variables",
            )),
            Some(b'{') => self.variable(),
            Some(b'*') => {
                self.at += 1;
                let segment = if self.peek() == Some(b'*') {
                    self.at += 1;
                    Segment::Rest
                } else {
                    Segment::Any
                };
                match self.peek() {
                    None | Some(b'/' | b':') => {}
                    Some(b'}') if in_variable => {}
                    Some(_) => return Err(error(self.at, "`*` and `**` are whole segments")),
                }
                self.segments.push(segment);
                Ok(())
            }
            _ => {
                let literal = self.literal()?;
                if literal.is_empty() {
                    return Err(error(start, "empty path segment"));
                }
                self.segments.push(Segment::Literal(literal));
                Ok(())
            }
        }
    }

    /// Text up to `/`, `:`, `}` or the end; other special characters are errors.
    fn literal(&mut self) -> Result<String, TemplateError> {
        let start = self.at;
        while let Some(byte) = self.peek() {
            if matches!(byte, b'/' | b':' | b'}') {
                break;
            }
            if SPECIAL.contains(&byte) || byte == b'?' || byte == b'#' || byte <= b' ' {
                return Err(error(self.at, "unexpected character in literal segment"));
            }
            self.at += 1;
        }
        Ok(String::from_utf8_lossy(&self.source[start..self.at]).into_owned())
    }

    fn variable(&mut self) -> Result<(), TemplateError> {
        let open = self.at;
        self.at += 1;
        let field_start = self.at;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
        {
            self.at += 1;
        }
        let field = String::from_utf8_lossy(&self.source[field_start..self.at]).into_owned();
        let valid = !field.is_empty()
            && field
                .split('.')
                .all(|p| !p.is_empty() && !p.starts_with(|c: char| c.is_ascii_digit()));
        if !valid {
            return Err(error(field_start, "invalid field path in variable"));
        }
        if self.variables.iter().any(|v| v.field == field) {
            return Err(error(
                field_start,
                format!("field `{field}` is bound twice"),
            ));
        }
        let start = self.segments.len();
        match self.peek() {
            Some(b'=') => {
                self.at += 1;
                self.segments(true)?;
            }
            Some(b'}') => self.segments.push(Segment::Any),
            None => return Err(error(open, "unterminated `{` in path template")),
            Some(_) => return Err(error(self.at, "invalid field path in variable")),
        }
        if self.peek() != Some(b'}') {
            return Err(error(open, "unterminated `{` in path template"));
        }
        self.at += 1;
        self.variables.push(Variable {
            field,
            start,
            end: self.segments.len(),
            column: open,
        });
        Ok(())
    }
}

impl PathTemplate {
    pub fn parse(source: &str) -> Result<Self, TemplateError> {
        if !source.starts_with('/') {
            return Err(error(0, "a path template must start with `/`"));
        }
        let mut parser = Parser {
            source: source.as_bytes(),
            at: 1,
            segments: Vec::new(),
            variables: Vec::new(),
        };
        parser.segments(false)?;
        let verb = match parser.peek() {
            None => None,
            Some(b':') => {
                parser.at += 1;
                let start = parser.at;
                let verb = parser.literal()?;
                if verb.is_empty() || parser.peek().is_some() {
                    let column = if verb.is_empty() { start } else { parser.at };
                    return Err(error(
                        column,
                        "a `:verb` is one literal ending the template",
                    ));
                }
                Some(verb)
            }
            Some(b'}') => return Err(error(parser.at, "`}` without `{`")),
            Some(_) => return Err(error(parser.at, "unexpected character")),
        };
        let Parser {
            segments,
            variables,
            ..
        } = parser;
        if let Some(index) = segments[..segments.len() - 1]
            .iter()
            .position(|s| *s == Segment::Rest)
        {
            let column = segment_columns(source)[index];
            return Err(error(column, "`**` must be the last segment"));
        }
        Ok(PathTemplate {
            source: source.to_owned(),
            segments,
            variables,
            verb,
        })
    }

    /// The literal segments before the first wildcard or variable (and
    /// before the last segment, when a `:verb` ends it).
    pub fn literal_prefix(&self) -> usize {
        let first_variable = self.variables.first().map_or(usize::MAX, |v| v.start);
        let literals = self
            .segments
            .iter()
            .take(first_variable)
            .take_while(|s| matches!(s, Segment::Literal(_)))
            .count();
        // A `:verb` ends the last segment: in `/v1/tokens:exchange` the path's
        // last segment is `tokens:exchange`, so `tokens` prefixes nothing.
        match self.verb {
            Some(_) if literals == self.segments.len() => literals.saturating_sub(1),
            _ => literals,
        }
    }

    /// The literal prefix as a path, e.g. `/library/v1/shelves`.
    pub fn prefix(&self) -> String {
        self.prefix_of(self.literal_prefix())
    }

    /// The first `count` segments (literals) as a path.
    pub fn prefix_of(&self, count: usize) -> String {
        self.segments[..count]
            .iter()
            .map(|segment| match segment {
                Segment::Literal(text) => format!("/{text}"),
                Segment::Any => "/*".to_owned(),
                Segment::Rest => "/**".to_owned(),
            })
            .collect()
    }

    /// The template as axum routes it without a runtime matcher: literals,
    /// then at most one variable, `{x}` or `{x=**}`, as the last segment, and
    /// no verb. Returns that variable and whether it is `**`.
    pub fn axum_shape(&self) -> Option<Option<(&Variable, bool)>> {
        if self.verb.is_some() {
            return None;
        }
        let literals = self.literal_prefix();
        match self.variables.as_slice() {
            [] if literals == self.segments.len() => Some(None),
            [variable] if variable.start == literals && variable.end == literals + 1 => {
                match self.segments.get(literals)? {
                    _ if variable.end != self.segments.len() => None,
                    Segment::Any => Some(Some((variable, false))),
                    Segment::Rest => Some(Some((variable, true))),
                    Segment::Literal(_) => None,
                }
            }
            _ => None,
        }
    }

    /// The variable covering segment `index`, if any.
    pub fn variable_at(&self, index: usize) -> Option<&Variable> {
        self.variables
            .iter()
            .find(|v| v.start <= index && index < v.end)
    }

    /// What requests the template matches, as a key: two templates with the
    /// same key (same segments and verb, whatever their variables) match the
    /// same requests. Keys order by precedence ([`Segment`]'s order:
    /// literal before `*` before `**`, segment by segment; then longer before
    /// shorter; then with a verb before without).
    pub fn match_key(&self) -> MatchKey {
        let segments = self
            .segments
            .iter()
            .map(|segment| match segment {
                Segment::Literal(text) => (0, text.clone()),
                Segment::Any => (1, String::new()),
                Segment::Rest => (2, String::new()),
            })
            .collect();
        (segments, self.verb.is_none(), self.verb.clone())
    }
}

/// The 0-based column of each segment (a `{x}` variable's implied `*` at
/// its `{`), to place errors.
fn segment_columns(source: &str) -> Vec<usize> {
    let mut columns = Vec::new();
    let mut at_start = true;
    let mut field = None;
    for (index, byte) in source.bytes().enumerate() {
        match byte {
            b'{' => field = Some(index),
            b'=' => {
                field = None;
                at_start = true;
            }
            b'}' => columns.extend(field.take()),
            b'/' => at_start = true,
            b':' => at_start = false,
            _ if field.is_none() && at_start => {
                columns.push(index);
                at_start = false;
            }
            _ => {}
        }
    }
    columns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_standard_templates() {
        let t = PathTemplate::parse("/library/v1/shelves/{parent=**}").unwrap();
        assert_eq!(t.prefix(), "/library/v1/shelves");
        let (variable, multi) = t.axum_shape().unwrap().unwrap();
        assert_eq!((variable.field.as_str(), multi), ("parent", true));
        let t = PathTemplate::parse("/library/v1/shelves").unwrap();
        assert_eq!(t.axum_shape(), Some(None));
        let t = PathTemplate::parse("/a/{group.uid}").unwrap();
        assert_eq!(t.variables[0].field, "group.uid");
        assert!(!t.axum_shape().unwrap().unwrap().1);
    }

    #[test]
    fn parses_the_whole_grammar() {
        let t = PathTemplate::parse("/v1/{book.name=shelves/*/books/*}:merge").unwrap();
        assert_eq!(t.verb.as_deref(), Some("merge"));
        assert_eq!(t.segments.len(), 5);
        assert_eq!((t.variables[0].start, t.variables[0].end), (1, 5));
        assert!(t.variables[0].multi_segment(&t));
        assert_eq!(t.axum_shape(), None);
        assert_eq!(t.prefix(), "/v1");
        let t = PathTemplate::parse("/v1/{parent=shelves/*}/books/{book}/*/x/**").unwrap();
        assert_eq!(t.variables.len(), 2);
        assert_eq!(t.segments.last(), Some(&Segment::Rest));
        assert!(!t.variables[1].multi_segment(&t));
        let t = PathTemplate::parse("/v1/{name=**}:undelete").unwrap();
        assert!(t.variables[0].multi_segment(&t));
        // The verb ends the last literal: `/v1/tokens:exchange` is no request
        // under `/v1/tokens`.
        let t = PathTemplate::parse("/v1/tokens:exchange").unwrap();
        assert_eq!(t.prefix(), "/v1");
        let t = PathTemplate::parse("/tokens:exchange").unwrap();
        assert_eq!(t.prefix(), "");
    }

    #[test]
    fn rejects_with_columns() {
        for (template, column) in [
            ("library/v1", 0),
            ("/lib//x", 5),
            ("/lib/{uid=**}/x", 10),
            ("/lib/{uid", 5),
            ("/lib/{uid=a/*", 5),
            ("/lib/{=**}", 6),
            ("/lib/{a=x/{b}}", 10),
            ("/lib/{a}/{a}", 10),
            ("/lib/a:", 7),
            ("/lib/a:b/c", 8),
            ("/lib/a*", 6),
            ("/lib/**/x", 5),
            ("/lib/a}", 6),
            ("/lib/a b", 6),
        ] {
            let error = PathTemplate::parse(template).unwrap_err();
            assert_eq!(error.column, column, "{template}: {error}");
        }
        let verb = PathTemplate::parse("/v1/{name=shelves/*}:merge");
        assert!(verb.is_ok(), "{verb:?}");
    }
}
