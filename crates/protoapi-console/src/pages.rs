//! Reading pages: home and items, and what every page shares (API calls,
//! breadcrumbs, failures, rendering).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::Response;
use http::{Method, StatusCode};
use serde_json::Value;

use super::call::Failure;
use super::items::{item_href, key_of, key_path, label, link_to, parent_key};
use super::names::Names;
use super::paths::PREFIX;
use super::reply::{encode, query_string, render};
use super::shared::Shared;
use super::view::{Child, Chrome, Home, ItemPage, Link, Roots, Shown};
use super::visit::Visit;
use protoapi_client::schema::{Collection, Keys, Schema};
use protoapi_core::context::Held;

/// Items of a child collection shown on its parent's page.
const CHILD_PREVIEW: u32 = 20;
/// Ancestors shown in breadcrumbs at most.
pub(super) const MAX_CRUMBS: usize = 32;

impl Shared {
    pub(super) fn chrome(&self, visit: &Visit, title: impl Into<String>) -> Chrome {
        Chrome {
            title: title.into(),
            api: self.schema.title,
            prefix: PREFIX,
            csrf: visit.session.csrf.clone(),
            badge: visit.badge.clone(),
            ..Chrome::default()
        }
    }

    pub(super) async fn call(
        &self,
        visit: &Visit,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, Failure> {
        self.api.call(&visit.asker, method, path, body).await
    }

    /// The capabilities the caller holds on `target` (none when they cannot
    /// be read), asked once per page for every action it offers there.
    pub(super) async fn held(&self, visit: &Visit, target: &str) -> Held {
        self.authorizer
            .held(&visit.caller, target)
            .await
            .unwrap_or(Held::Only(Default::default()))
    }

    /// The collection with id `id`.
    pub(super) fn collection(&self, id: &str) -> Result<&'static Collection, Failure> {
        let missing = || {
            Failure::new(
                StatusCode::NOT_FOUND,
                "NOT_FOUND",
                format!("no collection `{}`", protoapi_core::error::excerpt(id)),
            )
        };
        self.schema.collection(id).ok_or_else(missing)
    }

    /// The collection with id `id` and its item `key`, refused (before any
    /// call of the API, whatever the key's size) when `key` cannot name one.
    pub(super) fn keyed(&self, id: &str, key: &str) -> Result<&'static Collection, Failure> {
        let collection = self.collection(id)?;
        if collection.is_key(key) {
            return Ok(collection);
        }
        let message = format!(
            "`{}` is not the key of a {}",
            protoapi_core::error::excerpt(key),
            collection.singular
        );
        Err(Failure::new(StatusCode::NOT_FOUND, "NOT_FOUND", message))
    }

    /// INVALID_ARGUMENT, before any call of the API, for a `parent` no item
    /// of `collection` can live under: breadcrumbs and reference choices
    /// then walk at most the ancestors of a valid key.
    pub(super) fn check_parent(
        &self,
        collection: &Collection,
        parent: &str,
    ) -> Result<(), Failure> {
        if collection.is_parent(parent) {
            return Ok(());
        }
        let message = format!(
            "`{}` is not a parent of {}",
            protoapi_core::error::excerpt(parent),
            collection.id
        );
        Err(Failure::new(
            StatusCode::BAD_REQUEST,
            "INVALID_ARGUMENT",
            message,
        ))
    }

    /// `failure` with its PreconditionFailure told in the console's words:
    /// a dependent item of a collection it knows is named by its kind and
    /// key (`A group (…) still depends on it: delete it first`).
    pub(super) fn explained(&self, mut failure: Failure) -> Failure {
        for why in &mut failure.preconditions {
            let dependent = why
                .description
                .strip_suffix(" depends on this resource")
                .and_then(|t| self.schema.of_type(t));
            if let (Some(dependent), "DEPENDENT_RESOURCE") = (dependent, why.kind.as_str()) {
                why.words = format!(
                    "A {} ({}) still depends on it: delete it first.",
                    dependent.singular, why.subject
                );
            }
        }
        failure
    }

    /// A page showing only `failure`.
    pub(super) fn failure(&self, visit: &Visit, failure: Failure) -> Response {
        let status = failure.status;
        let mut chrome = self.chrome(visit, failure.code.clone());
        chrome.error = Some(self.explained(failure));
        render(
            status,
            &super::view::Message {
                chrome,
                back: PREFIX.to_owned(),
            },
        )
    }

    /// The GET of one item.
    pub(super) async fn get_item(
        &self,
        visit: &Visit,
        collection: &Collection,
        key: &str,
    ) -> Result<Value, Failure> {
        let get = collection.get.ok_or_else(|| {
            Failure::new(
                StatusCode::NOT_FOUND,
                "NOT_FOUND",
                "items of this collection cannot be read",
            )
        })?;
        let rule = get.rule().ok_or_else(Failure::grpc_only)?;
        let path = rule.template.expand(|_| key.to_owned());
        self.call(visit, Method::GET, &path, None).await
    }

    /// Breadcrumbs: the home page, then each ancestor of `key`, outermost first.
    pub(super) async fn crumbs(
        &self,
        visit: &Visit,
        collection: &Collection,
        key: &str,
    ) -> Vec<Link> {
        let mut ancestors = Vec::new();
        let (mut parent_type, mut current) = (collection.parent_type, parent_key(collection, key));
        while let (Some(kind), Some(parent)) = (parent_type, current) {
            let Some(owner) = self.schema.of_type(kind) else {
                break;
            };
            if ancestors.len() == MAX_CRUMBS || parent.is_empty() {
                break;
            }
            let text = match self.get_item(visit, owner, parent).await {
                Ok(item) => label(owner, &item),
                Err(_) => parent.to_owned(),
            };
            ancestors.push(Link {
                href: item_href(owner, parent),
                text,
                id: owner.id,
            });
            parent_type = owner.parent_type;
            current = parent_key(owner, parent);
        }
        ancestors.push(Link {
            href: PREFIX.to_owned(),
            text: "Home".to_owned(),
            id: "",
        });
        ancestors.reverse();
        ancestors
    }
}

impl Shared {
    /// Breadcrumbs to the item `key` itself, named `text` (for its edit and
    /// delete pages).
    pub(super) async fn crumbs_through(
        &self,
        visit: &Visit,
        collection: &Collection,
        key: &str,
        text: String,
    ) -> Vec<Link> {
        let mut crumbs = self.crumbs(visit, collection, key).await;
        crumbs.push(Link {
            href: item_href(collection, key),
            text,
            id: collection.id,
        });
        crumbs
    }

    /// Breadcrumbs to `parent`, where items of `collection` live: its
    /// ancestors, then itself (none at the top level).
    pub(super) async fn crumbs_to(
        &self,
        visit: &Visit,
        collection: &Collection,
        parent: &str,
    ) -> Vec<Link> {
        let Some(owner) = collection.parent_type.and_then(|t| self.schema.of_type(t)) else {
            return Vec::new();
        };
        if parent.is_empty() {
            return Vec::new();
        }
        let mut crumbs = self.crumbs(visit, owner, parent).await;
        let text = match self.get_item(visit, owner, parent).await {
            Ok(item) => label(owner, &item),
            Err(_) => parent.to_owned(),
        };
        crumbs.push(Link {
            href: item_href(owner, parent),
            text,
            id: owner.id,
        });
        crumbs
    }
}

pub(super) async fn home(State(shared): State<Arc<Shared>>, visit: Visit) -> Response {
    let listed = || {
        shared
            .schema
            .collections
            .iter()
            .filter(|c| c.list.is_some())
    };
    let collections = listed()
        .map(|c| Link {
            href: format!("{PREFIX}{}", c.id),
            text: crate::words::collection(c),
            id: c.id,
        })
        .collect();
    let mut roots = Vec::new();
    for collection in
        listed().filter(|c| c.parent_type.is_none() || c.parent_type == Some(c.resource_type))
    {
        let items = shared.tops(&visit, collection).await;
        let items = items.iter().map(|item| link_to(collection, item)).collect();
        roots.push(Roots {
            title: crate::words::collection(collection),
            items,
        });
    }
    let chrome = shared.chrome(&visit, shared.schema.title);
    render(
        StatusCode::OK,
        &Home {
            chrome,
            roots,
            collections,
        },
    )
}

impl Shared {
    /// The highest items of `collection` the caller can see: its top level
    /// (`uidp.in_root`, where declared), or, for a caller who sees none of
    /// it (bound further down), the first page of what it sees without
    /// those whose parent is on that page too.
    pub(super) async fn tops(&self, visit: &Visit, collection: &Collection) -> Vec<Value> {
        let query = root_query(collection);
        let items = match self.list_page(visit, collection, "", &query).await {
            Ok((items, _, _)) => items,
            Err(_) => Vec::new(),
        };
        let in_root = collection.list.is_some_and(|l| l.in_root);
        if !items.is_empty() || !in_root {
            return items;
        }
        let query = [(
            "pageSize".to_owned(),
            collection.page_sizes.default.to_string(),
        )];
        let Ok((visible, _, _)) = self.list_page(visit, collection, "", &query).await else {
            return Vec::new();
        };
        let keys: Vec<String> = visible
            .iter()
            .map(|item| key_of(collection, item))
            .collect();
        visible
            .into_iter()
            .filter(|item| {
                let key = key_of(collection, item);
                parent_key(collection, &key).is_none_or(|parent| !keys.iter().any(|k| k == parent))
            })
            .collect()
    }
}

/// The query listing a collection's top-level items: `uidp.in_root` when
/// declared.
fn root_query(collection: &Collection) -> Vec<(String, String)> {
    let in_root = collection.list.is_some_and(|list| list.in_root);
    let mut query = vec![(
        "pageSize".to_owned(),
        collection.page_sizes.default.to_string(),
    )];
    if in_root {
        query.push(("uidp.in_root".to_owned(), "true".to_owned()));
    }
    query
}

impl Shared {
    /// One page of `collection` under `parent` (any when empty) with
    /// `query` (page size, token, order, filters): its items, next page
    /// token and total.
    pub(super) async fn list_page(
        &self,
        visit: &Visit,
        collection: &Collection,
        parent: &str,
        query: &[(String, String)],
    ) -> Result<(Vec<Value>, String, Option<String>), Failure> {
        let list = collection.list.ok_or_else(|| {
            Failure::new(
                StatusCode::NOT_FOUND,
                "NOT_FOUND",
                "this collection cannot be listed",
            )
        })?;
        let any = collection.any_parent();
        let parent = if parent.is_empty() {
            any.as_str()
        } else {
            parent
        };
        let rule = list.action.rule().ok_or_else(Failure::grpc_only)?;
        let mut path = rule.template.expand(|_| parent.to_owned());
        let scope = list
            .parent_query
            .filter(|_| !parent.is_empty())
            .map(|name| (name, parent));
        let params = query_string(
            scope
                .into_iter()
                .chain(query.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
        );
        if !params.is_empty() {
            path = format!("{path}?{params}");
        }
        let page = self.call(visit, Method::GET, &path, None).await?;
        let items = page[list.items].as_array().cloned().unwrap_or_default();
        let next = page["nextPageToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let total = list.total.map(|field| match &page[field] {
            Value::Null => "0".to_owned(),
            value => super::form::display(value, "text"),
        });
        Ok((items, next, total))
    }
}

/// Whether `held` allows `capability` (any caller may use a method that
/// names none; the API decides again either way).
pub(super) fn allows(held: &Held, capability: Option<&str>) -> bool {
    match (held, capability) {
        (_, None) | (Held::All, _) => true,
        (Held::Only(held), Some(capability)) => held.contains(capability),
    }
}

/// Whether the caller, holding `held` at `parent`, may create items of
/// `collection` there (a UIDP-keyed item at the top level: the
/// administrator only).
pub(super) fn may_create(
    visit: &Visit,
    held: &Held,
    collection: &Collection,
    capability: Option<&str>,
    parent: &str,
) -> bool {
    if parent.is_empty() && collection.keys == Keys::Uidp {
        return visit.caller.is_admin();
    }
    allows(held, capability)
}

/// What a write that leads to an item's page did (`?done=saved`): only
/// these words are shown, whatever the query says.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct Done {
    done: Option<String>,
}

impl Done {
    fn said(&self) -> Option<&'static str> {
        match self.done.as_deref()? {
            "created" => Some("Created."),
            "saved" => Some("Saved."),
            "deleted" => Some("Deleted."),
            _ => None,
        }
    }
}

/// An item's page after a write: `?done=created`, `saved` or `deleted`.
pub(super) async fn item(
    State(shared): State<Arc<Shared>>,
    Path((id, key)): Path<(String, String)>,
    axum::extract::Query(done): axum::extract::Query<Done>,
    visit: Visit,
) -> Response {
    let collection = match shared.keyed(&id, &key) {
        Ok(collection) => collection,
        Err(failure) => return shared.failure(&visit, failure),
    };
    let item = match shared.get_item(&visit, collection, &key).await {
        Ok(item) => item,
        Err(failure) => return shared.failure(&visit, failure),
    };
    let mut chrome = shared.chrome(&visit, label(collection, &item));
    chrome.crumbs = shared.crumbs(&visit, collection, &key).await;
    chrome.done = done.said();
    let mut names = Names::new(&shared, &visit);
    let fields = shown_fields(&mut names, shared.schema, collection, &item).await;
    let holders = shared.holders(&visit, &mut names, collection, &key).await;
    let related = shared.related(&visit, &mut names, collection, &key).await;
    let mut children = Vec::new();
    // Items like this one first (the tree), then the other collections.
    let mut under: Vec<_> = shared
        .schema
        .children_of(collection.resource_type)
        .filter(|c| c.list.is_some())
        .collect();
    under.sort_by_key(|c| c.resource_type != collection.resource_type);
    let held = shared.held(&visit, &key).await;
    for child in under {
        children.push(shared.child(&visit, &held, child, &key).await);
    }
    let edit = collection
        .update
        .filter(|update| allows(&held, update.action.capability))
        .map(|_| format!("{PREFIX}{}/edit/{}", collection.id, key_path(&key)));
    let delete = collection
        .delete
        .filter(|delete| allows(&held, delete.action.capability))
        .map(|_| format!("{PREFIX}{}/delete/{}", collection.id, key_path(&key)));
    let running = shared.running(&visit, collection, &key).await;
    let grant = holders.as_ref().and(shared.grant_href(&visit, &held, &key));
    let page = ItemPage {
        chrome,
        kind: collection.singular,
        key,
        edit,
        delete,
        fields,
        running,
        holders,
        grant,
        related,
        children,
    };
    render(StatusCode::OK, &page)
}

/// The top-level fields of an item in declaration order (then any the
/// schema does not list), references as links named by their targets.
async fn shown_fields(
    names: &mut Names<'_>,
    schema: &Schema,
    collection: &Collection,
    item: &Value,
) -> Vec<Shown> {
    let Value::Object(object) = item else {
        return Vec::new();
    };
    let declared = collection
        .fields
        .iter()
        .map(|f| f.json_path)
        .filter(|path| !path.contains('.'));
    let mut fields: Vec<&str> = declared.filter(|name| object.contains_key(*name)).collect();
    let undeclared: Vec<&str> = object
        .keys()
        .map(String::as_str)
        .filter(|name| !fields.contains(name))
        .collect();
    fields.extend(undeclared);
    let mut shown = Vec::with_capacity(fields.len());
    for name in fields {
        let value = &object[name];
        let target = names.reference(collection, name, value).await;
        shown.push(Shown {
            label: crate::words::field(collection, name),
            name: name.to_owned(),
            value: match &target {
                Some(link) => link.text.clone(),
                None => crate::words::moment_of(schema, collection, name, value)
                    .unwrap_or_else(|| super::form::display(value, "lines")),
            },
            href: target.map(|link| link.href),
        });
    }
    shown
}

impl Shared {
    /// A collection under the item `parent`, with its first items.
    async fn child(
        &self,
        visit: &Visit,
        held: &Held,
        child: &'static Collection,
        parent: &str,
    ) -> Child {
        let query = [("pageSize".to_owned(), CHILD_PREVIEW.to_string())];
        let items = match self.list_page(visit, child, parent, &query).await {
            Ok((items, _, _)) => items.iter().map(|item| link_to(child, item)).collect(),
            Err(_) => Vec::new(),
        };
        let create = child
            .create
            .filter(|create| may_create(visit, held, child, create.action.capability, parent))
            .map(|_| format!("{PREFIX}{}/new?parent={}", child.id, encode(parent)));
        Child {
            id: child.id,
            singular: child.singular,
            href: format!("{PREFIX}{}?parent={}", child.id, encode(parent)),
            text: crate::words::collection(child),
            items,
            create,
        }
    }
}
