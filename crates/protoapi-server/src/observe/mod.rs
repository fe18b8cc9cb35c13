//! What a served API tells its operators: an access log line per request,
//! Prometheus metrics, and W3C trace context (feature `observe`).
//!
//! One layer, [`Observe::layer`], does all three for every request of a
//! router built by `ApiRouter`: it runs at the
//! router's edge before authentication and the rate limit, so it sees every
//! answer, their refusals included:
//!
//! - **Trace context** ([`trace`]): a `traceparent` (and `tracestate`)
//!   header, or the same gRPC metadata, becomes the parent of the request's
//!   `tracing` span (`request`), through OpenTelemetry's
//!   `TraceContextPropagator` and `tracing-opentelemetry`. Without one the
//!   span starts a trace of its own (a random trace id when no OpenTelemetry
//!   layer is installed). [`trace::subscriber`] builds the subscriber (text
//!   or JSON lines, and the OpenTelemetry layer with the application's
//!   tracer, which may export spans over OTLP; the server flags install it
//!   only with an exporter, `--otlp-endpoint`, as it costs every request).
//! - **Access log** ([`access`]): when the response body ends (or the
//!   client goes away), one `INFO` line on target `access` (written straight
//!   into the server flags' text log, [`access_line`], else an event) with the route
//!   *template* (the axum `MatchedPath` for REST, the method path for gRPC,
//!   `unmatched` for anything else: never the raw URI with its ids and
//!   query), the HTTP method and status, the gRPC code (read from the
//!   trailers, or the headers of a trailers-only answer), the latency, the
//!   caller's identity when authenticated, a request id (also answered as
//!   `x-request-id`) and the trace id. Headers are never logged: no token,
//!   `Authorization` or cookie reaches the log. The router's edge names
//!   the caller that `Authentication::layer` found; an authentication
//!   layer of the application's own adds [`note_caller`] inside it.
//! - **Metrics** ([`metrics`]): with [`Observe::metrics`], every request
//!   counts in `http_requests_total` and `http_request_duration_seconds`
//!   (labels `route`, `method`, `status`, `code`: the same bounded values as
//!   the log) and `http_requests_in_flight`, through the `metrics` facade;
//!   [`Metrics`] owns a Prometheus recorder and renders it (the
//!   application serves [`Metrics::router`] wherever it chooses) after
//!   running the application's samplers (a storage pool's size, say). The
//!   standard List flow counts pages ended early by the byte budget
//!   ([`LIST_BUDGET_TRUNCATIONS`](protoapi_core::standard::LIST_BUDGET_TRUNCATIONS)).
//!
//! Label values are bounded by the API's declaration: route templates of
//! the router and gRPC methods of the API's descriptor set, so a client
//! sending random paths adds one `unmatched` series, not one per path;
//! a method other than the standard HTTP ones is `OTHER`.

pub mod access;
pub mod access_line;
pub mod batch;
pub mod lines;
pub mod metrics;
mod series;
pub mod text;
pub mod trace;

pub use access::{CallerName, Observe, note_caller};
pub use metrics::{Build, Metrics, MetricsRecorder};
