//! Sign-in through an OIDC issuer: the authorization-code flow with PKCE
//! (RFC 7636, `S256`), then the identity token exchanged for an API token.
//!
//! 1. `GET /console/oidc/start?identity=…` gives the browser a pending
//!    sign-in (a random `state`, PKCE verifier and nonce, the identity and
//!    where to go after) in a short-lived cookie the server seals with a key
//!    of its own: the server keeps nothing for it. Then it redirects to the
//!    issuer's authorization endpoint with the verifier's challenge.
//! 2. The issuer redirects back to `/console/oidc/callback?code=…&state=…`.
//!    The browser's sealed cookie must carry that state; the code is redeemed at
//!    the token endpoint with the verifier (so a code intercepted on the way
//!    back is useless alone); the identity token's nonce must be the one
//!    sent.
//! 3. The identity token becomes an API token by the API's own exchange
//!    method, called in process with the identity token as its bearer (which
//!    verifies issuer, signature and audience), or is used as it is when no
//!    exchange is configured. A session opens as for a pasted token.
//!
//! The authorization request and the redemption are the client crate's
//! (`protoapi_client::oidc`), which command-line clients sign in with too.

use axum::response::{IntoResponse, Redirect, Response};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};

use super::call::{ApiHandle, Asker, Failure};
use super::paths::PREFIX;
use super::pending::{self, Pending};
use super::seal::{self, Seal};
use protoapi_client::client::Tls;
use protoapi_client::oidc::{self, Authorization, RedeemError, Redemption};

/// The cookie holding the browser's pending sign-in: `__Host-` prefixed
/// (no other host or path may set it) when it is `Secure`.
const STATE_COOKIE: &str = "console_oidc";
const SECURE_STATE_COOKIE: &str = "__Host-console_oidc";

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

/// The API's method exchanging an identity token (its bearer) for an API
/// token, as its REST rule calls it.
#[derive(Clone, Debug)]
pub struct Exchange {
    /// The rule's HTTP method.
    pub method: Method,
    /// The rule's path, which binds no field, e.g. `/v1/tokens:exchange`.
    pub path: String,
    /// Whether the fields travel as a JSON body (the rule's `body` is `*`)
    /// rather than in the query.
    pub in_body: bool,
    /// The request's JSON field naming the API, and the API's base URL.
    pub audience: (String, String),
    /// The request's JSON field naming the identity to become.
    pub subject_field: String,
    /// The JSON field of the answer holding the API token.
    pub token_field: String,
}

impl Exchange {
    /// The path (with its query) and the body of the call for `identity`.
    fn request(&self, identity: &str) -> (String, Option<serde_json::Value>) {
        let (audience_field, audience) = &self.audience;
        let fields = [
            (audience_field, audience.as_str()),
            (&self.subject_field, identity),
        ];
        if !self.in_body {
            let query = form_urlencoded::Serializer::new(String::new())
                .extend_pairs(fields)
                .finish();
            return (format!("{}?{query}", self.path), None);
        }
        let body = fields
            .into_iter()
            .map(|(field, value)| (field.clone(), value.into()))
            .collect();
        (self.path.clone(), Some(serde_json::Value::Object(body)))
    }
}

/// The configured issuer, and the key sealing sign-ins pending there.
#[derive(Clone)]
pub(super) struct Flow {
    oidc: Oidc,
    seal: Seal,
    /// Cookies are `Secure` (the console is served over TLS).
    secure: bool,
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

fn refused(message: impl Into<String>) -> Failure {
    Failure::new(StatusCode::UNAUTHORIZED, "UNAUTHENTICATED", message)
}

impl Flow {
    pub(super) fn new(oidc: Oidc, secure: bool) -> Self {
        Flow {
            oidc,
            seal: Seal::random(),
            secure,
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

    pub(super) fn start(&self, start: Start) -> Result<Response, Failure> {
        if start.identity.len() > pending::MAX_IDENTITY {
            return Err(Failure::new(
                StatusCode::BAD_REQUEST,
                "INVALID_ARGUMENT",
                format!(
                    "an identity is at most {} characters",
                    pending::MAX_IDENTITY
                ),
            ));
        }
        // Where to go is checked when the sign-in ends; only its size here.
        let next = match start.next.len() <= pending::MAX_NEXT {
            true => start.next,
            false => String::new(),
        };
        let pending = Pending {
            state: super::session::random_id(),
            verifier: super::session::random_id(),
            nonce: super::session::random_id(),
            identity: start.identity,
            next,
            expires: protoapi_core::time::unix_seconds() + pending::LIFETIME.as_secs(),
        };
        let mut response = Redirect::to(&self.authorization_url(&pending)).into_response();
        let cookie = self.state_cookie(&pending.sealed(&self.seal), pending::LIFETIME.as_secs());
        response.headers_mut().insert(header::SET_COOKIE, cookie);
        Ok(response)
    }

    /// Where the browser signs in at the issuer for `pending`.
    fn authorization_url(&self, pending: &Pending) -> String {
        Authorization {
            endpoint: &self.oidc.authorization_endpoint,
            client_id: &self.oidc.client_id,
            redirect_uri: &self.oidc.redirect_uri,
            state: &pending.state,
            nonce: Some(&pending.nonce),
            verifier: &pending.verifier,
        }
        .url()
    }

    /// The cookie holding a sealed pending sign-in. Lax: the issuer's
    /// redirect back is a top-level navigation from another site, which a
    /// Strict cookie would not come back with.
    fn state_cookie(&self, value: &str, max_age: u64) -> HeaderValue {
        let (name, path, secure) = match self.secure {
            true => (SECURE_STATE_COOKIE, "/".to_owned(), "; Secure"),
            false => (STATE_COOKIE, format!("{PREFIX}oidc/"), ""),
        };
        HeaderValue::from_str(&format!(
            "{name}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}"
        ))
        .expect("sealed values are base64url")
    }

    /// Clears the pending sign-in's cookie.
    pub(super) fn clear_state_cookie(&self) -> HeaderValue {
        self.state_cookie("", 0)
    }

    /// The browser's pending sign-in that `state` answers: sealed here,
    /// unexpired, and with that state. Nothing is consumed, so a callback
    /// forged with a learnt state cancels nobody's sign-in (the issuer
    /// redeems a code once, and success clears the cookie).
    fn pending(&self, headers: &HeaderMap, state: &str) -> Option<Pending> {
        let name = match self.secure {
            true => SECURE_STATE_COOKIE,
            false => STATE_COOKIE,
        };
        let pending = Pending::opened(&self.seal, super::session::cookie_value(headers, name)?)?;
        seal::same_secret(&pending.state, state).then_some(pending)
    }

    /// The API token and where to go, for an answer from the issuer.
    pub(super) async fn finish(
        &self,
        api: &ApiHandle,
        asker: &Asker,
        headers: &HeaderMap,
        callback: Callback,
    ) -> Result<(String, String), Failure> {
        if !callback.error.is_empty() {
            return Err(refused(issuer_refusal(&callback.error)));
        }
        let pending = self.pending(headers, &callback.state).ok_or_else(|| {
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
                let (path, body) = exchange.request(&pending.identity);
                let bearer = HeaderValue::from_str(&format!("Bearer {id_token}"))
                    .map_err(|_| refused("the identity token is not printable"))?;
                let asker = asker.with_authorization(bearer);
                let answer = api
                    .call(&asker, exchange.method.clone(), &path, body.as_ref())
                    .await?;
                answer[exchange.token_field.as_str()]
                    .as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| refused("the exchange answered no token"))?
            }
        };
        Ok((token, pending.next))
    }

    /// The identity token the token endpoint gives for `code`. Of a
    /// refusal, only the issuer's error code is shown (anyone may run an
    /// issuer and word its description).
    async fn redeem(&self, code: &str, verifier: &str) -> Result<String, Failure> {
        let unavailable = |what: &str| {
            Failure::new(
                StatusCode::BAD_GATEWAY,
                "UNAVAILABLE",
                format!("the issuer's token endpoint {what}"),
            )
        };
        let tls = &self.oidc.tls;
        tls.check_url(&self.oidc.token_endpoint)
            .map_err(|e| unavailable(&format!("is refused: {}", e.message())))?;
        let http = oidc::http_client(tls)
            .map_err(|e| unavailable(&format!("cannot be reached: {}", e.message())))?;
        let redemption = Redemption {
            token_endpoint: &self.oidc.token_endpoint,
            code,
            redirect_uri: &self.oidc.redirect_uri,
            client_id: &self.oidc.client_id,
            client_secret: self.oidc.client_secret.as_deref(),
            verifier,
        };
        redemption.redeem(&http).await.map_err(|error| match error {
            RedeemError::Refused { error, .. } => refused(format!(
                "the issuer did not redeem the code: {}",
                protoapi_core::error::excerpt(&error)
            )),
            RedeemError::Unavailable(why) => unavailable(&why),
        })
    }
}

/// What the sign-in page says of an issuer's `error`: one of the codes
/// OAuth 2.0 and OpenID Connect define, named, and nothing else of what the
/// redirect carried (anyone can send a browser here with any text).
fn issuer_refusal(error: &str) -> String {
    const CODES: &[&str] = &[
        "access_denied",
        "invalid_request",
        "unauthorized_client",
        "unsupported_response_type",
        "invalid_scope",
        "server_error",
        "temporarily_unavailable",
        "interaction_required",
        "login_required",
        "account_selection_required",
        "consent_required",
        "invalid_request_uri",
        "invalid_request_object",
        "request_not_supported",
        "request_uri_not_supported",
        "registration_not_supported",
    ];
    match CODES.iter().find(|code| **code == error) {
        Some(code) => format!("the issuer refused the sign-in ({code})"),
        None => "the issuer refused the sign-in".to_owned(),
    }
}

/// A page that continues to `next` with a same-site navigation, so that the
/// new SameSite=Strict session cookie goes with it (it would not on a
/// redirect chain that started at the issuer).
pub(super) fn continue_to(next: &str) -> Response {
    let page = super::view::Continue {
        next: next.to_owned(),
    };
    super::reply::render(StatusCode::OK, &page)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(secure: bool) -> Flow {
        Flow::new(
            Oidc {
                name: "issuer".into(),
                authorization_endpoint: "https://issuer.example/authorize".into(),
                token_endpoint: "https://issuer.example/token".into(),
                client_id: "console".into(),
                client_secret: None,
                redirect_uri: "https://api.example/console/oidc/callback".into(),
                tls: Tls::new(),
                exchange: None,
            },
            secure,
        )
    }

    fn started(flow: &Flow, identity: &str) -> (String, HeaderMap) {
        let start = Start {
            identity: identity.into(),
            next: "/console/groups".into(),
        };
        let response = flow.start(start).unwrap();
        let cookie = response.headers()[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .to_owned();
        let mut headers = HeaderMap::new();
        let pair = cookie.split(';').next().unwrap();
        headers.insert(header::COOKIE, pair.parse().unwrap());
        (cookie, headers)
    }

    #[test]
    fn the_state_cookie_is_secure_and_host_only_under_tls() {
        let (cookie, _) = started(&flow(true), "someone");
        assert!(cookie.starts_with("__Host-console_oidc="), "{cookie}");
        assert!(
            cookie.contains("; Secure") && cookie.contains("; Path=/;"),
            "{cookie}"
        );
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"));
        let (cookie, _) = started(&flow(false), "someone");
        assert!(cookie.starts_with("console_oidc=") && !cookie.contains("Secure"));
    }

    #[test]
    fn a_pending_sign_in_is_the_browsers_and_answers_its_own_state_only() {
        let flow = flow(true);
        let (_, headers) = started(&flow, "someone");
        let value = super::super::session::cookie_value(&headers, SECURE_STATE_COOKIE).unwrap();
        let state = Pending::opened(&flow.seal, value).unwrap().state;
        assert_eq!(flow.pending(&headers, "another").map(|p| p.identity), None);
        assert_eq!(
            flow.pending(&headers, &state)
                .map(|p| p.identity)
                .as_deref(),
            Some("someone"),
            "a refused callback consumed nothing"
        );
        assert!(flow.pending(&HeaderMap::new(), &state).is_none());
        let too_long = Start {
            identity: "a".repeat(pending::MAX_IDENTITY + 1),
            next: String::new(),
        };
        assert_eq!(
            flow.start(too_long).unwrap_err().status,
            StatusCode::BAD_REQUEST
        );
    }

    #[test]
    fn an_issuers_error_is_named_only_when_it_is_a_defined_code() {
        assert_eq!(
            issuer_refusal("access_denied"),
            "the issuer refused the sign-in (access_denied)"
        );
        let spoof = "access_denied. Your account is locked: call +1 555 0100";
        assert_eq!(issuer_refusal(spoof), "the issuer refused the sign-in");
    }

    #[test]
    fn the_exchange_is_called_as_its_rule_says() {
        let exchange = |method: Method, in_body: bool| Exchange {
            method,
            path: "/v1/tokens:exchange".into(),
            in_body,
            audience: ("aud".into(), "https://api.example".into()),
            subject_field: "identity".into(),
            token_field: "token".into(),
        };
        let (path, body) = exchange(Method::GET, false).request("a&b=c");
        assert_eq!(
            path,
            "/v1/tokens:exchange?aud=https%3A%2F%2Fapi.example&identity=a%26b%3Dc"
        );
        assert_eq!(body, None);
        let (path, body) = exchange(Method::POST, true).request("a\"b");
        assert_eq!(path, "/v1/tokens:exchange");
        let expected = serde_json::json!({"aud": "https://api.example", "identity": "a\"b"});
        assert_eq!(body, Some(expected));
    }
}
