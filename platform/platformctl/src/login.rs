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
//! Discovery, the authorization request and the redemption are the
//! runtime's (`protoapi_runtime::oidc`, which the web console signs in
//! with too); the loopback listener is this module's. The ID token is not
//! verified here: the server's token service verifies it (signature,
//! issuer, audience, expiry) when it is exchanged. The issuer is reached over TLS with the roots of `platformctl::transport`
//! (the system's, or `--ca-file`); plain `http://` only on this machine or
//! with `--allow-insecure-http`.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use protoapi_runtime::oidc::{self, Authorization, HttpClient, RedeemError, Redemption, printable};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// The path of the loopback redirect.
const CALLBACK_PATH: &str = "/callback";
/// How long the user has to complete the login in the browser.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

const SUCCESS_PAGE: &str = "<!doctype html><meta charset=utf-8><title>platformctl</title>\
    <p>Logged in. You may close this window.</p>";
const FAILURE_PAGE: &str = "<!doctype html><meta charset=utf-8><title>platformctl</title>\
    <p>The login failed; the terminal says why. You may close this window.</p>";

/// The outcome of the redirect: the authorization code, or why there is none.
type Callback = Result<String, String>;

/// Runs the authorization code flow with PKCE against `issuer` (OIDC discovery at
/// `{issuer}/.well-known/openid-configuration`, its endpoints checked by
/// [`oidc::check_discovery`]), with a loopback redirect on 127.0.0.1
/// (ephemeral port, path `/callback`), and returns the ID token (a JWT).
/// The authorization URL is opened with the command in `$BROWSER` when set (the URL as its
/// only argument); otherwise, and always additionally, the line
/// `Open this URL to log in: <url>` is printed to stderr.
pub async fn browser_login(issuer: &str, client_id: &str) -> Result<String, String> {
    oidc::issuer_origin(issuer)?;
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
    let state = oidc::random_secret();
    let verifier = oidc::random_secret();
    let url = Authorization {
        endpoint: &endpoints.authorization,
        client_id,
        redirect_uri: &redirect_uri,
        state: &state,
        nonce: None,
        verifier: &verifier,
    }
    .url();

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
    let failed = |why: String| format!("token request to {}: {why}", endpoints.token);
    check_url(&endpoints.token).map_err(failed)?;
    let redemption = Redemption {
        token_endpoint: &endpoints.token,
        code: &code,
        redirect_uri: &redirect_uri,
        client_id,
        client_secret: None,
        verifier: &verifier,
    };
    redemption.redeem(&http).await.map_err(|error| {
        failed(match error {
            RedeemError::Refused { error, description } => match description {
                Some(description) => format!("the code was refused: {error}: {description}"),
                None => format!("the code was refused: {error}"),
            },
            RedeemError::Unavailable(why) => why,
        })
    })
}

/// The issuer's endpoints from its discovery document, fetched only where
/// `platformctl::transport` allows.
async fn discover(http: &HttpClient, issuer: &str) -> Result<oidc::Endpoints, String> {
    let url = oidc::discovery_url(issuer);
    check_url(&url).map_err(|why| format!("OIDC discovery at {url}: {why}"))?;
    oidc::discover(http, issuer).await
}

/// The client for the issuer's endpoints: TLS with the process's roots
/// (`platformctl::transport`).
fn http_client() -> Result<HttpClient, String> {
    oidc::http_client(&platformctl::transport::tls()).map_err(|e| e.message().to_owned())
}

/// Whether `url` may be fetched: `https://`, or plain HTTP where
/// `platformctl::transport` allows it.
fn check_url(url: &str) -> Result<(), String> {
    platformctl::transport::check_url(url).map_err(|e| {
        e.field_violations()
            .first()
            .map_or_else(|| e.message().to_owned(), |v| v.description.clone())
    })
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Acts as the browser against the loopback listener.
    async fn get(port: u16, path_and_query: &str) -> (StatusCode, String) {
        let http = http_client().unwrap();
        let request = Request::get(format!("http://127.0.0.1:{port}{path_and_query}"))
            .body(Full::default())
            .unwrap();
        let response = http.request(request).await.unwrap();
        let status = response.status();
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
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
