//! Update masks (AIP-134) applied atomically inside storage.
//!
//! [`Update::plan`] resolves the mask against the resource's field
//! behaviours and answers every problem of the mask itself (unknown,
//! OUTPUT_ONLY or missing paths) before storage is called: an [`Update`]
//! exists only for a valid mask. Storage then calls [`Update::apply`] on the
//! stored resource inside its transaction, which checks what only the stored
//! value reveals (the etag, IMMUTABLE fields that would change, REQUIRED
//! fields that would be cleared, value rules) and returns the merged
//! resource. Each stage reports all of its problems in one `BadRequest`,
//! naming fields as canonical JSON does (`updateMask.createTime`), whichever
//! spelling the request used.

use prost_types::FieldMask;

use crate::context::Held;
use crate::error::{Code, Error, FieldViolation};
use crate::json;
use crate::resource::{Behavior, Resource};
use crate::time;

/// A validated update: which fields to copy from the patch.
#[derive(Clone, Debug)]
pub struct Update<R> {
    patch: R,
    paths: Vec<&'static str>,
    /// The request field holding the resource, for violation paths.
    body_field: &'static str,
    /// What the caller holds at the item's parent, for resources whose
    /// fields grant capabilities ([`Resource::grants_capabilities`]).
    held: Option<(Held, String)>,
    /// A change of fields, a soft delete or an undelete (AIP-164).
    lifecycle: Lifecycle,
}

/// What an [`Update`] does to an item of a soft-deleting collection
/// ([`Resource::DELETE_TIME`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lifecycle {
    /// Changes fields of a live item; a soft-deleted one is
    /// FAILED_PRECONDITION (AIP-164: soft-deleted items are not mutable).
    Change,
    /// Sets the delete time of a live item; an item already deleted is
    /// NOT_FOUND (AIP-164).
    SoftDelete,
    /// Clears the delete time of a deleted item; a live one is
    /// ALREADY_EXISTS (AIP-164).
    Undelete,
}

impl<R: Resource> Update<R> {
    /// Resolves `mask` against `R`'s fields, or answers INVALID_ARGUMENT with
    /// one violation per unknown or OUTPUT_ONLY path (and for a request with
    /// nothing to update). Nothing here reads storage, so the answer is the
    /// same whether or not the item exists.
    ///
    /// No mask (or an empty one) means the fields set in the patch;
    /// `*` means every writable field.
    pub fn plan(
        mask: Option<&FieldMask>,
        patch: R,
        body_field: &'static str,
    ) -> Result<Self, Error> {
        let mut violations = Vec::new();
        let requested: Vec<&str> = mask
            .map(|m| m.paths.iter().map(String::as_str).collect())
            .unwrap_or_default();
        let paths = match requested.as_slice() {
            [] => top_level::<R>()
                .filter(|f| f.behavior != Behavior::OutputOnly && patch.has_field(f.path))
                .map(|f| f.path)
                .collect(),
            ["*"] => top_level::<R>()
                .filter(|f| f.behavior != Behavior::OutputOnly)
                .map(|f| f.path)
                .collect(),
            // Each field once: more paths than fields is refused as a whole.
            named if named.len() > R::FIELDS.len() => {
                violations.push(FieldViolation::new(
                    "updateMask",
                    format!("at most {} paths, one per field", R::FIELDS.len()),
                ));
                Vec::new()
            }
            named => {
                let mut paths = Vec::with_capacity(named.len());
                for path in named {
                    // Named as JSON names it, whichever spelling was sent.
                    let violation = |description: &str| {
                        let spelled = R::field(path).map_or_else(
                            || json::lower_camel_case(path),
                            |f| f.json_path.to_owned(),
                        );
                        FieldViolation::new(format!("updateMask.{spelled}"), description.to_owned())
                    };
                    match R::field(path) {
                        None if *path == "*" => {
                            violations.push(violation("`*` cannot be combined with other paths"))
                        }
                        None => violations.push(violation("no such field in the resource")),
                        Some(f) if f.behavior == Behavior::OutputOnly => {
                            violations.push(violation("the field is output only"))
                        }
                        Some(f) if !paths.contains(&f.path) => paths.push(f.path),
                        Some(_) => {}
                    }
                }
                paths
            }
        };
        if paths.is_empty() && requested.is_empty() {
            violations.push(FieldViolation::new(
                "updateMask",
                "no mask, and the body sets no writable field: nothing to update",
            ));
        }
        if !violations.is_empty() {
            return Err(Error::invalid_fields(violations));
        }
        Ok(Update {
            patch,
            paths,
            body_field,
            held: None,
            lifecycle: Lifecycle::Change,
        })
    }

    /// A change the application makes itself, of fields clients may not
    /// write (output-only ones too): the fields `paths` names (proto or JSON
    /// names; others are ignored) are copied from `patch`, checked as any
    /// change is (immutable, required, value rules), and the update time
    /// and etag move when anything changed. For items an application keeps
    /// up to date from elsewhere, such as a registry's images.
    pub fn of_fields(patch: R, paths: &[&str]) -> Self {
        Update {
            patch,
            paths: paths
                .iter()
                .filter_map(|path| R::field(path))
                .map(|f| f.path)
                .collect(),
            body_field: "",
            held: None,
            lifecycle: Lifecycle::Change,
        }
    }

    /// A soft delete (AIP-164): sets the item's delete time (and its update
    /// time and etag, as any change does), under `etag` when given.
    pub fn soft_delete(etag: Option<&str>) -> Self {
        Self::lifecycle(etag, Lifecycle::SoftDelete)
    }

    /// An undelete (AIP-164): clears the delete time of a soft-deleted
    /// item, under `etag` when given.
    pub fn undelete(etag: Option<&str>) -> Self {
        Self::lifecycle(etag, Lifecycle::Undelete)
    }

    fn lifecycle(etag: Option<&str>, lifecycle: Lifecycle) -> Self {
        let mut patch = R::default();
        patch.set_etag(etag.unwrap_or_default().to_owned());
        Update {
            patch,
            paths: Vec::new(),
            body_field: "",
            held: None,
            lifecycle,
        }
    }

    /// Lets the update add capabilities to [`Resource::must_hold`] fields
    /// only when they are in `held` (what the caller holds at `scope`).
    pub fn holding(mut self, held: Held, scope: impl Into<String>) -> Self {
        self.held = Some((held, scope.into()));
        self
    }

    /// The field paths this update writes.
    pub fn paths(&self) -> &[&'static str] {
        &self.paths
    }

    /// Merges the patch into `stored`, or explains why it may not: what
    /// only the stored value reveals (the mask was checked by
    /// [`Update::plan`]).
    pub fn apply(&self, stored: &R) -> Result<R, Error> {
        if !self.patch.etag().is_empty() && self.patch.etag() != stored.etag() {
            return Err(Error::new(
                Code::Aborted,
                "ETAG_MISMATCH",
                "the resource changed since it was read (etag mismatch); read it again",
            )
            .with_resource(R::TYPE, stored.key()));
        }
        if R::DELETE_TIME.is_some() {
            return self.apply_lifecycle(stored);
        }
        self.apply_change(stored)
    }

    /// [`Self::apply`] on an item of a soft-deleting collection.
    fn apply_lifecycle(&self, stored: &R) -> Result<R, Error> {
        let deleted = stored.delete_time().is_some();
        let mut merged = stored.clone();
        match (self.lifecycle, deleted) {
            (Lifecycle::Change, false) => return self.apply_change(stored),
            (Lifecycle::Change, true) => {
                return Err(Error::failed_precondition(
                    "DELETED",
                    format!(
                        "{} `{}` is deleted: undelete it before changing it",
                        R::TYPE,
                        stored.key()
                    ),
                    Vec::new(),
                )
                .with_resource(R::TYPE, stored.key()));
            }
            (Lifecycle::SoftDelete, true) => {
                return Err(Error::not_found(R::TYPE, stored.key()).in_domain(R::domain()));
            }
            (Lifecycle::Undelete, false) => {
                return Err(Error::new(
                    Code::AlreadyExists,
                    "NOT_DELETED",
                    format!("{} `{}` is not deleted", R::TYPE, stored.key()),
                )
                .with_resource(R::TYPE, stored.key()));
            }
            (Lifecycle::SoftDelete, false) => merged.set_delete_time(Some(time::now())),
            (Lifecycle::Undelete, true) => merged.set_delete_time(None),
        }
        Ok(stamped(stored, merged))
    }

    /// [`Self::apply`] of a change of fields.
    fn apply_change(&self, stored: &R) -> Result<R, Error> {
        let mut violations: Vec<FieldViolation> = self
            .paths
            .iter()
            .filter_map(|path| R::field(path))
            .filter(|f| is_immutable::<R>(f) && !self.patch.field_eq(stored, f.path))
            .map(|f| self.violation(f, "the field is immutable and cannot change"))
            .collect();
        let mut merged = stored.clone();
        for path in &self.paths {
            merged.copy_field(&self.patch, path);
        }
        violations.extend(
            self.paths
                .iter()
                .filter_map(|path| R::field(path))
                .filter(|f| f.behavior.is_required() && !merged.has_field(f.path))
                .map(|f| self.violation(f, "the field is required and cannot be cleared")),
        );
        violations.extend(merged.check_values(self.body_field));
        if !violations.is_empty() {
            return Err(Error::invalid_fields(violations));
        }
        if R::grants_capabilities() {
            let before = stored.must_hold();
            let added = merged
                .must_hold()
                .into_iter()
                .filter(|value| !before.contains(value));
            match &self.held {
                Some((held, scope)) => held.require(added, scope)?,
                None if added.clone().next().is_some() => {
                    return Err(Error::internal(
                        "an update granting capabilities was planned without what the caller holds",
                    ));
                }
                None => {}
            }
        }
        if merged == *stored {
            // Nothing changes: neither the update time nor the etag moves.
            return Ok(merged);
        }
        Ok(stamped(stored, merged))
    }
}

/// `merged` with its update time advanced past `stored`'s and a new etag.
fn stamped<R: Resource>(stored: &R, mut merged: R) -> R {
    let now = time::now();
    let previous = stored
        .update_time()
        .map(time::to_micros)
        .unwrap_or_default();
    let advanced = time::to_micros(&now).max(previous + 1);
    merged.set_update_time(time::from_micros(advanced));
    merged.set_etag(crate::resource::etag(&merged));
    merged
}

impl<R> Update<R> {
    fn violation(&self, field: &crate::resource::FieldSpec, description: &str) -> FieldViolation {
        FieldViolation::new(
            json::field_path(self.body_field, field.json_path),
            description.to_owned(),
        )
    }
}

/// Whether a field is IMMUTABLE, itself or as part of an IMMUTABLE message
/// (what cannot change as a whole cannot change in part).
fn is_immutable<R: Resource>(field: &crate::resource::FieldSpec) -> bool {
    field.behavior.is_immutable()
        || field
            .path
            .rsplit_once('.')
            .and_then(|(parent, _)| R::field(parent))
            .is_some_and(|parent| parent.behavior.is_immutable())
}

fn top_level<R: Resource>() -> impl Iterator<Item = &'static crate::resource::FieldSpec> {
    R::FIELDS.iter().filter(|f| !f.path.contains('.'))
}
