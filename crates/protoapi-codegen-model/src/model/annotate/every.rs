//! `["*"]` tables: what holds for every collection (the depth of the
//! hierarchy, the parent's collection, field rules).

use prost_reflect::{DescriptorPool, Kind};

use super::fields::{display_name as display_name_of, field_rule};
use crate::annotations::{Annotations, Collection, EVERY_COLLECTION};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::Api;

/// The deepest hierarchy an API may declare: 64 levels keep a uid within
/// 1,128 characters, well inside what SQL engines index.
const MAX_DEPTH_LIMIT: usize = 64;

impl Api {
    /// Applies each `["*"]` table to every resource.
    pub(super) fn apply_defaults(
        &mut self,
        pool: &DescriptorPool,
        annotations: &Annotations,
        diagnostics: &mut Diagnostics,
    ) {
        for defaults in &annotations.defaults {
            refuse_stray_keys(defaults, diagnostics);
            self.apply_max_depth(defaults, diagnostics);
            if let Some(parent) = &defaults.parent {
                let parent_type = self.parent_type(parent, &defaults.source, diagnostics);
                for resource in self.packages.iter_mut().flat_map(|p| &mut p.resources) {
                    if resource.parent_type.is_none() {
                        resource.parent_type = parent_type.clone();
                    }
                }
            }
            self.apply_field_rules(pool, defaults, diagnostics);
        }
    }

    fn apply_max_depth(&mut self, defaults: &Collection, diagnostics: &mut Diagnostics) {
        let Some(depth) = &defaults.max_depth else {
            return;
        };
        let levels = *depth.get_ref();
        if (1..=MAX_DEPTH_LIMIT).contains(&levels) {
            for resource in self.packages.iter_mut().flat_map(|p| &mut p.resources) {
                resource.max_depth = Some(levels);
            }
        } else {
            diagnostics.push(Diagnostic::new(
                defaults.source.at(depth),
                format!(
                    "`max_depth` must be 1 to {MAX_DEPTH_LIMIT} (uids stay short enough to index)"
                ),
            ));
        }
    }

    /// Applies `["*"]` field rules to every resource with the field that
    /// states no rules of its own for it.
    fn apply_field_rules(
        &mut self,
        pool: &DescriptorPool,
        defaults: &Collection,
        diagnostics: &mut Diagnostics,
    ) {
        let source = &defaults.source;
        let mut used = vec![false; defaults.fields.len()];
        let display_names: Vec<Option<String>> = defaults
            .fields
            .iter()
            .map(|(name, rule)| {
                let checked = rule.display_name.as_deref().map(display_name_of)?;
                checked
                    .map_err(|why| diagnostics.push(Diagnostic::new(source.at(name), why)))
                    .ok()
            })
            .collect();
        for resource in self.packages.iter_mut().flat_map(|p| &mut p.resources) {
            let message = pool
                .get_message_by_name(&resource.full_name)
                .expect("resources come from the pool");
            for (index, (name, rule)) in defaults.fields.iter().enumerate() {
                let Some(field) = message.get_field_by_name(name.get_ref()) else {
                    continue;
                };
                used[index] = true;
                let json_name = field.json_name();
                let named = resource
                    .field_names
                    .iter()
                    .any(|(json, _)| json == json_name);
                if let (Some(text), false) = (&display_names[index], named) {
                    resource
                        .field_names
                        .push((json_name.to_owned(), text.clone()));
                }
                if !rule.has_value_rules() {
                    continue;
                }
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

/// Reports a `["*"]` table stating what only a collection's table may.
fn refuse_stray_keys(defaults: &Collection, diagnostics: &mut Diagnostics) {
    let stray = !defaults.order_by.is_empty()
        || defaults.display_name.is_some()
        || defaults.page_size.is_some()
        || defaults.filters.is_some()
        || !defaults.delete_blocked_by.is_empty()
        || !defaults.permissions.is_empty()
        || !defaults.anonymous.is_empty()
        || !defaults.capabilities.is_empty()
        || defaults.public_if.is_some()
        || defaults.public_after.is_some()
        || defaults.shared
        || !defaults.references.is_empty();
    if stray {
        diagnostics.push(Diagnostic::new(
            defaults.location.clone(),
            format!(
                "`[\"{EVERY_COLLECTION}\"]` may hold only `fields` rules, `parent`, `max_depth` and \
                 `permission_option`"
            ),
        ));
    }
}
