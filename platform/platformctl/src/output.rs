//! How answers are printed: aligned tables for people, canonical JSON for programs.
//!
//! Answers hold text any tenant can write (descriptions, readmes, names):
//! table cells show control characters and bidirectional overrides escaped
//! (`\u{1b}`), and JSON escapes them as `\uXXXX`, still the same JSON
//! ([`platformctl::text`]).

use platformctl::text::{escape, escape_json};
use protoapi_runtime::cli::Answer;
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns (lists) or aligned fields (one resource).
    Table,
    /// Canonical proto3 JSON, as the REST API answers.
    Json,
}

/// Prints a command's answer in `format` (a delete as `deleted <uid>` on stderr).
pub fn print(format: Format, answer: &Answer) {
    match (format, answer) {
        (_, Answer::Deleted(uid)) => eprintln!("deleted {}", escape(uid)),
        (Format::Json, _) => println!("{}", json(answer)),
        (Format::Table, Answer::Item(item)) => print!("{}", fields(item)),
        (Format::Table, Answer::Page(page)) => print!("{}", table(&page.items)),
        (Format::Table, Answer::Items(items)) => print!("{}", table(items)),
    }
}

/// The answer as indented canonical JSON, every unsafe character escaped.
pub fn json(answer: &Answer) -> String {
    let text = serde_json::to_string_pretty(&answer.to_json()).expect("JSON values serialize");
    escape_json(&text)
}

/// The columns of a list: every v2 resource has them.
const COLUMNS: [(&str, &str); 3] = [("UID", "uid"), ("NAME", "name"), ("UPDATED", "updateTime")];

/// Items as a table with a header, each column as wide as its widest cell.
pub fn table(items: &[Value]) -> String {
    let rows: Vec<Vec<String>> =
        std::iter::once(COLUMNS.map(|(title, _)| title.to_owned()).to_vec())
            .chain(
                items
                    .iter()
                    .map(|item| COLUMNS.map(|(_, key)| cell(&item[key])).to_vec()),
            )
            .collect();
    aligned(&rows)
}

/// One resource as `field  value` lines, fields in alphabetical order.
pub fn fields(item: &Value) -> String {
    let rows: Vec<Vec<String>> = item
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, value)| vec![escape(key).into_owned(), cell(value)])
        .collect();
    aligned(&rows)
}

/// A value as one line of text, escaped.
fn cell(value: &Value) -> String {
    let text = match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(","),
        other => other.to_string(),
    };
    escape(&text).into_owned()
}

fn aligned(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, text) in row.iter().enumerate() {
            if c + 1 == row.len() {
                line.push_str(text);
            } else {
                line.push_str(&format!("{text:<width$}  ", width = widths[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn columns_align_on_the_widest_cell() {
        let items = [
            json!({"uid": "a", "name": "first", "updateTime": "t1"}),
            json!({"uid": "abc/def", "name": "x", "updateTime": "t2"}),
        ];
        assert_eq!(
            table(&items),
            "UID      NAME   UPDATED\na        first  t1\nabc/def  x      t2\n"
        );
    }

    #[test]
    fn server_text_is_escaped() {
        let item = json!({"name": "\u{202e}x", "description": "\x1b]0;pwned\x07\x1b[2J", "labels": {"k": "\u{9b}"}});
        let shown = fields(&item);
        assert!(
            !shown
                .chars()
                .any(|c| c != '\n' && platformctl::text::is_unsafe(c)),
            "{shown:?}"
        );
        assert!(
            shown.contains("description  \\u{1b}]0;pwned\\u{7}\\u{1b}[2J"),
            "{shown}"
        );
        assert!(shown.contains("name         \\u{202e}x"), "{shown}");
        assert!(shown.contains("\\u{9b}"), "{shown}");
        let listed = table(std::slice::from_ref(&item));
        assert!(listed.contains("\\u{202e}x"), "{listed}");
    }
}
