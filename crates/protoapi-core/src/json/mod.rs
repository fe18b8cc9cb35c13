//! Canonical proto3 JSON for generated messages.
//!
//! Output uses lowerCamelCase names, RFC 3339 timestamps, int64 as strings and
//! emits scalar and repeated fields even when they hold their default value
//! (so `items: []` and `totalCount: 0` are always present); unset message
//! fields are omitted. Input accepts both the JSON and the proto field names
//! and rejects unknown fields.
//!
//! The generator implements [`JsonMessage`] for every message: `serde`
//! serialization written out field by field, and a decoder for input in the
//! shapes canonical JSON gives values (the [`wire`] helpers). Input it does
//! not take directly (`null`, proto field names, floats for integers,
//! errors) goes to the [`reflective`] codec, which decides
//! and names every offending field in one `BadRequest`. Both are checked
//! against each other on random messages by `conformance::check` (feature
//! `testing`), which a generated crate's tests run on each of its messages.

#[cfg(feature = "testing")]
pub mod conformance;
pub mod reflective;
pub mod wire;

use prost_reflect::{MessageDescriptor, ReflectMessage};
use serde_json::{Map, Value};

use crate::error::Error;

/// A JSON object, as generated decoders read it.
pub type JsonObject = Map<String, Value>;

/// Canonical JSON of a generated message, without reflection.
pub trait JsonMessage: ReflectMessage + Default {
    /// Writes the message as canonical JSON (an object).
    fn serialize_json<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error>;

    /// Decodes `object` when every field in it is spelled and shaped as
    /// canonical JSON spells it; `None` leaves the decision to the
    /// [`reflective`] decoder (which accepts more and explains errors).
    fn from_json_object(object: &JsonObject) -> Option<Self>;

    /// The field `name` names, in its JSON (`pageSize`) or proto
    /// (`page_size`) spelling: how REST requests bind path variables and
    /// query parameters without looking the message up by reflection.
    fn json_field(name: &str) -> Option<wire::Field>;
}

/// Something done with each message type of an API, through the generated
/// `visit_messages`.
pub trait MessageVisitor {
    fn visit<M: JsonMessage + PartialEq + std::fmt::Debug>(&mut self);
}

/// `google.protobuf.Empty`, which prost represents as `()`.
impl JsonMessage for () {
    fn serialize_json<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(std::iter::empty::<((), ())>())
    }

    fn from_json_object(object: &JsonObject) -> Option<Self> {
        object.is_empty().then_some(())
    }

    fn json_field(_: &str) -> Option<wire::Field> {
        None
    }
}

/// Encodes a message as canonical JSON.
pub fn to_vec<M: JsonMessage>(message: &M) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    serde_json::to_writer(&mut out, &wire::Message(message))
        .expect("a valid message always serializes to JSON");
    out
}

/// Decodes a JSON object (already parsed) into a message, naming every
/// offending field when it does not decode.
pub fn from_value<M: JsonMessage>(value: Value) -> Result<M, Error> {
    if let Value::Object(object) = &value
        && let Some(message) = M::from_json_object(object)
    {
        return Ok(message);
    }
    reflective::from_value(value)
}

/// Spells field names and mask paths in lowerCamelCase, the form canonical
/// JSON uses: `resource_limits.clusters,name` → `resourceLimits.clusters,name`.
pub fn lower_camel_case(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    push_lower_camel_case(path, &mut out);
    out
}

/// Appends `path` in lowerCamelCase; `false` when the result would not read
/// back as `path` (an upper-case letter, `_` before a non-letter, `__`), which
/// a field mask then cannot be written as.
fn push_lower_camel_case(path: &str, out: &mut String) -> bool {
    let mut reads_back = true;
    let mut upper = false;
    for ch in path.chars() {
        reads_back &= !ch.is_ascii_uppercase();
        if ch == '_' {
            reads_back &= !upper;
            upper = true;
        } else if upper {
            let capital = ch.to_ascii_uppercase();
            reads_back &= capital != ch;
            out.push(capital);
            upper = false;
        } else {
            out.push(ch);
        }
    }
    reads_back
}

/// How many bytes JSON adds to a string by escaping it: one for `"`, `\\`
/// and the short escapes (`\n`, `\t`, ...), five for other control
/// characters (`\u0001`).
pub fn escape_overhead(text: &str) -> usize {
    // Branch-free so that it vectorises: list pages scan large texts.
    text.bytes()
        .map(|byte| {
            let quoted = usize::from(byte == b'"' || byte == b'\\');
            let control = usize::from(byte < 0x20);
            let short = usize::from(matches!(byte, b'\n' | b'\r' | b'\t' | 0x08 | 0x0c));
            quoted + 5 * control - 4 * short
        })
        .sum()
}

/// Parses a request body into a JSON value, naming `field` on a syntax error.
pub fn parse_body(field: &str, bytes: &[u8]) -> Result<Value, Error> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Map::new()));
    }
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| Error::invalid_field(field, format!("the body is not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(Error::invalid_field(
            field,
            "the body must be a JSON object",
        ));
    }
    Ok(value)
}

/// A field by its JSON name or its proto name.
pub fn find_field(
    descriptor: &MessageDescriptor,
    name: &str,
) -> Option<prost_reflect::FieldDescriptor> {
    descriptor
        .get_field_by_json_name(name)
        .or_else(|| descriptor.get_field_by_name(name))
}

/// The path of `field` inside the request field `prefix` (`group.name`), or
/// `field` itself when the request is the resource (`prefix` empty).
pub fn field_path(prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_owned()
    } else {
        format!("{prefix}.{field}")
    }
}

#[cfg(test)]
mod escape_tests {
    #[test]
    fn overhead_matches_serde_json() {
        for text in [
            "plain",
            "quote \" and \\ slash",
            "line\nbreak\ttab",
            "\u{1}\u{7f}\u{0}é",
        ] {
            let json = serde_json::to_string(text).unwrap();
            assert_eq!(
                json.len(),
                text.len() + 2 + super::escape_overhead(text),
                "{text:?}"
            );
        }
    }
}
