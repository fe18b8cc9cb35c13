//! How answers are printed: aligned tables for people, canonical JSON for programs.

use runtime::cli::Answer;
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
        (_, Answer::Deleted(_)) | (Format::Json, _) => answer.print(),
        (Format::Table, Answer::Item(item)) => print!("{}", fields(item)),
        (Format::Table, Answer::Page(page)) => print!("{}", table(&page.items)),
        (Format::Table, Answer::Items(items)) => print!("{}", table(items)),
    }
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
        .map(|(key, value)| vec![key.clone(), cell(value)])
        .collect();
    aligned(&rows)
}

fn cell(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(","),
        other => other.to_string(),
    }
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
}
