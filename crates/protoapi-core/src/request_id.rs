//! AIP-155 request ids: a Create, Update, Delete or Undelete whose request
//! carries a `request_id` is remembered per caller and method for a window
//! (`ApiContext::with_request_id_window`, default [`REQUEST_ID_WINDOW`]). Storage records the write's outcome (the item
//! written or deleted) under the id in the write's own transaction, so a
//! retry after a lost answer finds either the write and its record or
//! neither. A retry with the same id and the same request is answered from
//! the record without a second write; the same id with another request is
//! INVALID_ARGUMENT.
//!
//! The generated method computes the [`RequestId`]
//! (`ApiContext::request_id`) and runs its flow in [`RequestId::scope`];
//! the flow asks `standard::recall` after authorization; the library's
//! stores read [`RequestId::current`] when they commit a write, and answer
//! what they recorded ([`Recorded`]).

use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::context::Caller;
use crate::error::{Error, FieldViolation};
use crate::json::JsonMessage;

/// The longest request id accepted, in bytes.
pub const MAX_LENGTH: usize = 256;

/// How long a request id is remembered unless the API says otherwise.
pub const REQUEST_ID_WINDOW: Duration = Duration::from_secs(60 * 60);

tokio::task_local! {
    static CURRENT: RequestId;
}

/// A write's request id, as storage records it: a key naming the caller,
/// the method and the id; a fingerprint of the whole request; and when the
/// record may be forgotten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestId {
    key: String,
    fingerprint: String,
    /// Microseconds since the epoch.
    expires: i64,
}

/// What storage recorded with a write under a request id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// The [`RequestId::fingerprint`] of the request that wrote.
    pub fingerprint: String,
    /// The item written, or deleted, encoded (empty when a store had none
    /// to keep).
    pub outcome: Vec<u8>,
}

impl RequestId {
    /// The request id of `request` to `method` (its full name) by `caller`,
    /// remembered for `window`: `None` when `request_id` is empty.
    /// INVALID_ARGUMENT naming `requestId` when it is longer than
    /// [`MAX_LENGTH`], or, declared a UUID (`uuid`: AIP-155's
    /// `(google.api.field_info).format = UUID4`), is not one; a UUID's case
    /// does not matter.
    pub fn new<M: JsonMessage>(
        window: Duration,
        caller: &Caller,
        method: &str,
        request_id: &str,
        uuid: bool,
        request: &M,
    ) -> Result<Option<RequestId>, Error> {
        if request_id.is_empty() {
            return Ok(None);
        }
        let refused = |why: &str| {
            Err(Error::invalid_fields(vec![FieldViolation::new(
                "requestId",
                why,
            )]))
        };
        if uuid && !is_uuid(request_id) {
            return refused("must be a UUID (e.g. `123e4567-e89b-42d3-a456-426614174000`)");
        }
        if request_id.len() > MAX_LENGTH {
            return refused("must be at most 256 bytes long");
        }
        let request_id = match uuid {
            true => request_id.to_ascii_lowercase(),
            false => request_id.to_owned(),
        };
        let who = match caller {
            Caller::Identity { uid, .. } => uid.as_str(),
            Caller::System => "\0system",
            Caller::Anonymous | Caller::Presented { .. } => "\0anonymous",
        };
        let key = Sha256::new()
            .chain_update(who)
            .chain_update([0])
            .chain_update(method)
            .chain_update([0])
            .chain_update(request_id)
            .finalize();
        let fingerprint = Sha256::digest(crate::json::to_vec(request));
        let window = i64::try_from(window.as_micros()).unwrap_or(i64::MAX);
        Ok(Some(RequestId {
            key: hex(&key),
            fingerprint: hex(&fingerprint),
            expires: crate::time::now_micros().saturating_add(window),
        }))
    }

    /// The key storage records it under.
    pub fn key(&self) -> &str {
        &self.key
    }

    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// When storage may forget it (microseconds since the epoch).
    pub fn expires(&self) -> i64 {
        self.expires
    }

    /// The id a long-running method's operation is recorded under (by
    /// `OperationStore::insert_operation`), beside the record of the write
    /// it runs: a retry is answered with the first operation.
    pub fn for_operation(&self) -> RequestId {
        RequestId {
            key: format!("{}/operation", self.key),
            ..self.clone()
        }
    }

    /// Runs a method's `flow` with `id` as [`Self::current`] (nothing
    /// when `None`).
    pub async fn scope<F: Future>(id: Option<RequestId>, flow: F) -> F::Output {
        match id {
            Some(id) => CURRENT.scope(id, flow).await,
            None => flow.await,
        }
    }

    /// The request id of the method running on this task, for storage to
    /// record with the write it commits.
    pub fn current() -> Option<RequestId> {
        CURRENT.try_with(Clone::clone).ok()
    }
}

/// Whether `id` is a UUID in its text form (`8-4-4-4-12` hex digits).
fn is_uuid(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "123e4567-e89b-42d3-a456-426614174000";

    fn id(caller: &Caller, method: &str, request_id: &str) -> Option<RequestId> {
        RequestId::new(REQUEST_ID_WINDOW, caller, method, request_id, true, &()).unwrap()
    }

    #[test]
    fn ids_are_uuids_keyed_per_caller_and_method() {
        let alice = Caller::Identity {
            uid: "a".into(),
            admin: false,
        };
        let bob = Caller::Identity {
            uid: "b".into(),
            admin: false,
        };
        assert_eq!(id(&alice, "m", ""), None);
        let error =
            RequestId::new(REQUEST_ID_WINDOW, &alice, "m", "not-a-uuid", true, &()).unwrap_err();
        assert_eq!(error.field_violations()[0].field, "requestId");
        // Ids not declared UUIDs are taken as written, up to a bound.
        let free = RequestId::new(REQUEST_ID_WINDOW, &alice, "m", "retry-1", false, &()).unwrap();
        let other = RequestId::new(REQUEST_ID_WINDOW, &alice, "m", "RETRY-1", false, &()).unwrap();
        assert_ne!(free.unwrap().key, other.unwrap().key);
        let long = "x".repeat(MAX_LENGTH + 1);
        assert!(RequestId::new(REQUEST_ID_WINDOW, &alice, "m", &long, false, &()).is_err());
        let first = id(&alice, "m", ID).unwrap();
        let same = id(&alice, "m", &ID.to_uppercase()).unwrap();
        assert_eq!(
            (&first.key, &first.fingerprint),
            (&same.key, &same.fingerprint)
        );
        assert_ne!(first.key, id(&bob, "m", ID).unwrap().key);
        assert_ne!(first.key, id(&alice, "n", ID).unwrap().key);
        assert_ne!(first.key, id(&Caller::System, "m", ID).unwrap().key);
        assert!(first.expires > crate::time::now_micros());
    }
}
