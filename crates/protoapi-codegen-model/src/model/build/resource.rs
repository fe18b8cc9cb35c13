//! Building a resource from its message and `google.api.resource` option.

use prost_reflect::{DescriptorPool, DynamicMessage, Kind, MessageDescriptor};

use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use crate::model::fields::{behavior, field_kind, is_int64, is_optional, is_string, is_uint64};
use crate::model::proto::{OneofMember, RESOURCE_OPTION, comments, rust_path, string_field};
use crate::model::{Field, FieldKind, Resource, managed, names};

/// Standard fields `order_by` accepts on every resource, when present.
const DEFAULT_ORDER_BY: &[&str] = &["uid", "name", "create_time", "update_time"];

pub(super) fn build_resource(
    pool: &DescriptorPool,
    message: &MessageDescriptor,
    diagnostics: &mut Diagnostics,
) -> Option<Resource> {
    let extension = pool.get_extension_by_name(RESOURCE_OPTION)?;
    let options = message.options();
    if !options.has_extension(&extension) {
        return None;
    }
    let option = options.get_extension(&extension);
    let option = option.as_message()?;
    let type_name = string_field(option, "type");
    let location = Location::of(&message.parent_file(), message.path());
    if type_name.split_once('/').is_none() {
        diagnostics.push(Diagnostic::new(
            location.clone(),
            format!(
                "resource `{}` needs a `type` of the form `service/Kind`",
                message.full_name()
            ),
        ));
    }
    // Singletons, and names of other shapes, are served by the methods'
    // handlers (see `standard`).
    if crate::model::pattern::unstored(message).is_some() {
        return None;
    }
    let declared_plural = string_field(option, "plural");
    let names = names::key_scheme(message, &location, diagnostics).ok()?;
    // AIP-122: the last collection id of the pattern is the plural, declared
    // or not.
    let plural = match (&names, declared_plural.is_empty()) {
        (Some(names), true) => names.collections.last().cloned().unwrap_or_default(),
        _ => declared_plural,
    };
    managed::check(message, names.is_some(), &location, diagnostics);
    let mut fields = Vec::new();
    for field in message.fields() {
        let kind = field_kind(&field);
        // A message in a real oneof is masked as a whole (`pubsub_target`
        // of `oneof target`): Rust holds it in the oneof's enum.
        let in_oneof = field
            .containing_oneof()
            .is_some_and(|oneof| !oneof.is_synthetic());
        let nested = match field.kind() {
            Kind::Message(inner) if kind == FieldKind::Message && !in_oneof => Some(inner),
            _ => None,
        };
        fields.push(Field {
            name: field.name().to_owned(),
            json_name: field.json_name().to_owned(),
            parent: None,
            behavior: behavior(pool, &field),
            kind,
            string: is_string(&field),
            int64: is_int64(&field),
            uint64: is_uint64(&field),
            oneof: OneofMember::of(message, &field),
            optional: is_optional(&field),
        });
        // A oneof member inside a nested message is masked with its message
        // (`specification`), not on its own.
        let children = nested.iter().flat_map(|inner| inner.fields());
        for child in children.filter(|child| child.containing_oneof().is_none()) {
            let child_kind = field_kind(&child);
            fields.push(Field {
                name: child.name().to_owned(),
                json_name: child.json_name().to_owned(),
                parent: Some((field.name().to_owned(), field.json_name().to_owned())),
                behavior: behavior(pool, &child),
                kind: child_kind,
                string: is_string(&child),
                int64: is_int64(&child),
                uint64: is_uint64(&child),
                oneof: None,
                optional: is_optional(&child),
            });
        }
    }
    let order_by = DEFAULT_ORDER_BY
        .iter()
        .filter_map(|name| message.get_field_by_name(name))
        .map(|f| f.json_name().to_owned())
        .collect();
    let mut resource = Resource {
        full_name: message.full_name().to_owned(),
        name: message.name().to_owned(),
        rust_path: rust_path(message),
        type_name,
        plural,
        singular: singular(option, message),
        comments: comments(message.path(), &message.parent_file()),
        display_name: None,
        field_names: Vec::new(),
        fields,
        capabilities: Vec::new(),
        order_by,
        page_sizes: None,
        filters: vec!["children_of".to_owned(), "descendants_of".to_owned()],
        filterable: None,
        derived: Vec::new(),
        indexed: None,
        dependents: Vec::new(),
        rules: Vec::new(),
        public: None,
        references: Vec::new(),
        parent_type: None,
        max_depth: None,
        shared: false,
        names,
        soft_delete: super::shapes::soft_deletes(message),
    };
    names::name_is_identifier(&mut resource);
    Some(resource)
}

/// The client-chosen id field a Create of the resource `message` reads
/// (AIP-133: `{singular}_id`), as `RequestShape::id_field` finds it.
pub(super) fn create_id_field(message: &MessageDescriptor) -> Option<String> {
    let extension = message
        .parent_pool()
        .get_extension_by_name(RESOURCE_OPTION)?;
    let options = message.options();
    let option = options.get_extension(&extension);
    let singular = singular(option.as_message()?, message);
    (!singular.is_empty()).then(|| format!("{singular}_id"))
}

/// The resource's `singular` as declared, else (AIP-123) its type's kind in
/// lowerCamelCase (`library.example.com/BookCopy` -> `bookCopy`).
fn singular(option: &DynamicMessage, message: &MessageDescriptor) -> String {
    let declared = string_field(option, "singular");
    if !declared.is_empty() {
        return declared;
    }
    let type_name = string_field(option, "type");
    let kind = type_name
        .rsplit_once('/')
        .map_or(message.name(), |(_, kind)| kind);
    heck::ToLowerCamelCase::to_lower_camel_case(kind)
}
