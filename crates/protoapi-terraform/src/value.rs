//! Terraform's values as they cross the plugin protocol: MessagePack, with
//! extension type 0 for a value not known until apply, and the same shapes
//! as JSON (objects and maps as maps with string keys, lists as arrays).

use std::collections::BTreeMap;

use rmpv::Value as Pack;

/// One value of a resource's schema.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    /// Known only after apply.
    Unknown,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    List(Vec<Value>),
    /// An object's attributes, or a map's entries.
    Object(BTreeMap<String, Value>),
}

/// The MessagePack extension type Terraform marks unknown values with.
const UNKNOWN: i8 = 0;

impl Value {
    /// The value `bytes` encode (empty bytes: null).
    pub fn decode(bytes: &[u8]) -> Result<Value, String> {
        if bytes.is_empty() {
            return Ok(Value::Null);
        }
        let pack = rmpv::decode::read_value(&mut &bytes[..])
            .map_err(|e| format!("not a MessagePack value: {e}"))?;
        Ok(Value::from_pack(pack))
    }

    /// The MessagePack encoding.
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, &self.to_pack())
            .expect("writing to a vector does not fail");
        bytes
    }

    fn from_pack(pack: Pack) -> Value {
        match pack {
            Pack::Nil => Value::Null,
            Pack::Boolean(b) => Value::Bool(b),
            Pack::Integer(i) => Value::Number(match (i.as_i64(), i.as_u64()) {
                (Some(i), _) => i.into(),
                (None, Some(u)) => u.into(),
                _ => 0.into(),
            }),
            Pack::F32(f) => number(f64::from(f)),
            Pack::F64(f) => number(f),
            // cty writes numbers that do not fit a float as their text.
            Pack::String(text) => Value::String(text.into_str().unwrap_or_default()),
            Pack::Binary(bytes) => Value::String(String::from_utf8_lossy(&bytes).into_owned()),
            Pack::Array(items) => Value::List(items.into_iter().map(Value::from_pack).collect()),
            Pack::Map(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| {
                        let key = match key {
                            Pack::String(key) => key.into_str().unwrap_or_default(),
                            other => other.to_string(),
                        };
                        (key, Value::from_pack(value))
                    })
                    .collect(),
            ),
            Pack::Ext(UNKNOWN, _) => Value::Unknown,
            Pack::Ext(..) => Value::Unknown,
        }
    }

    fn to_pack(&self) -> Pack {
        match self {
            Value::Null => Pack::Nil,
            Value::Unknown => Pack::Ext(UNKNOWN, vec![0]),
            Value::Bool(b) => Pack::Boolean(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => Pack::from(i),
                (None, Some(u), _) => Pack::from(u),
                (_, _, Some(f)) => Pack::F64(f),
                _ => Pack::Nil,
            },
            Value::String(text) => Pack::from(text.as_str()),
            Value::List(items) => Pack::Array(items.iter().map(Value::to_pack).collect()),
            Value::Object(entries) => Pack::Map(
                entries
                    .iter()
                    .map(|(key, value)| (Pack::from(key.as_str()), value.to_pack()))
                    .collect(),
            ),
        }
    }

    /// The attribute `name` of an object (null when absent or not an object).
    pub fn get(&self, name: &str) -> &Value {
        match self {
            Value::Object(entries) => entries.get(name).unwrap_or(&Value::Null),
            _ => &Value::Null,
        }
    }

    /// The text of a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(text) => Some(text),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

/// A value given as JSON (older states): no unknowns in it.
pub fn from_json(json: &serde_json::Value) -> Value {
    use serde_json::Value as Json;
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => Value::Number(n.clone()),
        Json::String(text) => Value::String(text.clone()),
        Json::Array(items) => Value::List(items.iter().map(from_json).collect()),
        Json::Object(entries) => Value::Object(
            entries
                .iter()
                .map(|(key, value)| (key.clone(), from_json(value)))
                .collect(),
        ),
    }
}

fn number(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_survive_the_round_trip_unknowns_included() {
        let value = Value::Object(BTreeMap::from([
            ("name".to_owned(), Value::String("acme".to_owned())),
            ("uid".to_owned(), Value::Unknown),
            ("count".to_owned(), Value::Number(5.into())),
            (
                "ratio".to_owned(),
                Value::Number(serde_json::Number::from_f64(0.5).unwrap()),
            ),
            (
                "tags".to_owned(),
                Value::List(vec![Value::Bool(true), Value::Null]),
            ),
        ]));
        let decoded = Value::decode(&value.encode()).unwrap();
        assert_eq!(decoded, value);
        assert_eq!(decoded.get("name").as_str(), Some("acme"));
    }

    #[test]
    fn an_unknown_is_extension_zero() {
        // cty's encoding of an unknown value: fixext1, type 0, one zero byte.
        assert_eq!(Value::Unknown.encode(), vec![0xd4, 0x00, 0x00]);
        assert_eq!(Value::decode(&[0xd4, 0x00, 0x00]).unwrap(), Value::Unknown);
        assert_eq!(Value::decode(&[]).unwrap(), Value::Null);
    }
}
