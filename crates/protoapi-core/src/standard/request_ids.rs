//! A retry under an AIP-155 request id ([`crate::request_id`]) answered
//! from what storage recorded with the first request's write.

use crate::error::{Error, FieldViolation};
use crate::request_id::{Recorded, RequestId};
use crate::resource::Resource;
use crate::store::StoreError;

/// The item an earlier request with the current id wrote (or deleted),
/// from what `recorded` (the store's record under a key) answers, so that a
/// retry is answered as the first request was; `None` when there is no
/// current id or no record. INVALID_ARGUMENT when the id was used for
/// another request.
pub async fn recall<R, F>(recorded: impl FnOnce(String) -> F) -> Result<Option<R>, Error>
where
    R: Resource,
    F: Future<Output = Result<Option<Recorded>, StoreError>>,
{
    let Some(id) = RequestId::current() else {
        return Ok(None);
    };
    let Some(record) = recorded(id.key().to_owned()).await? else {
        return Ok(None);
    };
    if record.fingerprint != id.fingerprint() {
        return Err(reused());
    }
    R::decode(record.outcome.as_slice())
        .map(Some)
        .map_err(Error::internal)
}

/// INVALID_ARGUMENT on `requestId`: it was used for another request.
pub(super) fn reused() -> Error {
    Error::invalid_fields(vec![FieldViolation::new(
        "requestId",
        "was used for a different request: a retry repeats its request exactly; \
         a new request takes a new id",
    )])
}
