//! Browsers on the API's port: gRPC-Web and CORS.
//!
//! **gRPC-Web** ([`grpc_web`]): a request of content type
//! `application/grpc-web`, `application/grpc-web+proto`,
//! `application/grpc-web-text` or `application/grpc-web-text+proto`, over
//! HTTP/1.1 or HTTP/2, is translated by `tonic-web` into a gRPC request
//! before anything else sees it, so it meets the same layers
//! (authentication), the same gRPC services and the same error model as
//! gRPC; its answer is translated back (base64 for the text form, chosen by
//! the request's `Accept`, or as the request was sent when `Accept` names no
//! gRPC-Web type). A gRPC error answered without a body (a
//! trailers-only answer: every error of a unary method) is moved into a
//! trailers frame at the end of the body, where gRPC-Web clients read the
//! status; `grpc-status-details-bin` keeps the error's details.
//!
//! **CORS** ([`Cors`], off unless configured): for an `Origin` exactly equal
//! to one configured, `tower-http`'s `CorsLayer` answers preflights
//! (`OPTIONS`, before authentication: they carry no credentials) and adds
//! `Access-Control-Allow-Origin` to answers, exposing `grpc-status`,
//! `grpc-message`, `grpc-status-details-bin` and `etag`. Any other origin
//! gets no CORS header at all, so its browser withholds the answer. `*` is
//! honoured only when configured alone; credentials (cookies) are never
//! allowed: the API reads bearer tokens from `Authorization`, which a
//! browser sends when the page sets it, and no cookie.

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::{BufMut, Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue, Method, header};
use tower::{Layer, ServiceExt};
use tower_http::cors::{AllowOrigin, CorsLayer};

const STATUS_HEADERS: [&str; 3] = ["grpc-status", "grpc-message", "grpc-status-details-bin"];
/// The first byte of a gRPC-Web trailers frame.
const TRAILERS_FLAG: u8 = 0x80;

/// Whether a request is gRPC-Web (by its content type).
pub fn is_grpc_web(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            matches!(
                value,
                "application/grpc-web"
                    | "application/grpc-web+proto"
                    | "application/grpc-web-text"
                    | "application/grpc-web-text+proto"
            )
        })
}

/// Serves a gRPC-Web request as gRPC through `next` (see the
/// [module docs](self)); `next` answers any other request untouched.
pub async fn grpc_web<F>(request: Request, next: impl FnOnce(Request) -> F + Send) -> Response
where
    F: Future<Output = Response> + Send,
{
    if !is_grpc_web(request.headers()) {
        return next(request).await;
    }
    // Boxed: the translation's state stays out of every other request's.
    Box::pin(translate(request, next)).await
}

/// Answers a gRPC-Web request (see [`grpc_web`]).
async fn translate<F>(mut request: Request, next: impl FnOnce(Request) -> F + Send) -> Response
where
    F: Future<Output = Response> + Send,
{
    // The answer is encoded as `Accept` asks; a client that names no
    // gRPC-Web type gets the encoding it sent.
    let headers = request.headers_mut();
    let accepts_grpc_web = headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/grpc-web"));
    if !accepts_grpc_web && let Some(sent) = headers.get(header::CONTENT_TYPE).cloned() {
        headers.insert(header::ACCEPT, sent);
    }
    let inner = once(move |request: http::Request<tonic::body::Body>| next(request.map(Body::new)));
    let Ok(response) = tonic_web::GrpcWebLayer::new()
        .layer(inner)
        .oneshot(request)
        .await;
    trailers_in_body(response.map(Body::new))
}

/// A service answering one request with `answer` (`tower` layers wrap
/// services; a request passes through them once).
fn once<R, F>(
    answer: impl FnOnce(R) -> F,
) -> impl tower::Service<R, Response = Response, Error = Infallible, Future: Send>
where
    F: Future<Output = Response> + Send,
{
    let mut answer = Some(answer);
    tower::service_fn(move |request: R| {
        let answer = answer.take().expect("a request passes through once");
        let response = answer(request);
        async move { Ok::<_, Infallible>(response.await) }
    })
}

/// Moves the status of a trailers-only answer into a trailers frame.
fn trailers_in_body(mut response: Response) -> Response {
    let headers = response.headers_mut();
    if !headers.contains_key(STATUS_HEADERS[0]) {
        return response;
    }
    let mut block = Vec::new();
    for name in STATUS_HEADERS {
        if let Some(value) = headers.remove(name) {
            block.extend_from_slice(name.as_bytes());
            block.push(b':');
            block.extend_from_slice(value.as_bytes());
            block.extend_from_slice(b"\r\n");
        }
    }
    let text = headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/grpc-web-text"));
    let length = u32::try_from(block.len()).expect("three header values fit in a frame");
    let mut frame = BytesMut::with_capacity(block.len() + 5);
    frame.put_u8(TRAILERS_FLAG);
    frame.put_u32(length);
    frame.put_slice(&block);
    let body = if text {
        Bytes::from(STANDARD.encode(&frame))
    } else {
        frame.freeze()
    };
    headers.remove(header::CONTENT_LENGTH);
    *response.body_mut() = Body::from(body);
    response
}

/// Which origins browsers may call the API from (see the
/// [module docs](self)). The default allows none and adds no header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cors {
    origins: Vec<HeaderValue>,
    any: bool,
}

/// An origin [`Cors::allow`] refuses, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidOrigin {
    /// The origin as given.
    pub origin: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

impl fmt::Display for InvalidOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CORS origin `{}` {}", self.origin, self.problem)
    }
}

impl std::error::Error for InvalidOrigin {}

impl Cors {
    /// No origin allowed: no CORS header is ever sent.
    pub fn none() -> Self {
        Cors::default()
    }

    /// Allows each of `origins`: `scheme://host[:port]` exactly as browsers
    /// send it in `Origin` (no path, no trailing slash), or `*` alone for
    /// any origin. `null` (sandboxed and local documents) is refused.
    pub fn allow<I>(origins: I) -> Result<Self, InvalidOrigin>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let mut cors = Cors::default();
        for origin in origins {
            let origin = origin.as_ref();
            let refuse = |problem| InvalidOrigin {
                origin: origin.to_owned(),
                problem,
            };
            if origin == "*" {
                cors.any = true;
                continue;
            }
            check_origin(origin).map_err(refuse)?;
            let value = HeaderValue::from_str(origin).map_err(|_| refuse("is not ASCII"))?;
            if !cors.origins.contains(&value) {
                cors.origins.push(value);
            }
        }
        if cors.any && !cors.origins.is_empty() {
            return Err(InvalidOrigin {
                origin: "*".to_owned(),
                problem: "allows every origin, so it cannot be listed with others",
            });
        }
        Ok(cors)
    }

    /// Whether no origin is allowed.
    pub fn is_none(&self) -> bool {
        !self.any && self.origins.is_empty()
    }

    /// Whether a request from `origin` gets CORS headers.
    pub fn allows(&self, origin: &HeaderValue) -> bool {
        self.any || self.origins.contains(origin)
    }

    /// The `tower-http` layer answering for allowed origins.
    fn layer(&self) -> CorsLayer {
        let origin = if self.any {
            AllowOrigin::any()
        } else {
            AllowOrigin::list(self.origins.iter().cloned())
        };
        let allow = [
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::IF_MATCH,
            header::IF_NONE_MATCH,
            HeaderName::from_static("x-grpc-web"),
            HeaderName::from_static("x-user-agent"),
            HeaderName::from_static("grpc-timeout"),
        ];
        let expose = [
            HeaderName::from_static("grpc-status"),
            HeaderName::from_static("grpc-message"),
            HeaderName::from_static("grpc-status-details-bin"),
            header::ETAG,
        ];
        CorsLayer::new()
            .allow_origin(origin)
            .allow_methods([
                Method::GET,
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
            ])
            .allow_headers(allow)
            .expose_headers(expose)
            .max_age(Duration::from_secs(600))
    }

    /// Middleware answering for this configuration; `None` when it allows
    /// no origin (no CORS work at all).
    pub(crate) fn middleware(&self) -> Option<Arc<CorsState>> {
        (!self.is_none()).then(|| {
            Arc::new(CorsState {
                cors: self.clone(),
                layer: self.layer(),
            })
        })
    }
}

/// A configured [`Cors`] with its layer, shared by every request.
#[derive(Debug)]
pub(crate) struct CorsState {
    cors: Cors,
    layer: CorsLayer,
}

/// Why an origin is not `scheme://host[:port]`.
fn check_origin(origin: &str) -> Result<(), &'static str> {
    if origin == "null" {
        return Err("is the opaque origin `null`, which any sandboxed page sends");
    }
    let (scheme, authority) = origin
        .split_once("://")
        .ok_or("is not of the form `scheme://host[:port]`")?;
    let scheme_ok = !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+-.".contains(&b));
    if !scheme_ok {
        return Err("has no lowercase scheme");
    }
    if authority.is_empty() || authority.contains(['/', '?', '#', '@', ' ']) {
        return Err("is not of the form `scheme://host[:port]` (no path, no trailing slash)");
    }
    if authority.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err("has uppercase letters, which browsers never send in `Origin`");
    }
    Ok(())
}

/// Requests from an allowed origin go through the CORS layer (a preflight
/// is answered there, before `next`); others reach `next` and get no CORS
/// header but `Vary: Origin`, since the answer depends on it.
pub(crate) async fn cors<F>(
    state: &CorsState,
    request: Request,
    next: impl FnOnce(Request) -> F + Send,
) -> Response
where
    F: Future<Output = Response> + Send,
{
    let allowed = request
        .headers()
        .get(header::ORIGIN)
        .is_some_and(|origin| state.cors.allows(origin));
    if !allowed {
        let mut response = next(request).await;
        response
            .headers_mut()
            .append(header::VARY, HeaderValue::from_static("origin"));
        return response;
    }
    // Boxed: the CORS layer's state stays out of every other request's.
    let answer = state.layer.clone().layer(once(next)).oneshot(request);
    let Ok(response) = Box::pin(answer).await;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_exact_and_star_stands_alone() {
        let cors = Cors::allow(["https://app.example", "http://localhost:3000"]).unwrap();
        assert!(cors.allows(&HeaderValue::from_static("https://app.example")));
        assert!(!cors.allows(&HeaderValue::from_static("https://app.example.evil")));
        assert!(!cors.allows(&HeaderValue::from_static("http://app.example")));
        assert!(Cors::none().is_none());
        let any = Cors::allow(["*"]).unwrap();
        assert!(any.allows(&HeaderValue::from_static("https://anything")));
        for bad in [
            "null",
            "app.example",
            "https://app.example/",
            "https://app.example/path",
            "https://App.example",
            "HTTPS://app.example",
            "https://user@app.example",
            "https://",
        ] {
            assert!(Cors::allow([bad]).is_err(), "{bad}");
        }
        let error = Cors::allow(["*", "https://app.example"]).unwrap_err();
        assert!(error.to_string().contains("cannot be listed"), "{error}");
    }

    #[test]
    fn a_trailers_only_answer_moves_into_a_trailers_frame() {
        let response = tonic::Status::not_found("no such thing").into_http::<Body>();
        let mut response = response.map(Body::new);
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/grpc-web+proto"),
        );
        let response = trailers_in_body(response);
        assert!(!response.headers().contains_key("grpc-status"));
        let body =
            futures_util::FutureExt::now_or_never(axum::body::to_bytes(response.into_body(), 1024))
                .unwrap()
                .unwrap();
        assert_eq!(body[0], TRAILERS_FLAG);
        let length = u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize;
        let block = std::str::from_utf8(&body[5..]).unwrap();
        assert_eq!(block.len(), length);
        assert!(block.starts_with("grpc-status:5\r\n"), "{block}");
        assert!(
            block.contains("grpc-message:no%20such%20thing\r\n"),
            "{block}"
        );
    }
}
