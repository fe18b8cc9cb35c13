//! The token exchange: an identity token from a trusted OIDC issuer,
//! presented as the caller's bearer, traded for an API token of the
//! subject whose claim names the token's issuer and subject.
//!
//! Which subjects there are and where their claims are kept is the API's
//! (a lookup it passes in); the checks, the one answer to every refusal and
//! its log line are here. An API declares its exchange in its annotations
//! (`token_exchange`): the generator then writes the lookup, as the handler
//! of the exchange's service for [`StoredExchange`].

use std::future::Future;
use std::sync::Arc;

use protoapi_core::auth::unauthenticated;
use protoapi_core::context::Caller;
use protoapi_core::error::{Error, excerpt};

use crate::identity::{IdentityClaims, TrustedIssuers};
use crate::tokens::ApiTokens;

/// What the API knows of the subject an exchange asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// No such subject.
    Unknown,
    /// The subject, and the issuer and subject its identity tokens must
    /// carry (`None`: it claims none, so no token is exchanged for it).
    Claiming(Option<IdentityClaims>),
}

/// Identity tokens of [`TrustedIssuers`] exchanged for [`ApiTokens`].
#[derive(Clone, Debug)]
pub struct TokenExchange {
    tokens: ApiTokens,
    issuers: TrustedIssuers,
}

/// A [`TokenExchange`] over the store of its subjects: what the handler
/// generated for a declared exchange runs on (the generated
/// `Services::token_exchange` builds it).
#[derive(Debug)]
pub struct StoredExchange<S> {
    pub store: Arc<S>,
    pub exchange: TokenExchange,
}

/// Why an exchange was refused: logged, never answered.
#[derive(Debug)]
enum Refusal {
    /// The identity token did not verify (its error names why).
    Token(Error),
    UnknownSubject,
    ClaimMismatch,
}

/// The one answer to every refused exchange, so that it does not tell
/// whether the subject exists, whose claims the token matches, or which
/// issuers are trusted.
fn refused() -> Error {
    unauthenticated(
        "IDENTITY_TOKEN_REFUSED",
        "the identity token cannot be exchanged for this identity: it must be a current token \
         for this API from a trusted issuer, with the issuer and subject of the identity's \
         claimMatch",
    )
}

impl TokenExchange {
    pub fn new(tokens: ApiTokens, issuers: TrustedIssuers) -> Self {
        TokenExchange { tokens, issuers }
    }

    /// An API token of `subject` for the identity token `caller` presents,
    /// asked for `audience` (the field the request names it in:
    /// `audience_field`). `lookup` reads the subject; it runs whether or not
    /// the token verifies, so that refusing an unknown subject and refusing
    /// a mismatching token take the same work.
    pub async fn exchange<F>(
        &self,
        caller: &Caller,
        (audience_field, audience): (&str, &str),
        subject: &str,
        lookup: F,
    ) -> Result<String, Error>
    where
        F: Future<Output = Result<Subject, Error>>,
    {
        let Caller::Presented { token } = caller else {
            return Err(unauthenticated(
                "IDENTITY_TOKEN_REQUIRED",
                "send the identity token as `Authorization: Bearer <token>`",
            ));
        };
        // What the request alone decides, whatever the token and the store hold.
        if audience != self.tokens.base_url() {
            return Err(Error::invalid_field(
                audience_field,
                format!("this API is `{}`", self.tokens.base_url()),
            ));
        }
        let claims = self.issuers.verify(token, self.tokens.base_url());
        let refusal = match (claims, lookup.await?) {
            (Err(error), _) => Some(Refusal::Token(error)),
            (Ok(_), Subject::Unknown) => Some(Refusal::UnknownSubject),
            (Ok(claims), Subject::Claiming(claim)) => {
                (claim.as_ref() != Some(&claims)).then_some(Refusal::ClaimMismatch)
            }
        };
        match refusal {
            None => Ok(self.tokens.issue(subject)),
            Some(refusal) => {
                log(subject, &refusal);
                Err(refused())
            }
        }
    }
}

fn log(subject: &str, refusal: &Refusal) {
    // The subject is the request's: an excerpt, so that no log line grows
    // with what a client sends.
    let subject = &*excerpt(subject);
    match refusal {
        // The message may quote the token's unverified claims: an excerpt,
        // as a quoted value.
        Refusal::Token(error) => tracing::info!(
            subject,
            reason = error.reason(),
            detail = ?excerpt(error.message()),
            "token exchange refused"
        ),
        Refusal::UnknownSubject | Refusal::ClaimMismatch => {
            tracing::info!(subject, ?refusal, "token exchange refused")
        }
    }
}
