//! The canonical JSON shape of a message: each field's JSON name and how its
//! value is written, in the Rust types prost gives it.

use heck::ToSnakeCase;
use prost_reflect::{Cardinality, FieldDescriptor, Kind, MessageDescriptor};

use super::proto::OneofMember;

/// How a message is written as JSON.
#[derive(Clone, Debug)]
pub enum JsonShape {
    /// Field by field, in field number order (as the reflective codec
    /// writes them).
    Fields(Vec<JsonField>),
    /// Through reflection, for shapes the generated codec does not cover;
    /// the reason names the first field that needs it.
    Reflective(String),
}

#[derive(Clone, Debug)]
pub struct JsonField {
    /// The proto name (`display_name`), also accepted in input.
    pub name: String,
    /// The canonical JSON name (`displayName`).
    pub json_name: String,
    /// The Rust field prost generates (`display_name`, raw for keywords).
    pub rust_name: String,
    pub value: JsonValue,
    pub container: Container,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Container {
    /// A plain value, always written.
    Single,
    /// `Option<M>` of a message: written when set.
    Optional { boxed: bool },
    /// `Option<T>` of a proto3 `optional` scalar: written when set, even to
    /// its default.
    Present,
    /// A member of a oneof: a variant of the enum prost keeps in one
    /// `Option` field, written when it is the member set.
    Member { member: OneofMember, boxed: bool },
    /// `Vec<T>`.
    List,
    /// `HashMap<K, V>` with keys of this kind.
    Map(JsonValue),
}

#[derive(Clone, Debug, PartialEq)]
pub enum JsonValue {
    String,
    Bool,
    /// 32-bit integers: JSON numbers.
    Int32,
    Uint32,
    /// 64-bit integers: JSON strings.
    Int64,
    Uint64,
    Float,
    Double,
    Bytes,
    /// An enum by name, with the Rust path of the prost enum.
    Enum(String),
    /// A message, with its Rust path.
    Message(String),
    Timestamp,
    FieldMask,
}

/// A field as requests name it, for `JsonMessage::json_field`: every field
/// of the message, whatever its JSON shape.
#[derive(Clone, Debug)]
pub struct NamedField {
    /// The proto name (`page_size`).
    pub name: String,
    /// The canonical JSON name (`pageSize`).
    pub json_name: String,
    pub repeated: bool,
    pub kind: QueryKind,
}

/// What a query parameter's text becomes in the field
/// (`protoapi_runtime::json::wire::FieldKind`).
#[derive(Clone, Debug, PartialEq)]
pub enum QueryKind {
    Text,
    Bool,
    Enum,
    FieldMask,
    Map,
    /// A message with its Rust path, whose fields follow a dot.
    Message(String),
}

impl NamedField {
    pub fn all(message: &MessageDescriptor) -> Vec<NamedField> {
        let mut fields: Vec<FieldDescriptor> = message.fields().collect();
        fields.sort_by_key(FieldDescriptor::number);
        fields
            .iter()
            .map(|field| NamedField {
                name: field.name().to_owned(),
                json_name: field.json_name().to_owned(),
                repeated: field.is_list(),
                kind: match field.kind() {
                    _ if field.is_map() => QueryKind::Map,
                    Kind::Bool => QueryKind::Bool,
                    Kind::Enum(_) => QueryKind::Enum,
                    Kind::Message(inner) => match inner.full_name() {
                        "google.protobuf.FieldMask" => QueryKind::FieldMask,
                        "google.protobuf.BoolValue" => QueryKind::Bool,
                        // Timestamps, durations and wrappers read from strings.
                        other if other.starts_with("google.protobuf.") => QueryKind::Text,
                        _ => QueryKind::Message(super::proto::rust_path(&inner)),
                    },
                    _ => QueryKind::Text,
                },
            })
            .collect()
    }
}

impl JsonShape {
    pub fn of(message: &MessageDescriptor) -> JsonShape {
        let mut fields: Vec<FieldDescriptor> = message.fields().collect();
        fields.sort_by_key(FieldDescriptor::number);
        let mut out = Vec::with_capacity(fields.len());
        for field in fields {
            match JsonField::of(message, &field) {
                Ok(field) => out.push(field),
                Err(reason) => {
                    return JsonShape::Reflective(format!("`{}` {reason}", field.name()));
                }
            }
        }
        JsonShape::Fields(out)
    }
}

impl JsonField {
    fn of(message: &MessageDescriptor, field: &FieldDescriptor) -> Result<JsonField, String> {
        let container = if let Some(member) = OneofMember::of(message, field) {
            let boxed = match field.kind() {
                Kind::Message(inner) => reaches(&inner, message, &mut Vec::new()),
                _ => false,
            };
            Container::Member { member, boxed }
        } else if field.is_map() {
            let Kind::Message(entry) = field.kind() else {
                unreachable!("a map field's kind is its entry message");
            };
            let key = value_of(&entry.map_entry_key_field())?;
            let value = value_of(&entry.map_entry_value_field())?;
            return Ok(JsonField::new(field, value, Container::Map(key)));
        } else if field.is_list() {
            Container::List
        } else if let Kind::Message(inner) = field.kind() {
            Container::Optional {
                boxed: reaches(&inner, message, &mut Vec::new()),
            }
        } else if field.containing_oneof().is_some() {
            // A synthetic oneof: proto3 `optional`.
            Container::Present
        } else if field.supports_presence() {
            return Err("has explicit presence".into());
        } else {
            Container::Single
        };
        Ok(JsonField::new(field, value_of(field)?, container))
    }

    fn new(field: &FieldDescriptor, value: JsonValue, container: Container) -> JsonField {
        JsonField {
            name: field.name().to_owned(),
            json_name: field.json_name().to_owned(),
            rust_name: field.name().to_snake_case(),
            value,
            container,
        }
    }
}

fn value_of(field: &FieldDescriptor) -> Result<JsonValue, String> {
    Ok(match field.kind() {
        Kind::String => JsonValue::String,
        Kind::Bool => JsonValue::Bool,
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => JsonValue::Int32,
        Kind::Uint32 | Kind::Fixed32 => JsonValue::Uint32,
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => JsonValue::Int64,
        Kind::Uint64 | Kind::Fixed64 => JsonValue::Uint64,
        Kind::Float => JsonValue::Float,
        Kind::Double => JsonValue::Double,
        Kind::Bytes => JsonValue::Bytes,
        Kind::Enum(enumeration) => {
            // prost-types' enums (`NullValue`) have no generated impls.
            if enumeration.package_name() == "google.protobuf" {
                return Err(format!("is a `{}`", enumeration.full_name()));
            }
            JsonValue::Enum(super::proto::type_path(
                enumeration.package_name(),
                enumeration.parent_message(),
                enumeration.name(),
            ))
        }
        Kind::Message(inner) => match inner.full_name() {
            "google.protobuf.Timestamp" => JsonValue::Timestamp,
            "google.protobuf.FieldMask" => JsonValue::FieldMask,
            other if other.starts_with("google.protobuf.") => {
                return Err(format!("is a `{other}`"));
            }
            _ => JsonValue::Message(super::proto::rust_path(&inner)),
        },
    })
}

/// Whether `from` holds `to` through singular message fields, which prost
/// then boxes (as prost-build's message graph decides).
fn reaches(from: &MessageDescriptor, to: &MessageDescriptor, seen: &mut Vec<String>) -> bool {
    if from == to {
        return true;
    }
    if seen.iter().any(|name| name == from.full_name()) {
        return false;
    }
    seen.push(from.full_name().to_owned());
    from.fields().any(|field| match field.kind() {
        Kind::Message(inner) if field.cardinality() != Cardinality::Repeated => {
            reaches(&inner, to, seen)
        }
        _ => false,
    })
}
