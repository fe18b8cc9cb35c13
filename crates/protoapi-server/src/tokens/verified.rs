//! API tokens verified before, by their text: a token presented again costs
//! a lookup instead of its base64, JSON and signature once more.
//!
//! Only tokens that passed [`ApiTokens::verify`](super::ApiTokens::verify)
//! are kept, so an anonymous caller cannot add entries; the text is the
//! whole signed token, so a hit is the same claims under the same key. The
//! times are checked on every hit, as verification checks them.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use super::claims::Claims;

/// Tokens kept at most; the cache starts over beyond.
const CAPACITY: usize = 10_000;

/// Claims of tokens verified before, by the token's text.
#[derive(Default)]
pub(super) struct Verified {
    entries: RwLock<HashMap<Box<str>, Arc<Claims>>>,
}

impl Verified {
    /// The claims of `token` if it was verified before and is current at
    /// `now` (Unix seconds); an expired one is forgotten.
    pub(super) fn get(&self, token: &str, now: u64) -> Option<Arc<Claims>> {
        let claims = self
            .entries
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(token)
            .cloned()?;
        if claims.is_current(now) {
            return Some(claims);
        }
        self.write().remove(token);
        None
    }

    /// Keeps the claims of `token`, which verification has just accepted.
    pub(super) fn put(&self, token: &str, claims: Arc<Claims>) {
        let mut entries = self.write();
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(token.into(), claims);
    }

    /// Tokens kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<Box<str>, Arc<Claims>>> {
        self.entries.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::claims::LEEWAY_SECS;

    fn claims(nbf: u64, exp: u64) -> Arc<Claims> {
        Arc::new(Claims {
            iss: "http://api".into(),
            aud: "http://api".into(),
            sub: "a".repeat(40),
            iat: nbf,
            nbf,
            exp,
        })
    }

    #[test]
    fn a_kept_token_holds_only_within_its_times() {
        let verified = Verified::default();
        verified.put("t", claims(1_000, 2_000));
        assert!(verified.get("t", 1_000 - LEEWAY_SECS).is_some());
        assert!(verified.get("t", 2_000 + LEEWAY_SECS).is_some());
        assert!(verified.get("u", 1_500).is_none(), "another token");
        assert!(
            verified.get("t", 1_000 - LEEWAY_SECS - 1).is_none(),
            "not valid yet"
        );
        assert_eq!(verified.len(), 0, "a token out of its times is forgotten");
        verified.put("t", claims(1_000, 2_000));
        assert!(
            verified.get("t", 2_000 + LEEWAY_SECS + 1).is_none(),
            "expired"
        );
        assert_eq!(verified.len(), 0);
    }

    #[test]
    fn the_cache_is_bounded() {
        let verified = Verified::default();
        for n in 0..=CAPACITY {
            verified.put(&n.to_string(), claims(0, u64::MAX / 2));
        }
        assert!(verified.len() <= CAPACITY);
    }
}
