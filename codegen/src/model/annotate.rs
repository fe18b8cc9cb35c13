//! Applying the annotation files to the model: every name they use is
//! resolved against the descriptors, and every mistake is reported with the
//! file and line of the annotation.

use prost_reflect::{DescriptorPool, Kind};

use super::{
    Api, Behavior, Dependent, FieldKind, FieldRule, LIST_FILTERS, Paging, PublicRule, Reach,
    Reference, Resource, Standard, field_kind,
};
use crate::annotations::{Annotations, EVERY_COLLECTION, FieldRules};
use crate::diagnostics::{Diagnostic, Diagnostics};

/// The deepest hierarchy an API may declare: 64 levels keep a uid within
/// 1,128 characters, well inside what SQL engines index.
const MAX_DEPTH_LIMIT: usize = 64;

impl Api {
    pub(super) fn resource_by_collection(&self, collection: &str) -> Option<&Resource> {
        self.packages
            .iter()
            .flat_map(|p| &p.resources)
            .find(|r| r.plural == collection)
    }

    /// Applies the annotation files, reporting every name that does not resolve.
    pub(super) fn annotate(
        &mut self,
        pool: &DescriptorPool,
        annotations: &Annotations,
        diagnostics: &mut Diagnostics,
    ) {
        let mut resolved = Vec::new();
        for (collection_id, collection) in &annotations.collections {
            let source = &collection.source;
            let Some(resource) = self.resource_by_collection(collection_id) else {
                let known: Vec<&str> = self
                    .packages
                    .iter()
                    .flat_map(|p| &p.resources)
                    .map(|r| r.plural.as_str())
                    .collect();
                diagnostics.push(Diagnostic::new(
                    collection.location.clone(),
                    format!(
                        "unknown collection `{collection_id}` (collections: {})",
                        known.join(", ")
                    ),
                ));
                continue;
            };
            let message = pool
                .get_message_by_name(&resource.full_name)
                .expect("resources come from the pool");
            let top_field = |name: &str| {
                message
                    .get_field_by_name(name)
                    .or_else(|| message.get_field_by_json_name(name))
            };
            // The rules below read a field as a field of its own; prost keeps
            // a oneof's members (and a proto3 `optional`) in one `Option`.
            let named = collection
                .order_by
                .iter()
                .chain(collection.fields.keys())
                .chain(collection.references.keys())
                .chain(&collection.public_if)
                .chain(&collection.public_after);
            for name in named {
                if let Some(oneof) = top_field(name.get_ref()).and_then(|f| f.containing_oneof()) {
                    let what = if oneof.is_synthetic() {
                        "is `optional`".to_owned()
                    } else {
                        format!("is a member of oneof `{}`", oneof.name())
                    };
                    diagnostics.push(Diagnostic::new(
                        source.at(name),
                        format!(
                            "`{}` {what}: annotations name fields outside a oneof",
                            name.get_ref()
                        ),
                    ));
                }
            }

            let mut order_by = Vec::new();
            for name in &collection.order_by {
                match top_field(name.get_ref()) {
                    Some(field) if !field.is_list() && !field.is_map() && matches!(field_kind(&field), FieldKind::Text | FieldKind::Number | FieldKind::Bool | FieldKind::Float | FieldKind::Timestamp) => {
                        order_by.push(field.json_name().to_owned());
                    }
                    Some(_) => diagnostics.push(Diagnostic::new(
                        source.at(name),
                        format!("`{}` of `{collection_id}` cannot be ordered by: only scalar fields and timestamps can", name.get_ref()),
                    )),
                    None => diagnostics.push(Diagnostic::new(
                        source.at(name),
                        format!("`order_by` names `{}`, which is not a field of `{}`", name.get_ref(), resource.full_name),
                    )),
                }
            }

            let page_sizes = collection.page_size.as_ref().and_then(|size| {
                let value = size.get_ref();
                if value.default == 0 || value.default > value.max {
                    diagnostics.push(Diagnostic::new(
                        source.at(size),
                        "`page_size` needs 0 < default <= max",
                    ));
                    None
                } else {
                    Some((value.default, value.max))
                }
            });

            let mut filters = Vec::new();
            for filter in collection.filters.iter().flatten() {
                let name = filter.get_ref().as_str();
                let Some((_, field)) = LIST_FILTERS.iter().find(|(known, _)| *known == name) else {
                    let known: Vec<&str> = LIST_FILTERS.iter().map(|(known, _)| *known).collect();
                    diagnostics.push(Diagnostic::new(
                        source.at(filter),
                        format!("unknown filter `{name}` (filters: {})", known.join(", ")),
                    ));
                    continue;
                };
                // Every (current) list of the collection must carry it.
                let lacking = self
                    .packages
                    .iter()
                    .flat_map(|p| &p.services)
                    .flat_map(|s| &s.methods)
                    .find(|m| match &m.standard {
                        Standard::List {
                            resource: r,
                            filters,
                            paging: Paging::Token,
                        } => *r == resource.full_name && !filters.iter().any(|f| f == name),
                        _ => false,
                    });
                if let Some(method) = lacking {
                    diagnostics.push(Diagnostic::new(
                        source.at(filter),
                        format!(
                            "filter `{name}` needs a `{field}` field in `{}` (declared at {})",
                            method.input_type, method.location
                        ),
                    ));
                    continue;
                }
                filters.push(name.to_owned());
            }

            let mut dependents = Vec::new();
            for blocker in &collection.delete_blocked_by {
                let value = blocker.get_ref();
                let Some(other) = self.resource_by_collection(&value.collection) else {
                    diagnostics.push(Diagnostic::new(
                        source.at(blocker),
                        format!(
                            "`delete_blocked_by` names unknown collection `{}`",
                            value.collection
                        ),
                    ));
                    continue;
                };
                let field = match &value.field {
                    None => "parent".to_owned(),
                    Some(name) => {
                        let other_message = pool
                            .get_message_by_name(&other.full_name)
                            .expect("from the pool");
                        let found = other_message
                            .get_field_by_name(name)
                            .or_else(|| other_message.get_field_by_json_name(name));
                        match found {
                            Some(field) if field.kind() == Kind::String && !field.is_list() => {
                                field.json_name().to_owned()
                            }
                            _ => {
                                diagnostics.push(Diagnostic::new(
                                    source.at(blocker),
                                    format!("`delete_blocked_by` names `{name}`, which is not a string field of `{}`", other.full_name),
                                ));
                                continue;
                            }
                        }
                    }
                };
                dependents.push(Dependent {
                    collection: other.plural.clone(),
                    resource_type: other.type_name.clone(),
                    field,
                    read_capability: None,
                });
            }

            let mut rules = Vec::new();
            for (name, rule) in &collection.fields {
                match top_field(name.get_ref()) {
                    Some(field) if field.kind() == Kind::String && !field.is_map() => {
                        rules.push(field_rule(&field, rule))
                    }
                    Some(_) => diagnostics.push(Diagnostic::new(
                        source.at(name),
                        format!(
                            "field rules apply to string fields; `{}` is not one",
                            name.get_ref()
                        ),
                    )),
                    None => diagnostics.push(Diagnostic::new(
                        source.at(name),
                        format!(
                            "`fields` names `{}`, which is not a field of `{}`",
                            name.get_ref(),
                            resource.full_name
                        ),
                    )),
                }
            }

            let mut references = Vec::new();
            for (name, rule) in &collection.references {
                let value = rule.get_ref();
                let field = match top_field(name.get_ref()) {
                    Some(field) if field.kind() == Kind::String && !field.is_list() => field,
                    _ => {
                        diagnostics.push(Diagnostic::new(
                            source.at(name),
                            format!(
                                "`references` names `{}`, which is not a string field of `{}`",
                                name.get_ref(),
                                resource.full_name
                            ),
                        ));
                        continue;
                    }
                };
                let immutable = resource.fields.iter().any(|f| {
                    f.parent.is_none()
                        && f.name == field.name()
                        && f.behavior == Behavior::Immutable
                });
                if !immutable {
                    diagnostics.push(Diagnostic::new(
                        source.at(name),
                        format!(
                            "reference field `{}` must be IMMUTABLE (`google.api.field_behavior`): references are checked when items are created",
                            field.name()
                        ),
                    ));
                }
                let Some(target) = self.resource_by_collection(&value.collection) else {
                    diagnostics.push(Diagnostic::new(
                        source.at(rule),
                        format!(
                            "`references` names unknown collection `{}`",
                            value.collection
                        ),
                    ));
                    continue;
                };
                let reach = match value.reach.as_str() {
                    "ancestors" => Reach::Ancestors,
                    "root" => Reach::Root,
                    other => {
                        diagnostics.push(Diagnostic::new(
                            source.at(rule),
                            format!("unknown reach `{other}` (reaches: ancestors, root)"),
                        ));
                        continue;
                    }
                };
                let grants = match &value.grants {
                    None => None,
                    Some(grants) => {
                        let target_message = pool
                            .get_message_by_name(&target.full_name)
                            .expect("from the pool");
                        match target_message
                            .get_field_by_name(grants)
                            .or_else(|| target_message.get_field_by_json_name(grants))
                        {
                            Some(f) if f.kind() == Kind::String && f.is_list() => {
                                Some(f.name().to_owned())
                            }
                            _ => {
                                diagnostics.push(Diagnostic::new(
                                    source.at(rule),
                                    format!("`grants` names `{grants}`, which is not a repeated string field of `{}`", target.full_name),
                                ));
                                continue;
                            }
                        }
                    }
                };
                references.push(Reference {
                    field: field.name().to_owned(),
                    json_name: field.json_name().to_owned(),
                    target: target.full_name.clone(),
                    collection: target.plural.clone(),
                    resource_type: target.type_name.clone(),
                    reach,
                    grants,
                });
            }

            let full_name = resource.full_name.clone();
            let methods: Vec<String> = self
                .packages
                .iter()
                .flat_map(|p| &p.services)
                .flat_map(|s| &s.methods)
                .filter(|m| m.standard.resource() == Some(full_name.as_str()))
                .map(|m| m.name.clone())
                .collect();
            let public_if =
                collection
                    .public_if
                    .as_ref()
                    .and_then(|name| match top_field(name.get_ref()) {
                        Some(field) if field.kind() == Kind::Bool && !field.is_list() => {
                            Some(PublicRule::If(field.json_name().to_owned()))
                        }
                        _ => {
                            diagnostics.push(Diagnostic::new(
                                source.at(name),
                                format!(
                                    "`public_if` names `{}`, which is not a bool field of `{}`",
                                    name.get_ref(),
                                    resource.full_name
                                ),
                            ));
                            None
                        }
                    });
            let public_after = collection.public_after.as_ref().and_then(|name| {
                match top_field(name.get_ref()) {
                    Some(field)
                        if !field.is_list()
                            && !field.is_map()
                            && field_kind(&field) == FieldKind::Timestamp =>
                    {
                        Some(PublicRule::After(field.json_name().to_owned()))
                    }
                    _ => {
                        diagnostics.push(Diagnostic::new(
                            source.at(name),
                            format!(
                                "`public_after` names `{}`, which is not a `google.protobuf.Timestamp` field of `{}`",
                                name.get_ref(),
                                resource.full_name
                            ),
                        ));
                        None
                    }
                }
            });
            if collection.public_if.is_some()
                && let Some(after) = &collection.public_after
            {
                diagnostics.push(Diagnostic::new(
                    source.at(after),
                    "a collection states one rule for public items: `public_if` or `public_after`, not both",
                ));
            }
            let public = public_if.or(public_after);
            // A misspelt method name leaves the method meant without a
            // permission: the misspelling is reported, with the methods left
            // without one as a note, instead of a second error for each.
            let unpermitted: Vec<&str> = methods
                .iter()
                .filter(|method| {
                    !collection
                        .permissions
                        .keys()
                        .chain(&collection.anonymous)
                        .any(|named| named.get_ref() == *method)
                })
                .map(String::as_str)
                .collect();
            let unknown = |key: &str, method: &toml::Spanned<String>, listed: String| {
                let diagnostic = Diagnostic::new(
                    source.at(method),
                    format!(
                        "`{key}` names `{}`, which is not a method on `{collection_id}`{listed}",
                        method.get_ref()
                    ),
                );
                if unpermitted.is_empty() {
                    diagnostic
                } else {
                    diagnostic.note(format!(
                        "methods without a permission: {}",
                        unpermitted.join(", ")
                    ))
                }
            };
            let mut misnamed = false;
            let mut anonymous = Vec::new();
            for method in &collection.anonymous {
                if methods.contains(method.get_ref()) {
                    anonymous.push(method.get_ref().clone());
                } else {
                    misnamed = true;
                    diagnostics.push(unknown("anonymous", method, String::new()));
                }
            }
            let mut capabilities = Vec::new();
            for (method, capability) in &collection.permissions {
                if methods.contains(method.get_ref()) {
                    capabilities.push((method.get_ref().clone(), capability.get_ref().clone()));
                } else {
                    misnamed = true;
                    let listed = format!(" (methods: {})", methods.join(", "));
                    diagnostics.push(unknown("permissions", method, listed));
                }
            }
            let parent_type = collection
                .parent
                .as_ref()
                .and_then(|parent| self.parent_type(parent, source, diagnostics));
            if let Some(depth) = &collection.max_depth {
                diagnostics.push(Diagnostic::new(
                    source.at(depth),
                    format!(
                        "`max_depth` bounds the whole hierarchy: state it in the `[\"{EVERY_COLLECTION}\"]` table"
                    ),
                ));
            }
            resolved.push(Resolved {
                shared: collection.shared,
                parent_type,
                references,
                full_name,
                order_by,
                page_sizes,
                filters: collection.filters.is_some().then_some(filters),
                dependents,
                rules,
                public,
                capabilities,
                anonymous,
                misnamed,
            });
        }

        let misnamed: Vec<String> = resolved
            .iter()
            .filter(|resolved| resolved.misnamed)
            .map(|resolved| resolved.full_name.clone())
            .collect();
        for resolved in resolved {
            for package in &mut self.packages {
                for resource in package
                    .resources
                    .iter_mut()
                    .filter(|r| r.full_name == resolved.full_name)
                {
                    if !resolved.order_by.is_empty() {
                        resource.order_by = resolved.order_by.clone();
                    }
                    resource.page_sizes = resolved.page_sizes;
                    if let Some(filters) = &resolved.filters {
                        resource.filters = filters.clone();
                    }
                    resource.dependents = resolved.dependents.clone();
                    resource.rules = resolved.rules.clone();
                    resource.public = resolved.public.clone();
                    resource.references = resolved.references.clone();
                    resource.parent_type = resolved.parent_type.clone();
                    resource.shared = resolved.shared;
                }
                for method in package.services.iter_mut().flat_map(|s| &mut s.methods) {
                    if method.standard.resource() != Some(resolved.full_name.as_str()) {
                        continue;
                    }
                    if let Some((_, capability)) = resolved
                        .capabilities
                        .iter()
                        .find(|(name, _)| *name == method.name)
                    {
                        method.capability = Some(capability.clone());
                    }
                    method.anonymous = resolved.anonymous.contains(&method.name);
                }
            }
        }

        self.apply_defaults(pool, annotations, diagnostics);
        self.resolve_read_capabilities();

        // Deny by default: every standard method states who may call it (of
        // a collection that misnames a method, the misnaming said it).
        for method in self
            .packages
            .iter()
            .flat_map(|p| &p.services)
            .flat_map(|s| &s.methods)
        {
            if let Some(resource) = method.standard.resource()
                && method.capability.is_none()
                && !method.anonymous
                && !misnamed.iter().any(|name| name == resource)
            {
                diagnostics.push(Diagnostic::new(
                    method.location.clone(),
                    format!(
                        "method `{}` has no permission: add it to the collection's `permissions` (or `anonymous`) in annotations.toml",
                        method.name
                    ),
                ));
            }
        }
    }
}

impl Api {
    /// The resource type of collection `parent`, for a `parent` annotation.
    fn parent_type(
        &self,
        parent: &toml::Spanned<String>,
        source: &crate::annotations::SourceFile,
        diagnostics: &mut Diagnostics,
    ) -> Option<String> {
        let found = self.resource_by_collection(parent.get_ref());
        if found.is_none() {
            diagnostics.push(Diagnostic::new(
                source.at(parent),
                format!("`parent` names unknown collection `{}`", parent.get_ref()),
            ));
        }
        found.map(|resource| resource.type_name.clone())
    }

    /// Applies `["*"]` field rules to every resource with the field that
    /// states no rules of its own for it.
    fn apply_defaults(
        &mut self,
        pool: &DescriptorPool,
        annotations: &Annotations,
        diagnostics: &mut Diagnostics,
    ) {
        for defaults in &annotations.defaults {
            let source = &defaults.source;
            let stray = !defaults.order_by.is_empty()
                || defaults.page_size.is_some()
                || defaults.filters.is_some()
                || !defaults.delete_blocked_by.is_empty()
                || !defaults.permissions.is_empty()
                || !defaults.anonymous.is_empty()
                || defaults.public_if.is_some()
                || defaults.public_after.is_some()
                || defaults.shared
                || !defaults.references.is_empty();
            if stray {
                diagnostics.push(Diagnostic::new(
                    defaults.location.clone(),
                    format!(
                        "`[\"{EVERY_COLLECTION}\"]` may hold only `fields` rules, `parent` and `max_depth`"
                    ),
                ));
            }
            if let Some(depth) = &defaults.max_depth {
                let levels = *depth.get_ref();
                if (1..=MAX_DEPTH_LIMIT).contains(&levels) {
                    for resource in self.packages.iter_mut().flat_map(|p| &mut p.resources) {
                        resource.max_depth = Some(levels);
                    }
                } else {
                    diagnostics.push(Diagnostic::new(
                        source.at(depth),
                        format!(
                            "`max_depth` must be 1 to {MAX_DEPTH_LIMIT} (uids stay short enough to index)"
                        ),
                    ));
                }
            }
            if let Some(parent) = &defaults.parent {
                let parent_type = self.parent_type(parent, source, diagnostics);
                for resource in self.packages.iter_mut().flat_map(|p| &mut p.resources) {
                    if resource.parent_type.is_none() {
                        resource.parent_type = parent_type.clone();
                    }
                }
            }
            let mut used = vec![false; defaults.fields.len()];
            for resource in self.packages.iter_mut().flat_map(|p| &mut p.resources) {
                let message = pool
                    .get_message_by_name(&resource.full_name)
                    .expect("resources come from the pool");
                for (index, (name, rule)) in defaults.fields.iter().enumerate() {
                    let Some(field) = message.get_field_by_name(name.get_ref()) else {
                        continue;
                    };
                    used[index] = true;
                    if field.kind() != Kind::String || field.is_map() {
                        diagnostics.push(Diagnostic::new(
                            source.at(name),
                            format!(
                                "field rules apply to string fields; `{}` of `{}` is not one",
                                name.get_ref(),
                                resource.full_name
                            ),
                        ));
                    } else if field.containing_oneof().is_some() {
                        diagnostics.push(Diagnostic::new(
                            source.at(name),
                            format!(
                                "field rules apply to fields outside a oneof; `{}` of `{}` is in one",
                                name.get_ref(),
                                resource.full_name
                            ),
                        ));
                    } else if !resource.rules.iter().any(|r| r.field == field.name()) {
                        resource.rules.push(field_rule(&field, rule));
                    }
                }
            }
            for ((name, _), used) in defaults.fields.iter().zip(used) {
                if !used {
                    diagnostics.push(Diagnostic::new(
                        source.at(name),
                        format!("no resource has a field `{}`", name.get_ref()),
                    ));
                }
            }
        }
    }

    /// Names, for each dependent, the capability of its collection's Get.
    fn resolve_read_capabilities(&mut self) {
        let gets: Vec<(String, Option<String>)> = self
            .packages
            .iter()
            .flat_map(|p| &p.services)
            .flat_map(|s| &s.methods)
            .filter_map(|m| match &m.standard {
                Standard::Get { resource } => Some((resource.clone(), m.capability.clone())),
                _ => None,
            })
            .collect();
        let types: Vec<(String, String)> = self
            .packages
            .iter()
            .flat_map(|p| &p.resources)
            .map(|r| (r.type_name.clone(), r.full_name.clone()))
            .collect();
        for dependent in self
            .packages
            .iter_mut()
            .flat_map(|p| &mut p.resources)
            .flat_map(|r| &mut r.dependents)
        {
            let full_name = types
                .iter()
                .find(|(t, _)| *t == dependent.resource_type)
                .map(|(_, f)| f);
            dependent.read_capability = gets
                .iter()
                .find(|(resource, _)| Some(resource) == full_name)
                .and_then(|(_, capability)| capability.clone());
        }
    }
}

fn field_rule(field: &prost_reflect::FieldDescriptor, rule: &FieldRules) -> FieldRule {
    FieldRule {
        field: field.name().to_owned(),
        json_name: field.json_name().to_owned(),
        repeated: field.is_list(),
        allowed: rule.allowed.clone(),
        uidp: rule.uidp,
        max_length: rule.max_length,
        max_bytes: rule.max_bytes,
        printable: rule.printable,
        must_hold: rule.caller_must_hold,
    }
}

/// One collection's annotations, resolved against the descriptors.
struct Resolved {
    shared: bool,
    parent_type: Option<String>,
    references: Vec<Reference>,
    full_name: String,
    order_by: Vec<String>,
    page_sizes: Option<(u32, u32)>,
    filters: Option<Vec<String>>,
    dependents: Vec<Dependent>,
    rules: Vec<FieldRule>,
    public: Option<PublicRule>,
    capabilities: Vec<(String, String)>,
    anonymous: Vec<String>,
    /// `permissions` or `anonymous` names a method the collection lacks.
    misnamed: bool,
}
