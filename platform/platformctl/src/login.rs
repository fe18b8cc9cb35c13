//! Login in a browser: the OAuth 2.0 authorization code flow with PKCE
//! (RFC 7636, `S256`) and a loopback redirect (RFC 8252) against an OIDC
//! issuer, ending with the issuer's ID token.
//!
//! 1. Discovery (`{issuer}/.well-known/openid-configuration`) names the
//!    authorization and token endpoints. The document must be for the
//!    issuer asked for, and the endpoints HTTPS (HTTP only on a loopback
//!    host) on the issuer's origin; otherwise the login stops before
//!    using them. The issuer itself must be HTTPS or on a loopback host.
//! 2. A listener on `127.0.0.1` (an ephemeral port) waits for the redirect
//!    to `/callback`.
//! 3. The user opens the authorization URL; the issuer redirects the browser
//!    back with `code` and `state` (or `error`).
//! 4. The code and the PKCE verifier are redeemed at the token endpoint for
//!    the ID token.
//!
//! The ID token is not verified here: the server's token service verifies
//! it (signature, issuer, audience, expiry) when it is exchanged. The
//! issuer is reached over TLS with the roots of `platformctl::transport`
//! (the system's, or `--ca-file`); plain `http://` only on this machine or
//! with `--allow-insecure-http`.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// The path of the loopback redirect.
const CALLBACK_PATH: &str = "/callback";
/// How long the user has to complete the login in the browser.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// How long the issuer has to answer one request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

const SUCCESS_PAGE: &str = "<!doctype html><meta charset=utf-8><title>platformctl</title>\
    <p>Logged in. You may close this window.</p>";
const FAILURE_PAGE: &str = "<!doctype html><meta charset=utf-8><title>platformctl</title>\
    <p>The login failed; the terminal says why. You may close this window.</p>";

type HttpClient = Client<protoapi_runtime::client::HttpsConnector, Full<Bytes>>;

/// The outcome of the redirect: the authorization code, or why there is none.
type Callback = Result<String, String>;

/// Runs the authorization code flow with PKCE against `issuer` (OIDC discovery at
/// `{issuer}/.well-known/openid-configuration`, its endpoints checked by
/// [`check_discovery`]), with a loopback redirect on 127.0.0.1
/// (ephemeral port, path `/callback`), and returns the ID token (a JWT).
/// The authorization URL is opened with the command in `$BROWSER` when set (the URL as its
/// only argument); otherwise, and always additionally, the line
/// `Open this URL to log in: <url>` is printed to stderr.
pub async fn browser_login(issuer: &str, client_id: &str) -> Result<String, String> {
    issuer_origin(issuer)?;
    let http = http_client()?;
    let endpoints = discover(&http, issuer).await?;

    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1 for the redirect: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on 127.0.0.1 for the redirect: {e}"))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");
    let state = random_token();
    let verifier = random_token();
    let url = authorization_url(
        &endpoints.authorization,
        client_id,
        &redirect_uri,
        &state,
        &challenge(&verifier),
    );

    eprintln!("Open this URL to log in: {url}");
    open_browser(&url);
    let code = tokio::time::timeout(LOGIN_TIMEOUT, receive_code(listener, &state))
        .await
        .map_err(|_| {
            format!(
                "the login was not completed: no redirect to {redirect_uri} within {} minutes",
                LOGIN_TIMEOUT.as_secs() / 60
            )
        })??;
    redeem(
        &http,
        &endpoints.token,
        &code,
        &redirect_uri,
        client_id,
        &verifier,
    )
    .await
}

/// The endpoints discovery names.
#[derive(Debug)]
struct Endpoints {
    authorization: String,
    token: String,
}

/// Reads the issuer's discovery document (OpenID Connect Discovery 1.0, section 4).
async fn discover(http: &HttpClient, issuer: &str) -> Result<Endpoints, String> {
    let issuer = issuer.trim_end_matches('/');
    let url = format!("{issuer}/.well-known/openid-configuration");
    let failed = |why: String| format!("OIDC discovery at {url}: {why}");
    let request = Request::get(&url)
        .header(header::ACCEPT, "application/json")
        .body(Full::default())
        .map_err(|_| failed("not a URL".to_owned()))?;
    let (status, body) = send(http, request).await.map_err(failed)?;
    if !status.is_success() {
        return Err(failed(format!("answered {status}")));
    }
    let document: Value =
        serde_json::from_slice(&body).map_err(|e| failed(format!("not a JSON document ({e})")))?;
    check_discovery(issuer, &document).map_err(failed)
}

/// A URL's origin: scheme, host (lower case) and port (the scheme's default
/// when not given).
#[derive(Debug, PartialEq, Eq)]
struct Origin {
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
        self.scheme == "https"
            || (self.scheme == "http" && protoapi_runtime::client::is_loopback(&self.host))
    }
}

/// The issuer's origin, which must be HTTPS (or HTTP on this machine): its
/// endpoints are on it, and the authorization code travels to them.
fn issuer_origin(issuer: &str) -> Result<Origin, String> {
    let origin = Origin::of(issuer)?;
    if !origin.is_secure() {
        return Err(format!(
            "the issuer `{}` must be an https:// URL (http:// only on this machine)",
            printable(issuer)
        ));
    }
    Ok(origin)
}

/// The endpoints of a discovery document, checked before any is used: the
/// document is for `issuer` (OIDC Discovery 1.0, section 4.3), and each
/// endpoint is HTTPS (or HTTP on this machine) on the issuer's origin, so a
/// tampered or misconfigured document cannot send the code and the PKCE
/// verifier elsewhere.
fn check_discovery(issuer: &str, document: &Value) -> Result<Endpoints, String> {
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

/// Sends `request` and reads the whole answer, within [`REQUEST_TIMEOUT`].
async fn send(
    http: &HttpClient,
    request: Request<Full<Bytes>>,
) -> Result<(StatusCode, Bytes), String> {
    check_url(request.uri())?;
    let exchange = async {
        let response = http.request(request).await.map_err(|e| error_chain(&e))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("reading the answer: {}", error_chain(&e)))?
            .to_bytes();
        Ok((status, body))
    };
    tokio::time::timeout(REQUEST_TIMEOUT, exchange)
        .await
        .map_err(|_| format!("no answer within {}s", REQUEST_TIMEOUT.as_secs()))?
}

/// The client for the issuer's endpoints: TLS with the process's roots
/// (`platformctl::transport`).
fn http_client() -> Result<HttpClient, String> {
    let connector = platformctl::transport::tls()
        .connector()
        .map_err(|e| e.message().to_owned())?;
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}

/// Whether `uri` may be fetched: `https://`, or plain HTTP where
/// `platformctl::transport` allows it.
fn check_url(uri: &http::Uri) -> Result<(), String> {
    platformctl::transport::check_url(&uri.to_string()).map_err(|e| {
        e.field_violations()
            .first()
            .map_or_else(|| e.message().to_owned(), |v| v.description.clone())
    })
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

/// 32 random bytes, base64url: 43 characters of the unreserved set, as a PKCE
/// verifier must be (RFC 7636, section 4.1); also the `state`.
fn random_token() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
}

/// The `S256` code challenge of `verifier` (RFC 7636, section 4.2).
fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The authorization request (RFC 6749, section 4.1.1, with RFC 7636's challenge).
fn authorization_url(
    endpoint: &str,
    client_id: &str,
    redirect_uri: &str,
    state: &str,
    challenge: &str,
) -> String {
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("scope", "openid")
        .append_pair("state", state)
        .append_pair("code_challenge", challenge)
        .append_pair("code_challenge_method", "S256")
        .finish();
    let separator = if endpoint.contains('?') { '&' } else { '?' };
    format!("{endpoint}{separator}{query}")
}

/// Starts `$BROWSER` on `url`, if set; a failure to start it is reported, not fatal
/// (the URL is printed anyway).
fn open_browser(url: &str) {
    let Some(browser) = std::env::var_os("BROWSER").filter(|b| !b.is_empty()) else {
        return;
    };
    let started = std::process::Command::new(&browser)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn();
    match started {
        // Some browsers run until closed: reap it in the background.
        Ok(mut child) => drop(std::thread::spawn(move || child.wait())),
        Err(e) => eprintln!("cannot start {}: {e}", browser.to_string_lossy()),
    }
}

/// Serves the loopback redirect until a request reaches [`CALLBACK_PATH`], and
/// returns the code it carried once the browser has its page.
async fn receive_code(listener: TcpListener, state: &str) -> Callback {
    let (report, mut reports) = mpsc::channel(1);
    // Dropped on return, which closes any connection still open.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            Some(callback) = reports.recv() => return callback,
            accepted = listener.accept() => {
                let (stream, _) = accepted
                    .map_err(|e| format!("the redirect listener failed: {e}"))?;
                connections.spawn(serve_callback(stream, state.to_owned(), report.clone()));
            }
            Some(_) = connections.join_next() => {}
        }
    }
}

/// Answers one connection: the callback gets a page saying whether the login
/// went through, anything else (a browser asking for `/favicon.ico`) a 404.
/// The callback's outcome is reported after the page is written.
async fn serve_callback(stream: TcpStream, state: String, report: mpsc::Sender<Callback>) {
    let outcome = OnceLock::new();
    let service = service_fn(|request: Request<hyper::body::Incoming>| {
        let (status, page) = if request.uri().path() == CALLBACK_PATH {
            let callback = check_callback(request.uri().query(), &state);
            let answer = match callback {
                Ok(_) => (StatusCode::OK, SUCCESS_PAGE),
                Err(_) => (StatusCode::BAD_REQUEST, FAILURE_PAGE),
            };
            let _ = outcome.set(callback);
            answer
        } else {
            (StatusCode::NOT_FOUND, "Not found")
        };
        let response = Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
            .header(header::CACHE_CONTROL, "no-store")
            .body(Full::new(Bytes::from_static(page.as_bytes())));
        async move { response }
    });
    // One request per connection: the connection ends once its answer is written.
    let _ = hyper::server::conn::http1::Builder::new()
        .keep_alive(false)
        .serve_connection(TokioIo::new(stream), service)
        .await;
    if let Some(callback) = outcome.into_inner() {
        let _ = report.send(callback).await;
    }
}

/// The authorization code in the redirect's query (RFC 6749, section 4.1.2),
/// or why there is none: a `state` other than the login's (a stale or forged
/// redirect), or the issuer's `error`.
fn check_callback(query: Option<&str>, expected_state: &str) -> Callback {
    let params: HashMap<String, String> =
        form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    if params.get("state").map(String::as_str) != Some(expected_state) {
        return Err(
            "the redirect's state does not match the login's (a stale or forged redirect)"
                .to_owned(),
        );
    }
    if let Some(error) = params.get("error") {
        let description = params
            .get("error_description")
            .map(|d| format!(" ({})", printable(d)))
            .unwrap_or_default();
        return Err(format!(
            "the issuer refused the authorization: {}{description}",
            printable(error)
        ));
    }
    params
        .get("code")
        .filter(|code| !code.is_empty())
        .cloned()
        .ok_or_else(|| "the redirect carries neither a code nor an error".to_owned())
}

/// Redeems the code at the token endpoint (RFC 6749, section 4.1.3, with
/// RFC 7636's verifier) and returns the ID token.
async fn redeem(
    http: &HttpClient,
    endpoint: &str,
    code: &str,
    redirect_uri: &str,
    client_id: &str,
    verifier: &str,
) -> Result<String, String> {
    let failed = |why: String| format!("token request to {endpoint}: {why}");
    let form = form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "authorization_code")
        .append_pair("code", code)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("client_id", client_id)
        .append_pair("code_verifier", verifier)
        .finish();
    let request = Request::post(endpoint)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "application/json")
        .body(Full::from(form))
        .map_err(|_| failed("not a URL".to_owned()))?;
    let (status, body) = send(http, request).await.map_err(failed)?;
    let answer: Option<Value> = serde_json::from_slice(&body).ok();
    let field = |name: &str| {
        answer
            .as_ref()
            .and_then(|answer| answer[name].as_str())
            .filter(|value| !value.is_empty())
    };
    if !status.is_success() {
        // An error response (RFC 6749, section 5.2) names what went wrong.
        let why = match (field("error"), field("error_description")) {
            (Some(error), Some(description)) => {
                format!("{}: {}", printable(error), printable(description))
            }
            (Some(error), None) => printable(error),
            (None, _) => format!("answered {status}"),
        };
        return Err(failed(format!("the code was refused: {why}")));
    }
    match (&answer, field("id_token")) {
        (_, Some(id_token)) => Ok(id_token.to_owned()),
        (None, _) => Err(failed("the answer is not JSON".to_owned())),
        (Some(_), None) => Err(failed(
            "the answer has no id_token (is `openid` a scope this client may ask for?)".to_owned(),
        )),
    }
}

/// `text` without control characters, safe to print to a terminal.
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_is_rfc_7636_s256() {
        // RFC 7636, appendix B.
        assert_eq!(
            challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_long_unreserved_and_fresh() {
        let verifier = random_token();
        assert!((43..=128).contains(&verifier.len()), "{verifier}");
        assert!(
            verifier
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b)),
            "{verifier}"
        );
        assert_ne!(verifier, random_token());
    }

    #[test]
    fn authorization_url_carries_the_request() {
        let url = authorization_url(
            "http://issuer.test/authorize?tenant=a",
            "http://api.test",
            "http://127.0.0.1:1234/callback",
            "the state",
            "the challenge",
        );
        let (endpoint, query) = url.split_once("/authorize?").unwrap();
        assert_eq!(endpoint, "http://issuer.test");
        let params: HashMap<String, String> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        for (name, value) in [
            ("tenant", "a"),
            ("response_type", "code"),
            ("client_id", "http://api.test"),
            ("redirect_uri", "http://127.0.0.1:1234/callback"),
            ("scope", "openid"),
            ("state", "the state"),
            ("code_challenge", "the challenge"),
            ("code_challenge_method", "S256"),
        ] {
            assert_eq!(params.get(name).map(String::as_str), Some(value), "{name}");
        }
    }

    #[test]
    fn callback_yields_the_code_or_why_not() {
        assert_eq!(
            check_callback(Some("code=c%201&state=s"), "s"),
            Ok("c 1".to_owned())
        );
        let wrong_state = check_callback(Some("code=c&state=other"), "s").unwrap_err();
        assert!(
            wrong_state.contains("state does not match"),
            "{wrong_state}"
        );
        let no_state = check_callback(Some("code=c"), "s").unwrap_err();
        assert!(no_state.contains("state does not match"), "{no_state}");
        let denied = check_callback(
            Some("error=access_denied&error_description=no%0a%1bway&state=s"),
            "s",
        )
        .unwrap_err();
        assert_eq!(
            denied,
            "the issuer refused the authorization: access_denied (noway)"
        );
        let empty = check_callback(None, "s").unwrap_err();
        assert!(empty.contains("state does not match"), "{empty}");
        let no_code = check_callback(Some("state=s&code="), "s").unwrap_err();
        assert!(no_code.contains("neither a code nor an error"), "{no_code}");
    }

    fn document(issuer: &str, authorization: &str, token: &str) -> Value {
        serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": authorization,
            "token_endpoint": token,
        })
    }

    #[test]
    fn discovery_endpoints_are_secure_and_on_the_issuers_origin() {
        let issuer = "https://login.example/tenant";
        let good = document(
            issuer,
            "https://LOGIN.example:443/authorize",
            "https://login.example/token",
        );
        let endpoints = check_discovery(issuer, &good).unwrap();
        assert_eq!(endpoints.token, "https://login.example/token");
        let local = "http://127.0.0.1:5556";
        let endpoints = check_discovery(
            local,
            &document(local, &format!("{local}/a"), &format!("{local}/t")),
        );
        assert!(endpoints.is_ok(), "{endpoints:?}");
        let v6 = "http://[::1]:5556";
        let endpoints = check_discovery(v6, &document(v6, &format!("{v6}/a"), &format!("{v6}/t")));
        assert!(endpoints.is_ok(), "{endpoints:?}");

        let refused = |document: Value, expected: &str| {
            let error = check_discovery(issuer, &document).unwrap_err();
            assert!(error.contains(expected), "{expected}: {error}");
        };
        let token = "https://login.example/token";
        refused(
            document("https://evil.example", token, token),
            "is for issuer",
        );
        refused(
            document(issuer, token, "http://login.example/token"),
            "is not https://",
        );
        for foreign in [
            "https://evil.example/token",
            "https://login.example:8443/token",
            "https://login.example.evil.example/token",
            "http://127.0.0.1/token",
        ] {
            refused(
                document(issuer, token, foreign),
                "not on the issuer's origin",
            );
            refused(document(issuer, foreign, token), "`authorization_endpoint`");
        }
        refused(
            document(issuer, token, "https://login.example@evil.example/token"),
            "user information",
        );
        refused(document(issuer, token, "/token"), "not an absolute URL");
        refused(
            document(issuer, token, "ftp://login.example/token"),
            "not an http(s) URL",
        );
        let plain = "http://login.example";
        let error = check_discovery(plain, &document(plain, plain, plain)).unwrap_err();
        assert!(error.contains("must be an https:// URL"), "{error}");
    }

    /// Acts as the browser against the loopback listener.
    async fn get(port: u16, path_and_query: &str) -> (StatusCode, String) {
        let http = http_client().unwrap();
        let request = Request::get(format!("http://127.0.0.1:{port}{path_and_query}"))
            .body(Full::default())
            .unwrap();
        let (status, body) = send(&http, request).await.unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn a_redirect_with_the_wrong_state_is_rejected() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let waiting = tokio::spawn(async move { receive_code(listener, "expected").await });

        let (status, _) = get(port, "/favicon.ico").await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "other paths do not end the wait"
        );
        let (status, page) = get(port, "/callback?code=stolen&state=forged").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(page.contains("The login failed"), "{page}");
        let outcome = waiting.await.unwrap();
        assert!(
            outcome
                .as_ref()
                .is_err_and(|e| e.contains("state does not match")),
            "{outcome:?}"
        );
    }

    #[tokio::test]
    async fn a_redirect_with_the_right_state_yields_its_code() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let waiting = tokio::spawn(async move { receive_code(listener, "expected").await });

        let (status, page) = get(port, "/callback?code=the-code&state=expected").await;
        assert_eq!(status, StatusCode::OK);
        assert!(page.contains("You may close this window"), "{page}");
        assert_eq!(waiting.await.unwrap(), Ok("the-code".to_owned()));
    }

    #[tokio::test]
    async fn discovery_failures_name_the_step() {
        let http = http_client().unwrap();
        // A port nothing listens on: bound, then released.
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let error = discover(&http, &format!("http://127.0.0.1:{port}"))
            .await
            .unwrap_err();
        assert!(
            error.starts_with(&format!(
                "OIDC discovery at http://127.0.0.1:{port}/.well-known/openid-configuration: "
            )),
            "{error}"
        );
        let error = discover(&http, "http://issuer.test").await.unwrap_err();
        assert!(error.contains("is plain HTTP"), "{error}");
        assert!(error.contains("--allow-insecure-http"), "{error}");
        let error = discover(&http, "not a url").await.unwrap_err();
        assert!(error.contains("not a URL"), "{error}");
    }
}
