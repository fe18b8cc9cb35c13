//! Applying the annotation files to the model: every name they use is
//! resolved against the descriptors, and every mistake is reported with the
//! file and line of the annotation.
//!
//! Each collection's table is resolved in small passes, one per kind of
//! annotation (`lists`: ordering, page sizes and filters; `fields`: field
//! rules and public items; `relations`: delete blockers, references and the
//! parent; `permissions`: who may call each method), then applied to the
//! model at once. The `["*"]` tables follow (`options`: rules read from the
//! proto's own options; `every`), and the API's one token exchange
//! (`exchange`).

mod every;
mod exchange;
mod fields;
mod lists;
mod options;
mod permissions;
mod relations;
mod table;

use prost_reflect::DescriptorPool;

use super::{Api, Dependent, FieldRule, PublicRule, Reference, Resource, Standard};
use crate::annotations::{Annotations, Collection, EVERY_COLLECTION};
use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use permissions::Permissions;
use table::Table;

impl Api {
    pub(super) fn resource_by_collection(&self, collection: &str) -> Option<&Resource> {
        self.packages
            .iter()
            .flat_map(|p| &p.resources)
            .find(|r| r.plural == collection)
    }

    pub(super) fn resource_by_type(&self, type_name: &str) -> Option<&Resource> {
        self.packages
            .iter()
            .flat_map(|p| &p.resources)
            .find(|r| r.type_name == type_name)
    }

    /// Applies the annotation files, reporting every name that does not resolve.
    pub(super) fn annotate(
        &mut self,
        pool: &DescriptorPool,
        annotations: &Annotations,
        diagnostics: &mut Diagnostics,
    ) {
        let resolved: Vec<Resolved> = annotations
            .collections
            .iter()
            .filter_map(|(id, collection)| self.resolve(pool, id, collection, diagnostics))
            .collect();
        for resolved in resolved {
            self.apply(resolved);
        }
        // Stated in annotations, else in the proto's option, else the default;
        // an API without annotation files declares no access rules: any
        // caller the server authenticates may call it.
        self.apply_permission_option(pool, annotations, diagnostics);
        if !annotations.is_empty() {
            self.default_capabilities();
        }
        if !self.declares_access_rules() && self.methods().next().is_some() {
            diagnostics.push(
                Diagnostic::warning(
                    Location::default(),
                    "the API declares no access rule: every caller the server authenticates may \
                     call every method",
                )
                .note(
                    "an annotation file, or a method option named by `permission_option`, states \
                     the capability each method needs (codegen/README.md, \"Annotation files\")",
                ),
            );
        }
        self.apply_defaults(pool, annotations, diagnostics);
        self.resolve_read_capabilities();
        self.resolve_token_exchange(pool, annotations, diagnostics);
    }

    /// Resolves one collection's table, pass by pass.
    fn resolve(
        &self,
        pool: &DescriptorPool,
        id: &str,
        collection: &Collection,
        diagnostics: &mut Diagnostics,
    ) -> Option<Resolved> {
        let Some(resource) = self.resource_by_collection(id) else {
            let known: Vec<&str> = self.resources().map(|r| r.plural.as_str()).collect();
            diagnostics.push(Diagnostic::new(
                collection.location.clone(),
                format!(
                    "unknown collection `{id}` (collections: {})",
                    known.join(", ")
                ),
            ));
            return None;
        };
        let table = Table {
            id,
            collection,
            resource,
            message: pool
                .get_message_by_name(&resource.full_name)
                .expect("resources come from the pool"),
        };
        fields::refuse_oneof_members(&table, diagnostics);
        let order_by = lists::order_by(&table, diagnostics);
        let filterable = lists::filterable(&table, diagnostics);
        let indexed = lists::indexed(&table, diagnostics);
        let page_sizes = lists::page_sizes(&table, diagnostics);
        let filters = self.list_filters(&table, diagnostics);
        let dependents = self.dependents(pool, &table, diagnostics);
        let rules = fields::rules(&table, diagnostics);
        let (display_name, field_names) = fields::display_names(&table, diagnostics);
        let references = self.references(pool, &table, diagnostics);
        let public = fields::public(&table, diagnostics);
        let permissions = self.permissions(&table, diagnostics);
        let capabilities = permissions::capabilities(&table, diagnostics);
        let parent_type = collection
            .parent
            .as_ref()
            .and_then(|parent| self.parent_type(parent, table.source(), diagnostics));
        if let Some(depth) = &collection.max_depth {
            diagnostics.push(Diagnostic::new(
                table.at(depth),
                format!(
                    "`max_depth` bounds the whole hierarchy: state it in the `[\"{EVERY_COLLECTION}\"]` table"
                ),
            ));
        }
        if let Some(option) = &collection.permission_option {
            diagnostics.push(Diagnostic::new(
                table.at(option),
                format!(
                    "`permission_option` applies to every method: state it in the `[\"{EVERY_COLLECTION}\"]` table"
                ),
            ));
        }
        Some(Resolved {
            full_name: resource.full_name.clone(),
            shared: collection.shared,
            display_name,
            field_names,
            parent_type,
            references,
            order_by,
            filterable,
            indexed,
            page_sizes,
            filters,
            dependents,
            rules,
            public,
            permissions,
            capabilities,
        })
    }

    /// Sets what a collection's table resolved to on its resource and on
    /// the methods serving it.
    fn apply(&mut self, resolved: Resolved) {
        for resource in self
            .packages
            .iter_mut()
            .flat_map(|p| &mut p.resources)
            .filter(|r| r.full_name == resolved.full_name)
        {
            if !resolved.order_by.is_empty() {
                resource.order_by = resolved.order_by.clone();
            }
            if let Some((filterable, derived)) = &resolved.filterable {
                resource.filterable = Some(filterable.clone());
                resource.derived = derived.clone();
            }
            resource.indexed.clone_from(&resolved.indexed);
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
            resource.display_name.clone_from(&resolved.display_name);
            resource.field_names.clone_from(&resolved.field_names);
            resource.capabilities.clone_from(&resolved.capabilities);
        }
        for method in self.methods_mut() {
            if method.standard.resource() == Some(resolved.full_name.as_str()) {
                resolved.permissions.apply(method);
            }
        }
    }

    fn methods(&self) -> impl Iterator<Item = &super::Method> {
        self.packages
            .iter()
            .flat_map(|p| &p.services)
            .flat_map(|s| &s.methods)
    }

    fn methods_mut(&mut self) -> impl Iterator<Item = &mut super::Method> {
        self.packages
            .iter_mut()
            .flat_map(|p| &mut p.services)
            .flat_map(|s| &mut s.methods)
    }

    /// Names, for each dependent, the capability of its collection's Get.
    pub(in crate::model) fn resolve_read_capabilities(&mut self) {
        let gets: Vec<(String, Option<String>)> = self
            .methods()
            .filter_map(|m| match &m.standard {
                Standard::Get { resource } => Some((resource.clone(), m.capability.clone())),
                _ => None,
            })
            .collect();
        let types: Vec<(String, String)> = self
            .resources()
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

/// One collection's annotations, resolved against the descriptors.
struct Resolved {
    full_name: String,
    shared: bool,
    display_name: Option<String>,
    field_names: Vec<(String, String)>,
    parent_type: Option<String>,
    references: Vec<Reference>,
    order_by: Vec<String>,
    filterable: Option<(Vec<String>, Vec<super::Derived>)>,
    indexed: Option<Vec<String>>,
    page_sizes: Option<(u32, u32)>,
    filters: Option<Vec<String>>,
    dependents: Vec<Dependent>,
    rules: Vec<FieldRule>,
    public: Option<PublicRule>,
    permissions: Permissions,
    /// `<collection>.<verb>` of each verb `capabilities` states.
    capabilities: Vec<String>,
}
