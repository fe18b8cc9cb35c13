//! References a resource's own fields declare (AIP-122): a string field
//! whose `google.api.resource_reference` names, with `type`, a resource of
//! the API holds the key of one of its items, which must exist when the
//! field is written. The annotation files may state the same reference
//! (`references`, its `collection` then optional) to add rules a proto
//! cannot say (`reach`, `grants`); they never have to restate it.
//!
//! A reference between resources keyed by names is checked by storage on
//! create and on every update that changes it (`Reach::Anywhere`); one of a
//! UIDP-keyed resource is checked within its reach on create, so its field
//! must be IMMUTABLE, as annotation references must. A `type` naming no
//! resource of the API (another API's, or `*`) is the proto's documentation
//! only: nothing here can check it.

use prost_reflect::{DescriptorPool, FieldDescriptor, Kind};

use super::Api;
use super::proto::string_field;
use super::resource::{Behavior, Reach, Reference};
use crate::diagnostics::{Diagnostic, Diagnostics, Location};

const REFERENCE_OPTION: &str = "google.api.resource_reference";

/// The resource type a field's `google.api.resource_reference` names with
/// `type`; not `child_type`, which a parent field uses to name what its
/// item holds.
pub(super) fn option_type(pool: &DescriptorPool, field: &FieldDescriptor) -> Option<String> {
    let extension = pool.get_extension_by_name(REFERENCE_OPTION)?;
    let options = field.options();
    if !options.has_extension(&extension) {
        return None;
    }
    let value = options.get_extension(&extension);
    let type_name = string_field(value.as_message()?, "type");
    (!type_name.is_empty() && type_name != "*").then_some(type_name)
}

impl Api {
    /// Adds to each resource the references its fields' options declare
    /// and the annotation files do not.
    pub(super) fn option_references(
        &mut self,
        pool: &DescriptorPool,
        diagnostics: &mut Diagnostics,
    ) {
        let mut found: Vec<(String, Reference)> = Vec::new();
        for resource in self.resources() {
            let message = pool
                .get_message_by_name(&resource.full_name)
                .expect("resources come from the pool");
            let key = if resource.names.is_some() {
                "name"
            } else {
                "uid"
            };
            for field in message.fields() {
                if field.name() == key
                    || field.kind() != Kind::String
                    || field.is_list()
                    || resource.references.iter().any(|r| r.field == field.name())
                {
                    continue;
                }
                let Some(type_name) = option_type(pool, &field) else {
                    continue;
                };
                let Some(target) = self.resources().find(|r| r.type_name == type_name) else {
                    continue;
                };
                let location = Location::of(&field.parent_file(), field.path());
                let behavior = super::fields::behavior(pool, &field);
                let reach = match (&resource.names, &target.names) {
                    // Set by the server: nothing a caller writes to check.
                    _ if behavior == Behavior::OutputOnly => continue,
                    (Some(_), _) => Reach::Anywhere,
                    (None, Some(_)) => {
                        diagnostics.push(Diagnostic::new(
                            location,
                            format!(
                                "`{}` of UIDP-keyed `{}` references `{type_name}`, which is keyed by names: \
                                 a UIDP-keyed resource references UIDP-keyed ones only",
                                field.name(),
                                resource.full_name
                            ),
                        ));
                        continue;
                    }
                    (None, None)
                        if !matches!(
                            behavior,
                            Behavior::Immutable | Behavior::RequiredImmutable
                        ) =>
                    {
                        diagnostics.push(Diagnostic::new(
                            location,
                            format!(
                                "reference field `{}` must be IMMUTABLE (`google.api.field_behavior`): \
                                 references of UIDP-keyed resources are checked when items are created",
                                field.name()
                            ),
                        ));
                        continue;
                    }
                    (None, None) => Reach::Ancestors,
                };
                found.push((
                    resource.full_name.clone(),
                    Reference::new(&field, target, reach),
                ));
            }
        }
        for (full_name, reference) in found {
            if let Some(resource) = self
                .packages
                .iter_mut()
                .flat_map(|p| &mut p.resources)
                .find(|r| r.full_name == full_name)
            {
                resource.references.push(reference);
            }
        }
    }
}
