//! Applying the annotation files to the model: every name they use is
//! resolved against the descriptors, and every mistake is reported with the
//! file and line of the annotation.

use prost_reflect::{DescriptorPool, Kind};

use super::{Api, Dependent, FieldKind, FieldRule, Resource, field_kind};
use crate::annotations::Annotations;
use crate::diagnostics::{Diagnostic, Diagnostics};

impl Api {
    fn resource_by_collection(&self, collection: &str) -> Option<&Resource> {
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
                match filter.get_ref().as_str() {
                    name @ ("children_of" | "descendants_of") => filters.push(name.to_owned()),
                    other => diagnostics.push(Diagnostic::new(
                        source.at(filter),
                        format!("unknown filter `{other}` (filters: children_of, descendants_of)"),
                    )),
                }
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
                });
            }

            let mut rules = Vec::new();
            for (name, rule) in &collection.fields {
                match top_field(name.get_ref()) {
                    Some(field) if field.kind() == Kind::String && !field.is_map() => {
                        rules.push(FieldRule {
                            field: field.name().to_owned(),
                            json_name: field.json_name().to_owned(),
                            repeated: field.is_list(),
                            allowed: rule.allowed.clone(),
                            uidp: rule.uidp,
                        })
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

            let full_name = resource.full_name.clone();
            let methods: Vec<String> = self
                .packages
                .iter()
                .flat_map(|p| &p.services)
                .flat_map(|s| &s.methods)
                .filter(|m| m.standard.resource() == Some(full_name.as_str()))
                .map(|m| m.name.clone())
                .collect();
            let public_field =
                collection
                    .public_if
                    .as_ref()
                    .and_then(|name| match top_field(name.get_ref()) {
                        Some(field) if field.kind() == Kind::Bool && !field.is_list() => {
                            Some(field.json_name().to_owned())
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
            let mut anonymous = Vec::new();
            for method in &collection.anonymous {
                if methods.contains(method.get_ref()) {
                    anonymous.push(method.get_ref().clone());
                } else {
                    diagnostics.push(Diagnostic::new(
                        source.at(method),
                        format!(
                            "`anonymous` names `{}`, which is not a method on `{collection_id}`",
                            method.get_ref()
                        ),
                    ));
                }
            }
            let mut capabilities = Vec::new();
            for (method, capability) in &collection.permissions {
                if methods.contains(method.get_ref()) {
                    capabilities.push((method.get_ref().clone(), capability.get_ref().clone()));
                } else {
                    diagnostics.push(Diagnostic::new(
                        source.at(method),
                        format!(
                            "`permissions` names `{}`, which is not a method on `{collection_id}` (methods: {})",
                            method.get_ref(),
                            methods.join(", ")
                        ),
                    ));
                }
            }
            resolved.push(Resolved {
                full_name,
                order_by,
                page_sizes,
                filters: collection.filters.is_some().then_some(filters),
                dependents,
                rules,
                public_field,
                capabilities,
                anonymous,
            });
        }

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
                    resource.public_field = resolved.public_field.clone();
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

        // Deny by default: every standard method states who may call it.
        for method in self
            .packages
            .iter()
            .flat_map(|p| &p.services)
            .flat_map(|s| &s.methods)
        {
            if method.standard.resource().is_some()
                && method.capability.is_none()
                && !method.anonymous
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

/// One collection's annotations, resolved against the descriptors.
struct Resolved {
    full_name: String,
    order_by: Vec<String>,
    page_sizes: Option<(u32, u32)>,
    filters: Option<Vec<String>>,
    dependents: Vec<Dependent>,
    rules: Vec<FieldRule>,
    public_field: Option<String>,
    capabilities: Vec<(String, String)>,
    anonymous: Vec<String>,
}
