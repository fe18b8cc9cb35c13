//! Canonical proto3 JSON for generated messages.
//!
//! Output uses lowerCamelCase names, RFC 3339 timestamps, int64 as strings and
//! emits scalar and repeated fields even when they hold their default value
//! (so `items: []` and `totalCount: 0` are always present); unset message
//! fields are omitted. Input accepts both the JSON and the proto field names
//! and rejects unknown fields.
//!
//! When input does not decode, the codec walks the JSON again to name every
//! offending field in one `BadRequest` (the slow path runs only on errors).

use prost_reflect::{
    DeserializeOptions, DynamicMessage, Kind, MessageDescriptor, ReflectMessage, SerializeOptions,
};
use serde_json::{Map, Value};

use crate::error::{Error, FieldViolation};

const SERIALIZE: SerializeOptions = SerializeOptions::new().skip_default_fields(false);
const DESERIALIZE: DeserializeOptions = DeserializeOptions::new().deny_unknown_fields(true);

/// Spells field names and mask paths in lowerCamelCase, the form canonical
/// JSON uses: `resource_limits.clusters,name` → `resourceLimits.clusters,name`.
pub fn lower_camel_case(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut upper = false;
    for ch in path.chars() {
        match ch {
            '_' => upper = true,
            _ if upper => {
                out.push(ch.to_ascii_uppercase());
                upper = false;
            }
            _ => out.push(ch),
        }
    }
    out
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

/// Encodes a message as canonical JSON.
pub fn to_vec<M: ReflectMessage>(message: &M) -> Vec<u8> {
    let dynamic = message.transcode_to_dynamic();
    let mut out = Vec::with_capacity(256);
    let mut serializer = serde_json::Serializer::new(&mut out);
    dynamic
        .serialize_with_options(&mut serializer, &SERIALIZE)
        .expect("a valid message always serializes to JSON");
    out
}

/// Decodes a JSON object (already parsed) into a message.
///
/// `prefix` is prepended to field paths in violations (e.g. the request field
/// that held the body).
pub fn from_value<M: ReflectMessage + Default>(value: Value) -> Result<M, Error> {
    let descriptor = M::default().descriptor();
    let dynamic = decode_dynamic(&descriptor, &value)?;
    dynamic
        .transcode_to::<M>()
        .map_err(|e| Error::internal(format!("transcoding {}: {e}", descriptor.full_name())))
}

fn decode_dynamic(descriptor: &MessageDescriptor, value: &Value) -> Result<DynamicMessage, Error> {
    match DynamicMessage::deserialize_with_options(descriptor.clone(), value, &DESERIALIZE) {
        Ok(message) => Ok(message),
        Err(error) => {
            let mut violations = Vec::new();
            locate_violations(descriptor, value, "", &mut violations);
            if violations.is_empty() {
                violations.push(FieldViolation::new("", error.to_string()));
            }
            Err(Error::invalid_fields(violations))
        }
    }
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

/// Finds which fields of `value` fail to decode as `descriptor`.
fn locate_violations(
    descriptor: &MessageDescriptor,
    value: &Value,
    prefix: &str,
    out: &mut Vec<FieldViolation>,
) {
    let Value::Object(object) = value else {
        out.push(FieldViolation::new(
            prefix.trim_end_matches('.'),
            format!("expected an object for `{}`", descriptor.full_name()),
        ));
        return;
    };
    for (key, field_value) in object {
        let path = format!("{prefix}{key}");
        let Some(field) = find_field(descriptor, key) else {
            out.push(FieldViolation::new(&path, "unknown field"));
            continue;
        };
        let single = Value::Object(Map::from_iter([(key.clone(), field_value.clone())]));
        let Err(error) =
            DynamicMessage::deserialize_with_options(descriptor.clone(), &single, &DESERIALIZE)
        else {
            continue;
        };
        match field.kind() {
            Kind::Message(inner)
                if !field.is_list()
                    && !field.is_map()
                    && !inner.full_name().starts_with("google.protobuf.")
                    && field_value.is_object() =>
            {
                let before = out.len();
                locate_violations(&inner, field_value, &format!("{path}."), out);
                if out.len() == before {
                    out.push(FieldViolation::new(&path, describe(&error)));
                }
            }
            // A map names the entry whose key or value does not decode.
            _ if field.is_map() && field_value.is_object() => {
                let before = out.len();
                for (entry, entry_value) in field_value.as_object().into_iter().flatten() {
                    let single = Value::Object(Map::from_iter([(
                        key.clone(),
                        Value::Object(Map::from_iter([(entry.clone(), entry_value.clone())])),
                    )]));
                    if let Err(error) = DynamicMessage::deserialize_with_options(
                        descriptor.clone(),
                        &single,
                        &DESERIALIZE,
                    ) {
                        out.push(FieldViolation::new(
                            format!("{path}.{entry}"),
                            describe(&error),
                        ));
                    }
                }
                if out.len() == before {
                    out.push(FieldViolation::new(&path, describe(&error)));
                }
            }
            _ => out.push(FieldViolation::new(&path, describe(&error))),
        }
    }
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

/// A serde error message without its `at line 1 column 7` suffix.
fn describe(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(index) => text[..index].to_owned(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_strips_positions() {
        let error = serde_json::from_str::<u8>("\"x\"").unwrap_err();
        assert!(!describe(&error).contains("line"));
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

/// The path of `field` inside the request field `prefix` (`group.name`), or
/// `field` itself when the request is the resource (`prefix` empty).
pub fn field_path(prefix: &str, field: &str) -> String {
    if prefix.is_empty() {
        field.to_owned()
    } else {
        format!("{prefix}.{field}")
    }
}
