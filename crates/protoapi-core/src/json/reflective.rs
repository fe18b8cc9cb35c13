//! The reflective codec: canonical JSON through prost-reflect's
//! `DynamicMessage`, driven by the embedded descriptors.
//!
//! It is the reference the generated codec is tested against, the codec of
//! messages whose shape the generator leaves to reflection (proto2 fields
//! with explicit presence, well-known types other than `Timestamp` and
//! `FieldMask`), and the decoder that decides input outside canonical form
//! and names every offending field when it does not decode.

use prost_reflect::{
    DeserializeOptions, DynamicMessage, Kind, MessageDescriptor, ReflectMessage, SerializeOptions,
};
use serde_json::{Map, Value};

use super::{JsonObject, MAX_HINTS, find_field, meant};
use crate::error::{Error, FieldViolation};

const SERIALIZE: SerializeOptions = SerializeOptions::new().skip_default_fields(false);
const DESERIALIZE: DeserializeOptions = DeserializeOptions::new().deny_unknown_fields(true);

/// Encodes a message as canonical JSON.
pub fn to_vec<M: ReflectMessage>(message: &M) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    serialize(message, &mut serde_json::Serializer::new(&mut out))
        .expect("a valid message always serializes to JSON");
    out
}

/// Serializes a message as canonical JSON with any serde serializer.
pub fn serialize<M: ReflectMessage, S: serde::Serializer>(
    message: &M,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    message
        .transcode_to_dynamic()
        .serialize_with_options(serializer, &SERIALIZE)
}

/// Decodes a JSON object (already parsed) into a message, naming every
/// offending field when it does not decode.
pub fn from_value<M: ReflectMessage + Default>(value: Value) -> Result<M, Error> {
    let descriptor = M::default().descriptor();
    let dynamic = decode_dynamic(&descriptor, &value)?;
    dynamic
        .transcode_to::<M>()
        .map_err(|e| Error::internal(format!("transcoding {}: {e}", descriptor.full_name())))
}

/// Decodes a JSON object, `None` when it does not decode: the generated
/// decoder of a message left to reflection.
pub fn from_object<M: ReflectMessage + Default>(object: &JsonObject) -> Option<M> {
    let descriptor = M::default().descriptor();
    let value = Value::Object(object.clone());
    DynamicMessage::deserialize_with_options(descriptor, &value, &DESERIALIZE)
        .ok()?
        .transcode_to()
        .ok()
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
            let hint = (out.len() < MAX_HINTS)
                .then(|| meant(descriptor, key))
                .flatten();
            let description = match hint {
                Some(name) => format!("unknown field; did you mean `{name}`?"),
                None => "unknown field".to_owned(),
            };
            out.push(FieldViolation::new(&path, description));
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
    fn a_misspelt_field_is_named_with_the_field_meant() {
        let descriptor = prost_types::Timestamp::default().descriptor();
        assert_eq!(meant(&descriptor, "secnds").as_deref(), Some("seconds"));
        assert_eq!(meant(&descriptor, "Nano").as_deref(), Some("nanos"));
        assert_eq!(meant(&descriptor, "colour"), None);
        assert_eq!(meant(&descriptor, &"seconds".repeat(20)), None);
        let Err(error) = decode_dynamic(&descriptor, &serde_json::json!({"secnds": 1})) else {
            panic!("an unknown field decodes");
        };
        let violation = &error.field_violations()[0];
        assert_eq!(violation.field, "secnds");
        assert_eq!(
            violation.description,
            "unknown field; did you mean `seconds`?"
        );
    }

    #[test]
    fn describe_strips_positions() {
        let error = serde_json::from_str::<u8>("\"x\"").unwrap_err();
        assert!(!describe(&error).contains("line"));
    }
}
