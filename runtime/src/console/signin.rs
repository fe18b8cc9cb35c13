//! Signing in and out: a pasted API token, or the OIDC flow ([`super::oidc`]).

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Form};
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};

use super::call::{Asker, Failure};
use super::pages::{render, see_other};
use super::session::Session;
use super::view::{Chrome, SignIn};
use super::{PREFIX, Shared};

/// Where to go after signing in.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct Next {
    #[serde(default)]
    next: String,
}

/// The longest `next` kept; a longer one goes home (a page or cookie never
/// carries more than this of what a request chose).
pub(super) const MAX_NEXT: usize = 1024;

/// `next` when it is a console path, else the console's home: never
/// another site (`//host`, `/\host`) or a path outside the console.
pub(super) fn safe_next(next: &str) -> &str {
    let inside = next.len() <= MAX_NEXT
        && next.starts_with(PREFIX)
        && next.bytes().all(|b| b.is_ascii_graphic() && b != b'\\')
        && !next[PREFIX.len()..].starts_with('/');
    if inside { next } else { PREFIX }
}

impl Shared {
    pub(super) fn sign_in_page(&self, next: &str, error: Option<Failure>) -> Response {
        let status = error.as_ref().map_or(StatusCode::OK, |e| e.status);
        let page = SignIn {
            chrome: Chrome {
                title: "Sign in".to_owned(),
                api: self.schema.title,
                prefix: PREFIX,
                error,
                ..Chrome::default()
            },
            next: safe_next(next).to_owned(),
            oidc: self.oidc.as_ref().map(|flow| flow.name().to_owned()),
        };
        render(status, &page)
    }

    /// Whether the API accepts `token`: a first page of a top-level list,
    /// as that caller, is not refused as unauthenticated.
    pub(super) async fn accepts(&self, asker: &Asker, token: &str) -> Result<(), Failure> {
        let asker = match token {
            "" => asker.anonymous(),
            token => asker.with_authorization(
                HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                    Failure::new(
                        StatusCode::BAD_REQUEST,
                        "INVALID_ARGUMENT",
                        "a token is printable text",
                    )
                })?,
            ),
        };
        let Some(list) = self.schema.collections.iter().find_map(|c| {
            c.list
                .filter(|_| c.keys == super::schema::Keys::Uidp || c.parent_type.is_none())
        }) else {
            return Ok(());
        };
        let path = format!(
            "{}?pageSize=1",
            list.action.route.template.expand(|_| String::new())
        );
        match self.api.call(&asker, Method::GET, &path, None).await {
            Err(failure) if failure.status == StatusCode::UNAUTHORIZED => Err(failure),
            _ => Ok(()),
        }
    }

    /// Opens a session for `token` and goes to `next`.
    pub(super) fn signed_in(&self, token: String, next: &str) -> Response {
        let (_, cookie) = self.sessions.open(token);
        let mut response = see_other(safe_next(next));
        response.headers_mut().insert(header::SET_COOKIE, cookie);
        response
    }
}

pub(super) async fn form(
    State(shared): State<Arc<Shared>>,
    Query(Next { next }): Query<Next>,
) -> Response {
    shared.sign_in_page(&next, None)
}

/// The sign-in form.
#[derive(Debug, serde::Deserialize)]
pub(super) struct Submitted {
    #[serde(default)]
    token: String,
    #[serde(default)]
    next: String,
}

pub(super) async fn submit(
    State(shared): State<Arc<Shared>>,
    asker: Asker,
    headers: HeaderMap,
    uri: Uri,
    Form(form): Form<Submitted>,
) -> Response {
    if !same_origin(&headers, &uri) {
        let failure = Failure::new(
            StatusCode::FORBIDDEN,
            "CSRF",
            "sign-in was posted from another site",
        );
        return shared.sign_in_page(&form.next, Some(failure));
    }
    let token = form.token.trim().to_owned();
    if let Err(failure) = shared.accepts(&asker, &token).await {
        let failure = Failure {
            message: format!("the API did not accept this token: {}", failure.message),
            ..failure
        };
        return shared.sign_in_page(&form.next, Some(failure));
    }
    shared.signed_in(token, &form.next)
}

/// Whether a POST's `Origin`, when sent, is this host: the request's
/// authority, which HTTP/2 sends as `:authority` (the URI's) and HTTP/1.1
/// as `Host`. A request naming neither is not same-origin.
pub(super) fn same_origin(headers: &HeaderMap, uri: &Uri) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let host = match uri.authority() {
        Some(authority) => Some(authority.as_str().as_bytes()),
        None => headers.get(header::HOST).map(HeaderValue::as_bytes),
    };
    match (origin.to_str().ok().and_then(|o| o.split_once("://")), host) {
        (Some((_, authority)), Some(host)) => host == authority.as_bytes(),
        _ => false,
    }
}

/// The sign-out form: its CSRF token.
#[derive(Debug, serde::Deserialize)]
pub(super) struct SignOut {
    #[serde(default)]
    csrf: String,
}

pub(super) async fn sign_out(
    State(shared): State<Arc<Shared>>,
    session: Option<Extension<Session>>,
    Form(form): Form<SignOut>,
) -> Response {
    let mut response = see_other(&format!("{PREFIX}signin"));
    if let Some(Extension(session)) = session {
        if !session.csrf_matches(&form.csrf) {
            return (
                StatusCode::FORBIDDEN,
                "the form's security token is missing or wrong",
            )
                .into_response();
        }
        response
            .headers_mut()
            .insert(header::SET_COOKIE, shared.sessions.close(&session));
    }
    response
}

/// Starts the OIDC flow: to the issuer, with PKCE.
pub(super) async fn oidc_start(
    State(shared): State<Arc<Shared>>,
    Query(start): Query<super::oidc::Start>,
) -> Response {
    match &shared.oidc {
        Some(flow) => flow
            .start(start)
            .unwrap_or_else(|failure| shared.sign_in_page("", Some(failure))),
        None => shared.sign_in_page(
            "",
            Some(Failure::new(
                StatusCode::NOT_FOUND,
                "NOT_FOUND",
                "sign-in through an issuer is not configured",
            )),
        ),
    }
}

/// Back from the issuer: the code for tokens, the identity token for an
/// API token, and a session.
pub(super) async fn oidc_callback(
    State(shared): State<Arc<Shared>>,
    asker: Asker,
    headers: HeaderMap,
    Query(callback): Query<super::oidc::Callback>,
) -> Response {
    let Some(flow) = &shared.oidc else {
        return shared.sign_in_page(
            "",
            Some(Failure::new(
                StatusCode::NOT_FOUND,
                "NOT_FOUND",
                "sign-in through an issuer is not configured",
            )),
        );
    };
    match flow.finish(&shared.api, &asker, &headers, callback).await {
        Ok((token, next)) => {
            let (_, cookie) = shared.sessions.open(token);
            let mut response = super::oidc::continue_to(safe_next(&next));
            response.headers_mut().append(header::SET_COOKIE, cookie);
            response
                .headers_mut()
                .append(header::SET_COOKIE, flow.clear_state_cookie());
            response
        }
        Err(failure) => shared.sign_in_page("", Some(failure)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_origin_is_compared_with_the_authority_http_2_sends_as_its_uri() {
        let origin = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::ORIGIN, value.parse().unwrap());
            headers
        };
        // HTTP/2: `:authority` is the URI's; there is no `Host`.
        let h2: Uri = "https://api.example:8443/console/signin".parse().unwrap();
        assert!(same_origin(&origin("https://api.example:8443"), &h2));
        assert!(!same_origin(&origin("https://evil.example"), &h2));
        // HTTP/1.1: the path alone, and `Host`.
        let h1: Uri = "/console/signin".parse().unwrap();
        let mut headers = origin("http://api.example");
        assert!(
            !same_origin(&headers, &h1),
            "neither `Host` nor an authority"
        );
        headers.insert(header::HOST, "api.example".parse().unwrap());
        assert!(same_origin(&headers, &h1));
        headers.insert(header::HOST, "evil.example".parse().unwrap());
        assert!(!same_origin(&headers, &h1));
        assert!(
            same_origin(&HeaderMap::new(), &h1),
            "no Origin: not a browser's cross-site post"
        );
    }

    #[test]
    fn sign_in_goes_only_to_console_paths() {
        assert_eq!(
            safe_next("/console/groups?parent=a"),
            "/console/groups?parent=a"
        );
        for hostile in [
            "/console/\u{e9}",
            "/console/a b",
            "/console/a\tb",
            "https://evil.example/",
            "//evil.example/",
            "/console//evil.example",
            "/console/\\evil",
            "/other",
            "",
            "/console",
            &format!("/console/groups?parent={}", "a".repeat(MAX_NEXT)),
        ] {
            assert_eq!(safe_next(hostile), "/console/", "{hostile}");
        }
    }
}
