//! HTTP path templates of `google.api.http` rules.
//!
//! Supported: literal segments, then at most one variable as the last
//! segment: `{field}` / `{field=*}` (one segment) or `{field=**}` (any number,
//! including none). That covers the standard methods; anything else is
//! reported as an error with the offending column.

use std::fmt;

/// A parsed path template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathTemplate {
    /// The template as written.
    pub source: String,
    /// Literal segments before the variable.
    pub literals: Vec<String>,
    /// The trailing variable, if any.
    pub variable: Option<Variable>,
}

/// A `{field=pattern}` segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    /// The request field (dotted path) the segment binds.
    pub field: String,
    /// Whether it matches any number of segments (`**`).
    pub multi_segment: bool,
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

impl PathTemplate {
    pub fn parse(source: &str) -> Result<Self, TemplateError> {
        let error = |column: usize, message: &str| TemplateError {
            column,
            message: message.to_owned(),
        };
        let Some(rest) = source.strip_prefix('/') else {
            return Err(error(0, "a path template must start with `/`"));
        };
        let mut literals = Vec::new();
        let mut variable = None;
        let mut column = 1;
        let segments = split_segments(rest);
        for (index, segment) in segments.iter().enumerate() {
            let last = index + 1 == segments.len();
            if let Some(inner) = segment.strip_prefix('{') {
                let Some(inner) = inner.strip_suffix('}') else {
                    return Err(error(column, "unterminated `{` in path template"));
                };
                if !last {
                    return Err(error(column, "only the last segment may be a variable"));
                }
                let (field, pattern) = inner.split_once('=').unwrap_or((inner, "*"));
                let valid_field = !field.is_empty()
                    && field.split('.').all(|p| {
                        !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    });
                if !valid_field {
                    return Err(error(column + 1, "invalid field path in variable"));
                }
                let multi_segment = match pattern {
                    "*" => false,
                    "**" => true,
                    _ => {
                        return Err(error(
                            column + 1 + field.len() + 1,
                            "variable patterns other than `*` and `**` are not supported",
                        ));
                    }
                };
                variable = Some(Variable {
                    field: field.to_owned(),
                    multi_segment,
                });
            } else if segment.is_empty() {
                return Err(error(column, "empty path segment"));
            } else if let Some(bad) = segment.find(|c: char| "{}*=:".contains(c)) {
                return Err(error(
                    column + bad,
                    "unexpected character in literal segment",
                ));
            } else {
                literals.push((*segment).to_owned());
            }
            column += segment.len() + 1;
        }
        Ok(PathTemplate {
            source: source.to_owned(),
            literals,
            variable,
        })
    }

    /// The literal prefix as an axum path, e.g. `/library/v1/shelves`.
    pub fn prefix(&self) -> String {
        self.literals.iter().map(|l| format!("/{l}")).collect()
    }
}

/// Splits on `/` outside of `{...}`, so `{name=groups/*}` stays one segment.
fn split_segments(path: &str) -> Vec<&str> {
    let mut segments = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (index, ch) in path.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            '/' if depth == 0 => {
                segments.push(&path[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    segments.push(&path[start..]);
    segments
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_standard_templates() {
        let t = PathTemplate::parse("/library/v1/shelves/{parent=**}").unwrap();
        assert_eq!(t.literals, ["library", "v1", "shelves"]);
        assert_eq!(
            t.variable,
            Some(Variable {
                field: "parent".into(),
                multi_segment: true
            })
        );
        assert_eq!(t.prefix(), "/library/v1/shelves");
        let t = PathTemplate::parse("/library/v1/shelves").unwrap();
        assert_eq!(t.variable, None);
        let t = PathTemplate::parse("/a/{group.uid}").unwrap();
        assert_eq!(t.variable.unwrap().field, "group.uid");
    }

    #[test]
    fn rejects_with_columns() {
        for (template, column) in [
            ("library/v1", 0),
            ("/lib//x", 5),
            ("/lib/{uid=**}/x", 5),
            ("/lib/{uid=shelves/*}", 10),
            ("/lib/{uid=**}/x", 5),
            ("/lib/{uid", 5),
            ("/lib/{=**}", 6),
            ("/lib/a:b", 6),
        ] {
            let error = PathTemplate::parse(template).unwrap_err();
            assert_eq!(error.column, column, "{template}: {error}");
        }
    }
}
