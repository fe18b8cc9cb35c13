//! The token service: identity tokens from trusted OIDC issuers
//! (`protoapi_runtime::auth::TrustedIssuers`) traded for API tokens of the identity
//! whose `claimMatch` names their issuer and subject.

use std::sync::Arc;

use platform_api::platform::iam::v2::IdentityStore;
use platform_api::platform::sts::v1::client::TokenService;
use platform_api::platform::sts::v1::{
    ExchangeTokenRequest, ExchangeTokenResponse, TokenServiceHandler,
};
use protoapi_runtime::auth::{
    ApiTokens, Authentication, IdentityClaims, TrustedIssuers, unauthenticated,
};
use protoapi_runtime::{Caller, Error};

use crate::store::SqlStore;

/// The domain of the refusals of authentication.
const DOMAIN: &str = "sts.platform";

/// Bearer API tokens become the caller; the exchange takes identity tokens.
pub fn authentication(tokens: ApiTokens, admin: String) -> Authentication {
    Authentication::new(tokens, admin, DOMAIN).exchange(TokenService::EXCHANGE_TOKEN)
}

/// The token service: `TokenServiceHandler` for the generated `TokenServiceApi`.
#[derive(Debug)]
pub struct TokenExchange {
    pub store: Arc<SqlStore>,
    pub tokens: ApiTokens,
    pub issuers: TrustedIssuers,
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
    /// Why `token` may not assume `identity_uid`, if it may not. Every path
    /// verifies the token and reads the identity, so that refusing an
    /// unknown identity and refusing a mismatching one take the same work.
    async fn refusal(&self, token: &str, identity_uid: &str) -> Result<Option<Refusal>, Error> {
        let claims: Result<IdentityClaims, Error> =
            self.issuers.verify(token, self.tokens.base_url());
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
        let identity_uid = protoapi_runtime::uidp::parse("identity", &request.identity)?;
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
                        detail = ?protoapi_runtime::error::excerpt(error.message()),
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
