//! Annotations on individual fields: value rules and public items, on
//! fields outside a oneof.

use prost_reflect::{FieldDescriptor, Kind};

use super::Table;
use crate::annotations::FieldRules;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::fields::field_kind;
use crate::model::{FieldKind, FieldRule, PublicRule};

/// Reports every field the table names that is a oneof member or a proto3
/// `optional` field: the rules read a field as a field of its own, and prost
/// keeps those in one `Option`.
pub(super) fn refuse_oneof_members(table: &Table, diagnostics: &mut Diagnostics) {
    let collection = table.collection;
    let named = collection
        .order_by
        .iter()
        .chain(collection.filterable.iter().flatten())
        .chain(collection.fields.keys())
        .chain(collection.references.keys())
        .chain(&collection.public_if)
        .chain(&collection.public_after);
    for name in named {
        let Some(oneof) = table
            .field(name.get_ref())
            .and_then(|f| f.containing_oneof())
        else {
            continue;
        };
        let what = if oneof.is_synthetic() {
            "is `optional`".to_owned()
        } else {
            format!("is a member of oneof `{}`", oneof.name())
        };
        diagnostics.push(Diagnostic::new(
            table.at(name),
            format!(
                "`{}` {what}: annotations name fields outside a oneof",
                name.get_ref()
            ),
        ));
    }
}

/// The value rules of the table's `fields`, each on a string field.
pub(super) fn rules(table: &Table, diagnostics: &mut Diagnostics) -> Vec<FieldRule> {
    let mut rules = Vec::new();
    for (name, rule) in &table.collection.fields {
        match table.field(name.get_ref()) {
            Some(_) if !rule.has_value_rules() => {}
            Some(field) if field.kind() == Kind::String && !field.is_map() => {
                rules.push(field_rule(&field, rule))
            }
            Some(_) => diagnostics.push(Diagnostic::new(
                table.at(name),
                format!(
                    "field rules apply to string fields; `{}` is not one",
                    name.get_ref()
                ),
            )),
            None => diagnostics.push(Diagnostic::new(
                table.at(name),
                format!(
                    "`fields` names `{}`, which is not a field of `{}`",
                    name.get_ref(),
                    table.resource.full_name
                ),
            )),
        }
    }
    rules
}

/// The display names the table gives the collection and its fields
/// (`(JSON name, display name)`), each checked by [`display_name`].
pub(super) fn display_names(
    table: &Table,
    diagnostics: &mut Diagnostics,
) -> (Option<String>, Vec<(String, String)>) {
    let collection = table.collection.display_name.as_ref().and_then(|name| {
        let checked = display_name(name.get_ref());
        checked
            .map_err(|why| diagnostics.push(Diagnostic::new(table.at(name), why)))
            .ok()
    });
    let mut fields = Vec::new();
    for (name, rule) in &table.collection.fields {
        let (Some(text), Some(field)) = (&rule.display_name, table.field(name.get_ref())) else {
            continue;
        };
        match display_name(text) {
            Ok(text) => fields.push((field.json_name().to_owned(), text)),
            Err(why) => diagnostics.push(Diagnostic::new(table.at(name), why)),
        }
    }
    (collection, fields)
}

/// Display names are 1 to 64 characters of printable text, shown as
/// written (and escaped) in pages and headings.
pub(crate) fn display_name(text: &str) -> Result<String, String> {
    let length = text.chars().count();
    if length == 0 || length > 64 || text.trim() != text {
        return Err(format!(
            "`display_name` is 1 to 64 characters without surrounding spaces (`{}` is {length})",
            text.escape_debug()
        ));
    }
    if text.chars().any(char::is_control) {
        return Err(format!(
            "`display_name` `{}` holds a control character",
            text.escape_debug()
        ));
    }
    Ok(text.to_owned())
}

pub(super) fn field_rule(field: &FieldDescriptor, rule: &FieldRules) -> FieldRule {
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

/// What makes an item public: `public_if` a bool field or `public_after` a
/// timestamp field, one of them.
pub(super) fn public(table: &Table, diagnostics: &mut Diagnostics) -> Option<PublicRule> {
    let collection = table.collection;
    let public_if = collection.public_if.as_ref().and_then(|name| {
        let rule = table
            .field(name.get_ref())
            .filter(|field| field.kind() == Kind::Bool && !field.is_list())
            .map(|field| PublicRule::If(field.json_name().to_owned()));
        if rule.is_none() {
            diagnostics.push(Diagnostic::new(
                table.at(name),
                format!(
                    "`public_if` names `{}`, which is not a bool field of `{}`",
                    name.get_ref(),
                    table.resource.full_name
                ),
            ));
        }
        rule
    });
    let public_after = collection.public_after.as_ref().and_then(|name| {
        let rule = table
            .field(name.get_ref())
            .filter(|field| {
                !field.is_list() && !field.is_map() && field_kind(field) == FieldKind::Timestamp
            })
            .map(|field| PublicRule::After(field.json_name().to_owned()));
        if rule.is_none() {
            diagnostics.push(Diagnostic::new(
                table.at(name),
                format!(
                    "`public_after` names `{}`, which is not a `google.protobuf.Timestamp` field of `{}`",
                    name.get_ref(),
                    table.resource.full_name
                ),
            ));
        }
        rule
    });
    if collection.public_if.is_some()
        && let Some(after) = &collection.public_after
    {
        diagnostics.push(Diagnostic::new(
            table.at(after),
            "a collection states one rule for public items: `public_if` or `public_after`, not both",
        ));
    }
    public_if.or(public_after)
}
