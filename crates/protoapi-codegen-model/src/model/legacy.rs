//! Legacy versions: older messages that show a resource under earlier field
//! names and shapes (`[collection.legacy]` in the annotation files), resolved
//! field by field against both descriptors. Methods speaking a legacy message
//! become standard methods of the resource it shows.

use prost_reflect::{DescriptorPool, FieldDescriptor, Kind, MessageDescriptor};

use super::fields::behavior;
use super::proto::rust_path;
use super::{Api, Behavior, LIST_FILTERS, Standard};
use crate::annotations::{Annotations, ViewDecl};
use crate::diagnostics::{Diagnostic, Diagnostics, Location};

/// A legacy message and how each of its fields shows the resource.
#[derive(Clone, Debug)]
pub struct View {
    /// Full proto name, e.g. `library.v1.Shelf`.
    pub message: String,
    pub package: String,
    pub rust_path: String,
    /// The resource shown (full proto name).
    pub target: String,
    pub fields: Vec<ViewField>,
    /// The legacy field holding the uid (e.g. `id`).
    pub id_field: String,
    /// The resource's top-level fields (proto names) a full replacement writes.
    pub replaces: Vec<String>,
    /// The filters legacy lists accept.
    pub filters: Vec<String>,
    /// Whether the fields show every field of the resource, so that building
    /// the resource needs no `..Default::default()`.
    pub complete: bool,
}

/// One legacy field and the resource field it shows.
#[derive(Clone, Debug)]
pub struct ViewField {
    /// The legacy field's proto name.
    pub name: String,
    /// The resource field's proto name.
    pub target: String,
    pub conversion: Conversion,
}

/// How a legacy field's value becomes the resource field's, and back.
#[derive(Clone, Debug)]
pub enum Conversion {
    /// The same Rust type (scalars, strings, timestamps, the same message or
    /// enums with the same values, which prost carries as `i32`).
    Same,
    /// A message of the legacy package with fields of the same names.
    Message {
        view: String,
        target: String,
        fields: Vec<ViewField>,
        /// Whether `fields` show every field of `target`.
        complete: bool,
    },
    /// `map<string, N>` showing a message whose fields are all `N`: one key
    /// per field, spelled as its JSON name.
    Map {
        target: String,
        /// (key, the message field's proto name).
        keys: Vec<(String, String)>,
    },
}

impl Api {
    /// Resolves every `[collection.legacy]` table and turns the methods that
    /// speak a legacy message into standard methods of the resource it shows.
    pub(super) fn resolve_views(
        &mut self,
        pool: &DescriptorPool,
        annotations: &Annotations,
        diagnostics: &mut Diagnostics,
    ) {
        // (legacy message, resource shown), even for views with mistakes:
        // their methods still belong to the resource, so that one mistake
        // is reported once.
        let mut shown = Vec::new();
        for decl in &annotations.views {
            let Some(resource) = self.resource_by_collection(&decl.collection) else {
                diagnostics.push(Diagnostic::new(
                    decl.location.clone(),
                    format!("legacy view of unknown collection `{}`", decl.collection),
                ));
                continue;
            };
            shown.push((
                decl.rule.message.get_ref().clone(),
                resource.full_name.clone(),
            ));
            if let Some(view) = self.resolve_view(pool, decl, diagnostics) {
                self.views.push(view);
            }
        }
        for package in &mut self.packages {
            for method in package.services.iter_mut().flat_map(|s| &mut s.methods) {
                let Some((message, target)) = method
                    .standard
                    .resource()
                    .and_then(|name| shown.iter().find(|(message, _)| message == name))
                else {
                    continue;
                };
                method.view = Some(message.clone());
                method.standard.set_resource(target.clone());
            }
        }
    }

    fn resolve_view(
        &self,
        pool: &DescriptorPool,
        decl: &ViewDecl,
        diagnostics: &mut Diagnostics,
    ) -> Option<View> {
        let resource = self.resource_by_collection(&decl.collection)?;
        let name = &decl.rule.message;
        let Some(message) = pool.get_message_by_name(name.get_ref()) else {
            diagnostics.push(Diagnostic::new(
                decl.source.at(name),
                format!(
                    "`message` names `{}`, which is not a message",
                    name.get_ref()
                ),
            ));
            return None;
        };
        let target = pool
            .get_message_by_name(&resource.full_name)
            .expect("resources come from the pool");
        let renames_fit = check_renames(decl, &message, &target, diagnostics);
        let (fields, fields_fit) = view_fields(decl, &message, &target, diagnostics);
        let filters = legacy_filters(decl, diagnostics);
        let Some(id_field) = fields
            .iter()
            .find(|f| f.target == "uid")
            .map(|f| f.name.clone())
        else {
            diagnostics.push(Diagnostic::new(
                Location::of(&message.parent_file(), message.path()),
                format!("`{}` has no field showing `uid`", message.full_name()),
            ));
            return None;
        };
        if !(renames_fit && fields_fit) {
            return None;
        }
        let replaces = fields
            .iter()
            .filter(|f| {
                let field = target.get_field_by_name(&f.target).expect("resolved above");
                behavior(pool, &field) != Behavior::OutputOnly
            })
            .map(|f| f.target.clone())
            .collect();
        let complete = shows_every_field(&fields, &target);
        Some(View {
            message: message.full_name().to_owned(),
            package: message.package_name().to_owned(),
            rust_path: rust_path(&message),
            target: resource.full_name.clone(),
            fields,
            id_field,
            replaces,
            filters,
            complete,
        })
    }

    pub fn view(&self, message: &str) -> Option<&View> {
        self.views.iter().find(|v| v.message == message)
    }
}

impl Standard {
    fn set_resource(&mut self, name: String) {
        match self {
            Standard::Create { resource, .. }
            | Standard::Get { resource }
            | Standard::List { resource, .. }
            | Standard::Update { resource, .. }
            | Standard::Delete { resource }
            | Standard::Undelete { resource }
            | Standard::BatchGet { resource, .. } => *resource = name,
            Standard::Operations | Standard::Policy(_) | Standard::Custom => {}
        }
    }
}

/// Checks that each `rename` pairs a field of the legacy message with a field
/// of the resource; whether all do.
fn check_renames(
    decl: &ViewDecl,
    message: &MessageDescriptor,
    target: &MessageDescriptor,
    diagnostics: &mut Diagnostics,
) -> bool {
    let mut fit = true;
    for (from, to) in &decl.rule.rename {
        for (name, of) in [(from, message), (to, target)] {
            if of.get_field_by_name(name.get_ref()).is_none() {
                diagnostics.push(Diagnostic::new(
                    decl.source.at(name),
                    format!(
                        "`rename` names `{}`, which is not a field of `{}`",
                        name.get_ref(),
                        of.full_name()
                    ),
                ));
                fit = false;
            }
        }
    }
    fit
}

/// How each field of the legacy message shows a field of the resource, and
/// whether every one does (a mistaken `rename` is reported at the rename).
fn view_fields(
    decl: &ViewDecl,
    message: &MessageDescriptor,
    target: &MessageDescriptor,
    diagnostics: &mut Diagnostics,
) -> (Vec<ViewField>, bool) {
    let mut fields = Vec::new();
    let mut fit = true;
    for field in message.fields() {
        let rename = decl
            .rule
            .rename
            .iter()
            .find(|(from, _)| from.get_ref() == field.name());
        let renamed = rename.map_or(field.name(), |(_, to)| to.get_ref().as_str());
        let location = Location::of(&field.parent_file(), field.path());
        let Some(shown) = target.get_field_by_name(renamed) else {
            if rename.is_none() {
                diagnostics.push(Diagnostic::new(
                    location,
                    format!(
                        "`{}` shows no field of `{}`: give it a field's name, or `rename` it in the `legacy` table of `{}`",
                        field.full_name(),
                        target.full_name(),
                        decl.collection
                    ),
                ));
                fit = false;
            }
            continue;
        };
        match conversion(&field, &shown) {
            Ok(conversion) => fields.push(ViewField {
                name: field.name().to_owned(),
                target: shown.name().to_owned(),
                conversion,
            }),
            Err(why) => {
                diagnostics.push(Diagnostic::new(location, why));
                fit = false;
            }
        }
    }
    (fields, fit)
}

/// The filters legacy lists accept, reporting unknown ones.
fn legacy_filters(decl: &ViewDecl, diagnostics: &mut Diagnostics) -> Vec<String> {
    let mut filters = Vec::new();
    for filter in &decl.rule.filters {
        if LIST_FILTERS
            .iter()
            .any(|(name, _)| name == filter.get_ref())
        {
            filters.push(filter.get_ref().clone());
        } else {
            let known: Vec<&str> = LIST_FILTERS.iter().map(|(name, _)| *name).collect();
            diagnostics.push(Diagnostic::new(
                decl.source.at(filter),
                format!(
                    "unknown filter `{}` (filters: {})",
                    filter.get_ref(),
                    known.join(", ")
                ),
            ));
        }
    }
    filters
}

/// How legacy field `view` shows resource field `target`, or why it cannot.
fn conversion(view: &FieldDescriptor, target: &FieldDescriptor) -> Result<Conversion, String> {
    let mismatch = || {
        format!(
            "`{}` is {} but the field it shows, `{}`, is {}",
            view.full_name(),
            describe(view),
            target.full_name(),
            describe(target)
        )
    };
    if view.is_map() && !target.is_list() && !target.is_map() {
        let Kind::Message(shown) = target.kind() else {
            return Err(mismatch());
        };
        let entry = view.kind();
        let entry = entry.as_message().expect("map fields have entry messages");
        let (key, value) = (entry.map_entry_key_field(), entry.map_entry_value_field());
        let same_values = shown
            .fields()
            .all(|f| !f.is_list() && !f.is_map() && f.kind() == value.kind());
        if key.kind() != Kind::String || !same_values {
            return Err(mismatch());
        }
        return Ok(Conversion::Map {
            target: rust_path(&shown),
            keys: shown
                .fields()
                .map(|f| (f.json_name().to_owned(), f.name().to_owned()))
                .collect(),
        });
    }
    if view.is_list() != target.is_list() || view.is_map() != target.is_map() {
        return Err(mismatch());
    }
    match (view.kind(), target.kind()) {
        (Kind::Message(a), Kind::Message(b)) if a.full_name() == b.full_name() => {
            Ok(Conversion::Same)
        }
        (Kind::Message(a), Kind::Message(b)) if !view.is_list() && !view.is_map() => {
            let mut fields = Vec::new();
            for field in a.fields() {
                let Some(shown) = b.get_field_by_name(field.name()) else {
                    return Err(format!(
                        "`{}` shows no field of `{}`",
                        field.full_name(),
                        b.full_name()
                    ));
                };
                fields.push(ViewField {
                    name: field.name().to_owned(),
                    target: shown.name().to_owned(),
                    conversion: conversion(&field, &shown)?,
                });
            }
            Ok(Conversion::Message {
                view: rust_path(&a),
                target: rust_path(&b),
                complete: shows_every_field(&fields, &b),
                fields,
            })
        }
        (Kind::Enum(a), Kind::Enum(b)) => {
            match a
                .values()
                .find(|v| b.get_value(v.number()).is_none_or(|w| w.name() != v.name()))
            {
                None => Ok(Conversion::Same),
                Some(value) => Err(format!(
                    "`{}` value `{} = {}` has no equal in `{}`",
                    a.full_name(),
                    value.name(),
                    value.number(),
                    b.full_name()
                )),
            }
        }
        (a, b) if a == b && !matches!(a, Kind::Message(_)) => Ok(Conversion::Same),
        _ => Err(mismatch()),
    }
}

/// Whether `fields` show every field of `target`.
fn shows_every_field(fields: &[ViewField], target: &MessageDescriptor) -> bool {
    let shown: std::collections::HashSet<&str> = fields.iter().map(|f| f.target.as_str()).collect();
    target.fields().all(|field| shown.contains(field.name()))
}

/// A field's type as proto spells it, e.g. `repeated string`.
fn describe(field: &FieldDescriptor) -> String {
    let kind = |kind: Kind| match kind {
        Kind::Message(m) => m.full_name().to_owned(),
        Kind::Enum(e) => e.full_name().to_owned(),
        other => format!("{other:?}").to_lowercase(),
    };
    if field.is_map() {
        let entry = field.kind();
        let entry: &MessageDescriptor = entry.as_message().expect("map entry");
        format!(
            "`map<{}, {}>`",
            kind(entry.map_entry_key_field().kind()),
            kind(entry.map_entry_value_field().kind())
        )
    } else if field.is_list() {
        format!("`repeated {}`", kind(field.kind()))
    } else {
        format!("`{}`", kind(field.kind()))
    }
}
