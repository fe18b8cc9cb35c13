//! API tokens verified before, by their text: a token presented again costs
//! a lookup instead of its base64, JSON and signature once more.
//!
//! Only tokens that passed [`ApiTokens::verify`](super::ApiTokens::verify)
//! are kept, so an anonymous caller cannot add entries; the text is the
//! whole signed token, so a hit is the same claims under the same key. The
//! times are checked on every hit, as verification checks them.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use super::{Claims, LEEWAY_SECS};

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
    fn len(&self) -> usize {
        self.entries
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<Box<str>, Arc<Claims>>> {
        self.entries.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Claims {
    /// Whether `now` is within `nbf..=exp`, give or take the leeway, as
    /// verification checks them.
    fn is_current(&self, now: u64) -> bool {
        self.nbf <= now + LEEWAY_SECS && now <= self.exp + LEEWAY_SECS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::ApiTokens;

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
    fn only_verified_tokens_are_kept_and_a_forgery_of_one_is_refused() {
        let tokens = ApiTokens::new(&[1; 32], "http://api");
        let token = tokens.issue(&"a".repeat(40));
        let at = token.len() - 10;
        let swapped = if &token[at..=at] == "A" { "B" } else { "A" };
        let forged = format!("{}{swapped}{}", &token[..at], &token[at + 1..]);
        assert!(tokens.verify(&forged).is_err());
        assert_eq!(tokens.verified.len(), 0, "a refused token is not kept");
        let first = tokens.verify(&token).unwrap();
        assert_eq!(tokens.verified.len(), 1);
        assert!(
            Arc::ptr_eq(&first, &tokens.verify(&token).unwrap()),
            "a hit"
        );
        assert!(tokens.verify(&forged).is_err(), "after the genuine one");
        let other_key = ApiTokens::new(&[2; 32], "http://api");
        assert_eq!(
            other_key.verify(&token).unwrap_err().reason(),
            "TOKEN_BAD_SIGNATURE",
            "servers with other keys share nothing"
        );
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
