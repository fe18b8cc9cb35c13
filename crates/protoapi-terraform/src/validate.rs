//! What a configuration can be told before anything is sent: an enum
//! attribute's value must be one of its names, and a text attribute must
//! keep the value rules the API declares (allowed values, length, printable
//! characters).

use protoapi_core::resource::TextRule;

use crate::diagnostics;
use crate::proto::Diagnostic;
use crate::schema::{Attr, Kind, ResourceType};
use crate::value::Value;

/// The problems of `config` against `resource`'s attributes and rules.
pub fn config(resource: &ResourceType, config: &Value) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    check(&resource.attrs, config, &mut Vec::new(), &mut found);
    for rule in resource.collection.text_rules {
        let Some(attr) = resource.attrs.iter().find(|a| a.json == rule.field) else {
            continue;
        };
        let texts = match config.get(&attr.name) {
            Value::String(text) => vec![text.as_str()],
            Value::List(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for text in texts {
            if let Some(why) = broken(rule, text) {
                found.push(diagnostics::error(
                    format!("Invalid `{}`", attr.name),
                    why,
                    &[&attr.name],
                ));
            }
        }
    }
    found
}

/// What `text` breaks of `rule`, if anything.
fn broken(rule: &TextRule, text: &str) -> Option<String> {
    if let Some(allowed) = rule.allowed
        && !allowed.contains(&text)
    {
        return Some(format!("`{text}` is not one of: {}.", allowed.join(", ")));
    }
    if let Some(max) = rule.max_length
        && text.chars().count() > max
    {
        return Some(format!("At most {max} characters."));
    }
    if let Some(max) = rule.max_bytes
        && text.len() > max
    {
        return Some(format!("At most {max} bytes of UTF-8."));
    }
    if rule.printable && text.chars().any(char::is_control) {
        return Some("No control characters.".to_owned());
    }
    None
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
