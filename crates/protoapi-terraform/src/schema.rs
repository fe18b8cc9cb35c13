//! A collection as a Terraform resource type: its attributes, read from the
//! resource message's fields (kinds and comments from the API's
//! descriptors, behaviours from what `Resource` declares).
//!
//! - REQUIRED fields are required, OUTPUT_ONLY ones computed, and the rest
//!   optional and computed (a field the configuration leaves out keeps what
//!   the server gives it); IMMUTABLE fields force a replacement.
//! - `id` is the item's key (its uid, or its resource name), and
//!   `parent_id` the parent it is created under (a change replaces it).
//! - The `etag` field is computed: the provider sends back the one it
//!   read, so a concurrent change fails instead of being overwritten.
//! - Nested messages are nested attributes, maps and repeated fields maps
//!   and lists; enums are strings checked against their values at plan
//!   time; timestamps, durations and 64-bit integers are strings, as
//!   proto3 JSON writes them.

use heck::ToSnakeCase;
use prost_reflect::{FieldDescriptor, Kind as ProtoKind, MessageDescriptor};
use protoapi_client::schema::{Collection, Schema};
use protoapi_core::resource::Behavior;

/// How an attribute is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Required,
    /// Optional, and computed when left out.
    Optional,
    Computed,
}

/// The type of an attribute's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    String,
    Number,
    Bool,
    /// A string, one of these names.
    Enum(Vec<String>),
    List(Box<Kind>),
    Map(Box<Kind>),
    Object(Vec<Attr>),
}

/// One attribute of a resource, or of a nested attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    /// Terraform's name, snake_case.
    pub name: String,
    /// The field's proto3 JSON name.
    pub json: String,
    pub kind: Kind,
    pub mode: Mode,
    /// A change replaces the item.
    pub replace: bool,
    /// Terraform hides the value in its output.
    pub sensitive: bool,
    pub description: String,
}

/// A collection served as a resource type (and a data source).
#[derive(Clone, Debug)]
pub struct ResourceType {
    /// `library_shelf`.
    pub name: String,
    pub collection: &'static Collection,
    pub description: String,
    /// Terraform manages its items (it has Create and Delete answering at
    /// once); otherwise it is only read, through data sources.
    pub managed: bool,
    /// The resource message's fields, then `id` and `parent_id`.
    pub attrs: Vec<Attr>,
}

impl ResourceType {
    /// The attributes of its data source: the same, all computed but the
    /// `id` it is read by.
    pub fn data_source_attrs(&self) -> Vec<Attr> {
        self.attrs
            .iter()
            .map(|attr| Attr {
                mode: match attr.name == ID {
                    true => Mode::Required,
                    false => Mode::Computed,
                },
                replace: false,
                ..attr.clone()
            })
            .collect()
    }
}

/// The attribute holding the item's key.
pub const ID: &str = "id";
/// The attribute holding the parent an item is created under.
pub const PARENT: &str = "parent_id";
/// The field of optimistic concurrency (AIP-154).
const ETAG: &str = "etag";
/// How deep nested messages are followed (a message that contains itself
/// stops there).
const MAX_NESTING: usize = 8;

/// Every collection of `schema` that can be read, named
/// `{prefix}_{singular}`; those that can be created and deleted are
/// managed. Collections whose standard writes answer long-running
/// operations (AIP-151) are only read for now: the provider does not wait
/// on operations.
pub fn resource_types(schema: &'static Schema, prefix: &str) -> Vec<ResourceType> {
    let pool = (schema.descriptors)();
    schema
        .collections
        .iter()
        .filter(|c| c.get.is_some())
        .filter_map(|collection| {
            let message = pool.get_message_by_name(collection.message)?;
            Some(ResourceType {
                name: format!("{prefix}_{}", collection.singular.to_snake_case()),
                collection,
                description: comment(message.parent_file(), message.path()),
                managed: collection.create.is_some()
                    && collection.delete.is_some()
                    && !writes_are_operations(pool, collection),
                attrs: attrs(collection, &message),
            })
        })
        .collect()
}

/// The JSON name of the create's field that chooses the new item's id
/// (AIP-133 `book_id`), if it has one.
pub fn created_id(collection: &Collection) -> Option<&'static str> {
    collection.create.as_ref()?.id
}

/// Whether a standard write of `collection` answers an operation.
fn writes_are_operations(pool: &prost_reflect::DescriptorPool, collection: &Collection) -> bool {
    let routes = [
        collection.create.map(|m| m.action.route),
        collection.update.map(|m| m.action.route),
        collection.delete.map(|m| m.action.route),
    ];
    routes.into_iter().flatten().any(|route| {
        let Some((service, method)) = route.grpc_path.trim_start_matches('/').split_once('/')
        else {
            return false;
        };
        pool.get_service_by_name(service)
            .and_then(|s| s.methods().find(|m| m.name() == method))
            .is_some_and(|m| m.output().full_name() == "google.longrunning.Operation")
    })
}

fn attrs(collection: &Collection, message: &MessageDescriptor) -> Vec<Attr> {
    let mut attrs: Vec<Attr> = message
        .fields()
        .map(|field| {
            let behavior = collection
                .fields
                .iter()
                .find(|f| f.json_path == field.json_name())
                .map_or(Behavior::Optional, |f| f.behavior);
            let mode = match behavior {
                _ if field.json_name() == ETAG => Mode::Computed,
                Behavior::OutputOnly => Mode::Computed,
                Behavior::Required | Behavior::RequiredImmutable => Mode::Required,
                Behavior::Optional | Behavior::Immutable => Mode::Optional,
            };
            attr(&field, mode, behavior.is_immutable(), 0)
        })
        .collect();
    let key = match collection.keys {
        protoapi_client::schema::Keys::Uidp => "The item's uid.",
        protoapi_client::schema::Keys::Names => "The item's resource name.",
    };
    attrs.push(Attr {
        name: ID.to_owned(),
        json: collection.key_field().to_owned(),
        kind: Kind::String,
        mode: Mode::Computed,
        replace: false,
        sensitive: false,
        description: key.to_owned(),
    });
    if let Some(id) = created_id(collection) {
        attrs.push(Attr {
            name: id.to_snake_case(),
            json: id.to_owned(),
            kind: Kind::String,
            mode: Mode::Optional,
            replace: true,
            sensitive: false,
            description: "The id the item is created with, the last segment of its name (empty: \
                          the server chooses one)."
                .to_owned(),
        });
    }
    attrs.push(Attr {
        name: PARENT.to_owned(),
        json: "parent".to_owned(),
        kind: Kind::String,
        mode: Mode::Optional,
        replace: true,
        sensitive: false,
        description: "The parent the item is created under (empty: the top level).".to_owned(),
    });
    attrs.sort_by(|a, b| a.name.cmp(&b.name));
    attrs.dedup_by(|a, b| a.name == b.name);
    attrs
}

fn attr(field: &FieldDescriptor, mode: Mode, replace: bool, depth: usize) -> Attr {
    let kind = if field.is_map() {
        let value = match field.kind() {
            ProtoKind::Message(entry) => entry.map_entry_value_field(),
            _ => unreachable!("a map field is a message of entries"),
        };
        Kind::Map(Box::new(kind(&value, depth)))
    } else if field.is_list() {
        Kind::List(Box::new(kind(field, depth)))
    } else {
        kind(field, depth)
    };
    Attr {
        name: field.name().to_snake_case(),
        json: field.json_name().to_owned(),
        kind,
        mode,
        replace,
        sensitive: false,
        description: comment(field.parent_file(), field.path()),
    }
}

/// The kind of one value of `field` (an item, for repeated fields).
fn kind(field: &FieldDescriptor, depth: usize) -> Kind {
    match field.kind() {
        ProtoKind::Bool => Kind::Bool,
        ProtoKind::Int32
        | ProtoKind::Sint32
        | ProtoKind::Sfixed32
        | ProtoKind::Uint32
        | ProtoKind::Fixed32
        | ProtoKind::Float
        | ProtoKind::Double => Kind::Number,
        ProtoKind::Enum(values) => {
            Kind::Enum(values.values().map(|v| v.name().to_owned()).collect())
        }
        ProtoKind::Message(message) if is_text(&message) || depth >= MAX_NESTING => Kind::String,
        ProtoKind::Message(message) => Kind::Object(
            message
                .fields()
                .map(|inner| attr(&inner, Mode::Optional, false, depth + 1))
                .collect(),
        ),
        // 64-bit integers, strings, bytes: proto3 JSON writes them as strings.
        _ => Kind::String,
    }
}

/// Messages proto3 JSON writes as one string (or any JSON value, which the
/// provider carries as its JSON text).
fn is_text(message: &MessageDescriptor) -> bool {
    matches!(
        message.full_name(),
        "google.protobuf.Timestamp"
            | "google.protobuf.Duration"
            | "google.protobuf.FieldMask"
            | "google.protobuf.Struct"
            | "google.protobuf.Value"
            | "google.protobuf.ListValue"
            | "google.protobuf.Any"
    ) || message.full_name().starts_with("google.protobuf.")
        && message.full_name().ends_with("Value")
}

/// `bookCopy` as `book copy`.
pub fn words(name: &str) -> String {
    name.to_snake_case().replace('_', " ")
}

/// The leading comment of the declaration at `path` in `file`, as one
/// paragraph.
fn comment(file: prost_reflect::FileDescriptor, path: &[i32]) -> String {
    let proto = file.file_descriptor_proto();
    let Some(info) = &proto.source_code_info else {
        return String::new();
    };
    info.location
        .iter()
        .find(|location| location.path == path)
        .and_then(|location| location.leading_comments.as_deref())
        .map(|text| text.split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}
