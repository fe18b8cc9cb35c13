//! A list's AIP-160 condition as SQL on a table's columns: comparisons
//! with bound values, and text patterns as SQLite's `GLOB` or PostgreSQL's
//! `LIKE`, both case-sensitive like the memory store's
//! [`wildcard`](protoapi_core::filter::wildcard).

use super::{Arguments, Table};
use crate::dialect::Dialect;
use protoapi_core::filter::{Comparison, Condition, Op};
use protoapi_core::resource::SortValue;
use protoapi_core::store::StoreError;

impl Table {
    /// The SQL of `condition`, its values bound in `arguments`.
    pub(super) fn condition(
        &self,
        dialect: Dialect,
        condition: &Condition,
        arguments: &mut Arguments,
    ) -> Result<String, StoreError> {
        let mut join = |all: &[Condition], word: &str| -> Result<String, StoreError> {
            let parts = all
                .iter()
                .map(|c| self.condition(dialect, c, arguments))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(format!("({})", parts.join(word)))
        };
        match condition {
            Condition::All(all) => join(all, " AND "),
            Condition::Any(any) => join(any, " OR "),
            Condition::Not(inner) => Ok(format!(
                "(NOT {})",
                self.condition(dialect, inner, arguments)?
            )),
            Condition::Compare(comparison) => self.comparison(dialect, comparison, arguments),
        }
    }

    fn comparison(
        &self,
        dialect: Dialect,
        comparison: &Comparison,
        arguments: &mut Arguments,
    ) -> Result<String, StoreError> {
        let Comparison { field, op, value } = comparison;
        if !self.has_column(field) {
            return Err(StoreError::backend(std::io::Error::other(format!(
                "table `{}` has no column for the filterable field `{field}`",
                self.name
            ))));
        }
        let column = self.column(field);
        let sql = match (op, value) {
            (Op::Matches, SortValue::Text(pattern)) => match dialect {
                Dialect::Sqlite => format!("{column} GLOB {}", arguments.text(glob(pattern))),
                Dialect::Postgres => {
                    format!(
                        "{column} LIKE {} ESCAPE '\\'",
                        arguments.text(like(pattern))
                    )
                }
            },
            (Op::Matches, SortValue::Int(_)) => "1 = 0".to_owned(),
            (op, value) => {
                let op = match op {
                    Op::Equal => "=",
                    Op::NotEqual => "<>",
                    Op::Less => "<",
                    Op::LessOrEqual => "<=",
                    Op::Greater => ">",
                    Op::GreaterOrEqual => ">=",
                    Op::Matches => unreachable!("patterns are matched above"),
                };
                format!("{column} {op} {}", arguments.bind(value.clone()))
            }
        };
        Ok(sql)
    }
}

/// A `*` pattern as a `GLOB` pattern: its other special characters
/// (`?`, `[`) each in a class of its own.
fn glob(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 4);
    for c in pattern.chars() {
        match c {
            '?' => out.push_str("[?]"),
            '[' => out.push_str("[[]"),
            _ => out.push(c),
        }
    }
    out
}

/// A `*` pattern as a `LIKE` pattern escaped by `\`.
fn like(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 4);
    for c in pattern.chars() {
        match c {
            '*' => out.push('%'),
            '%' | '_' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn patterns_keep_their_literal_characters_literal() {
        assert_eq!(super::glob("a*?[b]*"), "a*[?][[]b]*");
        assert_eq!(super::like("a*%_\\b*"), "a%\\%\\_\\\\b%");
    }
}
