//! Resources: messages with a `google.api.resource` option, their fields
//! with behaviours (AIP-203) and kinds, as update masks, `order_by` and the
//! annotation files' rules address them.

use prost_reflect::FieldDescriptor;

use super::pattern::NamePattern;
use super::proto::OneofMember;

/// A message with a `google.api.resource` option.
#[derive(Clone, Debug)]
pub struct Resource {
    pub full_name: String,
    /// e.g. `Group`.
    pub name: String,
    pub rust_path: String,
    /// e.g. `library.example.com/Shelf`.
    pub type_name: String,
    /// e.g. `groups`.
    pub plural: String,
    /// e.g. `group`.
    pub singular: String,
    pub comments: String,
    /// What people call the collection, when annotated (`display_name`).
    pub display_name: Option<String>,
    /// `(JSON name, display name)` of the fields annotated with one.
    pub field_names: Vec<(String, String)>,
    /// Fields and (one level of) nested fields, in declaration order.
    pub fields: Vec<Field>,
    /// Capabilities on its items the application checks itself, besides
    /// those its methods need (`repos.pull`), from annotation `capabilities`.
    pub capabilities: Vec<String>,
    /// JSON names `order_by` accepts.
    pub order_by: Vec<String>,
    /// `(default, max)` page size, when annotated.
    pub page_sizes: Option<(u32, u32)>,
    /// Hierarchy filters lists accept (`children_of`, `descendants_of`).
    pub filters: Vec<String>,
    /// Fields (JSON names) an AIP-160 `filter` may compare, when declared
    /// (annotation `filterable`); see [`Resource::filterable`].
    pub filterable: Option<Vec<String>>,
    /// Of the filterable fields, those kept in columns derived from the item
    /// (nested fields, durations, lists, maps).
    pub derived: Vec<super::Derived>,
    /// Of the filterable fields (JSON names), those whose columns are
    /// indexed, when declared (annotation `indexed`); see
    /// `Api::unindexed`.
    pub indexed: Option<Vec<String>>,
    /// What keeps an item from being deleted.
    pub dependents: Vec<Dependent>,
    /// Value rules of individual fields.
    pub rules: Vec<FieldRule>,
    /// What makes an item readable without a token (annotation `public_if`
    /// or `public_after`).
    pub public: Option<PublicRule>,
    /// Fields holding uids of items of other collections.
    pub references: Vec<Reference>,
    /// The resource type of the items this one's are created under, when
    /// they are stored in the API (annotation `parent`).
    pub parent_type: Option<String>,
    /// Levels the hierarchy may have below a root, when annotated.
    pub max_depth: Option<usize>,
    /// Items directly under a shared scope are everyone's to reference and
    /// the administrator's alone to write (annotation `shared`).
    pub shared: bool,
    /// The resource name pattern when items are keyed by their `name`
    /// (AIP-122, see `model::names`); `None` when keyed by UIDP `uid`s.
    pub names: Option<NamePattern>,
    /// Deletes are soft (AIP-164): the resource has a `delete_time` and the
    /// API declares `Undelete<X>` for it (as `model::shapes` decides).
    pub soft_delete: bool,
}

impl Resource {
    /// The references its generated Create resolves (reach, and the target
    /// for what it grants): a UIDP-keyed resource's. Storage alone checks
    /// those between name-keyed resources.
    pub fn resolved_references(&self) -> &[Reference] {
        match self.names {
            None => &self.references,
            Some(_) => &[],
        }
    }

    /// Whether some field's values must be held by whoever writes them.
    pub fn has_must_hold(&self) -> bool {
        self.rules.iter().any(|rule| rule.must_hold)
    }

    /// Whether the items are part of the access model: they grant
    /// capabilities (roles), or a reference of theirs grants a role's
    /// (role bindings). Their writes are audited with the item before and
    /// after.
    pub fn is_access_model(&self) -> bool {
        self.has_must_hold() || self.references.iter().any(|r| r.grants.is_some())
    }

    /// Whether some field holds UIDPs (annotation `uidp`).
    pub fn has_uidp_fields(&self) -> bool {
        self.rules.iter().any(|rule| rule.uidp)
    }
}

/// What makes an item readable by anyone, with or without a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PublicRule {
    /// `public_if`: a bool field (JSON name) that is true.
    If(String),
    /// `public_after`: a `google.protobuf.Timestamp` field (JSON name) that is
    /// set and not in the future.
    After(String),
}

impl PublicRule {
    /// The field (JSON name) the rule reads.
    pub fn field(&self) -> &str {
        match self {
            PublicRule::If(field) | PublicRule::After(field) => field,
        }
    }

    /// Which items need no token, for documentation.
    pub fn describe(&self) -> String {
        match self {
            PublicRule::If(field) => format!("Items whose `{field}` is true need no token."),
            PublicRule::After(field) => {
                format!("Items whose `{field}` time is set and has passed need no token.")
            }
        }
    }
}

/// Items of another collection that block deleting an item of this one.
#[derive(Clone, Debug)]
pub struct Dependent {
    /// The collection id, e.g. `bookCopies`.
    pub collection: String,
    /// Its resource type, e.g. `library.example.com/Book`.
    pub resource_type: String,
    /// The JSON name of its field holding this item's uid (`parent` for children).
    pub field: String,
    /// The capability of its Get method: who may see it named.
    pub read_capability: Option<String>,
}

/// A field holding the key of an item of another collection (annotation
/// `references`, or the field's `google.api.resource_reference`).
#[derive(Clone, Debug)]
pub struct Reference {
    /// Proto name of the referring field, e.g. `role`.
    pub field: String,
    pub json_name: String,
    /// The target resource's full proto name.
    pub target: String,
    /// The target's collection id and resource type.
    pub collection: String,
    pub resource_type: String,
    pub reach: Reach,
    /// Proto name of the target's repeated string field whose capabilities
    /// the reference confers.
    pub grants: Option<String>,
}

impl Reference {
    /// `field` referencing items of `target`, conferring nothing.
    pub(super) fn new(field: &FieldDescriptor, target: &Resource, reach: Reach) -> Reference {
        Reference {
            field: field.name().to_owned(),
            json_name: field.json_name().to_owned(),
            target: target.full_name.clone(),
            collection: target.plural.clone(),
            resource_type: target.type_name.clone(),
            reach,
            grants: None,
        }
    }
}

/// Where a reference's target may live (see `protoapi_runtime::resource::Reach`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    Ancestors,
    Root,
    /// A reference between name-keyed resources: no hierarchy scopes it.
    Anywhere,
}

/// Constraints on one top-level field's values.
#[derive(Clone, Debug)]
pub struct FieldRule {
    pub field: String,
    pub json_name: String,
    pub repeated: bool,
    /// The only values allowed, if restricted.
    pub allowed: Option<Vec<String>>,
    /// Whether the value must be a UIDP.
    pub uidp: bool,
    pub max_length: Option<usize>,
    pub max_bytes: Option<usize>,
    /// Whether control characters are refused.
    pub printable: bool,
    /// Whether a caller may add a value only if it holds that capability.
    pub must_hold: bool,
}

#[derive(Clone, Debug)]
pub struct Field {
    /// Proto name, e.g. `resource_limits`.
    pub name: String,
    pub json_name: String,
    /// The enclosing field for a nested field (e.g. `resource_limits`).
    pub parent: Option<(String, String)>,
    pub behavior: Behavior,
    pub kind: FieldKind,
    /// Whether it holds proto `string` values (one, or a list of them).
    pub string: bool,
    /// Whether it is a single 64-bit signed integer (Rust `i64`).
    pub int64: bool,
    /// Whether it is a single 64-bit unsigned integer (Rust `u64`).
    pub uint64: bool,
    /// The oneof it is a member of, for a top-level field.
    pub oneof: Option<OneofMember>,
    /// A proto3 `optional` scalar: prost's `Option<T>`, set or not.
    pub optional: bool,
}

impl Resource {
    /// The fields (JSON names) an AIP-160 `filter` may compare: those
    /// declared, or else those `order_by` accepts that filters can compare
    /// (all but `uid`, which the hierarchy filters cover, and
    /// floating-point numbers).
    pub fn filterable(&self) -> Vec<&str> {
        if let Some(declared) = &self.filterable {
            return declared.iter().map(String::as_str).collect();
        }
        self.order_by
            .iter()
            .filter_map(|name| {
                self.fields
                    .iter()
                    .find(|f| f.parent.is_none() && f.json_name == *name)
            })
            .filter(|field| field.filterable() && field.name != "uid")
            .map(|field| field.json_name.as_str())
            .collect()
    }
}

impl Field {
    /// Whether an AIP-160 `filter` can compare it: a field items can be
    /// ordered by, other than a floating-point number.
    pub fn filterable(&self) -> bool {
        self.sortable() && self.kind != FieldKind::Float
    }

    /// Whether items can be ordered by it (`order_by`, storage's sort
    /// values): a top-level single string, number, bool or timestamp, not
    /// in a oneof and without presence (an unset `optional` or wrapper has
    /// no value to order by); not bytes.
    pub fn sortable(&self) -> bool {
        let kind = match self.kind {
            FieldKind::Text => self.string,
            FieldKind::Number | FieldKind::Float | FieldKind::Bool | FieldKind::Timestamp => true,
            FieldKind::Message | FieldKind::Repeated => false,
        };
        kind && self.parent.is_none() && self.oneof.is_none() && !self.optional
    }
}

impl Field {
    pub fn path(&self) -> String {
        match &self.parent {
            Some((parent, _)) => format!("{parent}.{}", self.name),
            None => self.name.clone(),
        }
    }

    pub fn json_path(&self) -> String {
        match &self.parent {
            Some((_, parent)) => format!("{parent}.{}", self.json_name),
            None => self.json_name.clone(),
        }
    }
}

/// A field's `google.api.field_behavior` (AIP-203), as the model reads it.
///
/// Generated code names the runtime's own `protoapi_runtime::resource::Behavior`
/// (`emit/resource.rs` maps one onto the other): the generator does not
/// depend on the runtime, and the runtime, which every generated crate
/// links, does not depend on the generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behavior {
    Optional,
    Required,
    OutputOnly,
    Immutable,
    /// REQUIRED and IMMUTABLE.
    RequiredImmutable,
}

/// The Rust shape of a field, which decides how it is copied and compared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// `String` or `Vec<u8>`.
    Text,
    Bool,
    /// Integers and enums (`Copy`, default `0`).
    Number,
    /// `f32` / `f64`.
    Float,
    /// `Option<Timestamp>`.
    Timestamp,
    /// `Option<M>` of another message.
    Message,
    /// `Vec<T>` or a map.
    Repeated,
}
