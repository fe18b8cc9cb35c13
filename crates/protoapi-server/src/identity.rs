//! Identity tokens: JWTs from OIDC issuers the server trusts, verified with
//! the keys of each issuer's JWKS, for a token service to exchange for the
//! server's own API tokens ([`crate::tokens`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use protoapi_core::auth::unauthenticated;
use protoapi_core::error::Error;
use serde::Deserialize;

use crate::tokens::{LEEWAY_SECS, token_error};

/// The claims of a verified identity token that name who it is for.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct IdentityClaims {
    pub iss: String,
    pub sub: String,
}

/// The issuers whose identity tokens are accepted, each with its keys.
#[derive(Clone, Debug, Default)]
pub struct TrustedIssuers {
    keys: HashMap<String, JwkSet>,
}

impl TrustedIssuers {
    /// Reads the JWKS file of each `(issuer, file)`.
    pub fn load(issuers: &[(String, PathBuf)]) -> Result<Self, String> {
        let keys = issuers
            .iter()
            .map(|(issuer, file)| Ok((issuer.clone(), read_jwks(file)?)))
            .collect::<Result<_, String>>()?;
        Ok(TrustedIssuers { keys })
    }

    /// Verifies `token` for `audience`: signed by a key of its trusted
    /// issuer with that key's asymmetric algorithm (`none` and
    /// HS256-with-the-public-key never verify), current within
    /// [`LEEWAY_SECS`], and naming `exp`, `iss`, `sub` and `aud`.
    pub fn verify(&self, token: &str, audience: &str) -> Result<IdentityClaims, Error> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| token_error(&e, "identity token"))?;
        let unverified: IdentityClaims = jsonwebtoken::dangerous::insecure_decode_claims(token)
            .map_err(|e| token_error(&e, "identity token"))?;
        let keys = self.keys.get(&unverified.iss).ok_or_else(|| {
            unauthenticated(
                "UNTRUSTED_ISSUER",
                format!(
                    "identity tokens from `{}` are not trusted here",
                    unverified.iss
                ),
            )
        })?;
        let jwk = match &header.kid {
            Some(kid) => keys.find(kid),
            None if keys.keys.len() == 1 => keys.keys.first(),
            None => None,
        }
        .ok_or_else(|| {
            unauthenticated(
                "TOKEN_UNKNOWN_KEY",
                "the identity token names no key of its issuer",
            )
        })?;
        let key = DecodingKey::from_jwk(jwk).map_err(|_| {
            unauthenticated("TOKEN_UNKNOWN_KEY", "the issuer's key cannot verify tokens")
        })?;
        let mut validation = Validation::new(algorithm(&key)?);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_issuer(&[&unverified.iss]);
        validation.set_audience(&[audience]);
        validation.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
        jsonwebtoken::decode::<IdentityClaims>(token, &key, &validation)
            .map(|data| data.claims)
            .map_err(|e| token_error(&e, "identity token"))
    }
}

/// The one asymmetric algorithm a public key verifies.
fn algorithm(key: &DecodingKey) -> Result<Algorithm, Error> {
    match key.family() {
        AlgorithmFamily::Rsa => Ok(Algorithm::RS256),
        AlgorithmFamily::Ec => Ok(Algorithm::ES256),
        AlgorithmFamily::Ed => Ok(Algorithm::EdDSA),
        _ => Err(unauthenticated(
            "TOKEN_UNKNOWN_KEY",
            "the issuer's key is not a public key",
        )),
    }
}

fn read_jwks(file: &Path) -> Result<JwkSet, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read JWKS {}: {e}", file.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not a JWKS: {e}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_or_malformed_jwks_is_refused_at_load() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let error = TrustedIssuers::load(&[("https://i".into(), missing)]).unwrap_err();
        assert!(error.starts_with("cannot read JWKS"), "{error}");
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{}").unwrap();
        let error = TrustedIssuers::load(&[("https://i".into(), bad)]).unwrap_err();
        assert!(error.contains("is not a JWKS"), "{error}");
    }

    #[test]
    fn tokens_of_untrusted_issuers_and_unsigned_tokens_are_refused() {
        use base64::Engine as _;
        let encode = |json: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json);
        let unsigned = format!(
            "{}.{}.",
            encode(r#"{"alg":"none"}"#),
            encode(r#"{"iss":"https://i","sub":"s","aud":"a","exp":9999999999}"#)
        );
        let none = TrustedIssuers::default()
            .verify(&unsigned, "a")
            .unwrap_err();
        assert_eq!(none.code(), protoapi_core::Code::Unauthenticated);
        let signed = format!(
            "{}.{}.c2ln",
            encode(r#"{"alg":"RS256"}"#),
            encode(r#"{"iss":"https://elsewhere","sub":"s","aud":"a","exp":9999999999}"#)
        );
        let untrusted = TrustedIssuers::default().verify(&signed, "a").unwrap_err();
        assert_eq!(untrusted.reason(), "UNTRUSTED_ISSUER");
    }
}
