//! Console sessions: a random id in an HttpOnly, SameSite=Strict cookie
//! (under TLS `Secure` and `__Host-` prefixed), naming the API token it was
//! opened with and a CSRF token, kept in memory until the token expires or
//! the caller signs out. A session without a token acts as nobody: the
//! server keeps nothing for it, its cookie holds its CSRF token and expiry,
//! sealed.
//!
//! The cookie opens console pages only: [`attach`] turns it into the
//! request's `Authorization` header for paths under the console's prefix,
//! and for no other path, so the API itself never accepts it (a cross-site
//! request carrying the cookie reaches only console forms, which check the
//! CSRF token).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::{HeaderValue, StatusCode, header};

use super::seal::Seal;
use protoapi_core::time::unix_seconds as now;

/// The cookie holding the session id, over plain HTTP.
pub const COOKIE: &str = "console_session";
/// The cookie holding the session id under TLS: `__Host-` prefixed, so that
/// browsers take it only from this host, `Secure`, for the path `/` (no
/// sibling subdomain can plant one). The API itself never reads it.
pub const SECURE_COOKIE: &str = "__Host-console_session";
/// Sessions kept at most; the one closest to expiry makes room.
const CAPACITY: usize = 10_000;
/// Sessions one identity (a token's `sub`) keeps at most: signing in again
/// and again ends that identity's own oldest sessions, nobody else's.
const PER_IDENTITY: usize = 32;
/// How long a session lasts when its token says nothing of its expiry.
const DEFAULT_LIFETIME: Duration = Duration::from_secs(3600);

/// One signed-in browser.
#[derive(Clone)]
pub struct Session {
    id: String,
    /// The API token requests of this session carry (empty: none).
    token: String,
    /// Whom the token names (its `sub`; empty when it names nobody).
    identity: String,
    /// The value every form of this session must post back.
    pub csrf: String,
    expires: Instant,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

impl Session {
    /// Whether `value` is this session's CSRF token (compared in constant time).
    pub fn csrf_matches(&self, value: &str) -> bool {
        super::seal::same_secret(&self.csrf, value)
    }
}

/// What the cookie of a session opened without a token holds (sealed):
/// such a session acts as nobody, so the server keeps nothing for it.
#[derive(serde::Serialize, serde::Deserialize)]
struct Tokenless {
    csrf: String,
    /// Seconds since the epoch.
    expires: u64,
}

/// Every open session, and how their cookies are written.
#[derive(Debug, Clone)]
pub struct Sessions {
    open: Arc<Mutex<HashMap<String, Session>>>,
    /// Seals the cookies of sessions without a token.
    seal: Seal,
    /// The path the cookie is scoped to (`/console/`).
    path: &'static str,
    /// Cookies are `Secure` (the console is served over TLS).
    secure: bool,
}

impl Sessions {
    pub fn new(path: &'static str, secure: bool) -> Self {
        Sessions {
            open: Arc::default(),
            seal: Seal::random(),
            path,
            secure,
        }
    }

    /// Opens a session for `token` and answers it with its cookie. Without
    /// a token nothing is kept: the cookie holds the session, sealed.
    pub fn open(&self, token: String) -> (Session, HeaderValue) {
        if token.is_empty() {
            return self.open_tokenless();
        }
        let lifetime = claim(&token, "exp")
            .and_then(|exp| exp.as_u64())
            .map_or(DEFAULT_LIFETIME, lifetime_until);
        let identity = claim(&token, "sub")
            .and_then(|sub| sub.as_str().map(str::to_owned))
            .unwrap_or_default();
        let session = Session {
            id: random_id(),
            identity,
            token,
            csrf: random_id(),
            expires: Instant::now() + lifetime,
        };
        let mut open = self.open.lock().expect("sessions lock");
        let mine = open.values().filter(|s| s.identity == session.identity);
        if mine.clone().count() >= PER_IDENTITY
            && let Some(oldest) = mine.min_by_key(|s| s.expires).map(|s| s.id.clone())
        {
            open.remove(&oldest);
        }
        if open.len() >= CAPACITY {
            let now = Instant::now();
            open.retain(|_, s| s.expires > now);
        }
        if open.len() >= CAPACITY
            && let Some(oldest) = open
                .values()
                .min_by_key(|s| s.expires)
                .map(|s| s.id.clone())
        {
            open.remove(&oldest);
        }
        open.insert(session.id.clone(), session.clone());
        let cookie = self.cookie(&session.id, lifetime.as_secs());
        (session, cookie)
    }

    fn open_tokenless(&self) -> (Session, HeaderValue) {
        let kept = Tokenless {
            csrf: random_id(),
            expires: now() + DEFAULT_LIFETIME.as_secs(),
        };
        let id = self
            .seal
            .seal(&serde_json::to_vec(&kept).unwrap_or_default());
        let cookie = self.cookie(&id, DEFAULT_LIFETIME.as_secs());
        let session = Session {
            id,
            token: String::new(),
            identity: String::new(),
            csrf: kept.csrf,
            expires: Instant::now() + DEFAULT_LIFETIME,
        };
        (session, cookie)
    }

    /// The session without a token that the cookie value `id` seals.
    fn tokenless(&self, id: &str) -> Option<Session> {
        let kept: Tokenless = serde_json::from_slice(&self.seal.open(id)?).ok()?;
        let left = kept.expires.checked_sub(now()).filter(|left| *left > 0)?;
        Some(Session {
            id: id.to_owned(),
            token: String::new(),
            identity: String::new(),
            csrf: kept.csrf,
            expires: Instant::now() + Duration::from_secs(left),
        })
    }

    /// Closes the session, answering the cookie that clears it.
    pub fn close(&self, session: &Session) -> HeaderValue {
        self.open.lock().expect("sessions lock").remove(&session.id);
        self.cookie("", 0)
    }

    /// The live session a request's cookie names.
    fn find(&self, headers: &http::HeaderMap) -> Option<Session> {
        let id = cookie_value(headers, self.cookie_name())?;
        if let Some(session) = self.tokenless(id) {
            return Some(session);
        }
        let mut open = self.open.lock().expect("sessions lock");
        match open.get(id) {
            Some(session) if session.expires > Instant::now() => Some(session.clone()),
            Some(_) => {
                open.remove(id);
                None
            }
            None => None,
        }
    }

    fn cookie_name(&self) -> &'static str {
        match self.secure {
            true => SECURE_COOKIE,
            false => COOKIE,
        }
    }

    fn cookie(&self, value: &str, max_age: u64) -> HeaderValue {
        let (path, secure) = match self.secure {
            true => ("/", "; Secure"),
            false => (self.path, ""),
        };
        HeaderValue::from_str(&format!(
            "{}={value}; Path={path}; Max-Age={max_age}; HttpOnly; SameSite=Strict{secure}",
            self.cookie_name()
        ))
        .expect("cookie values are ASCII")
    }
}

/// 32 random bytes, URL-safe.
pub(super) fn random_id() -> String {
    URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>())
}

/// The value of cookie `name` among the request's cookies.
pub(super) fn cookie_value<'a>(headers: &'a http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// A claim of a JWT, read without verifying it: the API verifies the token
/// on every call; this only ends the session with it and counts sessions
/// per identity.
pub(super) fn claim(token: &str, name: &str) -> Option<serde_json::Value> {
    let mut claims: serde_json::Value =
        jsonwebtoken::dangerous::insecure_decode_claims(token).ok()?;
    Some(claims.get_mut(name)?.take())
}

/// How long until `exp` (seconds since the epoch).
fn lifetime_until(exp: u64) -> Duration {
    Duration::from_secs(exp.saturating_sub(now()))
}

/// What the session layer reads: the sessions, and which paths are the
/// console's pages.
#[derive(Clone, Debug)]
pub struct Gate {
    pub(super) sessions: Sessions,
    pub(super) schema: &'static protoapi_client::schema::Schema,
}

/// Runs a console page's request as its session's caller: the session
/// becomes a request extension and its token the `Authorization` header.
/// Any `Authorization` a browser sends under the console's prefix is
/// dropped, and only the console's own pages get the session: whatever
/// else an API serves under that prefix sees an anonymous request. A page
/// the API's authentication refuses (a revoked or expired token) closes the
/// session and goes to the sign-in page.
/// `next` answers the request.
pub async fn attach<F: Future<Output = Response>>(
    gate: &Gate,
    mut request: Request,
    next: impl FnOnce(Request) -> F,
) -> Response {
    let prefix = gate.sessions.path;
    let Some(rest) = request.uri().path().strip_prefix(prefix) else {
        return next(request).await;
    };
    let page = super::paths::is_page(gate.schema, rest);
    request.headers_mut().remove(header::AUTHORIZATION);
    if !page {
        return next(request).await;
    }
    let sessions = &gate.sessions;
    let session = sessions.find(request.headers());
    if let Some(session) = &session {
        if !session.token.is_empty()
            && let Ok(value) = HeaderValue::from_str(&format!("Bearer {}", session.token))
        {
            request.headers_mut().insert(header::AUTHORIZATION, value);
        }
        request.extensions_mut().insert(session.clone());
    }
    let response = next(request).await;
    match session {
        Some(session) if response.status() == StatusCode::UNAUTHORIZED => {
            let cookie = sessions.close(&session);
            let mut redirect =
                axum::response::Redirect::to(&format!("{prefix}signin")).into_response();
            redirect.headers_mut().insert(header::SET_COOKIE, cookie);
            redirect
        }
        _ => response,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_by_name_and_sessions_expire_with_their_token() {
        let sessions = Sessions::new("/console/", true);
        let (session, cookie) = sessions.open("not-a-jwt".to_owned());
        let cookie = cookie.to_str().unwrap().to_owned();
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
        assert!(cookie.starts_with("__Host-console_session="));
        assert!(cookie.contains("; Secure") && cookie.contains("; Path=/;"));
        assert!(!cookie.contains("Domain"));
        let mut headers = http::HeaderMap::new();
        let id = cookie.split(';').next().unwrap().to_owned();
        headers.insert(header::COOKIE, format!("other=1; {id}").parse().unwrap());
        assert!(sessions.find(&headers).is_some());
        assert!(session.csrf_matches(&session.csrf.clone()));
        assert!(!session.csrf_matches("forged"));
        sessions.close(&session);
        assert!(sessions.find(&headers).is_none());

        let exp = now() - 5;
        let claims = URL_SAFE_NO_PAD.encode(format!("{{\"exp\":{exp}}}"));
        let (_, cookie) = sessions.open(format!("h.{claims}.s"));
        let id = cookie
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned();
        headers.insert(header::COOKIE, id.parse().unwrap());
        assert!(
            sessions.find(&headers).is_none(),
            "an expired token's session is closed"
        );
    }

    #[test]
    fn one_identity_signing_in_again_and_again_ends_only_its_own_sessions() {
        let sessions = Sessions::new("/console/", false);
        let token = |sub: &str| {
            let claims = URL_SAFE_NO_PAD.encode(format!("{{\"sub\":\"{sub}\"}}"));
            format!("h.{claims}.s")
        };
        let (other, _) = sessions.open(token("someone-else"));
        for _ in 0..PER_IDENTITY * 3 {
            sessions.open(token("flooder"));
        }
        let open = sessions.open.lock().unwrap();
        assert!(
            open.contains_key(&other.id),
            "another identity's session stays"
        );
        let flooder = open.values().filter(|s| s.identity == "flooder").count();
        assert_eq!(flooder, PER_IDENTITY);
    }

    #[test]
    fn sessions_without_a_token_keep_nothing_and_cannot_push_out_anyone() {
        let sessions = Sessions::new("/console/", false);
        let (someone, _) = sessions.open("h.e30.s".to_owned());
        let mut cookies = Vec::new();
        for _ in 0..CAPACITY + PER_IDENTITY {
            let (session, cookie) = sessions.open(String::new());
            cookies.push((session, cookie));
        }
        let open = sessions.open.lock().unwrap().clone();
        assert_eq!(open.len(), 1, "nothing kept for sessions without a token");
        assert!(open.contains_key(&someone.id));

        let (session, cookie) = &cookies[0];
        let pair = cookie.to_str().unwrap().split(';').next().unwrap();
        let mut headers = http::HeaderMap::new();
        headers.insert(header::COOKIE, pair.parse().unwrap());
        let found = sessions
            .find(&headers)
            .expect("the cookie holds the session");
        assert!(found.token.is_empty() && found.csrf_matches(&session.csrf));
        let forged = pair.replace('.', "x.");
        headers.insert(header::COOKIE, forged.parse().unwrap());
        assert!(
            sessions.find(&headers).is_none(),
            "a changed cookie opens nothing"
        );
    }
}
