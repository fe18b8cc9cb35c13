//! Key schemes: which field identifies a resource's items, decided from the
//! proto.
//!
//! - A resource with a `uid` field and no name pattern of collection pairs
//!   (a pattern such as `{uid}`) is keyed by UIDPs (parents and hierarchy
//!   filters from the annotation files).
//! - Otherwise a resource with a `string name` field and a
//!   `google.api.resource` pattern of `collection/{id}` pairs
//!   (`shelves/{shelf}/books/{book}`) is keyed by its name (AIP-122): the
//!   collection ids and the parent come from the pattern, the parent's
//!   resource type from the resource that declares the pattern minus its
//!   last pair (none declares it: the parent is not stored and not
//!   checked). Only the first pattern is served; names of the others are
//!   refused as not matching.
//! - Anything else is a diagnostic naming the field and the shape expected.

use heck::ToSnakeCase;
use prost_reflect::{Kind, MessageDescriptor, MethodDescriptor};

use super::pattern::{NamePattern, parse_pattern};
use super::{Api, Behavior, Dependent, LIST_FILTERS, Method, Resource, Shape, Standard};
use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use crate::template::Segment;

/// What a standard method's request carries, for name-keyed resources.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestShape {
    /// The field holding the parent's name (Create, List): `parent`, else
    /// the one the HTTP rule binds to a name of the parent's pattern
    /// (`{name=projects/*}/alertPolicies`).
    pub parent: Option<String>,
    /// The field holding the item's name (Get, Delete, Undelete): `name`,
    /// else the one the HTTP rule binds to a name of the pattern
    /// (`{topic=projects/*/topics/*}`).
    pub name: Option<String>,
    /// Top-level `string` fields, which the HTTP rule may bind.
    pub strings: Vec<String>,
    /// Top-level `string` fields named `*_id`: a Create's client-chosen
    /// id (AIP-133) is `{singular}_id` among them.
    pub id_fields: Vec<String>,
    /// `force` (Delete, AIP-135).
    pub force: bool,
    /// `etag` (Delete).
    pub etag: bool,
    /// `update_mask` (Update).
    pub update_mask: bool,
}

impl RequestShape {
    /// The client-chosen id field of a Create of `resource`, e.g. `book_id`
    /// (`certificate_map_id` of the singular `certificateMap`).
    pub fn id_field(&self, resource: &Resource) -> Option<&str> {
        let wanted = format!("{}_id", resource.singular.to_snake_case());
        self.id_fields
            .iter()
            .map(String::as_str)
            .find(|field| !resource.singular.is_empty() && *field == wanted)
    }
}

/// Reads the request fields a name-keyed standard method uses.
pub(super) fn request_shape(method: &MethodDescriptor) -> RequestShape {
    let input = method.input();
    let has = |name: &str, kind: fn(&Kind) -> bool| {
        input
            .get_field_by_name(name)
            .is_some_and(|f| !f.is_list() && !f.is_map() && kind(&f.kind()))
    };
    let text = |kind: &Kind| *kind == Kind::String;
    let strings: Vec<String> = input
        .fields()
        .filter(|f| f.kind() == Kind::String && !f.is_list())
        .map(|f| f.name().to_owned())
        .collect();
    let named = |field: &str| strings.iter().any(|s| s == field).then(|| field.to_owned());
    RequestShape {
        parent: named("parent"),
        name: named("name"),
        strings: strings.clone(),
        id_fields: input
            .fields()
            .filter(|f| f.name().ends_with("_id") && f.kind() == Kind::String && !f.is_list())
            .map(|f| f.name().to_owned())
            .collect(),
        force: has("force", |kind| *kind == Kind::Bool),
        etag: has("etag", text),
        update_mask: has("update_mask", |kind| {
            kind.as_message()
                .is_some_and(|m| m.full_name() == "google.protobuf.FieldMask")
        }),
    }
}

/// The fields holding the parent's and the item's names in `method`'s
/// request: `parent` and `name`, else the fields its HTTP rule binds to
/// names of those patterns.
fn bound_keys(method: &Method, names: &NamePattern) -> (Option<String>, Option<String>) {
    let shape = &method.names;
    let parent = shape.parent.clone().or_else(|| {
        let collections = names.parent_collections()?;
        bound_field(method, collections)
    });
    let name = shape
        .name
        .clone()
        .or_else(|| bound_field(method, &names.collections));
    (parent, name)
}

/// The top-level string field of `method`'s request its HTTP rule binds to
/// a name of `collections` (`{topic=projects/*/topics/*}`).
fn bound_field(method: &Method, collections: &[String]) -> Option<String> {
    let http = method.http.as_ref()?;
    let pairs = |segments: &[Segment]| {
        segments.len() == collections.len() * 2
            && segments
                .chunks(2)
                .zip(collections)
                .all(|(pair, collection)| {
                    pair[0] == Segment::Literal(collection.clone()) && pair[1] == Segment::Any
                })
    };
    http.template
        .variables
        .iter()
        .find(|v| {
            method.names.strings.contains(&v.field)
                && pairs(&http.template.segments[v.start..v.end])
        })
        .map(|v| v.field.clone())
}

/// The key field a standard method of a name-keyed resource lacks, with
/// the AIP that asks for it.
fn missing_key(
    method: &Method,
    (parent, name): &(Option<String>, Option<String>),
    names: &NamePattern,
) -> Option<(&'static str, &'static str)> {
    let nested = names.parent_collections().is_some();
    match &method.standard {
        Standard::Create { .. } if nested && parent.is_none() => Some(("parent", "AIP-133")),
        Standard::List { .. } if nested && parent.is_none() => Some(("parent", "AIP-132")),
        Standard::Get { .. } if name.is_none() => Some(("name", "AIP-131")),
        Standard::Delete { .. } if name.is_none() => Some(("name", "AIP-135")),
        Standard::Undelete { .. } if name.is_none() => Some(("name", "AIP-164")),
        _ => None,
    }
}

/// What a standard method of a name-keyed resource has that is not served.
fn unserved(method: &Method) -> Option<&'static str> {
    match &method.standard {
        Standard::Update { body_field, .. } if body_field.is_empty() => {
            Some("an Update of a name-keyed resource takes the resource in a field (AIP-134)")
        }
        _ if method.view.is_some() => Some("legacy views of name-keyed resources are not served"),
        _ => None,
    }
}

/// The warning for a standard method without its key field: served as a
/// custom method.
fn unkeyed(method: &Method, resource: &Resource, field: &str, aip: &str) -> Diagnostic {
    let pattern = resource
        .names
        .as_ref()
        .map_or("", |names| names.pattern.as_str());
    Diagnostic::warning(
        method.location.clone(),
        format!(
            "`{}` has no `string {field}` field, nor one its HTTP rule binds to a name of \
             `{pattern}`, which `{}` needs as a standard method of `{}`: it is generated as a \
             custom method whose handler you implement",
            method.input_type, method.name, resource.full_name
        ),
    )
    .note(format!(
        "{aip}: declare `string {field} = 1;` in the request to serve it as a standard method"
    ))
}

/// The key scheme of a resource message: `Ok(None)` for UIDPs (a `uid`
/// field), `Ok(Some(pattern))` for names; `Err` once reported.
pub(super) fn key_scheme(
    message: &MessageDescriptor,
    location: &Location,
    diagnostics: &mut Diagnostics,
) -> Result<Option<NamePattern>, ()> {
    let full_name = message.full_name();
    let patterns = super::proto::patterns(message);
    let name_field = message.get_field_by_name("name");
    let name_ok = name_field
        .as_ref()
        .is_some_and(|f| f.kind() == Kind::String && !f.is_list());
    // A `uid` beside a name and a pattern of collection pairs is AIP-148's
    // server-assigned id, not the key; UIDP-keyed resources declare
    // the pattern `{uid}`.
    let named = name_ok
        && patterns
            .first()
            .is_some_and(|pattern| parse_pattern(pattern, location).is_some());
    if message.get_field_by_name("uid").is_some() && !named {
        return Ok(None);
    }
    let Some(pattern) = patterns.first().filter(|_| name_ok) else {
        let what = match (&name_field, patterns.is_empty()) {
            (Some(_), _) if !name_ok => "its `name` field is not a single `string`",
            (None, _) => "it has neither a `uid` field (UIDP keys) nor a `name` field",
            (Some(_), _) => "its `google.api.resource` option declares no `pattern`",
        };
        diagnostics.push(
            Diagnostic::new(
                location.clone(),
                format!("resource `{full_name}` has no key the generator can serve: {what}"),
            )
            .note(
                "declare `string name = 1;` and a pattern such as `pattern: \"shelves/{shelf}/books/{book}\"` \
                 (AIP-122), or a `string uid` field (UIDP keys)",
            ),
        );
        return Err(());
    };
    let parsed = parse_pattern(pattern, location).ok_or_else(|| {
        diagnostics.push(
            Diagnostic::new(
                location.clone(),
                format!(
                    "resource `{full_name}`: pattern `{pattern}` is not a sequence of \
                     `collection/{{id}}` pairs"
                ),
            )
            .note(
                "the generator serves patterns such as `shelves/{shelf}/books/{book}` (AIP-122): \
                 collection ids in lowerCamelCase, each followed by one `{variable}` in snake_case, \
                 and singletons (AIP-156), such pairs then one literal: `users/{user}/settings`",
            ),
        );
    })?;
    // A plural other than the last collection id is AIP-122's nested
    // collection (`users/{user}/events/{event}` with plural `userEvents`):
    // names follow the pattern, the plural names the collection elsewhere
    // (annotation tables, the SQL table, the CLI).
    let mut parsed = parsed;
    for other in &patterns[1..] {
        match parse_pattern(other, location) {
            Some(alternative) if alternative.collections.last() == parsed.collections.last() => {
                parsed.alternatives.push(alternative.collections);
            }
            _ => diagnostics.push(
                Diagnostic::warning(
                    location.clone(),
                    format!(
                        "resource `{full_name}`: pattern `{other}` is not served: names of its \
                         form are refused (INVALID_ARGUMENT)"
                    ),
                )
                .note(format!(
                    "the other patterns of a resource served are `collection/{{id}}` pairs \
                     ending in the first pattern's collection (`{}`)",
                    parsed.collections.last().map_or("", String::as_str)
                )),
            ),
        }
    }
    Ok(Some(parsed))
}

/// The `name` field of a name-keyed resource is its identifier: set by the
/// server on create, never changed by an update.
pub(super) fn name_is_identifier(resource: &mut Resource) {
    if resource.names.is_none() {
        return;
    }
    for field in resource
        .fields
        .iter_mut()
        .filter(|f| f.parent.is_none() && f.name == "name")
    {
        field.behavior = Behavior::OutputOnly;
    }
    // No UIDP hierarchy filters; `name` orders as the key does.
    resource.filters.clear();
}

impl Api {
    /// Links each name-keyed resource to the one declaring its parent's
    /// pattern (its parent type, and a child that blocks the parent's
    /// delete unless forced), then checks each standard method's request
    /// against the AIP shape of its resource's scheme.
    pub(super) fn link_names(&mut self, diagnostics: &mut Diagnostics) {
        let named: Vec<(String, String, String, Vec<String>)> = self
            .resources()
            .filter_map(|r| {
                let names = r.names.as_ref()?;
                Some((
                    r.full_name.clone(),
                    r.type_name.clone(),
                    r.plural.clone(),
                    names.collections.clone(),
                ))
            })
            .collect();
        for (full_name, type_name, plural, collections) in &named {
            let parent = &collections[..collections.len() - 1];
            let Some((parent_name, parent_type, ..)) = named
                .iter()
                .find(|(.., other)| !parent.is_empty() && other.as_slice() == parent)
                .cloned()
            else {
                continue;
            };
            for resource in self.packages.iter_mut().flat_map(|p| &mut p.resources) {
                if resource.full_name == *full_name && resource.parent_type.is_none() {
                    resource.parent_type = Some(parent_type.clone());
                }
                let listed = |d: &Dependent| d.resource_type == *type_name && d.field == "parent";
                if resource.full_name == parent_name && !resource.dependents.iter().any(listed) {
                    resource.dependents.push(Dependent {
                        collection: plural.clone(),
                        resource_type: type_name.clone(),
                        field: "parent".to_owned(),
                        read_capability: None,
                    });
                }
            }
        }
        self.check_name_requests(diagnostics);
    }

    /// Each standard method works on a resource of the API's own files, and
    /// each standard method of a name-keyed resource has the request fields
    /// its flow reads; one that does not is served as a custom method, with
    /// a warning (`ListModelVersions`, listing the versions of one model).
    fn check_name_requests(&mut self, diagnostics: &mut Diagnostics) {
        let mut keyed = Vec::new();
        let mut custom = Vec::new();
        for (p, package) in self.packages.iter().enumerate() {
            for (s, service) in package.services.iter().enumerate() {
                for (m, method) in service.methods.iter().enumerate() {
                    let Some(full_name) = method.standard.resource() else {
                        continue;
                    };
                    let Some(resource) = self.resource(full_name) else {
                        diagnostics.push(foreign(method, full_name));
                        custom.push((p, s, m));
                        continue;
                    };
                    let Some(names) = &resource.names else {
                        continue;
                    };
                    let keys = bound_keys(method, names);
                    if let Some((field, aip)) = missing_key(method, &keys, names) {
                        diagnostics.push(unkeyed(method, resource, field, aip));
                        custom.push((p, s, m));
                        continue;
                    }
                    if let Some(problem) = unserved(method) {
                        diagnostics.push(Diagnostic::new(
                            method.location.clone(),
                            format!("`{}`: {problem}", method.name),
                        ));
                    }
                    keyed.push(((p, s, m), keys));
                }
            }
        }
        for ((p, s, m), (parent, name)) in keyed {
            let method = &mut self.packages[p].services[s].methods[m];
            // A List's parent held in `name` (Cloud Monitoring's
            // `{name=projects/*}/alertPolicies`) is no filter on names.
            if let (Standard::List { filters, .. }, Some(parent)) = (&mut method.standard, &parent)
            {
                filters
                    .retain(|filter| !LIST_FILTERS.contains(&(filter.as_str(), parent.as_str())));
            }
            (method.names.parent, method.names.name) = (parent, name);
        }
        for (p, s, m) in custom {
            let method = &mut self.packages[p].services[s].methods[m];
            method.standard = Standard::Custom;
            method.shape = Shape::Fixed;
            method.long_running = None;
        }
        for resource in self.resources() {
            let Some(names) = &resource.names else {
                continue;
            };
            if !resource.references.is_empty() || resource.max_depth.is_some() || resource.shared {
                diagnostics.push(Diagnostic::new(
                    names.location.clone(),
                    format!(
                        "`{}` is keyed by resource names; annotation `references`, `max_depth` and \
                         `shared` apply to UIDP-keyed resources only (a field's \
                         `google.api.resource_reference` declares a reference between named resources)",
                        resource.full_name
                    ),
                ));
            }
        }
    }
}

/// A standard method on a resource declared in a file the API imports but
/// does not name: its storage is not generated.
fn foreign(method: &Method, resource: &str) -> Diagnostic {
    Diagnostic::warning(
        method.location.clone(),
        format!(
            "`{}` works on `{resource}`, a resource of a file the API imports but does not \
             include, whose storage is not generated: it is generated as a custom method whose \
             handler you implement",
            method.name
        ),
    )
    .note("the API's files are those `--proto` (`Config::files_under`, `Config::file`) names")
}
