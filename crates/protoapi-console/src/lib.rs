//! A web console for any generated API, served at `/console/` on the API's
//! port: server-rendered HTML (askama templates, autoescaped; no script),
//! generated from the same protos and annotation files as the API.
//!
//! The generator writes the API's [`Schema`] (the crate's `SCHEMA`: each
//! resource's collection, fields and behaviours, references, `order_by`
//! choices, filters and the routes of its standard methods); this module
//! does the rest, the same for every API:
//!
//! - **Sign-in** pastes an API token (or, when configured, runs the OIDC
//!   authorization-code flow with PKCE against an issuer and exchanges its
//!   identity token, see [`oidc`]). The token stays on the server, in a
//!   [`session`] named by an HttpOnly, SameSite=Strict cookie (Secure under
//!   TLS) that ends when the token expires or at sign-out. Every form carries
//!   the session's CSRF token, and a POST whose `Origin` is another site is
//!   refused.
//! - **Pages call the API as the signed-in caller**: every read and write is
//!   an in-process REST request through the API's own router ([`call`]),
//!   behind the same authentication, authorization, limits and error model
//!   as a request from the network. A refusal is shown in words (a stale
//!   etag, a PreconditionFailure, each BadRequest violation beside its
//!   field); actions the caller may not take are not offered
//!   (`Authorizer::held`), and the API refuses them anyway.
//! - **Navigation** follows the resources' parents: the top-level items,
//!   each item's ancestors (breadcrumbs) and the collections under it, lists
//!   with page tokens, page size, the declared `order_by` choices and
//!   filters, and the total. An item's page lists the AIP-151 operations
//!   still running on it ([`Schema::operations`]).
//! - **Forms** come from the fields ([`form`]): REQUIRED marked,
//!   OUTPUT_ONLY read-only, IMMUTABLE editable only on create, enums and
//!   references as choices, repeated and map fields as lines. An edit sends
//!   only the fields it changed as the update mask, with the etag it read.
//! - **Headers**: a Content-Security-Policy without inline script and with
//!   `frame-ancestors 'none'`, `nosniff`, `no-store`, `same-origin`
//!   referrers; a redirect after sign-in goes only to a console path.
//!
//! `protoapi_runtime::router::ApiRouter::console` mounts it; the generated
//! `Services::console` does that with the API's schema and authorizer.

mod access;
mod badge;
pub mod call;
pub mod docs;
mod edit;
pub mod form;
mod guard;
mod items;
mod list;
mod names;
pub mod oidc;
mod operations;
mod pages;
mod paths;
mod pending;
mod reply;
mod seal;
pub mod session;
mod settings;
mod shared;
mod signin;
#[cfg(feature = "testing")]
pub mod testing;
mod view;
mod visit;
pub mod words;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::get;
use http::{HeaderValue, header};

pub use paths::PREFIX;
pub use protoapi_client::schema::{self, Schema};
use protoapi_core::auth::Authorizer;
pub use settings::{Issuer, Settings};
use shared::Shared;

/// How the console is served; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Console {
    schema: &'static Schema,
    secure: bool,
    oidc: Option<oidc::Oidc>,
}

impl Console {
    /// The console of the API `schema` describes (the generated `SCHEMA`).
    pub fn new(schema: &'static Schema) -> Self {
        Console {
            schema,
            secure: false,
            oidc: None,
        }
    }

    /// Marks session cookies `Secure` (set it when serving over TLS).
    pub fn secure_cookies(mut self, secure: bool) -> Self {
        self.secure = secure;
        self
    }

    /// Offers sign-in through an OIDC issuer besides a pasted token.
    pub fn oidc(mut self, oidc: oidc::Oidc) -> Self {
        self.oidc = Some(oidc);
        self
    }

    /// The console's routes (served behind the API's layers, so that its
    /// pages see the caller the authentication layer names), the sessions
    /// layer to put outside every layer, and the handle to give the built
    /// router.
    pub fn into_parts(self, authorizer: Authorizer) -> (Router, session::Gate, call::ApiHandle) {
        let pool = (self.schema.descriptors)();
        let sessions = session::Sessions::new(PREFIX, self.secure);
        let api = call::ApiHandle::default();
        let flow = self.oidc.map(|oidc| oidc::Flow::new(oidc, self.secure));
        let policy = policy(flow.as_ref().and_then(oidc::Flow::issuer_origin));
        let shared = Arc::new(Shared {
            policy,
            schema: self.schema,
            pool,
            api: api.clone(),
            sessions: sessions.clone(),
            authorizer,
            oidc: flow,
        });
        let gate = session::Gate {
            sessions,
            schema: self.schema,
        };
        (routes(shared), gate, api)
    }
}

fn routes(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/console", get(|| async { reply::see_other(PREFIX) }))
        .route("/console/", get(pages::home))
        .route("/console/assets/console.css", get(stylesheet))
        .route("/console/signin", get(signin::form).post(signin::submit))
        .route("/console/signout", axum::routing::post(signin::sign_out))
        .route("/console/oidc/start", get(signin::oidc_start))
        .route("/console/oidc/callback", get(signin::oidc_callback))
        .route("/console/{collection}", get(list::list))
        .route("/console/{collection}/item/{*key}", get(pages::item))
        .route(
            "/console/{collection}/new",
            get(edit::new_form).post(edit::create),
        )
        .route(
            "/console/{collection}/edit/{*key}",
            get(edit::edit_form).post(edit::update),
        )
        .route(
            "/console/{collection}/delete/{*key}",
            get(edit::delete_form).post(edit::delete),
        )
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            headers,
        ))
        .with_state(shared)
}

async fn stylesheet() -> Response {
    let mut response = Response::new(include_str!("../assets/console.css").into());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/css; charset=utf-8"),
    );
    response
}

/// The Content-Security-Policy: nothing but this origin's stylesheet, no
/// script at all, no framing; forms post here (and the OIDC sign-in form
/// leads to the issuer).
fn policy(issuer: Option<&str>) -> HeaderValue {
    let form_action = match issuer {
        Some(origin) => format!("'self' {origin}"),
        None => "'self'".to_owned(),
    };
    HeaderValue::from_str(&format!(
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action {form_action}; \
         frame-ancestors 'none'; base-uri 'none'"
    ))
    .unwrap_or(HeaderValue::from_static(
        "default-src 'none'; frame-ancestors 'none'",
    ))
}

/// The other policy headers of every console answer.
const POLICY: &[(header::HeaderName, &str)] = &[
    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (header::X_FRAME_OPTIONS, "DENY"),
    (header::REFERRER_POLICY, "same-origin"),
    (header::CACHE_CONTROL, "no-store"),
];

async fn headers(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, shared.policy.clone());
    for (name, value) in POLICY {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}
