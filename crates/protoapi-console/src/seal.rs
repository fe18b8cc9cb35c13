//! Values the console hands a browser to keep for it, sealed with
//! HMAC-SHA256 under a key of this process: what a browser brings back
//! opens only if this process sealed it and nobody changed it. Nothing is
//! kept on the server, so such values cost it no memory whoever asks.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Seals and opens values with a random key of this process (a restart
/// makes every sealed value unreadable).
#[derive(Clone)]
pub(super) struct Seal {
    key: [u8; 32],
}

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seal")
    }
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

    /// `payload` and its MAC, each base64url, joined by a `.`.
    pub(super) fn seal(&self, payload: &[u8]) -> String {
        let payload = URL_SAFE_NO_PAD.encode(payload);
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        let tag = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        format!("{payload}.{tag}")
    }

    /// The payload `value` seals, if this process sealed it (the MAC is
    /// checked in constant time).
    pub(super) fn open(&self, value: &str) -> Option<Vec<u8>> {
        let (payload, tag) = value.split_once('.')?;
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        mac.verify_slice(&URL_SAFE_NO_PAD.decode(tag).ok()?).ok()?;
        URL_SAFE_NO_PAD.decode(payload).ok()
    }
}

/// Whether two secrets are equal, compared in constant time (for equal
/// lengths).
pub(super) fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_this_process_sealed_and_nobody_changed_opens() {
        let seal = Seal::random();
        let sealed = seal.seal(b"payload");
        assert_eq!(seal.open(&sealed).as_deref(), Some(&b"payload"[..]));
        assert_eq!(Seal::random().open(&sealed), None, "another key");
        let (_, tag) = sealed.split_once('.').unwrap();
        let changed = format!("{}.{tag}", URL_SAFE_NO_PAD.encode(b"payloae"));
        assert_eq!(seal.open(&changed), None, "a changed payload");
        assert_eq!(seal.open("no-tag"), None);
        assert_eq!(seal.open(""), None);
    }
}
