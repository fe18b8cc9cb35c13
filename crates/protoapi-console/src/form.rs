//! Forms derived from a resource's fields: one input per field, chosen by
//! its kind (from the descriptors) and behaviour (from the proto's
//! `field_behavior`), and the JSON and update mask a submitted form means.

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor};
use serde_json::{Map, Value};

use protoapi_client::schema::Collection;
use protoapi_core::resource::{Behavior, FieldSpec};

/// Text fields allowed more characters than this get a text area.
const LONG_TEXT: usize = 200;

/// One input of a form, or one read-only value of it.
#[derive(Clone, Debug)]
pub struct FormField {
    /// The JSON path, which names the input.
    pub path: String,
    /// The path in words ([`crate::words::label`]).
    pub label: String,
    /// The field's proto comment, shown under the input.
    pub help: String,
    pub required: bool,
    /// Shown read-only (OUTPUT_ONLY; IMMUTABLE after creation).
    pub read_only: bool,
    /// `text`, `textarea`, `number`, `checkbox`, `select`, `multi` (a
    /// repeated enum), `choices` (repeated strings of a closed set, a box
    /// each), `lines` (other repeated values, one per line), `pairs` (a map,
    /// `key=value` per line), `timestamp` or `json`.
    pub widget: &'static str,
    /// The value as the input shows it.
    pub value: String,
    /// A select's choices: `(value, text)`.
    pub options: Vec<(String, String)>,
    /// The collection a reference's choices come from.
    pub reference: Option<&'static str>,
    /// What the API said of this field's value.
    pub violation: Option<String>,
    kind: Kind,
    repeated: bool,
}

impl FormField {
    /// Whether this checkbox is ticked.
    pub fn checked(&self) -> bool {
        self.value == "true"
    }

    /// Whether `option` is among the values shown (a select's one, or a
    /// multiple select's lines).
    pub fn selected(&self, option: &str) -> bool {
        match self.widget {
            "multi" | "choices" => self.value.lines().any(|line| line == option),
            _ => self.value == option,
        }
    }
}

/// The leaf fields of `collection` (a nested message's fields, not the
/// message), with the descriptors of `message`, for a create form
/// (`creating`) or an edit form.
pub fn fields(
    collection: &Collection,
    message: &MessageDescriptor,
    creating: bool,
) -> Vec<FormField> {
    collection
        .fields
        .iter()
        .filter(|spec| !is_container(collection.fields, spec))
        // The form carries the etag it read by itself.
        .filter(|spec| spec.json_path != "etag")
        .filter(|spec| !(creating && spec.behavior == Behavior::OutputOnly))
        .filter_map(|spec| {
            let field = descriptor(message, spec.path)?;
            let mut form_field = form_field(collection, spec, &field, creating);
            form_field.required &= enclosing_required(collection, message, spec.path);
            Some(form_field)
        })
        .collect()
}

/// Whether every message field holding the field at `path` is required: a
/// required field of an optional message (an identity's
/// `claimMatch.issuer`) is required only once that message is given, which
/// the API checks, so the form does not insist on it.
fn enclosing_required(collection: &Collection, message: &MessageDescriptor, path: &str) -> bool {
    path.match_indices('.').all(|(end, _)| {
        let enclosing = &path[..end];
        let stated = collection
            .fields
            .iter()
            .any(|spec| spec.path == enclosing && spec.behavior.is_required());
        stated || descriptor(message, enclosing).is_some_and(|field| declared_required(&field))
    })
}

fn is_container(all: &[FieldSpec], spec: &FieldSpec) -> bool {
    all.iter().any(|other| {
        other.path.len() > spec.path.len()
            && other.path.starts_with(spec.path)
            && other.path.as_bytes()[spec.path.len()] == b'.'
    })
}

/// The descriptor of the field at a dotted proto path.
fn descriptor(message: &MessageDescriptor, path: &str) -> Option<FieldDescriptor> {
    let mut message = message.clone();
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        let field = message.get_field_by_name(part)?;
        if parts.peek().is_none() {
            return Some(field);
        }
        message = field.kind().as_message()?.clone();
    }
    None
}

fn form_field(
    collection: &Collection,
    spec: &FieldSpec,
    field: &FieldDescriptor,
    creating: bool,
) -> FormField {
    let kind = field.kind();
    let reference = collection.reference(spec.json_path).map(|r| r.collection);
    let widget = widget(collection, spec, field, reference.is_some());
    let options = match &kind {
        Kind::Enum(e) if !field.is_map() => e
            .values()
            .map(|v| (v.name().to_owned(), v.name().to_owned()))
            .collect(),
        _ if widget == "choices" => (allowed(collection, spec).into_iter().flatten())
            .map(|value| ((*value).to_owned(), (*value).to_owned()))
            .collect(),
        _ => Vec::new(),
    };
    FormField {
        path: spec.json_path.to_owned(),
        label: crate::words::field(collection, spec.json_path),
        help: crate::words::comment(field),
        required: spec.behavior.is_required() || declared_required(field),
        read_only: match spec.behavior {
            Behavior::OutputOnly => true,
            Behavior::Immutable | Behavior::RequiredImmutable => !creating,
            Behavior::Optional | Behavior::Required => false,
        },
        widget,
        value: String::new(),
        options,
        reference,
        violation: None,
        kind,
        repeated: field.is_list(),
    }
}

/// Whether the field's `google.api.field_behavior` says REQUIRED (beside
/// IMMUTABLE, say, which its [`FieldSpec`] reports instead).
fn declared_required(field: &FieldDescriptor) -> bool {
    /// `google.api.FieldBehavior.REQUIRED`.
    const REQUIRED: i32 = 2;
    let Some(extension) = field
        .parent_pool()
        .get_extension_by_name("google.api.field_behavior")
    else {
        return false;
    };
    let options = field.options();
    if !options.has_extension(&extension) {
        return false;
    }
    let value = options.get_extension(&extension);
    value
        .as_list()
        .is_some_and(|list| list.iter().any(|v| v.as_enum_number() == Some(REQUIRED)))
}

/// The only values a field takes, when its collection's rules close the set
/// (`allowed` in the annotation files: a role's capabilities).
fn allowed(collection: &Collection, spec: &FieldSpec) -> Option<&'static [&'static str]> {
    (collection.text_rules.iter())
        .find(|rule| rule.field == spec.json_path)
        .and_then(|rule| rule.allowed)
}

fn widget(
    collection: &Collection,
    spec: &FieldSpec,
    field: &FieldDescriptor,
    reference: bool,
) -> &'static str {
    if field.is_map() {
        let entry = field.kind();
        let entry = entry.as_message();
        let text = |name: &str| {
            entry
                .and_then(|m| m.get_field_by_name(name))
                .is_some_and(|f| f.kind() == Kind::String)
        };
        return if text("key") && text("value") {
            "pairs"
        } else {
            "json"
        };
    }
    if field.is_list() {
        return match field.kind() {
            Kind::Message(_) => "json",
            Kind::Enum(_) => "multi",
            Kind::String if allowed(collection, spec).is_some() => "choices",
            _ => "lines",
        };
    }
    match field.kind() {
        Kind::String if reference => "select",
        Kind::String => {
            let long = collection.text_rules.iter().any(|rule| {
                rule.field == spec.json_path
                    && rule
                        .max_length
                        .or(rule.max_bytes)
                        .is_some_and(|max| max > LONG_TEXT)
            });
            if long { "textarea" } else { "text" }
        }
        Kind::Bool => "checkbox",
        Kind::Enum(_) => "select",
        Kind::Bytes => "text",
        Kind::Message(m) => match m.full_name() {
            "google.protobuf.Timestamp" => "timestamp",
            name if name.starts_with("google.protobuf.")
                && name.ends_with("Value")
                && name != "google.protobuf.Value" =>
            {
                "text"
            }
            _ => "json",
        },
        _ => "number",
    }
}

/// The value at a dotted JSON path of an item.
pub fn lookup<'a>(item: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(item, |value, part| value.get(part))
}

/// A JSON value as an input shows it.
pub fn display(value: &Value, widget: &str) -> String {
    match (value, widget) {
        (Value::Null, _) => String::new(),
        (Value::String(text), _) => text.clone(),
        (Value::Bool(flag), _) => flag.to_string(),
        (Value::Array(items), "lines" | "multi" | "choices") => items
            .iter()
            .map(|item| display(item, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        (Value::Object(pairs), "pairs") => pairs
            .iter()
            .map(|(key, value)| format!("{key}={}", display(value, "text")))
            .collect::<Vec<_>>()
            .join("\n"),
        (Value::Number(number), _) => number.to_string(),
        (other, _) => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// Fills each field's value from `item`.
pub fn fill(fields: &mut [FormField], item: &Value) {
    for field in fields {
        let value = lookup(item, &field.path).cloned().unwrap_or(Value::Null);
        field.value = display(&value, field.widget);
        if field.widget == "checkbox" && field.value.is_empty() {
            field.value = "false".to_owned();
        }
    }
}

/// A submitted form's value of `field` as the input shows it.
pub fn submitted(form: &[(String, String)], field: &FormField) -> String {
    let mut values = form
        .iter()
        .filter(|(key, _)| *key == field.path)
        .map(|(_, v)| v.trim_end_matches(['\r', '\n']).replace("\r\n", "\n"));
    match field.widget {
        "checkbox" => values
            .next()
            .is_some_and(|v| v == "on" || v == "true")
            .to_string(),
        "multi" | "choices" => values.collect::<Vec<_>>().join("\n"),
        _ => values.next().unwrap_or_default(),
    }
}

/// The JSON value an input's text means (a value the API refuses, such as
/// a word in a number field, is sent as it is, for the API to name).
pub fn parse(field: &FormField, text: &str) -> Option<Value> {
    if text.is_empty() && field.widget != "checkbox" {
        return None;
    }
    Some(match field.widget {
        "checkbox" => Value::Bool(text == "true"),
        "lines" | "multi" | "choices" => Value::Array(
            text.lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(|line| scalar(&field.kind, line))
                .collect(),
        ),
        "pairs" => Value::Object(
            text.lines()
                .filter_map(|line| line.split_once('='))
                .map(|(key, value)| {
                    (
                        key.trim().to_owned(),
                        Value::String(value.trim().to_owned()),
                    )
                })
                .collect(),
        ),
        "json" => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())),
        _ if field.repeated => Value::String(text.to_owned()),
        _ => scalar(&field.kind, text),
    })
}

/// One scalar value of kind `kind` (64-bit integers stay strings, as
/// canonical JSON writes them).
fn scalar(kind: &Kind, text: &str) -> Value {
    let number = match kind {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 | Kind::Uint32 | Kind::Fixed32 => {
            text.parse::<i64>().ok().map(Value::from)
        }
        Kind::Float | Kind::Double => text
            .parse::<f64>()
            .ok()
            .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number)),
        Kind::Bool => text.parse::<bool>().ok().map(Value::Bool),
        _ => None,
    };
    number.unwrap_or_else(|| Value::String(text.to_owned()))
}

/// Sets `value` at a dotted path of `object`, creating nested objects.
pub fn insert(object: &mut Map<String, Value>, path: &str, value: Value) {
    match path.split_once('.') {
        None => {
            object.insert(path.to_owned(), value);
        }
        Some((head, rest)) => {
            let inner = object
                .entry(head.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
            if !inner.is_object() {
                *inner = Value::Object(Map::new());
            }
            if let Value::Object(inner) = inner {
                insert(inner, rest, value);
            }
        }
    }
}

/// The resource JSON a submitted form sets, and (for an edit) the paths
/// that changed from the values the form was opened with (`orig.<path>`).
pub fn read(
    fields: &mut [FormField],
    form: &[(String, String)],
) -> (Map<String, Value>, Vec<String>) {
    let mut body = Map::new();
    let mut changed = Vec::new();
    for field in fields.iter_mut().filter(|f| !f.read_only) {
        let text = submitted(form, field);
        let original = form
            .iter()
            .find(|(key, _)| key.strip_prefix("orig.") == Some(field.path.as_str()))
            .map(|(_, v)| v.replace("\r\n", "\n"));
        if original
            .as_deref()
            .is_some_and(|orig| orig.trim_end_matches(['\r', '\n']) != text)
        {
            changed.push(field.path.clone());
        }
        if let Some(value) = parse(field, &text) {
            insert(&mut body, &field.path, value);
        }
        field.value = text;
    }
    (body, changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(widget: &'static str, kind: Kind) -> FormField {
        FormField {
            path: "a.b".to_owned(),
            label: "A › b".to_owned(),
            help: String::new(),
            required: false,
            read_only: false,
            widget,
            value: String::new(),
            options: Vec::new(),
            reference: None,
            violation: None,
            kind,
            repeated: false,
        }
    }

    #[test]
    fn inputs_read_back_as_json_and_only_changes_are_masked() {
        let mut fields = vec![field("number", Kind::Int32)];
        let form = vec![
            ("a.b".to_owned(), "7".to_owned()),
            ("orig.a.b".to_owned(), "3".to_owned()),
        ];
        let (body, changed) = read(&mut fields, &form);
        assert_eq!(Value::Object(body), serde_json::json!({"a": {"b": 7}}));
        assert_eq!(changed, ["a.b"]);
        let same = vec![
            ("a.b".to_owned(), "7".to_owned()),
            ("orig.a.b".to_owned(), "7".to_owned()),
        ];
        assert!(read(&mut fields, &same).1.is_empty());
        // A word in a number field goes to the API, which names the field.
        assert_eq!(
            parse(&fields[0], "many"),
            Some(Value::String("many".to_owned()))
        );
        assert_eq!(
            parse(&field("int64", Kind::Int64), "9007199254740993"),
            Some(Value::String("9007199254740993".to_owned()))
        );
        let lines = FormField {
            repeated: true,
            ..field("lines", Kind::String)
        };
        assert_eq!(
            parse(&lines, "x\n\n y \n"),
            Some(serde_json::json!(["x", "y"]))
        );
        assert_eq!(
            parse(&field("pairs", Kind::String), "k=v\nbad"),
            Some(serde_json::json!({"k": "v"}))
        );
        assert_eq!(display(&serde_json::json!({"k": "v"}), "pairs"), "k=v");
        let checkbox = field("checkbox", Kind::Bool);
        assert_eq!(submitted(&[], &checkbox), "false");
        assert_eq!(parse(&checkbox, "false"), Some(Value::Bool(false)));
    }
}
