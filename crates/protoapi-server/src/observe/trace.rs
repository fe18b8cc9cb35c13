//! W3C trace context and the log's subscriber.
//!
//! [`parent_context`] reads `traceparent` / `tracestate` from request
//! headers (gRPC metadata are HTTP/2 headers too); the access layer makes
//! it the parent of the request's span. [`subscriber`] is what a server
//! installs: logs as text (ANSI colours only when asked, i.e. on a
//! terminal) or JSON lines, and, given a tracer, the OpenTelemetry layer
//! that gives spans their trace ids and hands them to the tracer's
//! exporter (none: ids only, nothing sent).

use std::fmt;
use std::str::FromStr;

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TraceId};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::{EnvFilter, Layer};

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, the event's fields at the top level.
    Json,
}

impl FromStr for LogFormat {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("unknown log format `{other}`: text or json")),
        }
    }
}

impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LogFormat::Text => "text",
            LogFormat::Json => "json",
        })
    }
}

/// The subscriber of a server: `filter` decides what is recorded, `format`
/// how lines are written to `writer` (with ANSI colours only if `ansi`),
/// and `tracer`, when given, receives the spans (and assigns their trace
/// ids). Install it with `tracing::subscriber::set_global_default` (or
/// `set_default` in a test).
pub fn subscriber<W, T>(
    format: LogFormat,
    ansi: bool,
    writer: W,
    filter: EnvFilter,
    tracer: Option<T>,
) -> impl tracing::Subscriber + Send + Sync + for<'a> LookupSpan<'a>
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
    T: opentelemetry::trace::Tracer + Send + Sync + 'static,
    T::Span: Send + Sync,
{
    let lines = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .fmt_fields(super::text::TextFields::default())
            .event_format(super::text::TextLines::new(ansi))
            .with_writer(super::lines::OneLine::new(writer, ansi))
            .with_ansi(ansi)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_writer(writer)
            .boxed(),
    };
    let spans = tracer.map(|tracer| tracing_opentelemetry::layer().with_tracer(tracer));
    tracing_subscriber::registry()
        .with(filter)
        .with(lines)
        .with(spans)
}

/// The trace context a request's headers carry (`traceparent`,
/// `tracestate`); an empty context when they carry none or an invalid one.
pub fn parent_context(headers: &http::HeaderMap) -> opentelemetry::Context {
    TraceContextPropagator::new().extract(&Headers(headers))
}

/// A request's trace, as [`adopt`] found it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Trace {
    /// The trace id of the request's log lines.
    pub id: TraceId,
    /// Whether an OpenTelemetry layer exports the request's span.
    pub exported: bool,
}

/// Makes `parent` the parent of `span`, and answers the span's trace: the
/// parent's id, or a new one when the request carried none. With no
/// OpenTelemetry layer in the subscriber (nothing exports spans) or the
/// span disabled, the parent's trace id, else a random one: every request
/// has a trace id for its log lines.
pub(crate) fn adopt(span: &tracing::Span, parent: opentelemetry::Context) -> Trace {
    let remote = parent.span().span_context().trace_id();
    if parent.span().span_context().is_valid() {
        // Fails only without an OpenTelemetry layer, handled below.
        let _ = span.set_parent(parent);
    }
    let own = span.context().span().span_context().trace_id();
    let id = [own, remote]
        .into_iter()
        .find(|id| *id != TraceId::INVALID)
        .unwrap_or_else(|| TraceId::from_bytes((rand::random::<u128>() | 1).to_be_bytes()));
    Trace {
        id,
        exported: own != TraceId::INVALID,
    }
}

/// Header lookup for the propagator.
struct Headers<'a>(&'a http::HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_header_is_the_parent() {
        let mut headers = http::HeaderMap::new();
        headers.insert(
            "traceparent",
            http::HeaderValue::from_static(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            ),
        );
        let parent = parent_context(&headers);
        assert_eq!(
            parent.span().span_context().trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        let span = tracing::Span::none();
        assert_eq!(
            adopt(&span, parent).id.to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
    }

    #[test]
    fn a_malformed_traceparent_is_no_parent() {
        let mut headers = http::HeaderMap::new();
        headers.insert("traceparent", http::HeaderValue::from_static("00-zz-yy-01"));
        let parent = parent_context(&headers);
        assert!(!parent.span().span_context().is_valid());
        // Without a parent, and with no layer to start a trace, a random id.
        let own = adopt(&tracing::Span::none(), parent);
        let again = adopt(&tracing::Span::none(), parent_context(&headers));
        assert!(own.id != TraceId::INVALID && again.id != TraceId::INVALID && own.id != again.id);
        assert!(!own.exported);
    }

    #[test]
    fn log_formats_are_named() {
        assert_eq!("json".parse::<LogFormat>(), Ok(LogFormat::Json));
        assert_eq!(LogFormat::Text.to_string(), "text");
        assert!("xml".parse::<LogFormat>().is_err());
    }
}
