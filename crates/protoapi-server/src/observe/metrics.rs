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
//! The exporter keeps each histogram sample until its next upkeep folds the
//! samples into the buckets. Renders run one, but a server nobody scrapes
//! would keep every request's sample: a thread of the registry's own runs
//! one every [`UPKEEP`] while a [`Metrics`] of the registry lives.
//!
//! Names recorded by the runtime: [`REQUESTS`], [`DURATION`], [`IN_FLIGHT`]
//! (the access layer), [`LOG_LINES_DROPPED`] and
//! [`LIST_BUDGET_TRUNCATIONS`](protoapi_core::standard::LIST_BUDGET_TRUNCATIONS).

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

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

/// How often histogram samples are folded into their buckets between
/// renders (the exporter's own default).
pub const UPKEEP: Duration = Duration::from_secs(5);

type Sampler = Box<dyn Fn() + Send + Sync>;

/// A Prometheus registry and what to sample before rendering it. Clones
/// share both, and keep the registry's upkeep running (see the [module
/// docs](self)).
#[derive(Clone)]
pub struct Metrics {
    handle: PrometheusHandle,
    samplers: Arc<Mutex<Vec<Sampler>>>,
    _upkeep: Arc<()>,
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
        let upkeep = Arc::new(());
        let folded = handle.clone();
        every(UPKEEP, Arc::downgrade(&upkeep), move || folded.run_upkeep());
        let metrics = Metrics {
            handle,
            samplers: Arc::default(),
            _upkeep: upkeep,
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

/// Runs `work` every `interval` on a thread of its own, until `owner`'s
/// last strong reference is gone.
fn every(interval: Duration, owner: Weak<()>, work: impl Fn() + Send + 'static) {
    std::thread::Builder::new()
        .name("metrics-upkeep".to_owned())
        .spawn(move || {
            loop {
                std::thread::sleep(interval);
                if owner.strong_count() == 0 {
                    return;
                }
                work();
            }
        })
        .expect("the metrics upkeep thread starts");
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

    #[test]
    fn upkeep_runs_while_its_owner_lives_and_stops_after() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let runs = Arc::new(AtomicUsize::new(0));
        let owner = Arc::new(());
        let counted = Arc::clone(&runs);
        every(
            Duration::from_millis(5),
            Arc::downgrade(&owner),
            move || {
                counted.fetch_add(1, Ordering::SeqCst);
            },
        );
        let started = std::time::Instant::now();
        while runs.load(Ordering::SeqCst) < 3 {
            assert!(started.elapsed() < Duration::from_secs(10), "no upkeep ran");
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(owner);
        // A run under way when the owner went may still finish.
        std::thread::sleep(Duration::from_millis(50));
        let after = runs.load(Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(runs.load(Ordering::SeqCst), after);
    }
}
