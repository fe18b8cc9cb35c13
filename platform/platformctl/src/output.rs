//! How answers are printed: aligned tables for people, canonical JSON or
//! YAML for programs.
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
    /// The same values as YAML, in block style.
    Yaml,
}

/// Prints a command's answer in `format` (a delete as `deleted <uid>` on stderr).
pub fn print(format: Format, answer: &Answer) {
    match (format, answer) {
        (_, Answer::Deleted(uid)) => eprintln!("deleted {}", escape(uid)),
        (Format::Json, _) => println!("{}", json(answer)),
        (Format::Yaml, _) => print!("{}", yaml(&answer.to_json())),
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

/// `value` as YAML in block style. Every string is written as a JSON
/// string (a YAML double-quoted scalar: the same value, its [unsafe]
/// characters escaped as in JSON), so no text any tenant wrote can change
/// the document's shape, its type, or the terminal; keys that are not plain
/// words are quoted alike.
///
/// [unsafe]: platformctl::text::is_unsafe
pub fn yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => yaml_entries(&mut out, map, 0),
        Value::Array(items) if !items.is_empty() => yaml_items(&mut out, items, 0),
        scalar => {
            out.push_str(&yaml_scalar(scalar));
            out.push('\n');
        }
    }
    out
}

fn yaml_entries(out: &mut String, map: &serde_json::Map<String, Value>, indent: usize) {
    for (key, value) in map {
        let key = match key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && key.starts_with(|c: char| c.is_ascii_alphabetic())
        {
            true => key.clone(),
            false => yaml_scalar(&Value::String(key.clone())),
        };
        out.push_str(&" ".repeat(indent));
        out.push_str(&key);
        out.push(':');
        yaml_nested(out, value, indent);
    }
}

fn yaml_items(out: &mut String, items: &[Value], indent: usize) {
    for item in items {
        out.push_str(&" ".repeat(indent));
        out.push('-');
        match item {
            // `- key: value` and the other keys below it.
            Value::Object(map) if !map.is_empty() => {
                let mut block = String::new();
                yaml_entries(&mut block, map, indent + 2);
                out.push(' ');
                out.push_str(&block[indent + 2..]);
            }
            _ => yaml_nested(out, item, indent),
        }
    }
}

/// What follows a key's colon or an item's dash: a scalar on the line, or
/// the block of a non-empty object or list below it.
fn yaml_nested(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            yaml_entries(out, map, indent + 2);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            yaml_items(out, items, indent + 2);
        }
        scalar => {
            out.push(' ');
            out.push_str(&yaml_scalar(scalar));
            out.push('\n');
        }
    }
}

/// A scalar (or an empty object or list) as flow YAML, which is its JSON.
fn yaml_scalar(value: &Value) -> String {
    escape_json(&value.to_string())
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

    #[test]
    fn yaml_reads_back_as_the_same_values_whatever_the_text() {
        let value = serde_json::json!({
            "uid": "abc/def",
            "name": "- not: a list\n# nor a comment",
            "count": 3,
            "flag": true,
            "nothing": null,
            "tags": ["yes", "no", "1.5", "", "\u{202e}evil\u{1b}[2J"],
            "labels": {"env": "prod", "a b": "c", "": "empty key"},
            "nested": {"list": [{"x": 1}, [], {}]},
            "empty": [],
        });
        let yaml = super::yaml(&value);
        let unsafe_text = yaml
            .chars()
            .filter(|c| *c != '\n')
            .any(platformctl::text::is_unsafe);
        assert!(!unsafe_text, "{yaml}");
        let back: serde_json::Value = serde_yaml_ng::from_str(&yaml).unwrap();
        assert_eq!(back, value, "{yaml}");
        assert!(yaml.starts_with("count: 3\n"), "{yaml}");
        assert!(yaml.contains("  list:\n    - x: 1\n    - []\n"), "{yaml}");
        assert!(yaml.contains("tags:\n  - \"yes\"\n"), "{yaml}");
        assert_eq!(super::yaml(&serde_json::json!([])), "[]\n");
    }
}
