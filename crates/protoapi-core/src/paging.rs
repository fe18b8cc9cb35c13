//! Page tokens (AIP-158): opaque, integrity-protected, bound to their query.
//!
//! A token is `base64url(payload ‖ mac)` where the payload is JSON holding a
//! version, a hash of the query it continues (filter + order), the sort values
//! of the last item returned (so the next page continues by key, not by
//! offset) and its issue time; the mac is HMAC-SHA256 (truncated to 16 bytes)
//! under a key the server keeps across restarts.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::resource::SortValue;
use crate::store::{Hierarchy, Matching, OrderBy};

const VERSION: u8 = 1;
const MAC_LEN: usize = 16;
/// Tokens older than this are rejected (CONTRACT §4: three days).
pub const TOKEN_LIFETIME_SECS: u64 = 3 * 24 * 3600;

/// Issues and verifies page tokens with one secret key.
#[derive(Clone)]
pub struct PageTokens {
    key: [u8; 32],
}

impl std::fmt::Debug for PageTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PageTokens { .. }")
    }
}

#[derive(Serialize, Deserialize)]
struct Payload {
    v: u8,
    /// Hash of the query the token continues.
    q: String,
    /// Sort values of the last item returned.
    a: Vec<SortValue>,
    /// Issue time, seconds since the epoch.
    t: u64,
}

impl PageTokens {
    pub fn new(key: [u8; 32]) -> Self {
        PageTokens { key }
    }

    /// A signer with a fresh random key: tokens last as long as the process
    /// (for in-memory stores, whose data does not outlive it either).
    pub fn random() -> Self {
        let mut key = [0u8; 32];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut key);
        PageTokens { key }
    }

    /// A token continuing `query` after the item with sort values `after`.
    pub fn issue(&self, query: &QueryBinding, after: Vec<SortValue>) -> String {
        let payload = Payload {
            v: VERSION,
            q: query.0.clone(),
            a: after,
            t: crate::time::unix_seconds(),
        };
        let mut bytes = serde_json::to_vec(&payload).expect("payload serializes");
        let mac = self.mac(&bytes);
        bytes.extend_from_slice(&mac);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The position a token continues from, if it is genuine, fresh and was
    /// issued for `query`.
    pub fn open(&self, token: &str, query: &QueryBinding) -> Result<Vec<SortValue>, Error> {
        let invalid = |why: &str| Error::invalid_field("pageToken", why.to_owned());
        let bytes = URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| invalid("not a page token issued by this API"))?;
        if bytes.len() <= MAC_LEN {
            return Err(invalid("not a page token issued by this API"));
        }
        let (payload, mac) = bytes.split_at(bytes.len() - MAC_LEN);
        let mut verifier = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        verifier.update(payload);
        verifier
            .verify_truncated_left(mac)
            .map_err(|_| invalid("the page token is corrupted or was not issued by this API"))?;
        let payload: Payload = serde_json::from_slice(payload)
            .map_err(|_| invalid("not a page token issued by this API"))?;
        if payload.v != VERSION {
            return Err(invalid(
                "the page token comes from an older version of this API",
            ));
        }
        if payload.q != query.0 {
            return Err(invalid(
                "the page token belongs to a query with other filters or order; repeat the original query",
            ));
        }
        if crate::time::unix_seconds().saturating_sub(payload.t) > TOKEN_LIFETIME_SECS {
            return Err(invalid(
                "the page token has expired; start from the first page",
            ));
        }
        Ok(payload.a)
    }

    fn mac(&self, bytes: &[u8]) -> [u8; MAC_LEN] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        mac.update(bytes);
        let full = mac.finalize().into_bytes();
        full[..MAC_LEN].try_into().expect("16 of 32 bytes")
    }
}

/// What a page token is bound to: the resource type, filter and order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryBinding(String);

impl QueryBinding {
    /// `public`: whether public items change what the list covers (the
    /// filter's variant says how: only them within it, or also outside it).
    pub fn new(
        resource_type: &str,
        filter: &Hierarchy,
        matching: &Matching,
        order_by: &[OrderBy],
        public: bool,
    ) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(resource_type.as_bytes());
        match filter {
            Hierarchy::All => hasher.update(b"\0all"),
            Hierarchy::ChildrenOf(uid) => hasher.update(format!("\0children\0{uid}")),
            Hierarchy::DescendantsOf(uid) => hasher.update(format!("\0descendants\0{uid}")),
            Hierarchy::Within(scopes) => {
                hasher.update(b"\0within");
                for scope in scopes {
                    hasher.update(format!("\0{scope}"));
                }
            }
        }
        let Matching {
            uids,
            name,
            root_only,
            live_only,
            condition,
        } = matching;
        // Values are length-prefixed: no name can spell another filter.
        if let Some(uids) = uids {
            hasher.update(format!("\0uids\0{}", uids.len()));
            for uid in uids {
                hasher.update(format!("\0{}:{uid}", uid.len()));
            }
        }
        if let Some(name) = name {
            hasher.update(format!("\0name\0{}:{name}", name.len()));
        }
        if *root_only {
            hasher.update(b"\0root");
        }
        if *live_only {
            hasher.update(b"\0live");
        }
        if let Some(condition) = condition {
            let condition = condition.to_string();
            hasher.update(format!("\0filter\0{}:{condition}", condition.len()));
        }
        for term in order_by {
            hasher.update(format!("\0{}\0{}", term.field, term.descending));
        }
        if public {
            hasher.update(b"\0public");
        }
        QueryBinding(URL_SAFE_NO_PAD.encode(&hasher.finalize()[..12]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(uid: &str) -> QueryBinding {
        QueryBinding::new(
            "t/T",
            &Hierarchy::ChildrenOf(uid.into()),
            &Matching::default(),
            &[],
            false,
        )
    }

    #[test]
    fn round_trip_and_tampering() {
        let tokens = PageTokens::new([7; 32]);
        let after = vec![SortValue::Text("x".into()), SortValue::Int(3)];
        let token = tokens.issue(&binding("a"), after.clone());
        assert_eq!(tokens.open(&token, &binding("a")).unwrap(), after);
        assert!(
            tokens.open(&token, &binding("b")).is_err(),
            "bound to its query"
        );
        assert!(
            PageTokens::new([8; 32])
                .open(&token, &binding("a"))
                .is_err(),
            "foreign key"
        );
        let mut bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
        for i in 0..bytes.len() {
            bytes[i] ^= 1;
            let tampered = URL_SAFE_NO_PAD.encode(&bytes);
            assert!(
                tokens.open(&tampered, &binding("a")).is_err(),
                "byte {i} flipped"
            );
            bytes[i] ^= 1;
        }
        assert!(
            tokens
                .open(&token[..token.len() - 1], &binding("a"))
                .is_err(),
            "truncated"
        );
        assert!(tokens.open("", &binding("a")).is_err());
    }
}
