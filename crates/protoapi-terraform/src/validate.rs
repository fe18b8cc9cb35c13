//! What a configuration can be told before anything is sent: an enum
//! attribute's value must be one of its names.

use crate::diagnostics;
use crate::proto::Diagnostic;
use crate::schema::{Attr, Kind};
use crate::value::Value;

/// The problems of `config` against `attrs`.
pub fn config(attrs: &[Attr], config: &Value) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    check(attrs, config, &mut Vec::new(), &mut found);
    found
}

fn check<'a>(
    attrs: &'a [Attr],
    value: &Value,
    path: &mut Vec<&'a str>,
    found: &mut Vec<Diagnostic>,
) {
    for attr in attrs {
        path.push(&attr.name);
        check_value(&attr.kind, value.get(&attr.name), path, found);
        path.pop();
    }
}

fn check_value<'a>(
    kind: &'a Kind,
    value: &Value,
    path: &mut Vec<&'a str>,
    found: &mut Vec<Diagnostic>,
) {
    match (kind, value) {
        (Kind::Enum(names), Value::String(text)) if !names.contains(text) => {
            found.push(diagnostics::error(
                format!("`{text}` is not a value of `{}`", path.join(".")),
                format!("It is one of: {}.", names.join(", ")),
                path,
            ));
        }
        (Kind::Object(inner), Value::Object(_)) => check(inner, value, path, found),
        (Kind::List(item), Value::List(items)) => {
            for item_value in items {
                check_value(item, item_value, path, found);
            }
        }
        (Kind::Map(item), Value::Object(entries)) => {
            for item_value in entries.values() {
                check_value(item, item_value, path, found);
            }
        }
        _ => {}
    }
}
