//! Sign-in through an OIDC issuer: the authorization-code flow with PKCE
//! (RFC 7636, `S256`), then the identity token exchanged for an API token.
//!
//! 1. `GET /console/oidc/start?identity=…` keeps a pending sign-in (a random
//!    `state`, PKCE verifier and nonce) on the server, binds it to the
//!    browser with a short-lived cookie, and redirects to the issuer's
//!    authorization endpoint with the verifier's challenge.
//! 2. The issuer redirects back to `/console/oidc/callback?code=…&state=…`.
//!    The state must be pending and the browser's; the code is redeemed at
//!    the token endpoint with the verifier (so a code intercepted on the way
//!    back is useless alone); the identity token's nonce must be the one
//!    sent.
//! 3. The identity token becomes an API token by the API's own exchange
//!    method, called in process with the identity token as its bearer (which
//!    verifies issuer, signature and audience), or is used as it is when no
//!    exchange is configured. A session opens as for a pasted token.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use sha2::{Digest, Sha256};

use super::PREFIX;
use super::call::{ApiHandle, Failure};
use crate::client::Tls;

/// The cookie binding a pending sign-in to the browser that started it.
const STATE_COOKIE: &str = "console_oidc";
/// How long a sign-in may take at the issuer.
const PENDING_LIFETIME: Duration = Duration::from_secs(600);
/// Sign-ins pending at most; the oldest makes room.
const MAX_PENDING: usize = 10_000;
/// The largest token endpoint answer read.
const MAX_TOKEN_ANSWER: usize = 64 << 10;

/// An issuer the console signs in through.
#[derive(Clone, Debug)]
pub struct Oidc {
    /// Shown on the sign-in button.
    pub name: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub client_id: String,
    /// For confidential clients; public clients rely on PKCE alone.
    pub client_secret: Option<String>,
    /// The console's callback as the issuer knows it:
    /// `<base url>/console/oidc/callback`.
    pub redirect_uri: String,
    /// Trust for the token endpoint's certificate.
    pub tls: Tls,
    /// Turns the identity token into an API token; `None` uses it as it is.
    pub exchange: Option<Exchange>,
}

/// The API's method exchanging an identity token (its bearer) for an API token.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// Path and query of the REST call, the identity as `{identity}`, e.g.
    /// `/v1/tokens:exchange?audience=https%3A%2F%2Fapi.example&identity={identity}`.
    pub path: String,
    /// The JSON field of the answer holding the API token.
    pub token_field: String,
}

/// A sign-in waiting for the issuer.
struct Pending {
    verifier: String,
    nonce: String,
    identity: String,
    next: String,
    started: Instant,
}

/// The configured issuer and the sign-ins pending there.
#[derive(Clone)]
pub(super) struct Flow {
    oidc: Oidc,
    pending: Arc<Mutex<HashMap<String, Pending>>>,
}

impl std::fmt::Debug for Flow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flow")
            .field("issuer", &self.oidc.name)
            .finish_non_exhaustive()
    }
}

/// `GET /console/oidc/start`.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct Start {
    #[serde(default)]
    identity: String,
    #[serde(default)]
    next: String,
}

/// `GET /console/oidc/callback`.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct Callback {
    #[serde(default)]
    code: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    error: String,
}

/// The PKCE `S256` challenge of `verifier`.
pub fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn refused(message: impl Into<String>) -> Failure {
    Failure::new(StatusCode::UNAUTHORIZED, "UNAUTHENTICATED", message)
}

impl Flow {
    pub(super) fn new(oidc: Oidc) -> Self {
        Flow {
            oidc,
            pending: Arc::default(),
        }
    }

    pub(super) fn name(&self) -> &str {
        &self.oidc.name
    }

    /// The origin of the authorization endpoint, which forms may lead to.
    pub(super) fn issuer_origin(&self) -> Option<&str> {
        let url = &self.oidc.authorization_endpoint;
        let (scheme, rest) = url.split_once("://")?;
        let end = rest.find('/').map_or(url.len(), |i| scheme.len() + 3 + i);
        Some(&url[..end])
    }

    pub(super) fn start(&self, start: Start) -> Response {
        let state = super::session::random_id();
        let verifier = super::session::random_id();
        let nonce = super::session::random_id();
        let mut query = form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.oidc.client_id)
            .append_pair("redirect_uri", &self.oidc.redirect_uri)
            .append_pair("scope", "openid")
            .append_pair("state", &state)
            .append_pair("nonce", &nonce)
            .append_pair("code_challenge", &challenge(&verifier))
            .append_pair("code_challenge_method", "S256");
        let separator = if self.oidc.authorization_endpoint.contains('?') {
            '&'
        } else {
            '?'
        };
        let location = format!(
            "{}{separator}{}",
            self.oidc.authorization_endpoint,
            query.finish()
        );
        let mut pending = self.pending.lock().expect("pending lock");
        pending.retain(|_, p| p.started.elapsed() < PENDING_LIFETIME);
        if pending.len() >= MAX_PENDING
            && let Some(oldest) = pending
                .iter()
                .min_by_key(|(_, p)| p.started)
                .map(|(k, _)| k.clone())
        {
            pending.remove(&oldest);
        }
        pending.insert(
            state.clone(),
            Pending {
                verifier,
                nonce,
                identity: start.identity,
                next: start.next,
                started: Instant::now(),
            },
        );
        let mut response = Redirect::to(&location).into_response();
        // Lax: the issuer's redirect back is a top-level navigation from
        // another site, which a Strict cookie would not come back with.
        let cookie = format!(
            "{STATE_COOKIE}={state}; Path={PREFIX}oidc/; Max-Age=600; HttpOnly; SameSite=Lax"
        );
        response.headers_mut().insert(
            header::SET_COOKIE,
            HeaderValue::from_str(&cookie).expect("ASCII"),
        );
        response
    }

    /// The API token and where to go, for an answer from the issuer.
    pub(super) async fn finish(
        &self,
        api: &ApiHandle,
        headers: &HeaderMap,
        callback: Callback,
    ) -> Result<(String, String), Failure> {
        if !callback.error.is_empty() {
            return Err(refused(format!(
                "the issuer refused the sign-in: {}",
                crate::error::excerpt(&callback.error)
            )));
        }
        let browser = super::session::cookie_value(headers, STATE_COOKIE).unwrap_or_default();
        let pending = {
            let mut pending = self.pending.lock().expect("pending lock");
            // Taken whatever follows: a state is used once.
            let found = pending.remove(&callback.state);
            found.filter(|p| {
                p.started.elapsed() < PENDING_LIFETIME
                    && !browser.is_empty()
                    && browser == callback.state
            })
        };
        let pending = pending.ok_or_else(|| {
            refused("this sign-in was not started in this browser, or took too long: start again")
        })?;
        let id_token = self.redeem(&callback.code, &pending.verifier).await?;
        if super::session::claim(&id_token, "nonce")
            .as_ref()
            .and_then(|n| n.as_str())
            != Some(pending.nonce.as_str())
        {
            return Err(refused(
                "the identity token does not answer this sign-in (nonce)",
            ));
        }
        let token = match &self.oidc.exchange {
            None => id_token,
            Some(exchange) => {
                let path = exchange
                    .path
                    .replace("{identity}", &super::pages::encode(&pending.identity));
                let bearer = HeaderValue::from_str(&format!("Bearer {id_token}"))
                    .map_err(|_| refused("the identity token is not printable"))?;
                let answer = api.call(Some(&bearer), Method::GET, &path, None).await?;
                answer[exchange.token_field.as_str()]
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| refused("the exchange answered no token"))?
            }
        };
        Ok((token, pending.next))
    }

    /// The identity token the token endpoint gives for `code`.
    async fn redeem(&self, code: &str, verifier: &str) -> Result<String, Failure> {
        let unavailable = |what: &str| {
            Failure::new(
                StatusCode::BAD_GATEWAY,
                "UNAVAILABLE",
                format!("the issuer's token endpoint {what}"),
            )
        };
        let form = super::pages::query_string([
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", &self.oidc.redirect_uri),
            ("client_id", &self.oidc.client_id),
            ("code_verifier", verifier),
            (
                "client_secret",
                self.oidc.client_secret.as_deref().unwrap_or_default(),
            ),
        ]);
        self.oidc
            .tls
            .check_url(&self.oidc.token_endpoint)
            .map_err(|e| unavailable(&format!("is refused: {}", e.message())))?;
        let connector = self
            .oidc
            .tls
            .connector()
            .map_err(|e| unavailable(&format!("cannot be reached: {}", e.message())))?;
        let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build(connector);
        let request = http::Request::post(&self.oidc.token_endpoint)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json")
            .body(Full::new(Bytes::from(form)))
            .map_err(|_| unavailable("is not a valid URL"))?;
        let response = tokio::time::timeout(Duration::from_secs(10), client.request(request))
            .await
            .map_err(|_| unavailable("did not answer in time"))?
            .map_err(|_| unavailable("cannot be reached"))?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_TOKEN_ANSWER)
            .collect()
            .await
            .map_err(|_| unavailable("answered too much"))?
            .to_bytes();
        let answer: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        if !status.is_success() {
            let error = answer["error"].as_str().unwrap_or("an error");
            return Err(refused(format!(
                "the issuer did not redeem the code: {}",
                crate::error::excerpt(error)
            )));
        }
        answer["id_token"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| unavailable("answered no identity token"))
    }
}

/// Clears the pending sign-in's cookie.
pub(super) fn clear_state_cookie() -> HeaderValue {
    HeaderValue::from_str(&format!(
        "{STATE_COOKIE}=; Path={PREFIX}oidc/; Max-Age=0; HttpOnly; SameSite=Lax"
    ))
    .expect("ASCII")
}

/// A page that continues to `next` with a same-site navigation, so that the
/// new SameSite=Strict session cookie goes with it (it would not on a
/// redirect chain that started at the issuer).
pub(super) fn continue_to(next: &str) -> Response {
    let page = super::view::Continue {
        next: next.to_owned(),
    };
    super::pages::render(StatusCode::OK, &page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_rfc_7636s() {
        // RFC 7636, appendix B.
        assert_eq!(
            challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
