//! A field's behaviour and kind, read from its descriptor.

use prost_reflect::{DescriptorPool, FieldDescriptor, Kind, Value};

use super::resource::{Behavior, FieldKind};

const FIELD_BEHAVIOR_OPTION: &str = "google.api.field_behavior";

/// A `string` or `repeated string` field (not a map), whose values are
/// `String`s.
pub(super) fn is_string(field: &FieldDescriptor) -> bool {
    field.kind() == Kind::String && !field.is_map()
}

/// A scalar with explicit presence outside a real oneof (proto3 `optional`,
/// or a wrapper type).
pub(super) fn is_optional(field: &FieldDescriptor) -> bool {
    if wrapped(field).is_some() {
        return field.containing_oneof().is_none();
    }
    field.supports_presence()
        && !matches!(field.kind(), Kind::Message(_))
        && field
            .containing_oneof()
            .is_none_or(|oneof| oneof.is_synthetic())
}

pub(super) fn is_int64(field: &FieldDescriptor) -> bool {
    !field.is_list()
        && !field.is_map()
        && matches!(field.kind(), Kind::Int64 | Kind::Sint64 | Kind::Sfixed64)
}

pub(super) fn is_uint64(field: &FieldDescriptor) -> bool {
    !field.is_list() && !field.is_map() && matches!(field.kind(), Kind::Uint64 | Kind::Fixed64)
}

/// The `value` field of a `google.protobuf` wrapper (`Int32Value`, ...),
/// which prost holds as `Option` of the scalar, as a proto3 `optional`.
fn wrapped(field: &FieldDescriptor) -> Option<FieldDescriptor> {
    match field.kind() {
        Kind::Message(message)
            if !field.is_list()
                && message.package_name() == "google.protobuf"
                && message.name().ends_with("Value")
                && message.fields().len() == 1 =>
        {
            message.get_field_by_name("value")
        }
        _ => None,
    }
}

pub(super) fn field_kind(field: &FieldDescriptor) -> FieldKind {
    if field.is_list() || field.is_map() {
        return FieldKind::Repeated;
    }
    if let Some(value) = wrapped(field) {
        return field_kind(&value);
    }
    match field.kind() {
        Kind::String | Kind::Bytes => FieldKind::Text,
        Kind::Bool => FieldKind::Bool,
        Kind::Message(m) if m.full_name() == "google.protobuf.Timestamp" => FieldKind::Timestamp,
        Kind::Message(_) => FieldKind::Message,
        Kind::Float | Kind::Double => FieldKind::Float,
        _ => FieldKind::Number,
    }
}

pub(super) fn behavior(pool: &DescriptorPool, field: &FieldDescriptor) -> Behavior {
    let Some(extension) = pool.get_extension_by_name(FIELD_BEHAVIOR_OPTION) else {
        return Behavior::Optional;
    };
    let options = field.options();
    let value = options.get_extension(&extension);
    let numbers: Vec<i32> = value
        .as_list()
        .map(|list| list.iter().filter_map(Value::as_enum_number).collect())
        .unwrap_or_default();
    // google.api.FieldBehavior: REQUIRED = 2, OUTPUT_ONLY = 3, IMMUTABLE = 5.
    if numbers.contains(&3) {
        Behavior::OutputOnly
    } else if numbers.contains(&5) && numbers.contains(&2) {
        Behavior::RequiredImmutable
    } else if numbers.contains(&5) {
        Behavior::Immutable
    } else if numbers.contains(&2) {
        Behavior::Required
    } else {
        Behavior::Optional
    }
}
