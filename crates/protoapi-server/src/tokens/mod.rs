//! API tokens: JWTs this server signs (HS256 with a key it keeps).
//! `iss` and `aud` are the API's base URL, `sub` the identity's UIDP, and
//! they expire after an hour. Verification accepts nothing else: no other
//! algorithm (`none`, RS/HS confusion), no other key, issuer or audience, no
//! expired or not-yet-valid token (beyond a small clock skew). A token
//! verified once is remembered (module `verified`): presented again, its times are
//! checked and nothing else is decoded.

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use protoapi_core::auth::unauthenticated;
use protoapi_core::error::Error;

mod claims;
mod verified;

pub use claims::{Claims, LEEWAY_SECS};

/// Lifetime of the API tokens this server issues.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(3600);
/// Issues and verifies this server's API tokens; clones share the tokens
/// verified so far.
#[derive(Clone)]
pub struct ApiTokens {
    encoding: EncodingKey,
    decoding: DecodingKey,
    base_url: String,
    verified: Arc<verified::Verified>,
}

impl std::fmt::Debug for ApiTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiTokens")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl ApiTokens {
    /// Tokens for the API at `base_url`, signed with `secret`.
    pub fn new(secret: &[u8; 32], base_url: &str) -> Self {
        ApiTokens {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            base_url: base_url.to_owned(),
            verified: Arc::default(),
        }
    }

    /// The API's base URL: the audience and issuer of its tokens.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// A token for `identity`, valid for [`TOKEN_LIFETIME`].
    pub fn issue(&self, identity: &str) -> String {
        let now = protoapi_core::time::unix_seconds();
        let claims = Claims {
            iss: self.base_url.clone(),
            aud: self.base_url.clone(),
            sub: identity.to_owned(),
            iat: now,
            nbf: now,
            exp: now + TOKEN_LIFETIME.as_secs(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .expect("HS256 signing cannot fail")
    }

    /// `claims` signed with this API's key, for tokens of another audience
    /// than the API's (a registry's, say), which [`ApiTokens::verify`]
    /// refuses.
    pub fn sign<T: serde::Serialize>(&self, claims: &T) -> String {
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &self.encoding)
            .expect("HS256 signing cannot fail")
    }

    /// The claims of a current token this API [signed](ApiTokens::sign) for
    /// `audience` (named `what` in refusals), with `exp`, `nbf`, `iss` (the
    /// API's base URL) and `aud` checked as [`ApiTokens::verify`] checks them.
    pub fn verify_signed<T: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        audience: &str,
        what: &str,
    ) -> Result<T, Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_audience(&[audience]);
        validation.set_issuer(&[&self.base_url]);
        validation.set_required_spec_claims(&["exp", "nbf", "aud", "iss"]);
        jsonwebtoken::decode::<T>(token, &self.decoding, &validation)
            .map(|data| data.claims)
            .map_err(|error| token_error(&error, what))
    }

    /// The claims of a genuine, current token for this API.
    pub fn verify(&self, token: &str) -> Result<Arc<Claims>, Error> {
        if let Some(claims) = self
            .verified
            .get(token, protoapi_core::time::unix_seconds())
        {
            return Ok(claims);
        }
        let claims = Arc::new(self.decode(token)?);
        self.verified.put(token, Arc::clone(&claims));
        Ok(claims)
    }

    /// The claims of `token`, checked in full.
    fn decode(&self, token: &str) -> Result<Claims, Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_audience(&[&self.base_url]);
        validation.set_issuer(&[&self.base_url]);
        validation.set_required_spec_claims(&["exp", "nbf", "aud", "iss", "sub"]);
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation)
            .map(|data| data.claims)
            .map_err(|error| token_error(&error, "API token"))?;
        if !protoapi_core::uidp::is_valid(&claims.sub) {
            return Err(unauthenticated(
                "TOKEN_MALFORMED",
                "the API token's subject is not an identity",
            ));
        }
        Ok(claims)
    }
}

/// The UNAUTHENTICATED error for a token that failed verification.
pub fn token_error(error: &jsonwebtoken::errors::Error, what: &str) -> Error {
    let (reason, why) = match error.kind() {
        ErrorKind::ExpiredSignature => ("TOKEN_EXPIRED", "has expired"),
        ErrorKind::ImmatureSignature => ("TOKEN_NOT_YET_VALID", "is not valid yet"),
        ErrorKind::InvalidAudience => ("TOKEN_WRONG_AUDIENCE", "is for another audience"),
        ErrorKind::InvalidIssuer => ("TOKEN_WRONG_ISSUER", "comes from another issuer"),
        ErrorKind::InvalidSignature => ("TOKEN_BAD_SIGNATURE", "has an invalid signature"),
        ErrorKind::InvalidAlgorithm
        | ErrorKind::MissingAlgorithm
        | ErrorKind::InvalidAlgorithmName => (
            "TOKEN_WRONG_ALGORITHM",
            "is signed with an algorithm this API does not accept",
        ),
        ErrorKind::MissingRequiredClaim(_) | ErrorKind::InvalidClaimFormat(_) => {
            ("TOKEN_MALFORMED", "lacks a required claim")
        }
        _ => ("TOKEN_MALFORMED", "is not a well-formed JWT"),
    };
    unauthenticated(reason, format!("the {what} {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_reject_foreign_ones() {
        let identity = "a".repeat(40);
        let tokens = ApiTokens::new(&[1; 32], "http://api");
        let claims = tokens.verify(&tokens.issue(&identity)).unwrap();
        assert_eq!(
            (claims.sub.as_str(), claims.aud.as_str()),
            (identity.as_str(), "http://api")
        );
        let other_key = ApiTokens::new(&[2; 32], "http://api");
        assert_eq!(
            other_key
                .verify(&tokens.issue(&identity))
                .unwrap_err()
                .reason(),
            "TOKEN_BAD_SIGNATURE"
        );
        let other_api = ApiTokens::new(&[1; 32], "http://other");
        assert_eq!(
            other_api
                .verify(&tokens.issue(&identity))
                .unwrap_err()
                .reason(),
            "TOKEN_WRONG_ISSUER"
        );
        assert_eq!(
            tokens
                .verify(&tokens.issue("not-a-uidp"))
                .unwrap_err()
                .reason(),
            "TOKEN_MALFORMED",
            "a subject that is not a UIDP"
        );
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
}
