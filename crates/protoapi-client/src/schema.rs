//! What a generic client knows of an API: one [`Collection`] per resource
//! with standard methods, generated from the protos and annotation files
//! (the generated crate's `SCHEMA`). Plain data: the web console and the
//! infrastructure provider read field kinds, enum values and comments from
//! the API's descriptors, and everything else here.

use prost_reflect::DescriptorPool;

use crate::client::{HttpRule, Route};
use protoapi_core::names::Pattern;
use protoapi_core::resource::{FieldSpec, PageSizes, Reference, Resource, TextRule};

/// A whole API as generic clients see it.
#[derive(Clone, Copy, Debug)]
pub struct Schema {
    /// Shown in the page titles, e.g. `library`.
    pub title: &'static str,
    /// The API's descriptors, decoded once for the whole crate (field
    /// kinds, enum values): the generated `DESCRIPTOR_POOL`.
    pub descriptors: fn() -> &'static DescriptorPool,
    pub collections: &'static [Collection],
    /// Where the API's AIP-151 operations are listed
    /// (`google.longrunning.Operations.ListOperations`), when it has any: an
    /// item's page shows those still running on it.
    pub operations: Option<&'static Route>,
    /// The access model, when a collection binds members to roles (a
    /// reference that `grants` capabilities): the console shows who holds
    /// which role on an item and what a member was granted.
    pub access: Option<Access>,
}

/// A collection whose items grant a member the capabilities of a role.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    /// The bindings' collection id (`memberships`, say).
    pub bindings: &'static str,
    /// The JSON name of the reference to the role granted.
    pub role: &'static str,
    /// The JSON name of the reference to whom it is granted.
    pub member: &'static str,
}

impl Schema {
    /// The collection with id `id` (`groups`).
    pub fn collection(&self, id: &str) -> Option<&'static Collection> {
        self.collections.iter().find(|c| c.id == id)
    }

    /// The collection of resource type `resource_type`.
    pub fn of_type(&self, resource_type: &str) -> Option<&'static Collection> {
        self.collections
            .iter()
            .find(|c| c.resource_type == resource_type)
    }

    /// The collection of the access model's members (`identities`).
    pub fn members(&self) -> Option<&'static Collection> {
        let access = self.access?;
        let bindings = self.collection(access.bindings)?;
        self.collection(bindings.reference(access.member)?.collection)
    }

    /// Collections whose items live directly under items of `resource_type`.
    pub fn children_of(&self, resource_type: &str) -> impl Iterator<Item = &'static Collection> {
        let collections = self.collections;
        let resource_type = resource_type.to_owned();
        collections
            .iter()
            .filter(move |c| c.parent_type == Some(resource_type.as_str()))
    }
}

/// How items of a collection are keyed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keys {
    /// By UIDP `uid`.
    Uidp,
    /// By AIP-122 resource `name`.
    Names,
}

/// One resource's collection and its standard methods.
#[derive(Clone, Copy, Debug)]
pub struct Collection {
    /// The collection id, e.g. `groups`.
    pub id: &'static str,
    /// e.g. `group`.
    pub singular: &'static str,
    /// The full proto name of the resource message.
    pub message: &'static str,
    /// What people call the collection, when its annotations say
    /// (`display_name`); else pages make words of its id.
    pub display_name: Option<&'static str>,
    /// `(JSON path, display name)` of fields whose annotations name them.
    pub field_names: &'static [(&'static str, &'static str)],
    /// e.g. `library.example.com/Shelf`.
    pub resource_type: &'static str,
    /// The resource type of the items this one's live under, when stored.
    pub parent_type: Option<&'static str>,
    pub keys: Keys,
    /// The name pattern of items keyed by names.
    pub names: Option<Pattern>,
    /// Levels a UIDP-keyed hierarchy may have below its root.
    pub max_depth: usize,
    /// Every field and nested field, with its behaviour.
    pub fields: &'static [FieldSpec],
    /// Fields `order_by` may name (JSON names).
    pub order_by: &'static [&'static str],
    pub page_sizes: PageSizes,
    /// Fields that name items of other collections.
    pub references: &'static [Reference],
    /// Fields an AIP-160 `filter` of its list may compare (JSON paths).
    pub filterable: &'static [&'static str],
    /// Value rules of text fields (long ones get a text area).
    pub text_rules: &'static [TextRule],
    pub get: Option<Action>,
    pub list: Option<List>,
    pub create: Option<Create>,
    pub update: Option<Update>,
    pub delete: Option<Delete>,
    /// Some method acts on its items as an AIP-151 operation: an item's
    /// page lists those still running on it ([`Schema::operations`]).
    pub long_running: bool,
}

impl Collection {
    /// The parts of a collection that [`Resource`] declares; the generator
    /// adds the methods.
    pub const fn of<R: Resource>(
        id: &'static str,
        singular: &'static str,
        message: &'static str,
    ) -> Self {
        Collection {
            id,
            singular,
            message,
            display_name: None,
            field_names: &[],
            resource_type: R::TYPE,
            parent_type: R::PARENT_TYPE,
            keys: match R::NAMES {
                Some(_) => Keys::Names,
                None => Keys::Uidp,
            },
            names: R::NAMES,
            max_depth: R::MAX_DEPTH,
            fields: R::FIELDS,
            order_by: R::ORDER_BY,
            page_sizes: R::PAGE_SIZES,
            references: R::REFERENCES,
            filterable: R::FILTERABLE,
            text_rules: R::TEXT_RULES,
            get: None,
            list: None,
            create: None,
            update: None,
            delete: None,
            long_running: false,
        }
    }

    /// Whether `key` can name an item of this collection. A key longer
    /// than the longest one is refused by its length alone, so whatever a
    /// request carries, this costs no more than a valid key.
    pub fn is_key(&self, key: &str) -> bool {
        match self.names {
            Some(pattern) => pattern.matches(key),
            None => protoapi_core::uidp::is_valid_within(key, self.max_depth),
        }
    }

    /// Whether items of this collection can live under `parent`: empty
    /// (the top level, or everywhere), an item's key, or for names a
    /// parent ending in AIP-159's `-` (every parent).
    pub fn is_parent(&self, parent: &str) -> bool {
        parent.is_empty()
            || match self.names {
                Some(pattern) => pattern.has_parent() && pattern.list_scope(parent).is_ok(),
                None => protoapi_core::uidp::is_valid_within(parent, self.max_depth),
            }
    }

    /// The JSON name of the key field.
    pub fn key_field(&self) -> &'static str {
        match self.keys {
            Keys::Uidp => "uid",
            Keys::Names => "name",
        }
    }

    /// The parent that lists items under every parent: AIP-159's `-` for
    /// each id of a name-keyed pattern (`shelves/-`); empty otherwise.
    pub fn any_parent(&self) -> String {
        match self.names {
            Some(pattern) if pattern.has_parent() => {
                let parents = &pattern.collections[..pattern.collections.len() - 1];
                parents
                    .iter()
                    .map(|c| format!("{c}/-"))
                    .collect::<Vec<_>>()
                    .join("/")
            }
            _ => String::new(),
        }
    }

    /// The display name the annotations give field `json_path`, if any.
    pub fn field_name(&self, json_path: &str) -> Option<&'static str> {
        let found = self.field_names.iter().find(|(path, _)| *path == json_path);
        found.map(|(_, name)| *name)
    }

    /// Whether its list's AIP-160 `filter` may compare field `json_path`.
    pub fn filters_on(&self, json_path: &str) -> bool {
        self.list.is_some_and(|list| list.filter) && self.filterable.contains(&json_path)
    }

    /// The reference declared on field `json_name`, if any.
    pub fn reference(&self, json_name: &str) -> Option<&'static Reference> {
        self.references.iter().find(|r| r.field == json_name)
    }
}

/// A method and the capability it needs (`None`: any caller).
#[derive(Clone, Copy, Debug)]
pub struct Action {
    pub route: &'static Route,
    pub capability: Option<&'static str>,
}

impl Action {
    /// The HTTP rule generic clients call; `None` for a method served over
    /// gRPC only (the generator offers such methods to no page).
    pub fn rule(&self) -> Option<&'static HttpRule> {
        self.route.http.as_ref()
    }
}

/// How a list is asked for and answered.
#[derive(Clone, Copy, Debug)]
pub struct List {
    pub action: Action,
    /// The response's JSON field holding the items (`items`, `books`).
    pub items: &'static str,
    /// The response's JSON field holding the total, if any (`totalCount`).
    pub total: Option<&'static str>,
    /// The request's query parameter that scopes the list to a parent
    /// (`uidp.children_of`); `None` when `parent` is a path variable or absent.
    pub parent_query: Option<&'static str>,
    /// The request has `order_by`.
    pub order_by: bool,
    /// Query parameters of the declared filters, besides the parent
    /// (`name`, `uidp.ancestors_of`).
    pub filters: &'static [&'static str],
    /// The request has `uidp.in_root` (only top-level items).
    pub in_root: bool,
    /// The request has an AIP-160 `filter` (over [`Collection::filterable`]).
    pub filter: bool,
}

/// How an item is created.
#[derive(Clone, Copy, Debug)]
pub struct Create {
    pub action: Action,
    /// The JSON name of the request field holding the resource.
    pub body: &'static str,
    /// The JSON name of the client-chosen id (AIP-133 `book_id`), if any.
    pub id: Option<&'static str>,
}

/// How an item is changed.
#[derive(Clone, Copy, Debug)]
pub struct Update {
    pub action: Action,
    /// The JSON name of the request field holding the resource; empty when
    /// the body is the whole request.
    pub body: &'static str,
    /// The request has `update_mask`.
    pub mask: bool,
}

/// How an item is deleted.
#[derive(Clone, Copy, Debug)]
pub struct Delete {
    pub action: Action,
    /// The request takes the `etag` the caller read.
    pub etag: bool,
}
