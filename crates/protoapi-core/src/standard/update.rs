//! `Update` (AIP-134).

use prost_types::FieldMask;

use super::{ApiContext, not_found, store_error};
use crate::context::Caller;
use crate::error::Error;
use crate::mask::Update;
use crate::resource::Resource;
use crate::store::StoreError;
use crate::uidp;

/// `Update`, once the caller may update `uid`: plans `mask` over `patch`
/// and answers the mask's problems (unknown, OUTPUT_ONLY or missing paths)
/// before storage is called, so no lock is taken and the answer is the
/// same whether or not the item exists. For resources whose fields grant
/// capabilities, the update may add only what the caller holds where the
/// item lives. Storage then applies the planned [`Update`] atomically
/// ([`Update::apply`] inside its transaction); [`updated`] reads its answer.
pub async fn plan_update<R: Resource>(
    context: &ApiContext,
    caller: &Caller,
    uid: &str,
    mask: Option<&FieldMask>,
    patch: R,
    body_field: &'static str,
) -> Result<Update<R>, Error> {
    let update = Update::plan(mask, patch, body_field)?;
    if !R::grants_capabilities() {
        return Ok(update);
    }
    let scope = uidp::parent(uid).unwrap_or(uid);
    Ok(update.holding(context.authorizer.held(caller, scope).await?, scope))
}

/// Refuses an absent or empty `update_mask` where the request declares it
/// REQUIRED (AIP-134, AIP-203): INVALID_ARGUMENT naming `updateMask`.
/// (An optional mask, absent, means every field the body sets: see
/// [`Update::plan`].)
pub fn require_mask(mask: Option<&FieldMask>) -> Result<(), Error> {
    match mask {
        Some(mask) if !mask.paths.is_empty() => Ok(()),
        _ => Err(Error::invalid_fields(vec![
            crate::error::FieldViolation::new(
                "updateMask",
                "required: name the fields to change, or `*` to replace them all",
            ),
        ])),
    }
}

/// The item storage updated, or its refusal as the error model answers it;
/// `None` (no such item) is NOT_FOUND.
pub fn updated<R: Resource>(stored: Result<Option<R>, StoreError>, uid: &str) -> Result<R, Error> {
    stored
        .map_err(|error| store_error::<R>(error, uid, ""))?
        .ok_or_else(|| not_found::<R>(uid))
}

/// What `update` would make of the item `uid` (read as `stored`), written
/// nowhere (AIP-163 `validate_only`): NOT_FOUND for a missing item, the
/// update's own refusals (a stale etag, a soft-deleted item), otherwise
/// the item as a real update would answer it.
pub fn dry_update<R: Resource>(
    stored: Result<Option<R>, StoreError>,
    update: &Update<R>,
    uid: &str,
) -> Result<R, Error> {
    let stored = updated(stored, uid)?;
    update
        .apply(&stored)
        .map_err(|error| store_error::<R>(StoreError::Rejected(error), uid, ""))
}

#[cfg(test)]
pub(super) mod tests;
