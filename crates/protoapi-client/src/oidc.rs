//! Signing in at an OIDC issuer, the steps every client of it takes: the
//! issuer's endpoints from discovery (OpenID Connect Discovery 1.0), the
//! authorization request of the code flow with PKCE (RFC 6749 section
//! 4.1, RFC 7636 `S256`), and the code redeemed for the identity token.
//!
//! Where the browser comes back is the caller's: the web console's
//! callback route (its pending sign-in sealed in a cookie), or a
//! command-line client's loopback listener (RFC 8252). Identity tokens are
//! not verified here: the API verifies them (signature, issuer, audience,
//! expiry) when they are exchanged.
//!
//! Every URL is checked by the caller against its own policy (its
//! [`Tls`] settings) before it is fetched.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::client::{HttpsConnector, Tls, is_loopback};

/// How long the issuer has to answer one request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer read from the issuer.
const MAX_ANSWER: usize = 64 << 10;

/// A client for the issuer's endpoints.
pub type HttpClient = Client<HttpsConnector, Full<Bytes>>;

/// The client for the issuer's endpoints under `tls`.
pub fn http_client(tls: &Tls) -> Result<HttpClient, protoapi_core::Error> {
    Ok(Client::builder(TokioExecutor::new()).build(tls.connector()?))
}

/// 32 random bytes, base64url: 43 characters of the unreserved set, as a
/// PKCE verifier must be (RFC 7636 section 4.1); also a `state` or `nonce`.
pub fn random_secret() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
}

/// The `S256` code challenge of `verifier` (RFC 7636 section 4.2).
pub fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// An authorization request of the code flow (RFC 6749 section 4.1.1, with
/// RFC 7636's challenge), scope `openid`.
#[derive(Clone, Copy, Debug)]
pub struct Authorization<'a> {
    pub endpoint: &'a str,
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub state: &'a str,
    /// What the identity token must carry back (OIDC Core 3.1.2.1).
    pub nonce: Option<&'a str>,
    /// The PKCE verifier, whose challenge is sent.
    pub verifier: &'a str,
}

impl Authorization<'_> {
    /// Where the browser goes to sign in.
    pub fn url(&self) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", self.client_id)
            .append_pair("redirect_uri", self.redirect_uri)
            .append_pair("scope", "openid")
            .append_pair("state", self.state);
        if let Some(nonce) = self.nonce {
            query.append_pair("nonce", nonce);
        }
        query
            .append_pair("code_challenge", &challenge(self.verifier))
            .append_pair("code_challenge_method", "S256");
        let separator = if self.endpoint.contains('?') {
            '&'
        } else {
            '?'
        };
        format!("{}{separator}{}", self.endpoint, query.finish())
    }
}

/// The code of an authorization answer, to redeem at the token endpoint
/// (RFC 6749 section 4.1.3, with RFC 7636's verifier).
#[derive(Clone, Copy, Debug)]
pub struct Redemption<'a> {
    pub token_endpoint: &'a str,
    pub code: &'a str,
    pub redirect_uri: &'a str,
    pub client_id: &'a str,
    /// For confidential clients; public clients rely on PKCE alone.
    pub client_secret: Option<&'a str>,
    pub verifier: &'a str,
}

/// Why a code gave no identity token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedeemError {
    /// The issuer answered with an error (RFC 6749 section 5.2): its code
    /// and description, as the issuer wrote them (printable only).
    Refused {
        error: String,
        description: Option<String>,
    },
    /// The token endpoint could not be used, or its answer held no token.
    Unavailable(String),
}

impl Redemption<'_> {
    /// The token request's form (a serializer is not `Send`: it is not
    /// kept across the request).
    fn form(&self) -> String {
        let mut form = form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", "authorization_code")
            .append_pair("code", self.code)
            .append_pair("redirect_uri", self.redirect_uri)
            .append_pair("client_id", self.client_id)
            .append_pair("code_verifier", self.verifier);
        if let Some(secret) = self.client_secret {
            form.append_pair("client_secret", secret);
        }
        form.finish()
    }

    /// The identity token the token endpoint gives for the code.
    pub async fn redeem(&self, http: &HttpClient) -> Result<String, RedeemError> {
        let request = Request::post(self.token_endpoint)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::ACCEPT, "application/json")
            .body(Full::from(self.form()))
            .map_err(|_| RedeemError::Unavailable("is not a URL".to_owned()))?;
        let (status, body) = fetch(http, request)
            .await
            .map_err(RedeemError::Unavailable)?;
        let answer: Option<Value> = serde_json::from_slice(&body).ok();
        let field = |name: &str| {
            answer
                .as_ref()
                .and_then(|answer| answer[name].as_str())
                .filter(|value| !value.is_empty())
                .map(printable)
        };
        if !status.is_success() {
            return Err(match field("error") {
                Some(error) => RedeemError::Refused {
                    error,
                    description: field("error_description"),
                },
                None => RedeemError::Unavailable(format!("answered {status}")),
            });
        }
        match (&answer, field("id_token")) {
            (_, Some(id_token)) => Ok(id_token),
            (None, _) => Err(RedeemError::Unavailable("answered no JSON".to_owned())),
            (Some(_), None) => Err(RedeemError::Unavailable(
                "answered no id_token (is `openid` a scope this client may ask for?)".to_owned(),
            )),
        }
    }
}

/// The endpoints a discovery document names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoints {
    pub authorization: String,
    pub token: String,
}

/// Where `issuer` publishes its discovery document.
pub fn discovery_url(issuer: &str) -> String {
    format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    )
}

/// Reads the issuer's discovery document (OpenID Connect Discovery 1.0,
/// section 4) and checks it ([`check_discovery`]). Errors name the step:
/// `OIDC discovery at <url>: …`.
pub async fn discover(http: &HttpClient, issuer: &str) -> Result<Endpoints, String> {
    let url = discovery_url(issuer);
    let failed = |why: String| format!("OIDC discovery at {url}: {why}");
    let request = Request::get(&url)
        .header(header::ACCEPT, "application/json")
        .body(Full::default())
        .map_err(|_| failed("not a URL".to_owned()))?;
    let (status, body) = fetch(http, request).await.map_err(failed)?;
    if !status.is_success() {
        return Err(failed(format!("answered {status}")));
    }
    let document: Value =
        serde_json::from_slice(&body).map_err(|e| failed(format!("not a JSON document ({e})")))?;
    check_discovery(issuer, &document).map_err(failed)
}

/// The endpoints of a discovery document, checked before any is used: the
/// document is for `issuer` (Discovery 1.0 section 4.3), and each endpoint
/// is HTTPS (or HTTP on this machine) on the issuer's origin, so a tampered
/// or misconfigured document cannot send the code and the PKCE verifier
/// elsewhere.
pub fn check_discovery(issuer: &str, document: &Value) -> Result<Endpoints, String> {
    let issuer = issuer.trim_end_matches('/');
    let named = document["issuer"].as_str().unwrap_or_default();
    if named.trim_end_matches('/') != issuer {
        return Err(format!("the document is for issuer `{}`", printable(named)));
    }
    let origin = issuer_origin(issuer)?;
    let endpoint = |name: &str| {
        let url = document[name]
            .as_str()
            .filter(|url| !url.is_empty())
            .ok_or_else(|| format!("no `{name}`"))?;
        check_endpoint(&origin, name, url).map(|()| url.to_owned())
    };
    Ok(Endpoints {
        authorization: endpoint("authorization_endpoint")?,
        token: endpoint("token_endpoint")?,
    })
}

/// A URL's origin: scheme, host (lower case) and port (the scheme's
/// default when not given).
#[derive(Debug, PartialEq, Eq)]
pub struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// The origin of an `http://` or `https://` URL without user information.
    fn of(url: &str) -> Result<Origin, String> {
        let shown = || printable(url);
        let uri: http::Uri = url
            .parse()
            .map_err(|_| format!("`{}` is not a URL", shown()))?;
        let authority = uri
            .authority()
            .ok_or_else(|| format!("`{}` is not an absolute URL", shown()))?;
        if authority.as_str().contains('@') {
            return Err(format!("`{}` carries user information", shown()));
        }
        let scheme = uri.scheme_str().unwrap_or_default().to_ascii_lowercase();
        let port = match (uri.port_u16(), scheme.as_str()) {
            (Some(port), "http" | "https") => port,
            (None, "https") => 443,
            (None, "http") => 80,
            _ => return Err(format!("`{}` is not an http(s) URL", shown())),
        };
        let host = authority.host().to_ascii_lowercase();
        Ok(Origin { scheme, host, port })
    }

    /// HTTPS, or plain HTTP to this machine (a loopback address or `localhost`).
    fn is_secure(&self) -> bool {
        self.scheme == "https" || (self.scheme == "http" && is_loopback(&self.host))
    }
}

/// The issuer's origin, which must be HTTPS (or HTTP on this machine): its
/// endpoints are on it, and the authorization code travels to them.
pub fn issuer_origin(issuer: &str) -> Result<Origin, String> {
    let origin = Origin::of(issuer)?;
    if !origin.is_secure() {
        return Err(format!(
            "the issuer `{}` must be an https:// URL (http:// only on this machine)",
            printable(issuer)
        ));
    }
    Ok(origin)
}

/// Refuses an endpoint that is not HTTPS (or HTTP on this machine), or not
/// on the issuer's origin.
fn check_endpoint(issuer: &Origin, name: &str, url: &str) -> Result<(), String> {
    let origin = Origin::of(url).map_err(|why| format!("`{name}`: {why}"))?;
    if !origin.is_secure() {
        return Err(format!(
            "`{name}` `{}` is not https:// (http:// only on this machine)",
            printable(url)
        ));
    }
    if origin != *issuer {
        return Err(format!(
            "`{name}` `{}` is not on the issuer's origin {}://{}:{}",
            printable(url),
            issuer.scheme,
            issuer.host,
            issuer.port
        ));
    }
    Ok(())
}

/// Sends `request` and reads the answer (at most 64 KiB), within 30 s.
async fn fetch(
    http: &HttpClient,
    request: Request<Full<Bytes>>,
) -> Result<(StatusCode, Bytes), String> {
    let exchange = async {
        let response = http.request(request).await.map_err(|e| error_chain(&e))?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_ANSWER)
            .collect()
            .await
            .map_err(|e| format!("reading the answer: {e}"))?
            .to_bytes();
        Ok((status, body))
    };
    tokio::time::timeout(REQUEST_TIMEOUT, exchange)
        .await
        .map_err(|_| format!("no answer within {}s", REQUEST_TIMEOUT.as_secs()))?
}

/// An error with its causes, `outer: inner: …`.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}

/// `text` without control characters, safe to print or show.
pub fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

#[cfg(test)]
mod tests;
