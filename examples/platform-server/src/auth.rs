//! Who is calling: bearer tokens become a [`Caller`] before any handler runs,
//! and the token service trades trusted OIDC identity tokens for API tokens.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use generated::platform::iam::v2::IdentityStore;
use generated::platform::sts::v1::client::TokenService;
use generated::platform::sts::v1::{
    ExchangeTokenRequest, ExchangeTokenResponse, TokenServiceHandler,
};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use runtime::auth::{ApiTokens, LEEWAY_SECS, bearer, token_error};
use runtime::client::Route;
use runtime::{Caller, Code, Error};
use serde::Deserialize;

use crate::store::SqlStore;

/// The method that takes identity tokens instead of API tokens, where the
/// contract serves it.
const TOKEN_EXCHANGE: Route = TokenService::EXCHANGE_TOKEN;

/// What the authentication middleware needs.
#[derive(Clone, Debug)]
pub struct Authentication {
    pub tokens: ApiTokens,
    /// The identity that is the platform administrator.
    pub admin: String,
}

/// Turns the `Authorization` header into the request's [`Caller`]: no header
/// is anonymous; a valid API token is its identity; anything else is
/// UNAUTHENTICATED here, before any handler (also on public reads). Answers
/// of the token exchange, which may carry a token, are never stored by
/// caches (`Cache-Control: no-store`).
pub async fn authenticate(
    State(auth): State<Arc<Authentication>>,
    request: Request,
    next: Next,
) -> Response {
    let exchange = TOKEN_EXCHANGE.is_path(request.uri().path());
    let mut response = identify(&auth, request, next, exchange).await;
    if exchange {
        response.headers_mut().insert(
            axum::http::header::CACHE_CONTROL,
            axum::http::HeaderValue::from_static("no-store"),
        );
    }
    response
}

/// Runs the request as the caller its `Authorization` header names, or
/// answers UNAUTHENTICATED.
async fn identify(
    auth: &Authentication,
    mut request: Request,
    next: Next,
    exchange: bool,
) -> Response {
    let grpc = runtime::rest::is_grpc(request.headers());
    let caller = match bearer(request.headers()) {
        Ok(None) => Caller::Anonymous,
        Ok(Some(token)) if exchange => Caller::Presented { token },
        Ok(Some(token)) => match auth.tokens.verify(&token) {
            Ok(claims) => Caller::Identity {
                admin: claims.sub == auth.admin,
                uid: claims.sub,
            },
            Err(error) => return runtime::rest::error_response(error.in_domain(DOMAIN), grpc),
        },
        Err(error) => return runtime::rest::error_response(error.in_domain(DOMAIN), grpc),
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

const DOMAIN: &str = "sts.platform";

/// An OIDC issuer whose identity tokens the token service accepts.
#[derive(Clone, Debug)]
pub struct TrustedIssuer {
    pub issuer: String,
    keys: JwkSet,
}

impl TrustedIssuer {
    /// Reads the issuer's JWKS file.
    pub fn load(issuer: &str, jwks_file: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(jwks_file)
            .map_err(|e| format!("cannot read JWKS {}: {e}", jwks_file.display()))?;
        let keys: JwkSet = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a JWKS: {e}", jwks_file.display()))?;
        Ok(TrustedIssuer {
            issuer: issuer.to_owned(),
            keys,
        })
    }
}

/// The token service: `TokenServiceHandler` for the generated `TokenServiceApi`.
#[derive(Debug)]
pub struct TokenExchange {
    pub store: Arc<SqlStore>,
    pub tokens: ApiTokens,
    pub issuers: HashMap<String, TrustedIssuer>,
}

#[derive(Deserialize)]
struct IdentityClaims {
    iss: String,
    sub: String,
}

fn unauthenticated(reason: &'static str, message: impl Into<String>) -> Error {
    Error::new(Code::Unauthenticated, reason, message)
}

/// Why an exchange was refused: logged, never answered. The caller gets
/// [`refused`] whichever it is, so the answer does not tell whether the
/// identity exists, whose claims it matches, or which issuers are trusted.
#[derive(Debug)]
enum Refusal {
    /// The identity token did not verify (its error names why).
    Token(Error),
    UnknownIdentity,
    ClaimMismatch,
}

/// The one answer to every refused exchange (CONTRACT §7).
fn refused() -> Error {
    unauthenticated(
        "IDENTITY_TOKEN_REFUSED",
        "the identity token cannot be exchanged for this identity: it must be a current token \
         for this API from a trusted issuer, with the issuer and subject of the identity's \
         claimMatch",
    )
}

impl TokenExchange {
    /// Verifies an identity token against its issuer's keys; returns its claims.
    fn verify(&self, token: &str) -> Result<IdentityClaims, Error> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| token_error(&e, "identity token"))?;
        let unverified: IdentityClaims = jsonwebtoken::dangerous::insecure_decode_claims(token)
            .map_err(|e| token_error(&e, "identity token"))?;
        let issuer = self.issuers.get(&unverified.iss).ok_or_else(|| {
            unauthenticated(
                "UNTRUSTED_ISSUER",
                format!(
                    "identity tokens from `{}` are not trusted here",
                    unverified.iss
                ),
            )
        })?;
        let jwk = match &header.kid {
            Some(kid) => issuer.keys.find(kid),
            None if issuer.keys.keys.len() == 1 => issuer.keys.keys.first(),
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
        // Only the asymmetric algorithm of the issuer's key: `none` and
        // HS256-with-the-public-key never verify.
        let algorithm = match key.family() {
            jsonwebtoken::AlgorithmFamily::Rsa => Algorithm::RS256,
            jsonwebtoken::AlgorithmFamily::Ec => Algorithm::ES256,
            jsonwebtoken::AlgorithmFamily::Ed => Algorithm::EdDSA,
            _ => {
                return Err(unauthenticated(
                    "TOKEN_UNKNOWN_KEY",
                    "the issuer's key is not a public key",
                ));
            }
        };
        let mut validation = Validation::new(algorithm);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_issuer(&[&issuer.issuer]);
        validation.set_audience(&[self.tokens.base_url()]);
        validation.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
        jsonwebtoken::decode::<IdentityClaims>(token, &key, &validation)
            .map(|data| data.claims)
            .map_err(|e| token_error(&e, "identity token"))
    }

    /// Why `token` may not assume `identity_uid`, if it may not. Every path
    /// verifies the token and reads the identity, so that refusing an
    /// unknown identity and refusing a mismatching one take the same work.
    async fn refusal(&self, token: &str, identity_uid: &str) -> Result<Option<Refusal>, Error> {
        let claims = self.verify(token);
        let identity = self
            .store
            .get_identity(identity_uid)
            .await
            .map_err(Error::from)?;
        let claims = match claims {
            Ok(claims) => claims,
            Err(error) => return Ok(Some(Refusal::Token(error))),
        };
        let Some(identity) = identity else {
            return Ok(Some(Refusal::UnknownIdentity));
        };
        let matches = identity
            .claim_match
            .as_ref()
            .is_some_and(|m| m.issuer == claims.iss && m.subject == claims.sub);
        Ok((!matches).then_some(Refusal::ClaimMismatch))
    }
}

impl TokenServiceHandler for TokenExchange {
    async fn exchange_token(
        &self,
        caller: &Caller,
        request: ExchangeTokenRequest,
    ) -> Result<ExchangeTokenResponse, Error> {
        let Caller::Presented { token } = caller else {
            return Err(unauthenticated(
                "IDENTITY_TOKEN_REQUIRED",
                "send the identity token as `Authorization: Bearer <token>`",
            ));
        };
        // What the request alone decides, whatever the token and the store hold.
        if request.aud != self.tokens.base_url() {
            return Err(Error::invalid_field(
                "aud",
                format!("this API is `{}`", self.tokens.base_url()),
            ));
        }
        let identity_uid = runtime::uidp::parse("identity", &request.identity)?;
        match self.refusal(token, identity_uid).await? {
            None => Ok(ExchangeTokenResponse {
                token: self.tokens.issue(identity_uid),
            }),
            Some(refusal) => {
                match &refusal {
                    // The message may quote the token's unverified claims:
                    // an excerpt, as a quoted value.
                    Refusal::Token(error) => tracing::info!(
                        identity = identity_uid,
                        reason = error.reason(),
                        detail = ?runtime::error::excerpt(error.message()),
                        "token exchange refused"
                    ),
                    Refusal::UnknownIdentity | Refusal::ClaimMismatch => {
                        tracing::info!(identity = identity_uid, ?refusal, "token exchange refused")
                    }
                }
                Err(refused())
            }
        }
    }
}
