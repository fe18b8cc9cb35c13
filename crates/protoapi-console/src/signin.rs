//! Signing in and out: a pasted API token, or the OIDC flow ([`super::oidc`]).

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Form};
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};

use super::call::{Asker, Failure};
use super::guard::{safe_next, same_origin};
use super::paths::PREFIX;
use super::reply::{render, see_other};
use super::session::Session;
use super::shared::Shared;
use super::view::{Chrome, SignIn};

/// Where to go after signing in.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct Next {
    #[serde(default)]
    next: String,
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
            c.list.filter(|_| {
                c.keys == protoapi_client::schema::Keys::Uidp || c.parent_type.is_none()
            })
        }) else {
            return Ok(());
        };
        let rule = list.action.rule().ok_or_else(Failure::grpc_only)?;
        let path = format!("{}?pageSize=1", rule.template.expand(|_| String::new()));
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
