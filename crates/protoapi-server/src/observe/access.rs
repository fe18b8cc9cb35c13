//! The access layer: a span per request, one access log line and the
//! request metrics when its response ends. See the [module docs](super).

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue};
use hyper::body::{Frame, SizeHint};
use opentelemetry::trace::TraceId;
use rand::RngCore;
use tracing::Instrument;

use crate::api::Api;
use protoapi_core::context::Caller;
use protoapi_core::error::Code;
use protoapi_http::rest::RouteTemplate;

/// The route label of requests no route template or gRPC method matched.
pub const UNMATCHED: &str = "unmatched";

/// gRPC methods every `ApiRouter` serves
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

    /// The route label of a gRPC request to `path`.
    fn grpc_route(&self, path: &str) -> Route {
        let method = self.inner.grpc_methods.get(path).cloned();
        method.map_or(Route::Unmatched, Route::Method)
    }
}

/// A request's route label: the API's template of the binding that
/// answered, the path axum routed it by, its gRPC method, or
/// [`UNMATCHED`]; held without a copy of the text.
enum Route {
    Api(&'static str),
    Template(MatchedPath),
    Method(Arc<str>),
    Unmatched,
}

impl Route {
    fn as_str(&self) -> &str {
        match self {
            Route::Api(template) => template,
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
        caller.log_name().map(|name| CallerName(name.to_owned()))
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

/// Has `next` answer the request in its span, and writes its access line
/// and metrics when the answer's body ends (see [`Observe::layer`]). A
/// REST route's template is read from the answer's extensions, where the
/// API's handlers put it ([`RouteTemplate`]), or the router its path
/// ([`MatchedPath`]).
pub(crate) async fn observe<F: Future<Output = Response>>(
    observe: &Observe,
    request: Request,
    next: impl FnOnce(Request) -> F,
) -> Response {
    let start = Instant::now();
    let grpc = protoapi_http::rest::is_grpc(request.headers());
    let grpc_route = grpc.then(|| observe.grpc_route(request.uri().path()));
    let method = method_label(request.method());
    let request_id = RequestId::new();
    // The span's fields are what a line logged inside the request names:
    // its id (the access line says the rest), and its kind, which an
    // exported span must have when it starts. An exported span also gets
    // its name, method and route, recorded only then since each field
    // recorded is formatted for the log too.
    let span = tracing::info_span!(
        "request",
        otel.kind = "server",
        method = tracing::field::Empty,
        route = tracing::field::Empty,
        %request_id
    );
    let trace = super::trace::adopt(&span, super::trace::parent_context(request.headers()));
    if trace.exported {
        span.record("method", method);
        if let Some(route) = &grpc_route {
            name_span(&span, method, route);
        }
    }
    let metrics = observe.inner.metrics;
    // Counted out when dropped: at the response's end, or when a handler panics.
    let in_flight = metrics.then(InFlight::enter);
    let mut response = next(request).instrument(span.clone()).await;
    let route = grpc_route.unwrap_or_else(|| {
        let extensions = response.extensions_mut();
        let route = match extensions.remove::<RouteTemplate>() {
            Some(RouteTemplate(template)) => Route::Api(template),
            None => (extensions.remove::<MatchedPath>()).map_or(Route::Unmatched, Route::Template),
        };
        if trace.exported {
            name_span(&span, method, &route);
        }
        route
    });
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
        rest_code: (!grpc).then(|| rest_code(&response)),
        expect_grpc: grpc,
        caller: response.extensions_mut().remove::<CallerName>(),
        request_id,
        trace_id: trace.id,
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

/// Records a request's route in its exported span, and names the span by
/// it (`GET /v1/things/{id}`). The span has started by then, so the name is
/// set on it rather than recorded as `otel.name`, which names a span only
/// at its start.
fn name_span(span: &tracing::Span, method: &str, route: &Route) {
    use opentelemetry::trace::TraceContextExt as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    span.record("route", route.as_str());
    (span.context().span()).update_name(format!("{method} {}", route.as_str()));
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

/// The canonical code of a REST answer: the error's own where its status
/// could mean others, else the one of its HTTP status.
fn rest_code(response: &Response) -> &'static str {
    match response.extensions().get::<Code>() {
        Some(code) => code.name(),
        None if response.status().as_u16() < 400 => "OK",
        None => Code::from_http_status(response.status()).name(),
    }
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
    /// The canonical code of a REST answer.
    rest_code: Option<&'static str>,
    /// Whether the request was gRPC (a missing status is then `UNKNOWN`).
    expect_grpc: bool,
    caller: Option<CallerName>,
    request_id: RequestId,
    trace_id: TraceId,
    metrics: bool,
    _in_flight: Option<InFlight>,
}

/// One request in [`IN_FLIGHT`](super::metrics::IN_FLIGHT) while it lives.
struct InFlight;

impl InFlight {
    fn enter() -> InFlight {
        super::series::in_flight(1.0);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        super::series::in_flight(-1.0);
    }
}

impl Finish {
    fn write(self) {
        let elapsed = self.start.elapsed();
        let code = match (self.expect_grpc, self.grpc) {
            (false, _) => self.rest_code.unwrap_or("OK"),
            (true, Some(code)) => grpc_code_name(code),
            // The body ended without trailers: the client went away.
            (true, None) => "CANCELLED",
        };
        let trace_id = hex::<16, 32>(&self.trace_id.to_bytes());
        super::access_line::AccessLine {
            route: self.route.as_str(),
            method: self.method,
            status: self.status,
            code,
            latency: elapsed,
            caller: self.caller.as_ref().map_or("-", |name| name.0.as_str()),
            request_id: self.request_id.as_str(),
            trace_id: std::str::from_utf8(&trace_id).expect("hex digits are ASCII"),
        }
        .write();
        if self.metrics {
            let labels = (self.method, self.status, code);
            super::series::record(self.route.as_str(), labels, elapsed.as_secs_f64());
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
