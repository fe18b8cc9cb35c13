//! Prometheus metrics: a recorder the application owns, rendered on request.
//!
//! [`Metrics::install`] makes a Prometheus recorder the process's `metrics`
//! recorder (once; later calls answer the same registry), and
//! [`Metrics::router`] serves its text exposition at `GET /metrics`: the
//! application decides where (the API's port, a port of its own) and
//! whether behind its authentication. No listener of the exporter's own is
//! started. [`Metrics::sample_with`] adds a sampler run before each render,
//! for values read rather than counted (a connection pool's size).
//!
//! Names recorded by the runtime: [`REQUESTS`], [`DURATION`], [`IN_FLIGHT`]
//! (the access layer), [`LOG_LINES_DROPPED`] and
//! [`LIST_BUDGET_TRUNCATIONS`](protoapi_core::standard::LIST_BUDGET_TRUNCATIONS).

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use axum::Router;
use axum::response::IntoResponse;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle, PrometheusRecorder};

/// Requests answered, by `route`, `method`, `status` and `code`.
pub const REQUESTS: &str = "http_requests_total";
/// Seconds from a request's head to the end of its response body, by the
/// same labels.
pub const DURATION: &str = "http_request_duration_seconds";
/// Requests being answered now.
pub const IN_FLIGHT: &str = "http_requests_in_flight";
/// Log lines dropped because the log's reader fell behind (set by the
/// server flags' logs, `flags::Telemetry`).
pub const LOG_LINES_DROPPED: &str = "log_lines_dropped_total";

/// Histogram buckets of [`DURATION`], in seconds.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

type Sampler = Box<dyn Fn() + Send + Sync>;

/// A Prometheus registry and what to sample before rendering it. Clones
/// share both.
#[derive(Clone)]
pub struct Metrics {
    handle: PrometheusHandle,
    samplers: Arc<Mutex<Vec<Sampler>>>,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// A new recorder and the registry it records into. Install the
    /// recorder (`metrics::set_global_recorder`, or
    /// `metrics::set_default_local_recorder` in a test); metrics recorded
    /// elsewhere are not in this registry.
    pub fn new() -> (PrometheusRecorder, Metrics) {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                metrics_exporter_prometheus::Matcher::Full(DURATION.to_owned()),
                BUCKETS,
            )
            .expect("the buckets are not empty")
            .build_recorder();
        metrics::with_local_recorder(&recorder, describe);
        let handle = recorder.handle();
        let metrics = Metrics {
            handle,
            samplers: Arc::default(),
        };
        (recorder, metrics)
    }

    /// The process's registry: a new one installed as the global `metrics`
    /// recorder the first time, the same one afterwards. Fails when another
    /// recorder was installed.
    pub fn install() -> Result<Metrics, String> {
        static INSTALLED: OnceLock<Result<Metrics, String>> = OnceLock::new();
        INSTALLED
            .get_or_init(|| {
                let (recorder, metrics) = Metrics::new();
                metrics::set_global_recorder(recorder)
                    .map(|()| metrics)
                    .map_err(|_| "another metrics recorder is installed".to_owned())
            })
            .clone()
    }

    /// Runs `sample` before each render, e.g. to set gauges of values read
    /// at scrape time. It runs with the recorder current where the render
    /// runs (the global one, after [`Metrics::install`]).
    pub fn sample_with(&self, sample: impl Fn() + Send + Sync + 'static) {
        self.samplers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(Box::new(sample));
    }

    /// The Prometheus text exposition of every metric recorded so far.
    pub fn render(&self) -> String {
        for sample in self
            .samplers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
        {
            sample();
        }
        self.handle.run_upkeep();
        self.handle.render()
    }

    /// `GET /metrics`, answering [`Metrics::render`].
    pub fn router(&self) -> Router {
        let metrics = self.clone();
        Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let metrics = metrics.clone();
                async move {
                    (
                        [(
                            http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8",
                        )],
                        metrics.render(),
                    )
                        .into_response()
                }
            }),
        )
    }
}

/// Help texts of the runtime's metrics.
fn describe() {
    metrics::describe_counter!(
        REQUESTS,
        "Requests answered, by route template, method and code"
    );
    metrics::describe_histogram!(
        DURATION,
        metrics::Unit::Seconds,
        "Time from a request's head to the end of its response"
    );
    metrics::describe_gauge!(IN_FLIGHT, "Requests being answered");
    metrics::describe_counter!(
        LOG_LINES_DROPPED,
        "Log lines dropped because the log's reader fell behind"
    );
    metrics::describe_counter!(
        protoapi_core::standard::LIST_BUDGET_TRUNCATIONS,
        "List pages ended early because their items exceeded the byte budget"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samplers_run_before_each_render() {
        let (recorder, metrics) = Metrics::new();
        let _current = metrics::set_default_local_recorder(&recorder);
        metrics.sample_with(|| metrics::gauge!("pool_size").set(3.0));
        metrics::counter!(REQUESTS, "route" => "/v1/things").increment(2);
        let text = metrics.render();
        assert!(text.contains("pool_size 3"), "{text}");
        assert!(
            text.contains("http_requests_total{route=\"/v1/things\"} 2"),
            "{text}"
        );
    }
}
