//! The access layer: a span per request, one access log line and the
//! request metrics when its response ends. See the [module docs](super).

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue};
use hyper::body::{Frame, SizeHint};
use opentelemetry::trace::TraceId;
use rand::RngCore;
use tracing::Instrument;

use super::metrics::{DURATION, IN_FLIGHT, REQUESTS};
use crate::router::{Api, RouteLayer};
use protoapi_core::context::Caller;

/// The route label of requests no route template or gRPC method matched.
pub const UNMATCHED: &str = "unmatched";

/// gRPC methods every [`ApiRouter`](crate::router::ApiRouter) serves
/// besides the API's own: health and reflection.
const BUILT_IN_METHODS: &[&str] = &[
    "/grpc.health.v1.Health/Check",
    "/grpc.health.v1.Health/Watch",
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
];

/// The access layer's configuration; see the [module docs](super).
#[derive(Clone, Debug)]
pub struct Observe {
    inner: Arc<Inner>,
}

#[derive(Clone, Debug)]
struct Inner {
    /// Paths of the gRPC methods served (`/package.Service/Method`).
    grpc_methods: HashSet<Arc<str>>,
    /// Whether requests are counted (see [`Observe::metrics`]).
    metrics: bool,
}

impl Observe {
    /// Observes the requests of `api`'s router: its gRPC methods (from the
    /// descriptor set) are route labels, any other gRPC path is
    /// [`UNMATCHED`]. Requests are logged, not counted.
    pub fn new(api: &Api) -> Self {
        let mut grpc_methods: HashSet<Arc<str>> =
            BUILT_IN_METHODS.iter().map(|m| Arc::from(*m)).collect();
        if let Ok(pool) = prost_reflect::DescriptorPool::decode(api.descriptor_set) {
            for service in pool.services() {
                for method in service.methods() {
                    let path = format!("/{}/{}", service.full_name(), method.name());
                    grpc_methods.insert(path.into());
                }
            }
        }
        Observe {
            inner: Arc::new(Inner {
                grpc_methods,
                metrics: false,
            }),
        }
    }

    /// Also count requests in the current `metrics` recorder (see
    /// [`Metrics`](super::Metrics)).
    pub fn metrics(self, on: bool) -> Self {
        let Inner { grpc_methods, .. } = Arc::unwrap_or_clone(self.inner);
        Observe {
            inner: Arc::new(Inner {
                grpc_methods,
                metrics: on,
            }),
        }
    }

    /// The layer, for `Services::layer` / [`ApiRouter::layer`](crate::router::ApiRouter::layer).
    pub fn layer(self) -> impl RouteLayer {
        axum::middleware::from_fn_with_state(self, observe)
    }

    /// The bounded route label of a request.
    fn route(&self, request: &Request, grpc: bool) -> Route {
        let route = match grpc {
            true => (self.inner.grpc_methods.get(request.uri().path()).cloned()).map(Route::Method),
            false => (request.extensions().get::<MatchedPath>().cloned()).map(Route::Template),
        };
        route.unwrap_or(Route::Unmatched)
    }
}

/// A request's route label: its route template, its gRPC method, or
/// [`UNMATCHED`]; held without a copy of the text.
enum Route {
    Template(MatchedPath),
    Method(Arc<str>),
    Unmatched,
}

impl Route {
    fn as_str(&self) -> &str {
        match self {
            Route::Template(path) => path.as_str(),
            Route::Method(path) => path,
            Route::Unmatched => UNMATCHED,
        }
    }
}

/// `bytes` in lowercase hex digits, on the stack.
fn hex<const N: usize, const DIGITS: usize>(bytes: &[u8; N]) -> [u8; DIGITS] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    std::array::from_fn(|index| {
        let byte = bytes[index / 2];
        HEX[usize::from(if index % 2 == 0 {
            byte >> 4
        } else {
            byte & 0xf
        })]
    })
}

/// A request's id: 16 random lowercase hex digits, held without an
/// allocation.
struct RequestId([u8; 16]);

impl RequestId {
    fn new() -> Self {
        RequestId(hex::<8, 16>(&rand::rng().next_u64().to_be_bytes()))
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("hex digits are ASCII")
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who called, as the access log names it: the identity's uid, `system`,
/// or `presented` for a token passed on unverified (never the token).
/// [`note_caller`] puts it in the response extensions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallerName(pub String);

impl CallerName {
    /// The name of `caller`; `None` for an anonymous one.
    pub fn of(caller: &Caller) -> Option<CallerName> {
        match caller {
            Caller::Identity { uid, .. } => Some(CallerName(uid.clone())),
            Caller::System => Some(CallerName("system".to_owned())),
            Caller::Presented { .. } => Some(CallerName("presented".to_owned())),
            _ => None,
        }
    }
}

/// Middleware to add inside authentication: copies the request's
/// [`Caller`] to its response as a [`CallerName`] for the access log.
pub async fn note_caller(request: Request, next: Next) -> Response {
    let name = request
        .extensions()
        .get::<Caller>()
        .and_then(CallerName::of);
    let mut response = next.run(request).await;
    if let Some(name) = name {
        response.extensions_mut().insert(name);
    }
    response
}

/// The access middleware (see [`Observe::layer`]).
async fn observe(State(observe): State<Observe>, request: Request, next: Next) -> Response {
    let start = Instant::now();
    let grpc = protoapi_http::rest::is_grpc(request.headers());
    let route = observe.route(&request, grpc);
    let method = method_label(request.method());
    let request_id = RequestId::new();
    // `otel.*`: what the exported span is called and that it served a request.
    let span = tracing::info_span!(
        "request",
        otel.name = %format_args!("{method} {}", route.as_str()),
        otel.kind = "server",
        %method,
        route = %route.as_str(),
        %request_id
    );
    let trace_id = super::trace::adopt(&span, super::trace::parent_context(request.headers()));
    let metrics = observe.inner.metrics;
    // Counted out when dropped: at the response's end, or when a handler panics.
    let in_flight = metrics.then(InFlight::enter);
    let mut response = next.run(request).instrument(span).await;
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(request_id.as_str()) {
        headers.insert("x-request-id", value);
    }
    let finish = Finish {
        start,
        route,
        method,
        status: response.status().as_u16(),
        grpc: grpc.then(|| grpc_code(response.headers())).flatten(),
        expect_grpc: grpc,
        caller: response.extensions_mut().remove::<CallerName>(),
        request_id,
        trace_id,
        metrics,
        _in_flight: in_flight,
    };
    response.map(|body| {
        Body::new(Observed {
            inner: body,
            finish: Some(finish),
        })
    })
}

/// The method as a label: a standard method's name, else `OTHER` (a
/// client may send any token as a method).
fn method_label(method: &http::Method) -> &'static str {
    const STANDARD: [&str; 9] = [
        "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE",
    ];
    STANDARD
        .into_iter()
        .find(|known| *known == method.as_str())
        .unwrap_or("OTHER")
}

/// The gRPC status code in `headers` (trailers, or a trailers-only answer).
fn grpc_code(headers: &HeaderMap) -> Option<i32> {
    headers
        .get("grpc-status")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok())
}

/// The name of a gRPC status code (`OK`, `NOT_FOUND`, …).
fn grpc_code_name(code: i32) -> &'static str {
    match tonic::Code::from_i32(code) {
        tonic::Code::Ok => "OK",
        other => protoapi_core::error::Code::from_grpc(other).name(),
    }
}

/// What the access line and the metrics of one request say, written when
/// its response body ends or is dropped.
struct Finish {
    start: Instant,
    route: Route,
    method: &'static str,
    status: u16,
    /// The gRPC status, once seen.
    grpc: Option<i32>,
    /// Whether the request was gRPC (a missing status is then `UNKNOWN`).
    expect_grpc: bool,
    caller: Option<CallerName>,
    request_id: RequestId,
    trace_id: TraceId,
    metrics: bool,
    _in_flight: Option<InFlight>,
}

/// One request in [`IN_FLIGHT`] while it lives.
struct InFlight;

impl InFlight {
    fn enter() -> InFlight {
        metrics::gauge!(IN_FLIGHT).increment(1.0);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        metrics::gauge!(IN_FLIGHT).decrement(1.0);
    }
}

impl Finish {
    fn write(self) {
        let elapsed = self.start.elapsed();
        let code = match (self.expect_grpc, self.grpc) {
            (false, _) => "",
            (true, Some(code)) => grpc_code_name(code),
            // The body ended without trailers: the client went away.
            (true, None) => "CANCELLED",
        };
        let caller = self.caller.as_ref().map_or("-", |name| name.0.as_str());
        let trace_id = hex::<16, 32>(&self.trace_id.to_bytes());
        tracing::info!(
            target: "access",
            parent: None,
            route = %self.route.as_str(),
            method = %self.method,
            status = self.status,
            code,
            latency_ms = elapsed.as_secs_f64() * 1000.0,
            caller,
            request_id = %self.request_id,
            trace_id = std::str::from_utf8(&trace_id).expect("hex digits are ASCII"),
            "request"
        );
        if self.metrics {
            let labels = [
                ("route", self.route.as_str().to_owned()),
                ("method", self.method.to_owned()),
                ("status", self.status.to_string()),
                ("code", code.to_owned()),
            ];
            metrics::counter!(REQUESTS, &labels).increment(1);
            metrics::histogram!(DURATION, &labels).record(elapsed.as_secs_f64());
        }
    }
}

/// A response body that writes its request's [`Finish`] at its end.
struct Observed {
    inner: Body,
    finish: Option<Finish>,
}

impl hyper::body::Body for Observed {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let frame = ready!(hyper::body::Body::poll_frame(Pin::new(&mut self.inner), cx));
        match &frame {
            Some(Ok(frame)) => {
                if let (Some(trailers), Some(finish)) = (frame.trailers_ref(), &mut self.finish)
                    && let Some(code) = grpc_code(trailers)
                {
                    finish.grpc = Some(code);
                }
            }
            Some(Err(_)) | None => {
                if let Some(finish) = self.finish.take() {
                    finish.write();
                }
            }
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        hyper::body::Body::is_end_stream(&self.inner)
    }

    fn size_hint(&self) -> SizeHint {
        hyper::body::Body::size_hint(&self.inner)
    }
}

impl Drop for Observed {
    fn drop(&mut self) {
        if let Some(finish) = self.finish.take() {
            finish.write();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::Metrics;
    use http_body_util::BodyExt as _;
    use protoapi_core::error::Error;
    use tower::ServiceExt as _;

    fn api() -> Api {
        Api {
            descriptor_set: tonic_health::pb::FILE_DESCRIPTOR_SET,
            openapi_json: "{}",
            error_domain: "example",
            services: &[],
            token_exchange: None,
            access_rules: true,
        }
    }

    /// A router answering every gRPC path trailers-only NOT_FOUND, and
    /// `/things/{id}` with 200; observed with metrics.
    fn router() -> axum::Router {
        let grpc =
            || async { protoapi_http::rest::error_response(Error::not_found("thing", "x"), true) };
        let router = axum::Router::new()
            .route("/things/{id}", axum::routing::get(|| async { "thing" }))
            .route("/{service}/{method}", axum::routing::post(grpc))
            .route(
                "/panics",
                axum::routing::get(|| async {
                    if true {
                        panic!("a handler panicked");
                    }
                    "unreachable"
                }),
            );
        Observe::new(&api())
            .metrics(true)
            .layer()
            .wrap(router)
            .layer(axum::middleware::from_fn(protoapi_http::rest::catch_panic))
    }

    async fn send(router: &axum::Router, method: &str, path: &str, grpc: bool) -> Response {
        let mut request = http::Request::builder().method(method).uri(path);
        if grpc {
            request = request.header(http::header::CONTENT_TYPE, "application/grpc");
        }
        let response = router
            .clone()
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let (parts, body) = response.into_parts();
        // Reading the body to its end writes the access line and the counts.
        let bytes = body.collect().await.unwrap().to_bytes();
        Response::from_parts(parts, Body::from(bytes))
    }

    #[tokio::test]
    async fn labels_are_templates_and_declared_methods() {
        let (recorder, metrics) = Metrics::new();
        let _current = metrics::set_default_local_recorder(&recorder);
        let router = router();
        let response = send(&router, "GET", "/things/secret-id?q=1", false).await;
        assert!(response.headers().contains_key("x-request-id"));
        send(&router, "POST", "/grpc.health.v1.Health/Check", true).await;
        send(&router, "POST", "/made.up.Service/Method123", true).await;
        send(&router, "BREW", "/things/1", false).await;
        let panicked = send(&router, "GET", "/panics", false).await;
        assert_eq!(panicked.status(), http::StatusCode::INTERNAL_SERVER_ERROR);
        let text = metrics.render();
        for series in [
            r#"http_requests_total{route="/things/{id}",method="GET",status="200",code=""} 1"#,
            r#"http_requests_total{route="/grpc.health.v1.Health/Check",method="POST",status="200",code="NOT_FOUND"} 1"#,
            r#"http_requests_total{route="unmatched",method="POST",status="200",code="NOT_FOUND"} 1"#,
            r#"http_requests_total{route="/things/{id}",method="OTHER",status="405",code=""} 1"#,
            "http_requests_in_flight 0",
        ] {
            assert!(text.contains(series), "no `{series}` in\n{text}");
        }
        for leak in ["secret-id", "q=1", "made.up", "Method123", "BREW"] {
            assert!(!text.contains(leak), "`{leak}` in\n{text}");
        }
    }

    #[test]
    fn callers_are_named_without_their_tokens() {
        let presented = Caller::Presented {
            token: "secret".into(),
        };
        assert_eq!(
            CallerName::of(&presented),
            Some(CallerName("presented".into()))
        );
        assert_eq!(CallerName::of(&Caller::Anonymous), None);
    }
}
