//! Path templates of `google.api.http` rules matched at run time, for the
//! templates axum's router cannot express (several variables, patterns such
//! as `{name=shelves/*/books/*}`, literals after a variable, `:verb`s), and
//! expanded by generated clients.
//!
//! A generated router mounts, for each literal prefix some such template
//! starts with, one axum route (`/v1`, `/v1/`, `/v1/{*rest}`) whose handler
//! calls [`select`] with every binding under that prefix, in precedence
//! order (literal before `*` before `**`, segment by segment; a `:verb`
//! before none). The first binding whose verb and template match wins; its
//! variables' values go into the request's extensions as [`PathVars`], and
//! the generated handler binds them into the request message.
//!
//! Matching is one left-to-right pass over the path per template: `**` may
//! only end a template (before its verb), so nothing backtracks, and the
//! only allocations are the bound values. Values of single-segment
//! variables are percent-decoded; multi-segment ones (`**`, patterns) keep
//! their `/` and leave `%2F` encoded, as `google/api/http.proto` specifies.

use axum::extract::{FromRequestParts, Request};
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use std::convert::Infallible;

use protoapi_core::error::{Error, FieldViolation};

/// One segment of a template, ordered by precedence: a literal before `*`
/// before `**`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Segment {
    /// Exactly this text.
    Literal(&'static str),
    /// `*`: any one non-empty segment.
    Any,
    /// `**`: the rest of the path, empty included (only last).
    Rest,
}

/// A variable: the request field it binds and the segments it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variable {
    /// The field's path in the request (`book.name`), proto names.
    pub field: &'static str,
    /// The first segment covered.
    pub start: usize,
    /// One past the last segment covered.
    pub end: usize,
}

/// A parsed `google.api.http` path template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Template {
    pub segments: &'static [Segment],
    /// In order, without overlaps.
    pub variables: &'static [Variable],
    /// The custom method's verb (`merge` of `…:merge`).
    pub verb: Option<&'static str>,
}

/// One binding of a method mounted under a runtime-matched prefix.
#[derive(Clone, Copy, Debug)]
pub struct Binding {
    /// `GET`, `POST`, ...
    pub method: &'static str,
    pub template: Template,
}

/// Values of a matched template's variables, by field path, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathVars(pub Vec<(&'static str, String)>);

impl<S: Send + Sync> FromRequestParts<S> for PathVars {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        Ok(parts.extensions.remove::<PathVars>().unwrap_or_default())
    }
}

impl Variable {
    fn multi_segment(&self, template: &Template) -> bool {
        self.end - self.start != 1 || template.segments[self.start] == Segment::Rest
    }
}

impl Template {
    /// Orders templates by precedence: segment by segment (a literal before
    /// `*` before `**`), then with a `:verb` before without. Of two templates
    /// that match a path, the one ordered first is chosen; the generator
    /// refuses two with the same segments and verb.
    pub fn precedence(&self) -> impl Ord + use<> {
        (self.segments, self.verb.is_none(), self.verb)
    }

    /// Whether `path` (percent-encoded, as in the request line) matches.
    pub fn is_match(&self, path: &str) -> bool {
        self.spans(path, |_, _| true)
    }

    /// The variables' values if `path` matches (`Ok(None)` if it does not),
    /// or a violation when a value is not UTF-8 once decoded.
    pub fn bind(&self, path: &str) -> Result<Option<PathVars>, Error> {
        let mut values = Vec::with_capacity(self.variables.len());
        let mut bad = None;
        let matched = self.spans(path, |variable, raw| {
            match decode(raw, variable.multi_segment(self)) {
                Some(value) => values.push((variable.field, value)),
                None => bad = Some(variable.field),
            }
            true
        });
        if let Some(field) = bad {
            return Err(Error::invalid_fields(vec![FieldViolation::new(
                field,
                "the path's value is not percent-encoded UTF-8",
            )]));
        }
        Ok(matched.then_some(PathVars(values)))
    }

    /// Walks `path` against the template once, calling `variable` with each
    /// variable's raw text; false if it does not match.
    fn spans(&self, path: &str, mut variable: impl FnMut(&Variable, &str) -> bool) -> bool {
        let Some(mut rest) = path.strip_prefix('/') else {
            return false;
        };
        if let Some(verb) = self.verb {
            match rest.strip_suffix(verb).and_then(|r| r.strip_suffix(':')) {
                Some(stripped) => rest = stripped,
                None => return false,
            }
        }
        let bytes = rest;
        // Start of the next segment, `None` once the path is used up.
        let mut next = Some(0);
        let mut variables = self.variables.iter().peekable();
        let mut variable_start = 0;
        for (index, segment) in self.segments.iter().enumerate() {
            if variables.peek().is_some_and(|v| v.start == index) {
                variable_start = next.unwrap_or(bytes.len());
            }
            let end = match (segment, next) {
                (Segment::Rest, _) => {
                    next = None;
                    bytes.len()
                }
                (_, None) => return false,
                (segment, Some(start)) => {
                    let end = bytes[start..].find('/').map_or(bytes.len(), |i| start + i);
                    let text = &bytes[start..end];
                    let fits = match segment {
                        Segment::Literal(literal) => text == *literal,
                        _ => !text.is_empty(),
                    };
                    if !fits {
                        return false;
                    }
                    next = (end < bytes.len()).then_some(end + 1);
                    end
                }
            };
            if let Some(current) = variables.next_if(|v| v.end == index + 1)
                && !variable(current, &bytes[variable_start..end])
            {
                return false;
            }
        }
        next.is_none()
    }

    /// The path of a request whose variables have the values `value` gives
    /// (by field path): single-segment values percent-encoded whole,
    /// multi-segment ones keeping their `/`. A `*` or `**` outside every
    /// variable (no field says what it is) is written `-`.
    pub fn expand(&self, mut value: impl FnMut(&'static str) -> String) -> String {
        let mut path = String::new();
        let mut index = 0;
        let mut variables = self.variables.iter().peekable();
        while index < self.segments.len() {
            if let Some(variable) = variables.next_if(|v| v.start == index) {
                path.push('/');
                encode(
                    &mut path,
                    &value(variable.field),
                    variable.multi_segment(self),
                );
                index = variable.end;
                continue;
            }
            path.push('/');
            match self.segments[index] {
                Segment::Literal(literal) => path.push_str(literal),
                Segment::Any | Segment::Rest => path.push('-'),
            }
            index += 1;
        }
        if let Some(verb) = self.verb {
            path.push(':');
            path.push_str(verb);
        }
        path
    }
}

/// The first binding matching the request (by method, `HEAD` served as
/// `GET`, then template), with its [`PathVars`] put into the request's
/// extensions; or the answer when none does: 404 (`ROUTE_NOT_FOUND`) or 405
/// (`METHOD_NOT_ALLOWED`) with the error body, 400 for undecodable values.
pub fn select(bindings: &[Binding], request: &mut Request) -> Result<usize, Box<Response>> {
    let method = request.method().as_str();
    let method = if method == "HEAD" { "GET" } else { method };
    let path = request.uri().path();
    for (index, binding) in bindings.iter().enumerate() {
        if binding.method != method {
            continue;
        }
        match binding.template.bind(path) {
            Ok(Some(vars)) => {
                request.extensions_mut().insert(vars);
                return Ok(index);
            }
            Ok(None) => {}
            Err(error) => return Err(Box::new(error.into_response())),
        }
    }
    if bindings.iter().any(|b| b.template.is_match(path)) {
        return Err(Box::new(super::not_allowed(request.method(), path)));
    }
    Err(Box::new(super::not_found(path, request.headers())))
}

fn hex(byte: u8) -> Option<u8> {
    char::from(byte).to_digit(16).map(|d| d as u8)
}

/// Percent-decodes `raw`; `%2F` stays encoded in multi-segment values.
fn decode(raw: &str, multi_segment: bool) -> Option<String> {
    if !raw.contains('%') {
        return Some(raw.to_owned());
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let decoded = (bytes[index] == b'%')
            .then(|| Some(hex(*bytes.get(index + 1)?)? << 4 | hex(*bytes.get(index + 2)?)?))
            .flatten();
        match decoded {
            Some(b'/') if multi_segment => {
                out.extend_from_slice(&bytes[index..index + 3]);
                index += 3;
            }
            Some(byte) => {
                out.push(byte);
                index += 3;
            }
            None => {
                out.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Appends `value` percent-encoded: everything but `[-_.~0-9A-Za-z]` (and
/// `/` in multi-segment values).
fn encode(out: &mut String, value: &str, multi_segment: bool) {
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric()
            || b"-._~".contains(&byte)
            || (multi_segment && byte == b'/')
        {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Segment::{Any, Literal, Rest};

    /// `/v1/{name=shelves/*/books/*}:merge`
    const MERGE: Template = Template {
        segments: &[
            Literal("v1"),
            Literal("shelves"),
            Any,
            Literal("books"),
            Any,
        ],
        variables: &[Variable {
            field: "name",
            start: 1,
            end: 5,
        }],
        verb: Some("merge"),
    };

    /// `/v1/{parent=shelves/*}/books/{book.id}/x/**`
    const TWO: Template = Template {
        segments: &[
            Literal("v1"),
            Literal("shelves"),
            Any,
            Literal("books"),
            Any,
            Literal("x"),
            Rest,
        ],
        variables: &[
            Variable {
                field: "parent",
                start: 1,
                end: 3,
            },
            Variable {
                field: "book.id",
                start: 4,
                end: 5,
            },
        ],
        verb: None,
    };

    /// `/v1/{uid=**}`
    const TAIL: Template = Template {
        segments: &[Literal("v1"), Rest],
        variables: &[Variable {
            field: "uid",
            start: 1,
            end: 2,
        }],
        verb: None,
    };

    fn bound(template: &Template, path: &str) -> Option<Vec<(&'static str, String)>> {
        template.bind(path).unwrap().map(|vars| vars.0)
    }

    #[test]
    fn patterns_bind_the_whole_matched_text() {
        assert_eq!(
            bound(&MERGE, "/v1/shelves/1/books/2:merge"),
            Some(vec![("name", "shelves/1/books/2".to_owned())])
        );
        for path in [
            "/v1/shelves/1/books/2",
            "/v1/shelves/1/books/2:move",
            "/v1/shelves/1/books:merge",
            "/v1/shelves//books/2:merge",
            "/v1/shelves/1/books/2/3:merge",
            "/v1/shelves/1/authors/2:merge",
            "v1/shelves/1/books/2:merge",
        ] {
            assert_eq!(bound(&MERGE, path), None, "{path}");
        }
        assert_eq!(
            bound(&TWO, "/v1/shelves/s%201/books/b%2Fc/x/a/b%2Fc"),
            Some(vec![
                ("parent", "shelves/s 1".to_owned()),
                ("book.id", "b/c".to_owned()),
            ])
        );
        assert_eq!(
            bound(&TWO, "/v1/shelves/s/books/b/x"),
            Some(vec![
                ("parent", "shelves/s".to_owned()),
                ("book.id", "b".to_owned()),
            ])
        );
    }

    #[test]
    fn a_trailing_double_star_matches_nothing_too() {
        assert_eq!(bound(&TAIL, "/v1"), Some(vec![("uid", String::new())]));
        assert_eq!(bound(&TAIL, "/v1/"), Some(vec![("uid", String::new())]));
        assert_eq!(
            bound(&TAIL, "/v1/a/b%2Fc%20d"),
            Some(vec![("uid", "a/b%2Fc d".to_owned())])
        );
        assert_eq!(bound(&TAIL, "/v2/a"), None);
        assert_eq!(bound(&TAIL, "/v1x"), None);
    }

    #[test]
    fn values_that_are_not_utf8_are_refused() {
        assert!(TAIL.bind("/v1/%FF").is_err());
        // A lone `%` is kept as written.
        assert_eq!(
            bound(&TAIL, "/v1/a%zz"),
            Some(vec![("uid", "a%zz".to_owned())])
        );
    }

    #[test]
    fn expansion_is_the_reverse_of_matching() {
        let path = MERGE.expand(|_| "shelves/1/books/2 x".to_owned());
        assert_eq!(path, "/v1/shelves/1/books/2%20x:merge");
        let path = TWO.expand(|field| match field {
            "parent" => "shelves/a".to_owned(),
            _ => "b/c?".to_owned(),
        });
        assert_eq!(path, "/v1/shelves/a/books/b%2Fc%3F/x/-");
        assert_eq!(
            bound(&TWO, &path),
            Some(vec![
                ("parent", "shelves/a".to_owned()),
                ("book.id", "b/c?".to_owned()),
            ])
        );
    }

    #[test]
    fn matching_a_long_path_is_one_pass() {
        let long = format!("/v1{}", "/a".repeat(100_000));
        assert_eq!(bound(&TAIL, &long).unwrap()[0].1.len(), 199_999);
        assert_eq!(bound(&MERGE, &format!("{long}:merge")), None);
    }
}
