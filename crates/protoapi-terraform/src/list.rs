//! A collection's list as a data source, `{prefix}_{collection}`
//! (`library_shelves`): the declared filters and the parent as optional
//! attributes, every matching item in `items`.

use serde_json::{Map, Value as Json};

use crate::diagnostics;
use crate::resource::{Calls, Outcome, set_path, set_variables};
use crate::schema::{Attr, Kind, Mode, PARENT, ResourceType};
use crate::state;
use crate::value::Value;

/// The most items one read gathers: past it, the filters should narrow the
/// list (the API's pages are read one after another, each held until the
/// last is in).
const MAX_ITEMS: usize = 10_000;

/// The attribute holding the items.
const ITEMS: &str = "items";

/// The list data source of `resource`, if it has a List method.
pub fn name(resource: &ResourceType, prefix: &str) -> Option<String> {
    resource.collection.list.as_ref()?;
    let plural = heck::ToSnakeCase::to_snake_case(resource.collection.id);
    Some(format!("{prefix}_{plural}"))
}

/// Its attributes: a filter per declared filter, the parent, the items.
pub fn attrs(resource: &ResourceType) -> Vec<Attr> {
    let list = resource
        .collection
        .list
        .as_ref()
        .expect("listed collections");
    let text = |name: &str, json: &str, description: String| Attr {
        name: name.to_owned(),
        json: json.to_owned(),
        kind: Kind::String,
        mode: Mode::Optional,
        replace: false,
        sensitive: false,
        description,
    };
    let mut attrs: Vec<Attr> = list
        .filters
        .iter()
        .map(|filter| {
            let short = filter.rsplit('.').next().unwrap_or(filter);
            text(short, filter, format!("Only items matching `{filter}`."))
        })
        .collect();
    attrs.push(text(
        PARENT,
        list.parent_query.unwrap_or("parent"),
        "Only items directly under this parent.".to_owned(),
    ));
    let items = resource
        .attrs
        .iter()
        .map(|attr| Attr {
            mode: Mode::Computed,
            replace: false,
            ..attr.clone()
        })
        .collect();
    attrs.push(Attr {
        name: ITEMS.to_owned(),
        json: ITEMS.to_owned(),
        kind: Kind::List(Box::new(Kind::Object(items))),
        mode: Mode::Computed,
        replace: false,
        sensitive: false,
        description: format!(
            "The {} found, in the API's order.",
            crate::schema::words(resource.collection.id)
        ),
    });
    attrs.sort_by(|a, b| a.name.cmp(&b.name));
    attrs
}

impl Calls<'_> {
    /// Every item `config`'s filters select.
    pub async fn list(&self, config: &Value) -> Outcome<Value> {
        let list = self
            .resource
            .collection
            .list
            .as_ref()
            .expect("listed collections");
        let mut request = Map::new();
        let mut found = Vec::new();
        for attr in attrs(self.resource) {
            let Some(value) = config.get(&attr.name).as_str() else {
                continue;
            };
            match (attr.name.as_str(), list.parent_query) {
                (PARENT, None) => set_variables(&mut request, list.action.route, value),
                _ => set_path(&mut request, &attr.json, value),
            }
        }
        let page_size = self.resource.collection.page_sizes.max;
        request.insert("pageSize".to_owned(), Json::from(page_size));
        loop {
            let page = self
                .call(list.action.route, request.clone(), "listing", "")
                .await?;
            let items = page.get(list.items).and_then(Json::as_array);
            for item in items.into_iter().flatten() {
                let key = item
                    .get(self.resource.collection.key_field())
                    .and_then(Json::as_str)
                    .unwrap_or_default();
                found.push(state::from_item(
                    self.resource,
                    item,
                    &state::parent_of(key),
                ));
            }
            if found.len() > MAX_ITEMS {
                return Err(vec![diagnostics::error(
                    format!("More than {MAX_ITEMS} {}", self.resource.collection.id),
                    "Narrow the list with its filters.",
                    &[],
                )]);
            }
            match page.get("nextPageToken").and_then(Json::as_str) {
                Some(token) if !token.is_empty() => {
                    request.insert("pageToken".to_owned(), Json::from(token));
                }
                _ => break,
            }
        }
        let mut state = config.clone();
        if let Value::Object(entries) = &mut state {
            entries.insert(ITEMS.to_owned(), Value::List(found));
        }
        Ok(state)
    }
}
