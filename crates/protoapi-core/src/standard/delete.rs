//! `Delete` (AIP-135): why an item could not be deleted.

use super::{ApiContext, store_error};
use crate::auth::Need;
use crate::context::Caller;
use crate::error::Error;
use crate::resource::Resource;
use crate::store::StoreError;

/// The API error for a failed delete of `uid`: as [`store_error`], except
/// that dependents `caller` may not read are counted, not named (no
/// item under another root is revealed).
pub async fn delete_error<R: Resource>(
    context: &ApiContext,
    caller: &Caller,
    error: StoreError,
    uid: &str,
) -> Error {
    let StoreError::HasDependents(dependents) = error else {
        return store_error::<R>(error, uid, "");
    };
    let mut visible = Vec::new();
    let mut hidden = 0;
    for (kind, name) in dependents {
        let need = R::DEPENDENTS
            .iter()
            .find(|d| d.resource_type == kind)
            .and_then(|d| d.read_capability)
            .map_or(Need::Token, Need::Capability);
        if context.authorize(caller, need, &name).await.is_ok() {
            visible.push((kind, name));
        } else {
            hidden += 1;
        }
    }
    let mut error = store_error::<R>(StoreError::HasDependents(visible), uid, "");
    if hidden > 0 {
        error.push_precondition_violation(crate::error::PreconditionViolation::new(
            "DEPENDENT_RESOURCE",
            uid,
            format!("{hidden} more dependent resources the caller cannot see"),
        ));
    }
    error
}

/// Whether the item `uid` (read as `stored`) would be deleted, deleting
/// nothing (AIP-163 `validate_only`): false when it is missing, ABORTED
/// when `etag` is not its etag. Dependents that would refuse the delete
/// are not looked for.
pub fn dry_delete<R: Resource>(
    stored: Result<Option<R>, StoreError>,
    etag: Option<&str>,
    uid: &str,
) -> Result<bool, Error> {
    match stored.map_err(|error| store_error::<R>(error, uid, ""))? {
        None => Ok(false),
        Some(item) if etag.is_some_and(|etag| etag != item.etag()) => {
            Err(store_error::<R>(StoreError::EtagMismatch, uid, ""))
        }
        Some(_) => Ok(true),
    }
}
