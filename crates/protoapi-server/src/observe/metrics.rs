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
//! (the access layer), [`LOG_LINES_DROPPED`],
//! [`LIST_BUDGET_TRUNCATIONS`](protoapi_core::standard::LIST_BUDGET_TRUNCATIONS)
//! and [`BUILD_INFO`], each after the registry's prefix
//! ([`Metrics::with_prefix`]); counters are there from the start, at zero.
//! The process's own series (`process_cpu_seconds_total`,
//! `process_resident_memory_bytes`, open descriptors, threads, start time)
//! are read at each render and keep the names every Prometheus client
//! gives them, without the prefix.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use axum::Router;
use axum::response::IntoResponse;
use metrics::Recorder;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use metrics_util::layers::{Layer as _, PrefixLayer};

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
/// 1, labelled with the running build's `version` ([`Metrics::build_info`]).
pub const BUILD_INFO: &str = "build_info";

/// The recorder of a [`Metrics`] registry. Install it
/// (`metrics::set_global_recorder`, or `metrics::set_default_local_recorder`
/// in a test); metrics recorded elsewhere are not in the registry.
pub type MetricsRecorder = Arc<dyn Recorder + Send + Sync>;

/// The server a registry describes: its name, the default prefix of its
/// series, and its version, which [`BUILD_INFO`] says.
#[derive(Clone, Copy, Debug)]
pub struct Build {
    /// The server's name (`widgets`); `-` reads as `_` in a prefix.
    pub name: &'static str,
    /// Its version, `env!("CARGO_PKG_VERSION")` say.
    pub version: &'static str,
}

impl Build {
    /// The prefix of the server's series when none is chosen: its name.
    pub fn default_prefix(&self) -> String {
        self.name.replace('-', "_")
    }
}

/// Whether `prefix` may start a Prometheus metric name (empty: no prefix).
pub fn valid_prefix(prefix: &str) -> bool {
    let mut chars = prefix.chars();
    chars
        .next()
        .is_none_or(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

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
    recorder: MetricsRecorder,
    samplers: Arc<Mutex<Vec<Sampler>>>,
    _upkeep: Arc<()>,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// A new recorder and the registry it records into, without a prefix.
    pub fn new() -> (MetricsRecorder, Metrics) {
        Metrics::with_prefix("")
    }

    /// A new recorder and the registry it records into: every series
    /// recorded through the recorder is named `{prefix}_{name}` (just
    /// `{name}` for an empty prefix; see [`valid_prefix`]), except the
    /// process's, read at each render (see the [module docs](self)).
    pub fn with_prefix(prefix: &str) -> (MetricsRecorder, Metrics) {
        let registry = Arc::new(
            PrometheusBuilder::new()
                .set_buckets_for_metric(
                    metrics_exporter_prometheus::Matcher::Suffix(DURATION.to_owned()),
                    BUCKETS,
                )
                .expect("the buckets are not empty")
                .build_recorder(),
        );
        let handle = registry.handle();
        let recorder: MetricsRecorder = if prefix.is_empty() {
            registry.clone()
        } else {
            Arc::new(PrefixLayer::new(prefix).layer(Arc::clone(&registry)))
        };
        metrics::with_local_recorder(&recorder, describe);
        let upkeep = Arc::new(());
        let folded = handle.clone();
        every(UPKEEP, Arc::downgrade(&upkeep), move || folded.run_upkeep());
        let metrics = Metrics {
            handle,
            recorder: recorder.clone(),
            samplers: Arc::default(),
            _upkeep: upkeep,
        };
        let process = metrics_process::Collector::default();
        metrics::with_local_recorder(&registry, || process.describe());
        metrics.sample_with(move || metrics::with_local_recorder(&registry, || process.collect()));
        (recorder, metrics)
    }

    /// The process's registry, its series named after `prefix` (see
    /// [`Metrics::with_prefix`]): a new one installed as the global
    /// `metrics` recorder the first time, the same one afterwards (whatever
    /// their prefix). Fails when another recorder was installed.
    pub fn install(prefix: &str) -> Result<Metrics, String> {
        static INSTALLED: OnceLock<Result<Metrics, String>> = OnceLock::new();
        INSTALLED
            .get_or_init(|| {
                let (recorder, metrics) = Metrics::with_prefix(prefix);
                metrics::set_global_recorder(recorder)
                    .map(|()| metrics)
                    .map_err(|_| "another metrics recorder is installed".to_owned())
            })
            .clone()
    }

    /// Sets [`BUILD_INFO`] to 1 with the label `version`.
    pub fn build_info(&self, version: &str) {
        metrics::with_local_recorder(&self.recorder, || {
            metrics::gauge!(BUILD_INFO, "version" => version.to_owned()).set(1.0);
        });
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

/// Help texts of the runtime's metrics, and its counters at zero.
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
    metrics::describe_gauge!(BUILD_INFO, "The running build, by version (always 1)");
    metrics::gauge!(IN_FLIGHT).set(0.0);
    metrics::counter!(LOG_LINES_DROPPED).absolute(0);
    metrics::counter!(protoapi_core::standard::LIST_BUDGET_TRUNCATIONS).absolute(0);
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

    /// The names of the series in `text` and whether each has a help text.
    fn described(text: &str) -> Vec<(&str, bool)> {
        let helped: Vec<&str> = text
            .lines()
            .filter_map(|line| line.strip_prefix("# HELP "))
            .filter_map(|line| line.split(' ').next())
            .collect();
        text.lines()
            .filter_map(|line| line.strip_prefix("# TYPE "))
            .filter_map(|line| line.split(' ').next())
            .map(|name| (name, helped.contains(&name)))
            .collect()
    }

    #[test]
    fn series_are_prefixed_described_and_counted_from_zero_but_the_process_keeps_its_names() {
        let (recorder, metrics) = Metrics::with_prefix("shop");
        let _current = metrics::set_default_local_recorder(&recorder);
        metrics::counter!(REQUESTS, "route" => "/v1/things").increment(2);
        metrics.build_info("1.2.3");
        let text = metrics.render();
        assert!(
            text.contains("shop_http_requests_total{route=\"/v1/things\"} 2"),
            "{text}"
        );
        assert!(text.contains("shop_log_lines_dropped_total 0"), "{text}");
        assert!(
            text.contains("shop_list_budget_truncations_total 0"),
            "{text}"
        );
        assert!(text.contains("shop_http_requests_in_flight 0"), "{text}");
        assert!(
            text.contains("shop_build_info{version=\"1.2.3\"} 1"),
            "{text}"
        );
        assert!(text.contains("\nprocess_resident_memory_bytes "), "{text}");
        assert!(text.contains("\nprocess_cpu_seconds_total "), "{text}");
        let series = described(&text);
        assert!(series.len() >= 8, "{text}");
        for (name, helped) in series {
            assert!(helped, "{name} has no help text: {text}");
            assert!(
                name.starts_with("shop_") || name.starts_with("process_"),
                "{name}"
            );
        }
    }

    #[test]
    fn prefixes_are_metric_names() {
        for good in ["", "widgets", "_x", "a_1"] {
            assert!(valid_prefix(good), "{good}");
        }
        for bad in ["1a", "a-b", "a.b", "é"] {
            assert!(!valid_prefix(bad), "{bad}");
        }
        let build = Build {
            name: "widgets-server",
            version: "0",
        };
        assert_eq!(build.default_prefix(), "widgets_server");
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
