//! A field as requests name it: what generated `JsonMessage::json_field`
//! answers, and how REST binds a query parameter to it.

/// A field of a message as requests name it: its canonical JSON name, and
/// how a query parameter (`?a.b=v`) binds to it. Generated
/// [`JsonMessage::json_field`](super::JsonMessage::json_field) answers one for either spelling of a name.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// The canonical JSON name (`pageSize`).
    pub json_name: &'static str,
    /// Whether the field is repeated (a query parameter then adds an item).
    pub repeated: bool,
    pub kind: FieldKind,
}

/// What a query parameter's text becomes in a field.
#[derive(Clone, Copy, Debug)]
pub enum FieldKind {
    /// A string in JSON (strings, numbers, enums, timestamps: canonical JSON
    /// reads each from a string).
    Text,
    /// `true` or `false`.
    Bool,
    /// An enum: by name, or by number (a query parameter's digits are
    /// passed on as a JSON number, which canonical JSON reads as one).
    Enum,
    /// A `google.protobuf.FieldMask`, given in either spelling.
    FieldMask,
    /// A map: not bindable from a query.
    Map,
    /// A message whose fields are named after a dot, looked up by its own
    /// [`JsonMessage::json_field`](super::JsonMessage::json_field).
    Message(fn(&str) -> Option<Field>),
}

impl Field {
    const fn of(json_name: &'static str, kind: FieldKind) -> Field {
        Field {
            json_name,
            repeated: false,
            kind,
        }
    }

    pub const fn text(json_name: &'static str) -> Field {
        Field::of(json_name, FieldKind::Text)
    }

    pub const fn boolean(json_name: &'static str) -> Field {
        Field::of(json_name, FieldKind::Bool)
    }

    pub const fn enumeration(json_name: &'static str) -> Field {
        Field::of(json_name, FieldKind::Enum)
    }

    pub const fn field_mask(json_name: &'static str) -> Field {
        Field::of(json_name, FieldKind::FieldMask)
    }

    pub const fn map(json_name: &'static str) -> Field {
        Field::of(json_name, FieldKind::Map)
    }

    pub const fn message(json_name: &'static str, fields: fn(&str) -> Option<Field>) -> Field {
        Field::of(json_name, FieldKind::Message(fields))
    }

    pub const fn repeated(self) -> Field {
        Field {
            repeated: true,
            ..self
        }
    }
}
