//! Between an item's proto3 JSON and its Terraform value, attribute by
//! attribute of its [`ResourceType`].

use heck::ToSnakeCase;
use serde_json::{Map, Value as Json};

use crate::schema::{Attr, ID, Kind, Mode, PARENT, ResourceType};
use crate::value::Value;

/// The state of the item `item` (its JSON), created under `parent`.
pub fn from_item(resource: &ResourceType, item: &Json, parent: &str) -> Value {
    let mut state = object(&resource.attrs, item);
    if let Value::Object(entries) = &mut state {
        let key = item
            .get(resource.collection.key_field())
            .and_then(Json::as_str)
            .unwrap_or_default();
        entries.insert(ID.to_owned(), Value::String(key.to_owned()));
        entries.insert(PARENT.to_owned(), Value::String(parent.to_owned()));
        if let Some(id) = crate::schema::created_id(resource.collection) {
            let last = key.rsplit('/').next().unwrap_or_default();
            entries.insert(id.to_snake_case(), Value::String(last.to_owned()));
        }
    }
    state
}

/// The parent of the item keyed `key`: the uid without its last segment,
/// or the resource name without its last collection and id.
pub fn parent_of(key: &str) -> String {
    let cut = match key.contains('/') && !protoapi_core::uidp::is_valid(key) {
        true => key.rsplitn(3, '/').nth(2),
        false => key.rsplit_once('/').map(|(parent, _)| parent),
    };
    cut.unwrap_or_default().to_owned()
}

fn object(attrs: &[Attr], item: &Json) -> Value {
    Value::Object(
        attrs
            .iter()
            .map(|attr| {
                let value = item
                    .get(&attr.json)
                    .map_or(Value::Null, |v| from_json(&attr.kind, v));
                (attr.name.clone(), value)
            })
            .collect(),
    )
}

fn from_json(kind: &Kind, json: &Json) -> Value {
    match (kind, json) {
        (_, Json::Null) => Value::Null,
        (Kind::Bool, Json::Bool(b)) => Value::Bool(*b),
        (Kind::Number, Json::Number(n)) => Value::Number(n.clone()),
        (Kind::Number, Json::String(text)) => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        (Kind::List(item), Json::Array(items)) => {
            Value::List(items.iter().map(|v| from_json(item, v)).collect())
        }
        (Kind::Map(value), Json::Object(entries)) => Value::Object(
            entries
                .iter()
                .map(|(key, v)| (key.clone(), from_json(value, v)))
                .collect(),
        ),
        (Kind::Object(attrs), Json::Object(_)) => object(attrs, json),
        (_, Json::String(text)) => Value::String(text.clone()),
        // Any other JSON (a `google.protobuf.Struct`, say) as its text.
        (_, other) => Value::String(other.to_string()),
    }
}

/// The JSON of the attributes of `state` that `keep` accepts and that are
/// set and known, by their JSON names.
pub fn to_item(attrs: &[Attr], state: &Value, keep: impl Fn(&Attr) -> bool) -> Map<String, Json> {
    attrs
        .iter()
        .filter(|attr| keep(attr))
        .filter_map(|attr| {
            let json = to_json(&attr.kind, state.get(&attr.name))?;
            Some((attr.json.clone(), json))
        })
        .collect()
}

fn to_json(kind: &Kind, value: &Value) -> Option<Json> {
    Some(match (kind, value) {
        (_, Value::Null | Value::Unknown) => return None,
        (Kind::Object(attrs), Value::Object(_)) => Json::Object(to_item(attrs, value, |_| true)),
        (Kind::Map(inner), Value::Object(entries)) => Json::Object(
            entries
                .iter()
                .filter_map(|(key, v)| Some((key.clone(), to_json(inner, v)?)))
                .collect(),
        ),
        (Kind::List(inner), Value::List(items)) => {
            Json::Array(items.iter().filter_map(|v| to_json(inner, v)).collect())
        }
        (_, Value::Bool(b)) => Json::Bool(*b),
        (_, Value::Number(n)) => Json::Number(n.clone()),
        (_, Value::String(text)) => Json::String(text.clone()),
        (_, Value::List(_) | Value::Object(_)) => return None,
    })
}

/// `state` with every attribute `unknown` picks set to unknown where it is
/// null (nested attributes included), as a plan leaves what the server
/// will fill in.
pub fn fill_unknown(attrs: &[Attr], state: &mut Value, unknown: &impl Fn(&Attr) -> bool) {
    let Value::Object(entries) = state else {
        return;
    };
    for attr in attrs {
        let entry = entries.entry(attr.name.clone()).or_insert(Value::Null);
        match (&attr.kind, &mut *entry) {
            (_, Value::Null) if unknown(attr) => *entry = Value::Unknown,
            (Kind::Object(inner), Value::Object(_)) => fill_unknown(inner, entry, unknown),
            _ => {}
        }
    }
}

/// `planned` with every optional attribute the configuration leaves out
/// (nested ones included) at its `prior` value: what a computed attribute
/// keeps when nobody sets it. (Terraform proposes so for top-level
/// attributes, and from 1.3 for nested ones.)
pub fn keep_prior(attrs: &[Attr], planned: &mut Value, prior: &Value, config: &Value) {
    let Value::Object(entries) = planned else {
        return;
    };
    for attr in attrs {
        let (in_config, in_prior) = (config.get(&attr.name), prior.get(&attr.name));
        let entry = entries.entry(attr.name.clone()).or_insert(Value::Null);
        match (&attr.kind, &mut *entry) {
            (_, Value::Null) if attr.mode == Mode::Optional && in_config.is_null() => {
                *entry = in_prior.clone();
            }
            (Kind::Object(inner), Value::Object(_)) => {
                keep_prior(inner, entry, in_prior, in_config)
            }
            _ => {}
        }
    }
}

/// `value` with exactly the attributes of `attrs` (nested ones included):
/// those it lacks null, those it has that `attrs` does not name left out.
pub fn conform(attrs: &[Attr], value: Value) -> Value {
    let Value::Object(mut entries) = value else {
        return value;
    };
    Value::Object(
        attrs
            .iter()
            .map(|attr| {
                let value = entries.remove(&attr.name).unwrap_or(Value::Null);
                let value = match (&attr.kind, value) {
                    (Kind::Object(inner), value) => conform(inner, value),
                    (Kind::List(item), Value::List(items)) => match &**item {
                        Kind::Object(inner) => {
                            Value::List(items.into_iter().map(|v| conform(inner, v)).collect())
                        }
                        _ => Value::List(items),
                    },
                    (_, value) => value,
                };
                (attr.name.clone(), value)
            })
            .collect(),
    )
}

/// The attributes a client writes whose values differ between `a` and `b`
/// (computed ones are the server's).
pub fn changed<'a>(attrs: &'a [Attr], a: &Value, b: &Value) -> Vec<&'a Attr> {
    attrs
        .iter()
        .filter(|attr| attr.mode != Mode::Computed && a.get(&attr.name) != b.get(&attr.name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_of_an_earlier_schema_takes_the_current_attributes() {
        let attr = |name: &str, kind: Kind| Attr {
            name: name.to_owned(),
            json: name.to_owned(),
            kind,
            mode: Mode::Optional,
            replace: false,
            sensitive: false,
            description: String::new(),
        };
        let attrs = [
            attr("name", Kind::String),
            attr("limits", Kind::Object(vec![attr("max", Kind::Number)])),
        ];
        let old =
            crate::value::from_json(&serde_json::json!({"name": "a", "gone": true, "limits": {}}));
        let expected =
            crate::value::from_json(&serde_json::json!({"name": "a", "limits": {"max": null}}));
        assert_eq!(conform(&attrs, old), expected);
    }

    #[test]
    fn parents_of_uids_and_names() {
        let org = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(parent_of(org), "");
        assert_eq!(parent_of(&format!("{org}/0123456789abcdef")), org);
        assert_eq!(parent_of("shelves/1/books/2"), "shelves/1");
        assert_eq!(parent_of("shelves/1"), "");
    }
}
