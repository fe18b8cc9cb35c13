//! A pending OIDC sign-in, kept by the browser that started it in a cookie
//! sealed by this process ([`super::seal`]), so the server keeps nothing
//! for an anonymous start, no start can evict or slow another, and nobody
//! without the cookie can cancel or finish a sign-in.

use std::time::Duration;

use super::seal::Seal;
use protoapi_core::time::unix_seconds as now;

/// How long a sign-in may take at the issuer.
pub(super) const LIFETIME: Duration = Duration::from_secs(600);
/// The longest `identity` a sign-in carries (a uid is at most 312
/// characters): the sealed cookie stays far below browsers' 4 KB.
pub(super) const MAX_IDENTITY: usize = 512;

/// The longest `next` kept, here or anywhere in the console; a longer one
/// goes home (a page or cookie never carries more than this of what a
/// request chose).
pub(super) const MAX_NEXT: usize = 1024;

/// A sign-in waiting for the issuer.
#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Pending {
    /// The `state` sent to the issuer, which its answer must carry.
    pub state: String,
    pub verifier: String,
    pub nonce: String,
    pub identity: String,
    pub next: String,
    /// Seconds since the epoch after which the sign-in is refused.
    pub expires: u64,
}

impl Pending {
    /// The cookie value keeping this sign-in, sealed by `seal`.
    pub(super) fn sealed(&self, seal: &Seal) -> String {
        seal.seal(&serde_json::to_vec(self).unwrap_or_default())
    }

    /// The sign-in `value` keeps, if `seal` sealed it and it has not expired.
    pub(super) fn opened(seal: &Seal, value: &str) -> Option<Self> {
        let pending: Pending = serde_json::from_slice(&seal.open(value)?).ok()?;
        (pending.expires > now()).then_some(pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(expires: u64) -> Pending {
        Pending {
            state: "s".into(),
            verifier: "v".into(),
            nonce: "n".into(),
            identity: "i".into(),
            next: "/console/".into(),
            expires,
        }
    }

    #[test]
    fn a_sealed_sign_in_opens_until_it_expires() {
        let seal = Seal::random();
        let expires = now() + 60;
        let live = pending(expires).sealed(&seal);
        assert_eq!(Pending::opened(&seal, &live), Some(pending(expires)));
        assert_eq!(Pending::opened(&Seal::random(), &live), None, "another key");
        let expired = pending(now() - 1).sealed(&seal);
        assert_eq!(Pending::opened(&seal, &expired), None, "expired");
    }
}
