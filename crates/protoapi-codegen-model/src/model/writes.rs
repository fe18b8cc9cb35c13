//! Request fields that change what a standard write does: AIP-163
//! `bool validate_only` (Create, Update, Delete, Undelete: every check runs,
//! nothing is written, the answer is what the write would answer), AIP-155
//! `string request_id` (the same four: a retry is answered from what the
//! first request recorded with its write) and
//! AIP-135 `bool allow_missing` on a Delete answering `Empty` (deleting a
//! missing item succeeds) and AIP-134's on an Update (a missing item is
//! created, `Api::check_upserts`). Anything else spelled like them is a diagnostic:
//! a server that ignored either would write when asked not to, or refuse
//! what the client declared fine.

use prost_reflect::{Kind, MethodDescriptor};

use super::shapes::Shape;
use super::{Api, Standard};
use crate::diagnostics::{Diagnostic, Diagnostics, Location};

/// What a write's request asks beyond the write itself.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// `validate_only`: check, but write nothing.
    pub validate_only: bool,
    /// `allow_missing` of a Delete: a missing item is not an error.
    pub allow_missing: bool,
    /// `allow_missing` of an Update (AIP-134): a missing item is created,
    /// as the resource's Create would create it (name-keyed resources with
    /// a Create; see `Api::check_upserts`).
    pub upsert: bool,
    /// `string request_id` (AIP-155): a retry with the same id is answered
    /// as the first request was, without a second write.
    pub request_id: bool,
    /// The `request_id` is declared a UUID (`(google.api.field_info).format
    /// = UUID4`): anything else is refused.
    pub request_id_uuid: bool,
}

/// The write options of `method`'s request, or `None` once a field of that
/// name that cannot be served is reported.
pub(super) fn write_options(
    method: &MethodDescriptor,
    standard: &Standard,
    shape: &Shape,
    location: &Location,
    diagnostics: &mut Diagnostics,
) -> Option<WriteOptions> {
    let writes = matches!(
        standard,
        Standard::Create { .. }
            | Standard::Update { .. }
            | Standard::Delete { .. }
            | Standard::Undelete { .. }
    );
    let request = method.input();
    let mut options = WriteOptions::default();
    let mut reported = false;
    let mut refuse = |field: &prost_reflect::FieldDescriptor, problem: String| {
        let at = Location::of(&field.parent_file(), field.path());
        diagnostics.push(
            Diagnostic::new(at, problem).note(format!("in `{}` at {location}", method.name())),
        );
        reported = true;
    };
    let is_bool = |field: &prost_reflect::FieldDescriptor| {
        matches!(field.kind(), Kind::Bool) && !field.is_list()
    };
    if let Some(field) = request
        .get_field_by_name("validate_only")
        .filter(|_| writes)
    {
        match is_bool(&field) {
            true => options.validate_only = true,
            false => refuse(
                &field,
                format!(
                    "`{}.validate_only` is not a `bool` (AIP-163)",
                    request.name()
                ),
            ),
        }
    }
    if let Some(field) = request.get_field_by_name("request_id").filter(|_| writes) {
        match matches!(field.kind(), Kind::String) && !field.is_list() {
            true => {
                options.request_id = true;
                options.request_id_uuid = is_uuid4(&field);
            }
            false => refuse(
                &field,
                format!(
                    "`{}.request_id` is not a `string` (AIP-155: a UUID)",
                    request.name()
                ),
            ),
        }
    }
    if let (Standard::Update { .. }, Some(field)) =
        (standard, request.get_field_by_name("allow_missing"))
    {
        match is_bool(&field) {
            true => options.upsert = true,
            false => refuse(
                &field,
                format!(
                    "`{}.allow_missing` is not a `bool` (AIP-134)",
                    request.name()
                ),
            ),
        }
    }
    if let (Standard::Delete { .. }, Some(field)) =
        (standard, request.get_field_by_name("allow_missing"))
    {
        let delete = match shape {
            Shape::Delete(delete) => *delete,
            _ => unreachable!("a Delete has a delete shape"),
        };
        if !is_bool(&field) {
            refuse(
                &field,
                format!(
                    "`{}.allow_missing` is not a `bool` (AIP-135)",
                    request.name()
                ),
            );
        } else if delete.returns_resource || delete.soft {
            refuse(
                &field,
                format!(
                    "`{}.allow_missing` is served on a Delete answering `google.protobuf.Empty` only: \
                     `{}` answers the resource, which a missing item does not have",
                    request.name(),
                    method.name()
                ),
            );
        } else {
            options.allow_missing = true;
        }
    }
    (!reported).then_some(options)
}

/// Whether `field` is declared `(google.api.field_info).format = UUID4`.
fn is_uuid4(field: &prost_reflect::FieldDescriptor) -> bool {
    let Some(extension) = field
        .parent_pool()
        .get_extension_by_name("google.api.field_info")
    else {
        return false;
    };
    let options = field.options();
    if !options.has_extension(&extension) {
        return false;
    }
    let info = options.get_extension(&extension);
    // google.api.FieldInfo.Format: UUID4 = 1.
    info.as_message()
        .and_then(|info| info.get_field_by_name("format"))
        .and_then(|format| format.as_enum_number())
        == Some(1)
}

impl Api {
    /// Keeps `allow_missing` on an Update (AIP-134) where a missing item can
    /// be created as its Create creates it: the resource is keyed by names
    /// (the client names the item) and the API has its Create, whose
    /// capability authorizes the creation. Elsewhere it is not read, with a
    /// warning saying why.
    pub(super) fn check_upserts(&mut self, diagnostics: &mut Diagnostics) {
        let has_create = |api: &Api, resource: &str| {
            api.packages
                .iter()
                .flat_map(|p| &p.services)
                .flat_map(|s| &s.methods)
                .any(|m| matches!(&m.standard, Standard::Create { resource: r, .. } if r == resource))
        };
        // Why each updated resource cannot be created by an update, if so.
        let refusals: Vec<(String, &str)> = self
            .resources()
            .filter_map(|resource| {
                let why = match (
                    resource.names.is_some(),
                    has_create(self, &resource.full_name),
                ) {
                    (true, true) => return None,
                    (false, _) => "its items are keyed by UIDPs the server makes",
                    (true, false) => "the API has no Create of it to authorize the creation",
                };
                Some((resource.full_name.clone(), why))
            })
            .collect();
        let methods = self
            .packages
            .iter_mut()
            .flat_map(|p| &mut p.services)
            .flat_map(|s| &mut s.methods);
        for method in methods.filter(|m| m.writes.upsert) {
            let Standard::Update { resource, .. } = &method.standard else {
                continue;
            };
            let Some((_, why)) = refusals.iter().find(|(r, _)| r == resource) else {
                continue;
            };
            method.writes.upsert = false;
            diagnostics.push(Diagnostic::warning(
                method.location.clone(),
                format!(
                    "`{}`'s `allow_missing` (create on update, AIP-134) is not read: {why} \
                     (`{resource}`), so a missing item is NOT_FOUND whatever it says",
                    method.name
                ),
            ));
        }
    }
}
