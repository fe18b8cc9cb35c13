//! What storage keeps of each resource besides its encoded body, derived
//! from the annotation files: the fields kept in columns of their own (its
//! row type), and whether access decisions derive from its items.

use super::derived::Source;
use super::{Api, FieldKind, PublicRule, Resource};
use crate::annotations::Annotations;
use crate::diagnostics::{Diagnostic, Diagnostics};

/// A field kept in a column of its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The proto field name, which names the column too (`create_time`).
    pub field: String,
    /// The JSON name rules address it by (`createTime`).
    pub json_name: String,
    pub kind: FieldKind,
    /// Whether it is a single 64-bit signed integer (Rust `i64`).
    pub int64: bool,
    /// Whether the server sets it (OUTPUT_ONLY).
    pub output_only: bool,
    /// Where the value of a column derived from the item comes from (a
    /// filterable nested field, duration, list or map); `None` for a
    /// top-level field's own value.
    pub derived: Option<super::derived::Source>,
}

/// Who an item of a table guarding access is the access subject of: every
/// write of it advances the subject's access epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccessSubject {
    /// The item itself (a role: what it grants).
    Item,
    /// The item its reference field (JSON name) names (a role binding: the
    /// identity it grants to).
    Referenced(String),
}

impl Api {
    /// Every resource of the API, package by package.
    pub fn resources(&self) -> impl Iterator<Item = &Resource> {
        self.packages.iter().flat_map(|p| &p.resources)
    }

    /// The fields of `resource` its rules look up, each kept in a column:
    /// those `order_by` names (in its order), then, in the message's field
    /// order, the `name` filter's field, the fields a `filter` may compare,
    /// its references, the fields by which
    /// its items keep others from being deleted, and the field its public
    /// items are known by, and the delete time of a resource with soft
    /// deletes. `uid` and `parent` have columns in every table.
    pub fn columns(&self, resource: &Resource) -> Vec<Column> {
        let mut needed = ordered(resource);
        needed.extend(resource.filterable());
        needed.extend(self.looked_up(resource));
        let position = |json_name: &str| needed.iter().position(|n| *n == json_name);
        let mut columns: Vec<(usize, Column)> = resource
            .fields
            .iter()
            .filter(|field| has_column(field))
            .filter_map(|field| {
                let rank = position(&field.json_name)?;
                Some((rank.min(resource.order_by.len()), Column::of(field)))
            })
            .collect();
        // Stable: fields beyond `order_by` keep their declaration order.
        columns.sort_by_key(|(rank, _)| *rank);
        let derived = resource.derived.iter().map(Column::derived);
        columns
            .into_iter()
            .map(|(_, column)| column)
            .chain(derived)
            .collect()
    }

    /// The filterable fields (JSON names) of `resource` whose columns get
    /// no index: those its `indexed` annotation leaves out, unless another
    /// rule looks them up (`order_by`, the `name` filter, references,
    /// dependents, public items, soft deletes), which indexes serve.
    pub fn unindexed<'a>(&'a self, resource: &'a Resource) -> Vec<&'a str> {
        // An index of JSON text serves no filter of a list's or map's values.
        let json: Vec<&str> = (resource.derived.iter())
            .filter(|d| !matches!(d.source, Source::Single { .. }))
            .map(|d| d.json_path.as_str())
            .collect();
        let Some(indexed) = &resource.indexed else {
            return json;
        };
        let mut kept = ordered(resource);
        kept.extend(self.looked_up(resource));
        kept.extend(&json);
        (resource.filterable().into_iter())
            .filter(|field| !indexed.iter().any(|i| i == field) && !kept.contains(field))
            .chain(json)
            .collect()
    }

    /// The fields (JSON names) of `resource` that storage looks items up
    /// by besides lists' order and filters: its references, the fields by
    /// which its items keep others from being deleted, the field its public
    /// items are known by, and the delete time of soft deletes (AIP-164).
    fn looked_up<'a>(&'a self, resource: &'a Resource) -> Vec<&'a str> {
        let mut fields: Vec<&str> = resource
            .references
            .iter()
            .map(|r| r.json_name.as_str())
            .collect();
        fields.extend(self.blocking_fields(resource));
        fields.extend(resource.public.as_ref().map(PublicRule::field));
        if resource.soft_delete {
            fields.push("deleteTime");
        }
        fields
    }

    /// The fields (JSON names) of `resource` by which its items keep items
    /// of other collections from being deleted (`delete_blocked_by` entries
    /// naming a `field`).
    fn blocking_fields<'a>(&'a self, resource: &'a Resource) -> impl Iterator<Item = &'a str> {
        self.resources()
            .flat_map(|blocked| &blocked.dependents)
            .filter(|d| d.resource_type == resource.type_name && d.field != "parent")
            .map(|d| d.field.as_str())
    }

    /// Whose access an item of `resource` is part of, if access decisions
    /// derive from its items: a collection whose capabilities a reference
    /// `grants`, and the collection holding such a reference, whose items
    /// confer them on the item their other reference names.
    pub fn access_subject(&self, resource: &Resource) -> Option<AccessSubject> {
        if let Some(subject) = granted_to(resource) {
            return Some(AccessSubject::Referenced(subject.to_owned()));
        }
        self.resources()
            .flat_map(|holder| &holder.references)
            .any(|r| r.grants.is_some() && r.resource_type == resource.type_name)
            .then_some(AccessSubject::Item)
    }

    /// Reports fields a collection's `indexed` names that it cannot be
    /// filtered by: only filterable fields have indexes to leave out.
    pub(super) fn check_indexed(&self, annotations: &Annotations, diagnostics: &mut Diagnostics) {
        for resource in self.resources() {
            let (Some(indexed), Some(collection)) = (
                &resource.indexed,
                annotations.collections.get(&resource.plural),
            ) else {
                continue;
            };
            let filterable = resource.filterable();
            for field in indexed.iter().filter(|f| !filterable.contains(&f.as_str())) {
                diagnostics.push(Diagnostic::new(
                    collection.location.clone(),
                    format!(
                        "`indexed` names `{field}`, which `{}` cannot be filtered by (filterable: {})",
                        resource.plural,
                        filterable.join(", ")
                    ),
                ));
            }
        }
    }

    /// Reports a collection holding a reference that grants capabilities
    /// without exactly one other reference to name whom they are granted to.
    pub(super) fn check_access_subjects(
        &self,
        annotations: &Annotations,
        diagnostics: &mut Diagnostics,
    ) {
        for resource in self.resources() {
            let Some(granting) = resource.references.iter().find(|r| r.grants.is_some()) else {
                continue;
            };
            if granted_to(resource).is_some() {
                continue;
            }
            let Some(collection) = annotations.collections.get(&resource.plural) else {
                continue;
            };
            diagnostics.push(Diagnostic::new(
                collection.location.clone(),
                format!(
                    "`{}` grants the capabilities of its reference `{}`: it needs exactly one other reference, naming whom they are granted to (it has {})",
                    resource.plural,
                    granting.field,
                    resource.references.len() - 1,
                ),
            ));
        }
    }
}

/// The fields (JSON names) lists of `resource` order by: those `order_by`
/// names, and `name` when the `name` filter is declared.
fn ordered(resource: &Resource) -> Vec<&str> {
    let mut fields: Vec<&str> = resource.order_by.iter().map(String::as_str).collect();
    if resource.filters.iter().any(|filter| filter == "name") {
        fields.push("name");
    }
    fields
}

/// The reference (JSON name) naming whom `resource`'s items grant the
/// capabilities of another reference to: its one reference that grants
/// none, when it holds one that does.
fn granted_to(resource: &Resource) -> Option<&str> {
    let references = &resource.references;
    if !references.iter().any(|r| r.grants.is_some()) {
        return None;
    }
    let mut others = references.iter().filter(|r| r.grants.is_none());
    match (others.next(), others.next()) {
        (Some(subject), None) => Some(&subject.json_name),
        _ => None,
    }
}

/// Whether a field can have a column: a top-level scalar or timestamp
/// outside a oneof, always present (what `sort_value` reads), other than
/// `uid` and `parent`, which every table keeps.
fn has_column(field: &super::Field) -> bool {
    let single = field.parent.is_none() && field.oneof.is_none() && !field.optional;
    let scalar = !matches!(field.kind, FieldKind::Message | FieldKind::Repeated);
    single && scalar && !matches!(field.name.as_str(), "uid" | "parent")
}

impl Column {
    fn of(field: &super::Field) -> Column {
        Column {
            field: field.name.clone(),
            json_name: field.json_name.clone(),
            kind: field.kind.clone(),
            int64: field.int64,
            output_only: field.behavior == super::Behavior::OutputOnly,
            derived: None,
        }
    }

    fn derived(derived: &super::Derived) -> Column {
        Column {
            field: derived.column.clone(),
            json_name: derived.json_path.clone(),
            kind: match derived.integer() {
                true => FieldKind::Number,
                false => FieldKind::Text,
            },
            int64: true,
            output_only: false,
            derived: Some(derived.source.clone()),
        }
    }
}
