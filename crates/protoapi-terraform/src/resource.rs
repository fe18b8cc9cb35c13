//! A resource's life through the API's standard methods: planned, created,
//! read, updated in place with a mask of exactly what changed and the etag
//! it was read with, deleted, imported.

use serde_json::{Map, Value as Json};

use protoapi_client::client::{Connection, Route};
use protoapi_core::error::{Code, Error};

use crate::diagnostics;
use crate::proto::Diagnostic;
use crate::schema::{ID, Mode, PARENT, ResourceType};
use crate::state;
use crate::value::Value;

/// The output-only fields every update changes, by the AIPs' standard
/// names: the others keep their values through an update's plan.
const CHANGED_BY_UPDATES: &[&str] = &["etag", "update_time"];

/// How many items of the same name an import names when it cannot choose.
const MATCHES_SHOWN: u32 = 10;

/// What a step answers: the value, or why it failed.
pub type Outcome<T> = Result<T, Vec<Diagnostic>>;

/// A plan: the state Terraform will apply and the attributes whose change
/// replaces the item.
pub struct Plan {
    pub planned: Value,
    pub replace: Vec<String>,
}

/// Plans a create (`prior` null), an update or a delete (`proposed` null)
/// of the item `config` describes.
pub fn plan(resource: &ResourceType, prior: &Value, proposed: Value, config: &Value) -> Plan {
    if proposed.is_null() {
        return Plan {
            planned: proposed,
            replace: Vec::new(),
        };
    }
    let mut planned = proposed;
    if prior.is_null() {
        // What the server fills in: output-only fields, and optional ones
        // the configuration leaves out.
        state::fill_unknown(&resource.attrs, &mut planned, &|attr| {
            attr.mode != Mode::Required
        });
        return Plan {
            planned,
            replace: Vec::new(),
        };
    }
    state::keep_prior(&resource.attrs, &mut planned, prior, config);
    let written = state::changed(&resource.attrs, prior, &planned);
    let replace = written
        .iter()
        .filter(|attr| attr.replace)
        .map(|attr| attr.name.clone())
        .collect();
    if !written.is_empty() {
        // What an update changes of the item besides what it writes: its
        // etag (AIP-154) and its update time (AIP-148).
        if let Value::Object(entries) = &mut planned {
            for attr in &resource.attrs {
                if attr.mode == Mode::Computed && CHANGED_BY_UPDATES.contains(&attr.name.as_str()) {
                    entries.insert(attr.name.clone(), Value::Unknown);
                }
            }
        }
    }
    Plan { planned, replace }
}

/// The API calls of one resource type over `connection`.
pub struct Calls<'a> {
    pub resource: &'a ResourceType,
    pub connection: &'a Connection,
}

impl Calls<'_> {
    /// Creates the item `planned` describes; its state.
    pub async fn create(&self, planned: &Value) -> Outcome<Value> {
        let collection = self.resource.collection;
        let create = collection
            .create
            .as_ref()
            .expect("resource types can be created");
        let parent = planned.get(PARENT).as_str().unwrap_or_default().to_owned();
        let created_id = create.id;
        let item = state::to_item(&self.resource.attrs, planned, |attr| {
            attr.mode != Mode::Computed
                && attr.name != PARENT
                && Some(attr.json.as_str()) != created_id
        });
        let mut request = Map::new();
        request.insert(camel(create.body), Json::Object(item));
        if let Some(id) = created_id {
            let chosen = self.resource.attrs.iter().find(|a| a.json == id);
            if let Some(value) = chosen.and_then(|a| planned.get(&a.name).as_str()) {
                request.insert(id.to_owned(), Json::from(value));
            }
        }
        set_variables(&mut request, create.action.route, &parent);
        let created = self
            .call(create.action.route, request, "creating", create.body)
            .await?;
        Ok(state::from_item(self.resource, &created, &parent))
    }

    /// The item's current state; null when it no longer exists.
    pub async fn read(&self, key: &str, parent: &str) -> Outcome<Value> {
        let get = self
            .resource
            .collection
            .get
            .as_ref()
            .expect("resource types can be read");
        let mut request = Map::new();
        set_variables(&mut request, get.route, key);
        match self.call_raw(get.route, request).await {
            Ok(item) => Ok(state::from_item(self.resource, &item, parent)),
            Err(error) if error.code() == Code::NotFound => Ok(Value::Null),
            Err(error) => Err(diagnostics::from_api(&self.doing("reading"), &error, "")),
        }
    }

    /// The item `id` names, for `terraform import`: its key, or a name
    /// that exactly one item the caller can see has (through the list's
    /// `name` filter, when it declares one).
    pub async fn import(&self, id: &str) -> Outcome<Value> {
        let collection = self.resource.collection;
        let key = match collection.is_key(id) {
            true => id.to_owned(),
            false => self.key_named(id).await?,
        };
        let found = self.read(&key, &state::parent_of(&key)).await?;
        if found.is_null() {
            return Err(vec![diagnostics::error(
                format!("Cannot import {}", self.resource.name),
                format!("No item `{id}` exists, or the provider's credentials cannot see it."),
                &[],
            )]);
        }
        Ok(found)
    }

    /// The key of the one item named `name`.
    async fn key_named(&self, name: &str) -> Outcome<String> {
        let collection = self.resource.collection;
        let cannot = |detail: String| {
            vec![diagnostics::error(
                format!("Cannot import {}", self.resource.name),
                detail,
                &[],
            )]
        };
        let Some(list) = collection
            .list
            .as_ref()
            .filter(|l| l.filters.contains(&"name"))
        else {
            return Err(cannot(format!(
                "`{name}` is not a {} key, and the list has no `name` filter to look it up by.",
                collection.key_field()
            )));
        };
        let mut request = Map::new();
        request.insert("name".to_owned(), Json::from(name));
        request.insert("pageSize".to_owned(), Json::from(MATCHES_SHOWN + 1));
        let page = self.call(list.action.route, request, "listing", "").await?;
        let keys: Vec<&str> = page
            .get(list.items)
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|item| item.get(collection.key_field())?.as_str())
            .collect();
        match keys.as_slice() {
            [key] => Ok((*key).to_owned()),
            [] => Err(cannot(format!(
                "No item is named `{name}`, or the provider's credentials cannot see it."
            ))),
            _ => Err(cannot(format!(
                "Items named `{name}` (import one by its {}): {}{}.",
                collection.key_field(),
                keys[..keys.len().min(MATCHES_SHOWN as usize)].join(", "),
                if keys.len() > MATCHES_SHOWN as usize {
                    ", ..."
                } else {
                    ""
                }
            ))),
        }
    }

    /// Changes what differs between `prior` and `planned`, sending the etag
    /// `prior` was read with.
    pub async fn update(&self, prior: &Value, planned: &Value) -> Outcome<Value> {
        let collection = self.resource.collection;
        let Some(update) = collection.update.as_ref() else {
            return Err(vec![diagnostics::error(
                format!("{} cannot be changed in place", self.resource.name),
                "The API has no Update method for it: change it by replacing it.",
                &[],
            )]);
        };
        let changed = state::changed(&self.resource.attrs, prior, planned);
        let key = prior.get(ID).as_str().unwrap_or_default().to_owned();
        let mut item = state::to_item(&self.resource.attrs, planned, |attr| {
            changed.iter().any(|c| c.name == attr.name)
        });
        if let Some(etag) = prior.get("etag").as_str() {
            item.insert("etag".to_owned(), Json::String(etag.to_owned()));
        }
        let mut request = Map::new();
        let body = match update.body {
            "" => {
                request = item;
                ""
            }
            body => {
                request.insert(camel(body), Json::Object(item));
                body
            }
        };
        if update.mask {
            let mask: Vec<&str> = changed.iter().map(|attr| attr.json.as_str()).collect();
            request.insert("updateMask".to_owned(), Json::String(mask.join(",")));
        }
        set_variables(&mut request, update.action.route, &key);
        let updated = self
            .call(update.action.route, request, "updating", body)
            .await?;
        let parent = prior.get(PARENT).as_str().unwrap_or_default().to_owned();
        Ok(state::from_item(self.resource, &updated, &parent))
    }

    /// Deletes the item `prior` describes, if its etag still matches.
    pub async fn delete(&self, prior: &Value) -> Outcome<()> {
        let delete = self
            .resource
            .collection
            .delete
            .as_ref()
            .expect("resource types can be deleted");
        let key = prior.get(ID).as_str().unwrap_or_default().to_owned();
        let mut request = Map::new();
        if delete.etag
            && let Some(etag) = prior.get("etag").as_str()
        {
            request.insert("etag".to_owned(), Json::String(etag.to_owned()));
        }
        set_variables(&mut request, delete.action.route, &key);
        match self.call_raw(delete.action.route, request).await {
            Ok(_) => Ok(()),
            Err(error) if error.code() == Code::NotFound => Ok(()),
            Err(error) => Err(diagnostics::from_api(&self.doing("deleting"), &error, "")),
        }
    }

    pub(crate) async fn call(
        &self,
        route: &Route,
        request: Map<String, Json>,
        doing: &str,
        body: &str,
    ) -> Outcome<Json> {
        self.call_raw(route, request)
            .await
            .map_err(|error| diagnostics::from_api(&self.doing(doing), &error, &camel(body)))
    }

    async fn call_raw(&self, route: &Route, request: Map<String, Json>) -> Result<Json, Error> {
        self.connection.call_json(route, request).await
    }

    fn doing(&self, what: &str) -> String {
        format!("Error {what} {}", self.resource.name)
    }
}

/// Sets every variable of `route`'s path to `value` (the key of the item,
/// or the parent of a create).
pub(crate) fn set_variables(request: &mut Map<String, Json>, route: &Route, value: &str) {
    let Some(rule) = &route.http else {
        return;
    };
    for variable in rule.template.variables {
        set_path(request, variable.field, value);
    }
}

/// Sets the field at `path` (proto names, `uidp.children_of`) to `value`,
/// spelled as proto3 JSON spells the fields.
pub(crate) fn set_path(request: &mut Map<String, Json>, path: &str, value: &str) {
    let mut object = request;
    let parts: Vec<String> = path.split('.').map(camel).collect();
    let (last, path) = parts.split_last().expect("a field path has a part");
    for part in path {
        let entry = object
            .entry(part.clone())
            .or_insert_with(|| Json::Object(Map::new()));
        if !entry.is_object() {
            *entry = Json::Object(Map::new());
        }
        object = entry.as_object_mut().expect("made an object above");
    }
    object.insert(last.clone(), Json::String(value.to_owned()));
}

fn camel(field: &str) -> String {
    protoapi_core::json::lower_camel_case(field)
}
