//! `Get` (AIP-131).

use std::future::Future;

use super::{ApiContext, not_found, store_error};
use crate::auth::Need;
use crate::context::Caller;
use crate::error::Error;
use crate::resource::Resource;
use crate::store::StoreError;

/// `Get`: the item, if `caller` may read it.
///
/// `fetch` runs only once reading is allowed, except for callers denied on
/// collections with public items, who get the item only when it is public,
/// and otherwise the same denial whether or not it exists.
pub async fn get<R: Resource>(
    context: &ApiContext,
    caller: &Caller,
    need: Need<'_>,
    uid: &str,
    fetch: impl Future<Output = Result<Option<R>, StoreError>>,
) -> Result<R, Error> {
    match context.authorize(caller, need, uid).await {
        Ok(()) => fetch
            .await
            .map_err(|error| store_error::<R>(error, uid, ""))?
            .ok_or_else(|| not_found::<R>(uid)),
        Err(denied) if R::PUBLIC.is_some() => {
            match fetch
                .await
                .map_err(|error| store_error::<R>(error, uid, ""))?
            {
                Some(item) if item.is_public() => Ok(item),
                _ => Err(denied),
            }
        }
        Err(denied) => Err(denied),
    }
}
