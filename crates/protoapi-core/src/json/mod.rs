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

mod case;
#[cfg(feature = "testing")]
pub mod conformance;
mod field;
mod hint;
mod message;
pub mod reflective;
pub mod wire;

pub use case::{escape_overhead, field_path, find_field, lower_camel_case};
pub use hint::{MAX_HINTS, meant};
pub use message::{JsonMessage, JsonObject, MessageVisitor};

use serde_json::{Map, Value};

use crate::error::Error;

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
