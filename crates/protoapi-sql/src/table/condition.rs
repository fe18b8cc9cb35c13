//! A list's AIP-160 condition as SQL on a table's columns: comparisons
//! with bound values, and text patterns as SQLite's `GLOB` or PostgreSQL's
//! `LIKE`, both case-sensitive like the memory store's
//! [`wildcard`](protoapi_core::filter::wildcard).

use super::{Arguments, Table};
use crate::dialect::Dialect;
use protoapi_core::filter::{Comparison, Condition, Op, Within};
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
        let Comparison {
            field,
            within,
            op,
            value,
        } = comparison;
        if !self.has_column(field) {
            return Err(StoreError::backend(std::io::Error::other(format!(
                "table `{}` has no column for the filterable field `{field}`",
                self.name
            ))));
        }
        let column = self.column(field);
        if *within == Within::Value {
            return Ok(compare(dialect, column, *op, value, arguments));
        }
        // A list's or map's column holds JSON: the comparison holds for one
        // of its elements, keys or entries.
        let (each, key, element) = match dialect {
            Dialect::Sqlite => (format!("json_each({column})"), "key", "value"),
            Dialect::Postgres if *within == Within::Element => (
                format!("jsonb_array_elements_text(({column})::jsonb) AS e(v)"),
                "e.k",
                "e.v",
            ),
            Dialect::Postgres => (
                format!("jsonb_each_text(({column})::jsonb) AS e(k, v)"),
                "e.k",
                "e.v",
            ),
        };
        // PostgreSQL's JSON text is text of the default collation, and
        // numbers are text: compared as the columns are.
        let element = match (dialect, value) {
            (Dialect::Postgres, SortValue::Int(_)) => format!("CAST({element} AS BIGINT)"),
            (Dialect::Postgres, SortValue::Text(_)) => format!("({element} COLLATE \"C\")"),
            (Dialect::Sqlite, _) => element.to_owned(),
        };
        let key_text = match dialect {
            Dialect::Postgres => format!("({key} COLLATE \"C\")"),
            Dialect::Sqlite => key.to_owned(),
        };
        let condition = match (within, op) {
            (Within::Entry(name), Op::Present) => {
                format!("{key} = {}", arguments.text(name.clone()))
            }
            (_, Op::Present) => "1 = 1".to_owned(),
            (Within::Key, op) => compare(dialect, &key_text, *op, value, arguments),
            (Within::Entry(name), op) => format!(
                "{key} = {} AND {}",
                arguments.text(name.clone()),
                compare(dialect, &element, *op, value, arguments)
            ),
            (_, op) => compare(dialect, &element, *op, value, arguments),
        };
        Ok(format!("EXISTS (SELECT 1 FROM {each} WHERE {condition})"))
    }
}

/// `expression op value`, the value bound; a pattern as SQLite's `GLOB` or
/// PostgreSQL's `LIKE`.
fn compare(
    dialect: Dialect,
    expression: &str,
    op: Op,
    value: &SortValue,
    arguments: &mut Arguments,
) -> String {
    let op = match (op, value) {
        (Op::Matches, SortValue::Text(pattern)) => {
            return match dialect {
                Dialect::Sqlite => format!("{expression} GLOB {}", arguments.text(glob(pattern))),
                Dialect::Postgres => format!(
                    "{expression} LIKE {} ESCAPE '\\'",
                    arguments.text(like(pattern))
                ),
            };
        }
        (Op::Matches, SortValue::Int(_)) => return "1 = 0".to_owned(),
        // Present on a single value is not written by the filter checker.
        (Op::Present, _) => return "1 = 1".to_owned(),
        (Op::Equal, _) => "=",
        (Op::NotEqual, _) => "<>",
        (Op::Less, _) => "<",
        (Op::LessOrEqual, _) => "<=",
        (Op::Greater, _) => ">",
        (Op::GreaterOrEqual, _) => ">=",
    };
    format!("{expression} {op} {}", arguments.bind(value.clone()))
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
