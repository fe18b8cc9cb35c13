//! Filterable fields other than a top-level scalar: a field one message
//! down (`dimensions.unit`), a duration, a list's elements or a map's
//! entries. Each is kept in a column storage derives from the item: one
//! value, or the list's or map's values as JSON that filters look into.

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor};

/// A filterable field kept in a column derived from the item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Derived {
    /// The JSON path filters name it by (`dimensions.unit`, `labels`).
    pub json_path: String,
    /// Its column's, and its row field's, name (`dimensions_unit`).
    pub column: String,
    pub source: Source,
}

/// Where a derived column's value comes from (proto field names).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A single field: top-level (`[cure]`) or one message down
    /// (`[dimensions, unit]`).
    Single { path: Vec<String>, value: Value },
    /// A repeated field's elements.
    List { field: String, value: Value },
    /// A map's entries, keyed by strings.
    Map { field: String, value: Value },
}

/// The type of a derived column's values, as Rust holds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Text,
    /// `i32`, `u32` and enums.
    Int,
    Int64,
    /// `u64`: values past `i64::MAX` saturate.
    Uint64,
    Bool,
    /// Microseconds, 0 when unset.
    Timestamp,
    /// Nanoseconds, 0 when unset.
    Duration,
}

impl Value {
    /// The type of values of `kind` (a field's, an element's), when filters
    /// can compare them.
    fn of(kind: &Kind) -> Option<Value> {
        Some(match kind {
            Kind::String => Value::Text,
            Kind::Bool => Value::Bool,
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 | Kind::Uint32 | Kind::Fixed32 => {
                Value::Int
            }
            Kind::Enum(_) => Value::Int,
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::Int64,
            Kind::Uint64 | Kind::Fixed64 => Value::Uint64,
            Kind::Message(m) if m.full_name() == "google.protobuf.Timestamp" => Value::Timestamp,
            Kind::Message(m) if m.full_name() == "google.protobuf.Duration" => Value::Duration,
            _ => return None,
        })
    }
}

impl Derived {
    /// Whether the column holds integers (a single non-text value); text
    /// and JSON otherwise.
    pub fn integer(&self) -> bool {
        matches!(self.source, Source::Single { value, .. } if value != Value::Text)
    }

    /// The derived column of the field `name` (a proto or JSON path) of
    /// `message`, or why filters cannot compare it.
    pub(super) fn of(message: &MessageDescriptor, name: &str) -> Result<Derived, String> {
        let parts: Vec<&str> = name.split('.').collect();
        let first = find(message, parts[0])?;
        let (source, fields) = match parts.as_slice() {
            [_] => (top_level(&first)?, vec![first]),
            [_, second] => {
                let inner = match first.kind() {
                    Kind::Message(inner)
                        if !first.is_list()
                            && !first.is_map()
                            && Value::of(&first.kind()).is_none() =>
                    {
                        inner
                    }
                    _ => return Err(format!("`{}` holds no fields to filter by", parts[0])),
                };
                let child = find(&inner, second)?;
                let value = single(&child)?;
                let path = vec![first.name().to_owned(), child.name().to_owned()];
                (Source::Single { path, value }, vec![first, child])
            }
            _ => return Err("filters reach fields at most one message down".to_owned()),
        };
        let column: Vec<&str> = fields.iter().map(FieldDescriptor::name).collect();
        let column = column.join("_");
        if fields.len() > 1 && message.get_field_by_name(&column).is_some() {
            return Err(format!(
                "its column would be named `{column}`, like a field of `{}`",
                message.name()
            ));
        }
        let json_path: Vec<&str> = fields.iter().map(FieldDescriptor::json_name).collect();
        Ok(Derived {
            json_path: json_path.join("."),
            column,
            source,
        })
    }
}

fn find(message: &MessageDescriptor, part: &str) -> Result<FieldDescriptor, String> {
    let field = (message.get_field_by_name(part))
        .or_else(|| message.get_field_by_json_name(part))
        .ok_or_else(|| format!("`{part}` is not a field of `{}`", message.full_name()))?;
    match field.containing_oneof() {
        Some(oneof) if oneof.is_synthetic() => Err(format!("`{part}` is `optional`")),
        Some(oneof) => Err(format!("`{part}` is a member of oneof `{}`", oneof.name())),
        None => Ok(field),
    }
}

/// The source of a top-level field that is not a plain column: a duration,
/// a list, a map with string keys.
fn top_level(field: &FieldDescriptor) -> Result<Source, String> {
    let name = field.name().to_owned();
    let uncomparable = || format!("the values of `{name}` cannot be compared");
    match field.kind() {
        Kind::Message(entry) if field.is_map() => {
            if entry.map_entry_key_field().kind() != Kind::String {
                return Err(format!("`{name}` is a map whose keys are not strings"));
            }
            let value =
                Value::of(&entry.map_entry_value_field().kind()).ok_or_else(uncomparable)?;
            Ok(Source::Map { field: name, value })
        }
        kind if field.is_list() => {
            let value = Value::of(&kind).ok_or_else(uncomparable)?;
            Ok(Source::List { field: name, value })
        }
        _ => Ok(Source::Single {
            value: single(field)?,
            path: vec![name],
        }),
    }
}

fn single(field: &FieldDescriptor) -> Result<Value, String> {
    if field.is_list() || field.is_map() {
        return Err(format!(
            "`{}` is a list or a map inside a message",
            field.name()
        ));
    }
    Value::of(&field.kind())
        .ok_or_else(|| format!("the values of `{}` cannot be compared", field.name()))
}
