//! A pending OIDC sign-in, kept by the browser that started it: a cookie
//! sealed with a key of this process (HMAC-SHA256), so the server keeps
//! nothing for an anonymous start, no start can evict or slow another, and
//! nobody without the cookie can cancel or finish a sign-in.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

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

/// Seals and opens pending sign-ins with a key of this process.
#[derive(Clone)]
pub(super) struct Seal {
    key: [u8; 32],
}

impl Seal {
    pub(super) fn random() -> Self {
        Seal {
            key: rand::random(),
        }
    }

    fn mac(&self) -> Hmac<Sha256> {
        Hmac::new_from_slice(&self.key).expect("HMAC takes keys of any length")
    }

    /// The cookie value of `pending`: its JSON and its MAC, each base64url.
    pub(super) fn seal(&self, pending: &Pending) -> String {
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(pending).unwrap_or_default());
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        let tag = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        format!("{payload}.{tag}")
    }

    /// The sign-in `value` seals, if this process sealed it (checked in
    /// constant time) and it has not expired.
    pub(super) fn open(&self, value: &str) -> Option<Pending> {
        let (payload, tag) = value.split_once('.')?;
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        mac.verify_slice(&URL_SAFE_NO_PAD.decode(tag).ok()?).ok()?;
        let pending: Pending =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
        (pending.expires > now()).then_some(pending)
    }
}

/// Seconds since the epoch.
pub(super) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
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
    fn only_this_processs_unexpired_untouched_seals_open() {
        let seal = Seal::random();
        let expires = now() + 60;
        let live = seal.seal(&pending(expires));
        assert_eq!(seal.open(&live), Some(pending(expires)));
        assert_eq!(Seal::random().open(&live), None, "another key");
        assert_eq!(seal.open(&seal.seal(&pending(now() - 1))), None, "expired");
        let (payload, tag) = live.split_once('.').unwrap();
        let forged = URL_SAFE_NO_PAD.encode(
            serde_json::to_vec(&Pending {
                identity: "someone-else".into(),
                ..pending(expires)
            })
            .unwrap(),
        );
        assert_eq!(
            seal.open(&format!("{forged}.{tag}")),
            None,
            "changed payload"
        );
        assert_eq!(seal.open(payload), None, "no tag");
        assert_eq!(seal.open(""), None);
    }
}
