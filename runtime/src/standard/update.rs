//! `Update` (AIP-134).

use std::future::Future;

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
/// without calling `store`, so no lock is taken and the answer is the same
/// whether or not the item exists. For resources whose fields grant
/// capabilities, the update may add only what the caller holds where the
/// item lives. `store` then applies the update atomically ([`Update::apply`]
/// inside its transaction); `None` (no such item) is NOT_FOUND.
pub async fn update<R, F, Fut>(
    context: &ApiContext,
    caller: &Caller,
    uid: &str,
    mask: Option<&FieldMask>,
    patch: R,
    body_field: &'static str,
    store: F,
) -> Result<R, Error>
where
    R: Resource,
    F: FnOnce(Update<R>) -> Fut,
    Fut: Future<Output = Result<Option<R>, StoreError>>,
{
    let mut update = Update::plan(mask, patch, body_field)?;
    if R::grants_capabilities() {
        let scope = uidp::parent(uid).unwrap_or(uid);
        update = update.holding(context.authorizer.held(caller, scope).await?, scope);
    }
    store(update)
        .await
        .map_err(|error| store_error::<R>(error, uid, ""))?
        .ok_or_else(|| not_found::<R>(uid))
}

#[cfg(test)]
mod tests;
