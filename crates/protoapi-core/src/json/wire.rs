//! What generated [`JsonMessage`] impls are written with:
//! serializers for the values whose canonical JSON is not their serde form
//! (64-bit integers as strings, enum names, timestamps, masks, bytes,
//! non-finite floats), and decoders taking one JSON value in the shape
//! canonical JSON gives it.
//!
//! Each decoder answers `None` for anything else, `null` included; the
//! message's decoder then hands the whole input to the reflective codec,
//! which decides. So a decoder here may be narrower than the proto3 JSON
//! rules, never wider: what it accepts it must read as reflection would.

use std::collections::HashMap;
use std::fmt::Display;
use std::hash::Hash;
use std::str::FromStr;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::ser::{Serialize, Serializer};
use serde_json::Value;

pub use super::field::{Field, FieldKind};
use super::message::JsonMessage;

/// The range of `google.protobuf.Timestamp` in JSON (0001-01-01 to 9999-12-31).
const TIMESTAMP_SECONDS: std::ops::RangeInclusive<i64> = -62_135_596_800..=253_402_300_799;

/// A message, through its generated [`JsonMessage::serialize_json`].
pub struct Message<'a, M>(pub &'a M);

impl<M: JsonMessage> Serialize for Message<'_, M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_json(serializer)
    }
}

/// A value written as a JSON string of its `Display` form: 64-bit integers.
pub struct Text<T>(pub T);

impl<T: Display> Serialize for Text<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

/// A float, with `"NaN"`, `"Infinity"` and `"-Infinity"` for the values JSON
/// numbers cannot spell.
pub struct Float<T>(pub T);

impl<T: Into<f64> + Copy + Serialize> Serialize for Float<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value: f64 = self.0.into();
        if value.is_finite() {
            self.0.serialize(serializer)
        } else if value.is_nan() {
            serializer.serialize_str("NaN")
        } else if value > 0.0 {
            serializer.serialize_str("Infinity")
        } else {
            serializer.serialize_str("-Infinity")
        }
    }
}

/// Bytes as standard base64 with padding.
pub struct Bytes<'a>(pub &'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&base64::display::Base64Display::new(self.0, &STANDARD))
    }
}

/// An enum value by its name, or by its number when the enum does not
/// declare it.
pub struct Enum(pub i32, pub Option<&'static str>);

impl Enum {
    /// The value `number` of the prost enum `E`, named by `E::as_str_name`.
    pub fn of<E: TryFrom<i32>>(number: i32, name: fn(&E) -> &'static str) -> Enum {
        Enum(number, E::try_from(number).ok().as_ref().map(name))
    }
}

impl Serialize for Enum {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.1 {
            Some(name) => serializer.serialize_str(name),
            None => serializer.serialize_i32(self.0),
        }
    }
}

/// A timestamp in RFC 3339 (`2026-11-23T21:54:36.5Z`).
pub struct Timestamp<'a>(pub &'a prost_types::Timestamp);

impl Serialize for Timestamp<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if !TIMESTAMP_SECONDS.contains(&self.0.seconds) {
            return Err(serde::ser::Error::custom("timestamp out of range"));
        }
        serializer.collect_str(self.0)
    }
}

/// A field mask as its paths in lowerCamelCase, joined by commas.
pub struct FieldMask<'a>(pub &'a prost_types::FieldMask);

impl Serialize for FieldMask<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = String::new();
        for path in &self.0.paths {
            if !out.is_empty() {
                out.push(',');
            }
            if !super::case::push_lower_camel_case(path, &mut out) {
                return Err(serde::ser::Error::custom(
                    "cannot roundtrip field name through camelcase",
                ));
            }
        }
        serializer.serialize_str(&out)
    }
}

/// A repeated field whose elements are written through `each`.
pub struct List<'a, T, W>(pub &'a [T], pub fn(&'a T) -> W);

impl<'a, T, W: Serialize> Serialize for List<'a, T, W> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(self.1))
    }
}

/// A map field, keys as strings in ascending order (so output is stable),
/// values written through `each`.
pub struct Map<'a, K, V, W>(pub &'a HashMap<K, V>, pub fn(&'a V) -> W);

impl<'a, K: Display + Ord, V, W: Serialize> Serialize for Map<'a, K, V, W> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut entries: Vec<_> = self.0.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        serializer.collect_map(
            entries
                .into_iter()
                .map(|(key, value)| (Text(key), (self.1)(value))),
        )
    }
}

/// A JSON string.
pub fn string(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

/// A JSON `true` or `false`.
pub fn boolean(value: &Value) -> Option<bool> {
    value.as_bool()
}

/// An integer of any width: a JSON integer in range, or a string of one
/// (how 64-bit integers are written).
pub fn integer<T>(value: &Value) -> Option<T>
where
    T: FromStr + TryFrom<i64> + TryFrom<u64>,
{
    match value {
        Value::Number(number) => match (number.as_i64(), number.as_u64()) {
            (Some(signed), _) => T::try_from(signed).ok(),
            (None, Some(unsigned)) => T::try_from(unsigned).ok(),
            (None, None) => None,
        },
        Value::String(text) => text.parse().ok(),
        _ => None,
    }
}

/// A `double` from a JSON number, or the string of a non-finite one.
pub fn double(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        _ => non_finite(value),
    }
}

/// A `float` as reflection reads it: an integer converted directly, any
/// other number rounded to the nearest `f32` when within its range.
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
pub fn float(value: &Value) -> Option<f32> {
    let Value::Number(number) = value else {
        return non_finite(value).map(|wide| wide as f32);
    };
    if let Some(integer) = number.as_i64() {
        return Some(integer as f32);
    }
    if let Some(integer) = number.as_u64() {
        return Some(integer as f32);
    }
    let wide = number.as_f64()?;
    (f64::from(f32::MIN)..=f64::from(f32::MAX))
        .contains(&wide)
        .then_some(wide as f32)
}

/// The strings canonical JSON writes for non-finite floats.
fn non_finite(value: &Value) -> Option<f64> {
    match value.as_str()? {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// `bytes` from standard base64 with padding.
pub fn bytes(value: &Value) -> Option<Vec<u8>> {
    STANDARD.decode(value.as_str()?).ok()
}

/// An enum value from its name, through the generated enum's
/// `from_str_name`, or its number (how values the enum does not declare
/// are written).
pub fn enumeration<E: Into<i32>>(value: &Value, from_name: fn(&str) -> Option<E>) -> Option<i32> {
    match value {
        Value::String(name) => from_name(name).map(Into::into),
        _ => i32::try_from(value.as_i64()?).ok(),
    }
}

/// A timestamp in RFC 3339, within the range JSON allows.
pub fn timestamp(value: &Value) -> Option<prost_types::Timestamp> {
    let timestamp: prost_types::Timestamp = value.as_str()?.parse().ok()?;
    TIMESTAMP_SECONDS
        .contains(&timestamp.seconds)
        .then_some(timestamp)
}

/// A field mask: comma-separated paths of lowerCamelCase names.
pub fn field_mask(value: &Value) -> Option<prost_types::FieldMask> {
    let paths = value
        .as_str()?
        .split(',')
        .filter(|path| !path.is_empty())
        .map(camel_to_snake)
        .collect::<Option<_>>()?;
    Some(prost_types::FieldMask { paths })
}

/// `fooBar.baz` → `foo_bar.baz`; `None` for a `_`, which lowerCamelCase
/// never holds.
fn camel_to_snake(path: &str) -> Option<String> {
    let mut out = String::with_capacity(path.len() + 4);
    for ch in path.chars() {
        match ch {
            '_' => return None,
            _ if ch.is_ascii_uppercase() => {
                out.push('_');
                out.push(ch.to_ascii_lowercase());
            }
            _ => out.push(ch),
        }
    }
    Some(out)
}

/// A message from a JSON object.
pub fn message<M: JsonMessage>(value: &Value) -> Option<M> {
    M::from_json_object(value.as_object()?)
}

/// A repeated field from a JSON array, each element through `each`.
pub fn list<T>(value: &Value, each: fn(&Value) -> Option<T>) -> Option<Vec<T>> {
    value.as_array()?.iter().map(each).collect()
}

/// A map field from a JSON object: each key through `key`, each value
/// through `each`.
pub fn map<K: Eq + Hash, V>(
    value: &Value,
    key: fn(&str) -> Option<K>,
    each: fn(&Value) -> Option<V>,
) -> Option<HashMap<K, V>> {
    value
        .as_object()?
        .iter()
        .map(|(name, value)| Some((key(name)?, each(value)?)))
        .collect()
}

/// A map key: strings as they are, integers and booleans from their text.
pub fn key<K: FromStr>(name: &str) -> Option<K> {
    name.parse().ok()
}
