//! How a collection's items relate to other collections' items: what blocks
//! a delete, reference fields and the parent's collection.

use prost_reflect::{DescriptorPool, FieldDescriptor, Kind};
use toml::Spanned;

use super::Table;
use crate::annotations::{Blocker, ReferenceRule, SourceFile};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::{Api, Behavior, Dependent, Reach, Reference, Resource};

impl Api {
    /// The items that keep an item from being deleted (`delete_blocked_by`).
    pub(super) fn dependents(
        &self,
        pool: &DescriptorPool,
        table: &Table,
        diagnostics: &mut Diagnostics,
    ) -> Vec<Dependent> {
        table
            .collection
            .delete_blocked_by
            .iter()
            .filter_map(|blocker| self.dependent(pool, table, blocker, diagnostics))
            .collect()
    }

    fn dependent(
        &self,
        pool: &DescriptorPool,
        table: &Table,
        blocker: &Spanned<Blocker>,
        diagnostics: &mut Diagnostics,
    ) -> Option<Dependent> {
        let value = blocker.get_ref();
        let Some(other) = self.resource_by_collection(&value.collection) else {
            diagnostics.push(Diagnostic::new(
                table.at(blocker),
                format!(
                    "`delete_blocked_by` names unknown collection `{}`",
                    value.collection
                ),
            ));
            return None;
        };
        let field = match &value.field {
            None => "parent".to_owned(),
            Some(name) => {
                let Some(field) = string_field(pool, other, name, false) else {
                    diagnostics.push(Diagnostic::new(
                        table.at(blocker),
                        format!(
                            "`delete_blocked_by` names `{name}`, which is not a string field of `{}`",
                            other.full_name
                        ),
                    ));
                    return None;
                };
                field.json_name().to_owned()
            }
        };
        Some(Dependent {
            collection: other.plural.clone(),
            resource_type: other.type_name.clone(),
            field,
            read_capability: None,
        })
    }

    /// The fields holding uids of other collections' items (`references`).
    pub(super) fn references(
        &self,
        pool: &DescriptorPool,
        table: &Table,
        diagnostics: &mut Diagnostics,
    ) -> Vec<Reference> {
        table
            .collection
            .references
            .iter()
            .filter_map(|(name, rule)| self.reference(pool, table, name, rule, diagnostics))
            .collect()
    }

    fn reference(
        &self,
        pool: &DescriptorPool,
        table: &Table,
        name: &Spanned<String>,
        rule: &Spanned<ReferenceRule>,
        diagnostics: &mut Diagnostics,
    ) -> Option<Reference> {
        let value = rule.get_ref();
        let field = reference_field(table, name, diagnostics)?;
        let declared = super::super::references::option_type(pool, &field);
        let target = match (&value.collection, &declared) {
            (Some(collection), _) => self.resource_by_collection(collection).ok_or_else(|| {
                format!("`references` names unknown collection `{collection}`")
            }),
            (None, Some(type_name)) => self.resource_by_type(type_name).ok_or_else(|| {
                format!(
                    "`{}`'s `google.api.resource_reference` names `{type_name}`, no resource of the API",
                    field.name()
                )
            }),
            (None, None) => Err(format!(
                "`references` entry `{}` names no `collection`, and the field has no \
                 `google.api.resource_reference` naming its type",
                field.name()
            )),
        };
        let target = match target {
            Ok(target) => target,
            Err(problem) => {
                diagnostics.push(Diagnostic::new(table.at(rule), problem));
                return None;
            }
        };
        if let Some(type_name) = declared.filter(|declared| *declared != target.type_name) {
            diagnostics.push(Diagnostic::new(
                table.at(rule),
                format!(
                    "`references` says `{}` names a `{}`, its `google.api.resource_reference` a `{type_name}`",
                    field.name(),
                    target.type_name
                ),
            ));
        }
        let reach = match value.reach.as_deref().unwrap_or("ancestors") {
            "ancestors" => Reach::Ancestors,
            "root" => Reach::Root,
            other => {
                diagnostics.push(Diagnostic::new(
                    table.at(rule),
                    format!("unknown reach `{other}` (reaches: ancestors, root)"),
                ));
                return None;
            }
        };
        let mut grants = None;
        if let Some(name) = &value.grants {
            let Some(field) = string_field(pool, target, name, true) else {
                diagnostics.push(Diagnostic::new(
                    table.at(rule),
                    format!(
                        "`grants` names `{name}`, which is not a repeated string field of `{}`",
                        target.full_name
                    ),
                ));
                return None;
            };
            grants = Some(field.name().to_owned());
        }
        Some(Reference {
            grants,
            ..Reference::new(&field, target, reach)
        })
    }

    /// The resource type of collection `parent`, for a `parent` annotation.
    pub(super) fn parent_type(
        &self,
        parent: &Spanned<String>,
        source: &SourceFile,
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
}

/// The string field a `references` entry names, reported unless IMMUTABLE:
/// references are checked when items are created only.
fn reference_field(
    table: &Table,
    name: &Spanned<String>,
    diagnostics: &mut Diagnostics,
) -> Option<FieldDescriptor> {
    let resource = table.resource;
    let Some(field) = table
        .field(name.get_ref())
        .filter(|field| field.kind() == Kind::String && !field.is_list())
    else {
        diagnostics.push(Diagnostic::new(
            table.at(name),
            format!(
                "`references` names `{}`, which is not a string field of `{}`",
                name.get_ref(),
                resource.full_name
            ),
        ));
        return None;
    };
    let immutable = resource.fields.iter().any(|f| {
        f.parent.is_none()
            && f.name == field.name()
            && matches!(
                f.behavior,
                Behavior::Immutable | Behavior::RequiredImmutable
            )
    });
    if !immutable {
        diagnostics.push(Diagnostic::new(
            table.at(name),
            format!(
                "reference field `{}` must be IMMUTABLE (`google.api.field_behavior`): references are checked when items are created",
                field.name()
            ),
        ));
    }
    Some(field)
}

/// The string field of `resource` of that proto or JSON name, repeated or
/// not as `repeated` says.
fn string_field(
    pool: &DescriptorPool,
    resource: &Resource,
    name: &str,
    repeated: bool,
) -> Option<FieldDescriptor> {
    let message = pool
        .get_message_by_name(&resource.full_name)
        .expect("resources come from the pool");
    message
        .get_field_by_name(name)
        .or_else(|| message.get_field_by_json_name(name))
        .filter(|field| field.kind() == Kind::String && field.is_list() == repeated)
}
