//! How items are keyed, named and linked on pages.

use serde_json::Value;

use super::paths::PREFIX;
use super::reply::encode;
use super::view::Link;
use protoapi_client::schema::{Collection, Keys};

/// The key of the item `key` lives under.
pub(super) fn parent_key<'a>(collection: &Collection, key: &'a str) -> Option<&'a str> {
    match collection.keys {
        Keys::Uidp => protoapi_core::uidp::parent(key),
        Keys::Names => protoapi_core::names::parent(key),
    }
}

pub(super) fn item_href(collection: &Collection, key: &str) -> String {
    format!("{PREFIX}{}/item/{}", collection.id, key_path(key))
}

/// A key as path segments (each percent-encoded, `/` kept).
pub(super) fn key_path(key: &str) -> String {
    key.split('/').map(encode).collect::<Vec<_>>().join("/")
}

pub(super) fn key_of(collection: &Collection, item: &Value) -> String {
    item[collection.key_field()]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// How an item is named on pages: its display name, title or (UIDP-keyed)
/// name, else its key.
pub(super) fn label(collection: &Collection, item: &Value) -> String {
    let names: &[&str] = match collection.keys {
        Keys::Uidp => &["displayName", "title", "name"],
        Keys::Names => &["displayName", "title"],
    };
    names
        .iter()
        .filter_map(|name| item[*name].as_str())
        .find(|text| !text.is_empty())
        .map_or_else(|| key_of(collection, item), str::to_owned)
}

pub(super) fn link_to(collection: &'static Collection, item: &Value) -> Link {
    Link {
        href: item_href(collection, &key_of(collection, item)),
        text: label(collection, item),
        id: collection.id,
    }
}

pub(super) fn item_href_after(collection: &Collection, key: &str, done: &str) -> String {
    format!("{}?done={done}", item_href(collection, key))
}
