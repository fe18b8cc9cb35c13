//! The fields standard methods set themselves: `uid` (the UIDP scheme's
//! identifier), and, when the resource declares them, `create_time`,
//! `update_time` (AIP-148) and `etag` (AIP-154). A resource without the
//! optional ones is served without them: no timestamps, no `ETag` header,
//! no etag checks.

use prost_reflect::{Kind, MessageDescriptor};

use super::Resource;
use crate::diagnostics::{Diagnostic, Diagnostics, Location};

/// The fields the UIDP scheme needs.
const REQUIRED: &[&str] = &["uid"];

/// The optional managed fields and the type each must have.
const OPTIONAL: &[(&str, &str)] = &[
    ("create_time", "google.protobuf.Timestamp"),
    ("update_time", "google.protobuf.Timestamp"),
    ("etag", "string"),
];

/// Reports missing required fields and managed fields of another type.
pub(super) fn check(
    message: &MessageDescriptor,
    keyed_by_name: bool,
    location: &Location,
    diagnostics: &mut Diagnostics,
) {
    // A name-keyed resource (AIP-122) is keyed by its `name` instead.
    for required in REQUIRED.iter().filter(|_| !keyed_by_name) {
        if message.get_field_by_name(required).is_none() {
            diagnostics.push(Diagnostic::new(
                location.clone(),
                format!(
                    "resource `{}` has no `{required}` field",
                    message.full_name()
                ),
            ));
        }
    }
    for (name, expected) in OPTIONAL {
        let Some(field) = message.get_field_by_name(name) else {
            continue;
        };
        let actual = match field.kind() {
            Kind::Message(m) => m.full_name().to_owned(),
            Kind::String => "string".to_owned(),
            other => format!("{other:?}").to_lowercase(),
        };
        if field.is_list() || field.is_map() || actual != *expected {
            diagnostics.push(Diagnostic::new(
                Location::of(&field.parent_file(), field.path()),
                format!(
                    "`{}.{name}` must be a single `{expected}` (AIP-148, AIP-154), or be left out",
                    message.name()
                ),
            ));
        }
    }
}

impl Resource {
    /// Whether the resource has the top-level field `name`.
    pub fn has_top_field(&self, name: &str) -> bool {
        self.fields
            .iter()
            .any(|field| field.parent.is_none() && field.name == name)
    }

    /// Whether it has an `etag` (AIP-154): answers are tagged and
    /// `If-Match` is checked.
    pub fn has_etag(&self) -> bool {
        self.has_top_field("etag")
    }
}
