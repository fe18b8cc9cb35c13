//! How a collection lists: the fields `order_by` accepts and `filter`
//! compares, page sizes and filters.

use super::Table;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::{Api, Derived, LIST_FILTERS, Paging, Standard};

/// The JSON names of the fields `order_by` accepts: scalars and timestamps.
pub(super) fn order_by(table: &Table, diagnostics: &mut Diagnostics) -> Vec<String> {
    let mut order_by = Vec::new();
    for name in &table.collection.order_by {
        let sortable = |field: &prost_reflect::FieldDescriptor| {
            table
                .resource
                .fields
                .iter()
                // A oneof member is reported on its own (`refuse_oneof_members`).
                .any(|f| {
                    f.parent.is_none()
                        && f.name == field.name()
                        && (f.sortable() || f.oneof.is_some())
                })
        };
        match table.field(name.get_ref()) {
            Some(field) if sortable(&field) => order_by.push(field.json_name().to_owned()),
            Some(_) => diagnostics.push(Diagnostic::new(
                table.at(name),
                format!(
                    "`{}` of `{}` cannot be ordered by: only single string, number, bool and timestamp \
                     fields outside oneofs and without presence (`optional`, wrappers) can",
                    name.get_ref(),
                    table.id
                ),
            )),
            None => diagnostics.push(Diagnostic::new(
                table.at(name),
                format!(
                    "`order_by` names `{}`, which is not a field of `{}`",
                    name.get_ref(),
                    table.resource.full_name
                ),
            )),
        }
    }
    order_by
}

/// The JSON paths of the fields an AIP-160 `filter` may compare, when
/// stated, and those of them kept in derived columns: single strings,
/// numbers, bools, enums, timestamps and durations, at the top level or one
/// message down; lists of them; maps from strings to them.
pub(super) fn filterable(
    table: &Table,
    diagnostics: &mut Diagnostics,
) -> Option<(Vec<String>, Vec<Derived>)> {
    let stated = table.collection.filterable.as_ref()?;
    let mut filterable = Vec::new();
    let mut derived = Vec::new();
    for name in stated {
        let column = table.field(name.get_ref()).and_then(|field| {
            (table.resource.fields.iter())
                .find(|f| f.parent.is_none() && f.name == field.name() && f.filterable())
        });
        if let Some(field) = column {
            filterable.push(field.json_name.clone());
            continue;
        }
        // A oneof member is reported on its own (`refuse_oneof_members`).
        let member = table
            .field(name.get_ref())
            .and_then(|f| f.containing_oneof());
        match Derived::of(&table.message, name.get_ref()) {
            Ok(column) => {
                filterable.push(column.json_path.clone());
                derived.push(column);
            }
            Err(_) if member.is_some() => {}
            Err(why) => diagnostics.push(Diagnostic::new(
                table.at(name),
                format!(
                    "`{}` of `{}` cannot be filtered by: {why} (filters compare strings, integers, enums, \
                     bools, timestamps and durations outside oneofs and without presence, at the top level \
                     or one message down, lists of them and maps from strings to them)",
                    name.get_ref(),
                    table.id
                ),
            )),
        }
    }
    Some((filterable, derived))
}

/// The JSON names of the fields `indexed` names, when stated: each must be
/// a field; whether it is filterable is checked once the filterable fields
/// are known (`Api::check_indexed`).
pub(super) fn indexed(table: &Table, diagnostics: &mut Diagnostics) -> Option<Vec<String>> {
    let stated = table.collection.indexed.as_ref()?;
    let mut indexed = Vec::new();
    for name in stated {
        let field = table.field(name.get_ref()).and_then(|field| {
            (table.resource.fields.iter()).find(|f| f.parent.is_none() && f.name == field.name())
        });
        match field {
            Some(field) => indexed.push(field.json_name.clone()),
            None => diagnostics.push(Diagnostic::new(
                table.at(name),
                format!(
                    "`indexed` names `{}`, which is not a field of `{}`",
                    name.get_ref(),
                    table.resource.full_name
                ),
            )),
        }
    }
    Some(indexed)
}

/// `(default, max)`, when stated and consistent.
pub(super) fn page_sizes(table: &Table, diagnostics: &mut Diagnostics) -> Option<(u32, u32)> {
    let size = table.collection.page_size.as_ref()?;
    let value = size.get_ref();
    if value.default == 0 || value.default > value.max {
        diagnostics.push(Diagnostic::new(
            table.at(size),
            "`page_size` needs 0 < default <= max",
        ));
        return None;
    }
    Some((value.default, value.max))
}

impl Api {
    /// The filters lists accept, when stated: each known, and with its field
    /// in the request of every (current) list of the collection.
    pub(super) fn list_filters(
        &self,
        table: &Table,
        diagnostics: &mut Diagnostics,
    ) -> Option<Vec<String>> {
        let stated = table.collection.filters.as_ref()?;
        let mut filters = Vec::new();
        for filter in stated {
            let name = filter.get_ref().as_str();
            let Some((_, field)) = LIST_FILTERS.iter().find(|(known, _)| *known == name) else {
                let known: Vec<&str> = LIST_FILTERS.iter().map(|(known, _)| *known).collect();
                diagnostics.push(Diagnostic::new(
                    table.at(filter),
                    format!("unknown filter `{name}` (filters: {})", known.join(", ")),
                ));
                continue;
            };
            let lacking = self.methods().find(|m| match &m.standard {
                Standard::List {
                    resource,
                    filters,
                    paging: Paging::Token,
                } => *resource == table.resource.full_name && !filters.iter().any(|f| f == name),
                _ => false,
            });
            if let Some(method) = lacking {
                diagnostics.push(Diagnostic::new(
                    table.at(filter),
                    format!(
                        "filter `{name}` needs a `{field}` field in `{}` (declared at {})",
                        method.input_type, method.location
                    ),
                ));
                continue;
            }
            filters.push(name.to_owned());
        }
        Some(filters)
    }
}
