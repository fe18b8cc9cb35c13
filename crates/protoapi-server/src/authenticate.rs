//! Who is calling: the `Authorization` header becomes the request's
//! [`Caller`] before any handler runs.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderValue, header};
use protoapi_client::client::Route;
use protoapi_core::Caller;
use protoapi_core::auth::bearer;
use protoapi_http::rest::{error_response, is_grpc};

use crate::api::Api;
use crate::tokens::ApiTokens;

/// What the authentication middleware ([`authenticate`]) checks.
#[derive(Clone, Debug)]
pub struct Authentication {
    tokens: ApiTokens,
    admin: String,
    exchange: Option<Route>,
    domain: &'static str,
    own: Option<&'static str>,
}

impl Authentication {
    /// Callers of `api` present API tokens of `tokens`; `admin` is the
    /// identity with every right ([`Caller::Identity`]'s `admin`).
    ///
    /// The token exchange `api` declares, if any, takes a token of another
    /// kind (an identity token): its bearer reaches the handler as
    /// [`Caller::Presented`], unverified, and its answers, which may carry
    /// a token, are never stored by caches (`Cache-Control: no-store`).
    /// Refusals name the exchange's domain, or else the API's.
    pub fn for_api(api: &Api, tokens: ApiTokens, admin: impl Into<String>) -> Self {
        Authentication {
            tokens,
            admin: admin.into(),
            exchange: api.token_exchange.map(|slot| slot.route),
            domain: api
                .token_exchange
                .map_or(api.error_domain, |slot| slot.domain),
            own: None,
        }
    }

    /// Leaves requests whose path starts with `prefix` to authenticate
    /// themselves (a protocol with credentials of its own, such as a
    /// container registry's token flow): their `Authorization` header
    /// reaches the route unread, and they run as [`Caller::Anonymous`]
    /// until the route finds otherwise ([`Authentication::caller`]). No
    /// route of the API itself may be under `prefix`: its requests would
    /// go unauthenticated.
    pub fn except(mut self, prefix: &'static str) -> Self {
        self.own = Some(prefix);
        self
    }

    /// The caller an API token names, or why it is refused
    /// (UNAUTHENTICATED), as this middleware decides it.
    pub fn caller(&self, token: &str) -> Result<Caller, protoapi_core::error::Error> {
        let claims = self.tokens.verify(token)?;
        Ok(Caller::Identity {
            admin: claims.sub == self.admin,
            uid: claims.sub.clone(),
        })
    }
}

/// Middleware turning the `Authorization` header into the request's
/// [`Caller`] (see [`identify`]), for a router of the application's own;
/// an `ApiRouter` takes
/// [`Authentication::layer`] instead.
pub async fn authenticate(
    State(auth): State<Arc<Authentication>>,
    request: Request,
    next: Next,
) -> Response {
    identify(&auth, request, |request| next.run(request)).await
}

/// Turns the `Authorization` header into the request's [`Caller`] and has
/// `next` answer it: no header is anonymous; a valid API token is its
/// identity; anything else is UNAUTHENTICATED here, before any handler
/// (also on public reads).
pub async fn identify<F: Future<Output = Response>>(
    auth: &Authentication,
    request: Request,
    next: impl FnOnce(Request) -> F,
) -> Response {
    if auth
        .own
        .is_some_and(|prefix| request.uri().path().starts_with(prefix))
    {
        return next(request).await;
    }
    let exchange = auth
        .exchange
        .is_some_and(|route| route.is_path(request.uri().path()));
    let mut response = as_caller(auth, request, next, exchange).await;
    if exchange {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// Runs the request as the caller its `Authorization` header names, or
/// answers UNAUTHENTICATED.
async fn as_caller<F: Future<Output = Response>>(
    auth: &Authentication,
    mut request: Request,
    next: impl FnOnce(Request) -> F,
    exchange: bool,
) -> Response {
    let grpc = is_grpc(request.headers());
    let caller = match bearer(request.headers()) {
        Ok(None) => Caller::Anonymous,
        Ok(Some(token)) if exchange => Caller::Presented { token },
        Ok(Some(token)) => match auth.caller(&token) {
            Ok(caller) => caller,
            Err(error) => return error_response(error.in_domain(auth.domain), grpc),
        },
        Err(error) => return error_response(error.in_domain(auth.domain), grpc),
    };
    request.extensions_mut().insert(caller);
    next(request).await
}
