//! The token service: identity tokens from trusted OIDC issuers traded for
//! API tokens of the identity whose `claimMatch` names their issuer and
//! subject. The exchange itself is the server crate's
//! (`protoapi_runtime::auth::TokenExchange`); this names the identity and
//! where its claim is kept.

use std::sync::Arc;

use platform_api::platform::iam::v2::IdentityStore;
use platform_api::platform::sts::v1::client::TokenService;
use platform_api::platform::sts::v1::{
    ExchangeTokenRequest, ExchangeTokenResponse, TokenServiceHandler,
};
use protoapi_runtime::auth::{ApiTokens, Authentication, IdentityClaims, Subject, TokenExchange};
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
pub struct Exchange {
    pub store: Arc<SqlStore>,
    pub exchange: TokenExchange,
}

impl TokenServiceHandler for Exchange {
    async fn exchange_token(
        &self,
        caller: &Caller,
        request: ExchangeTokenRequest,
    ) -> Result<ExchangeTokenResponse, Error> {
        let identity = protoapi_runtime::uidp::parse("identity", &request.identity)?;
        let lookup = async {
            let stored = self.store.get_identity(identity).await?;
            Ok(match stored {
                None => Subject::Unknown,
                Some(identity) => {
                    Subject::Claiming(identity.claim_match.map(|claim| IdentityClaims {
                        iss: claim.issuer,
                        sub: claim.subject,
                    }))
                }
            })
        };
        let token = self
            .exchange
            .exchange(caller, ("aud", &request.aud), identity, lookup)
            .await?;
        Ok(ExchangeTokenResponse { token })
    }
}
