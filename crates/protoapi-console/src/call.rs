//! The console's calls of the API: in-process REST requests through the
//! API's own router, carrying the session's token, so every page sees and
//! does exactly what its caller may over the wire.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, FromRequestParts};
use http::request::Parts;
use http::{HeaderValue, Method, StatusCode, header};
use serde_json::Value;
use tower::ServiceExt;

use protoapi_core::error::Error;

/// Bytes of an answer the console reads at most (a list page stays under
/// the API's own budget, 4 MiB by default).
const ANSWER_LIMIT: usize = 16 << 20;

/// The API's router, set once it is built (the console is part of it).
#[derive(Clone, Default)]
pub struct ApiHandle(Arc<OnceLock<Router>>);

impl std::fmt::Debug for ApiHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiHandle")
    }
}

impl ApiHandle {
    /// Sets the router calls go through. The router holds the console,
    /// which holds this handle: the two live as long as each other.
    pub fn set(&self, router: Router) {
        let _ = self.0.set(router);
    }

    /// Calls `method path` (with its query) for `asker`, with a JSON body;
    /// the JSON answer, or why it failed.
    pub async fn call(
        &self,
        asker: &Asker,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, Failure> {
        let router = self
            .0
            .get()
            .cloned()
            .ok_or_else(|| Failure::internal("the API is not built"))?;
        let mut request = http::Request::builder().method(method).uri(path);
        if let Some(value) = &asker.authorization {
            request = request.header(header::AUTHORIZATION, value);
        }
        if let Some(peer) = asker.peer {
            request = request.extension(ConnectInfo(peer));
        }
        let body = match body {
            Some(json) => {
                request = request.header(header::CONTENT_TYPE, "application/json");
                Body::from(serde_json::to_vec(json).map_err(Failure::internal)?)
            }
            None => Body::empty(),
        };
        let request = request.body(body).map_err(Failure::internal)?;
        let response = router.oneshot(request).await.map_err(Failure::internal)?;
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), ANSWER_LIMIT)
            .await
            .map_err(Failure::internal)?;
        if !status.is_success() {
            return Err(Failure::from_error(&Error::from_json(status, &bytes)));
        }
        if bytes.is_empty() {
            return Ok(Value::Object(Default::default()));
        }
        serde_json::from_slice(&bytes).map_err(Failure::internal)
    }
}

/// Whom a console call is made for: the bearer token it carries, and the
/// address of the client whose page asked for it, so that the API's limits
/// count the call against that client (never against one bucket every
/// console visitor shares).
#[derive(Clone, Debug, Default)]
pub struct Asker {
    pub authorization: Option<HeaderValue>,
    pub peer: Option<SocketAddr>,
}

impl Asker {
    /// The same client, carrying `authorization` instead.
    pub fn with_authorization(&self, authorization: HeaderValue) -> Self {
        Asker {
            authorization: Some(authorization),
            peer: self.peer,
        }
    }

    /// The same client, without a token.
    pub fn anonymous(&self) -> Self {
        Asker {
            authorization: None,
            peer: self.peer,
        }
    }
}

/// A page request's `Authorization` (the session's token) and client address.
impl<S: Send + Sync> FromRequestParts<S> for Asker {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Asker {
            authorization: parts.headers.get(header::AUTHORIZATION).cloned(),
            peer: parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|ConnectInfo(peer)| *peer),
        })
    }
}

/// An error the API answered, as the console shows it.
#[derive(Clone, Debug, Default)]
pub struct Failure {
    pub status: StatusCode,
    /// The canonical code, e.g. `ABORTED`.
    pub code: String,
    pub message: String,
    /// `BadRequest` field violations: `(field, description)`.
    pub violations: Vec<(String, String)>,
    /// `PreconditionFailure` violations.
    pub preconditions: Vec<Precondition>,
}

/// One `PreconditionFailure` violation, and how the console words it.
#[derive(Clone, Debug, Default)]
pub struct Precondition {
    pub kind: String,
    pub subject: String,
    pub description: String,
    /// What the page says.
    pub words: String,
}

impl Failure {
    /// A page's action without an HTTP rule: the console calls the API over
    /// REST only.
    pub fn grpc_only() -> Self {
        Failure {
            status: StatusCode::NOT_IMPLEMENTED,
            code: "UNIMPLEMENTED".to_owned(),
            message: "this method is served over gRPC only".to_owned(),
            ..Failure::default()
        }
    }

    fn internal(error: impl std::fmt::Display) -> Self {
        tracing::error!(%error, "console call failed");
        Failure {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            code: "INTERNAL".to_owned(),
            message: "the console could not reach the API".to_owned(),
            ..Failure::default()
        }
    }

    /// A refusal of the console's own (e.g. a form without its CSRF token).
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        Failure {
            status,
            code: code.to_owned(),
            message: message.into(),
            ..Failure::default()
        }
    }

    /// The API's error, as the client transports read it
    /// ([`Error::from_json`]).
    fn from_error(error: &Error) -> Self {
        let preconditions = error
            .precondition_violations()
            .iter()
            .map(|v| Precondition {
                kind: v.r#type.clone(),
                subject: v.subject.clone(),
                description: v.description.clone(),
                words: match v.subject.is_empty() {
                    true => v.description.clone(),
                    false => format!("{} ({})", v.description, v.subject),
                },
            })
            .collect();
        Failure {
            status: error.http_status(),
            code: error.code().name().to_owned(),
            message: error.message().to_owned(),
            violations: error
                .field_violations()
                .iter()
                .map(|v| (v.field.clone(), v.description.clone()))
                .collect(),
            preconditions,
        }
    }

    /// The code as a CSS class (`aborted`).
    pub fn class(&self) -> String {
        self.code.to_lowercase()
    }

    /// What the failure means for the person at the console.
    pub fn explanation(&self) -> &'static str {
        match self.code.as_str() {
            "ABORTED" => {
                "This item changed since the form was opened: reload it to see the current values, then make the change again."
            }
            "PERMISSION_DENIED" => "You may not do this here: your roles do not grant it.",
            "FAILED_PRECONDITION" => "This cannot be done while the following holds:",
            "INVALID_ARGUMENT" => "Some values were not accepted; see the notes beside the fields.",
            "NOT_FOUND" => "There is no such item, or it is gone.",
            "ALREADY_EXISTS" => "An item with this key exists already.",
            "UNAUTHENTICATED" => "Your session has ended: sign in again.",
            "CSRF" => {
                "This form did not come from this console (its security token is missing or wrong): open the page again and resubmit."
            }
            _ => "The request failed.",
        }
    }

    /// The violations of fields under `prefix` (the request's body field),
    /// keyed by the field's JSON path inside the resource.
    pub fn field_violations(&self, prefix: &str) -> Vec<(String, String)> {
        self.violations
            .iter()
            .map(|(field, description)| {
                let inner = field
                    .strip_prefix(prefix)
                    .and_then(|rest| rest.strip_prefix('.'))
                    .unwrap_or(field);
                (inner.to_owned(), description.clone())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The API's limits key anonymous callers by address: each console
    /// call carries the address of the client whose page made it.
    #[tokio::test]
    async fn calls_carry_the_address_of_the_client_they_are_made_for() {
        let echo = axum::routing::get(|request: axum::extract::Request| async move {
            let peer = request.extensions().get::<ConnectInfo<SocketAddr>>();
            axum::Json(serde_json::json!({
                "peer": peer.map(|ConnectInfo(peer)| peer.to_string())
            }))
        });
        let api = ApiHandle::default();
        api.set(Router::new().route("/peer", echo));
        for peer in ["192.0.2.7:5000", "[2001:db8::1]:443"] {
            let asker = Asker {
                authorization: None,
                peer: Some(peer.parse().unwrap()),
            };
            let answer = api.call(&asker, Method::GET, "/peer", None).await.unwrap();
            assert_eq!(answer["peer"], peer);
            let bearer = HeaderValue::from_static("Bearer t");
            let answer = api
                .call(
                    &asker.with_authorization(bearer),
                    Method::GET,
                    "/peer",
                    None,
                )
                .await
                .unwrap();
            assert_eq!(answer["peer"], peer, "the token exchange's call too");
        }
    }
}
