//! Logs, metrics and traces: the flags, and what they set up
//! ([`crate::observe`]).

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::OnceLock;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::EnvFilter;

use crate::observe::batch::{BatchGuard, BatchWriter};
use crate::observe::trace::LogFormat;
use crate::observe::{Build, Metrics};
use crate::serve::{Limits, Server};

/// Connections the `--metrics-listen` listener holds at once; more wait in
/// its backlog.
pub const METRICS_CONNECTIONS: usize = 16;

/// Bytes of log lines waiting for the writer thread; when stderr falls
/// this far behind, new lines are dropped (and counted) rather than holding
/// up requests. At about 250 bytes an access line, some 16,000 lines.
pub const LOG_BUFFER_BYTES: usize = 4 << 20;

/// The count of log lines dropped, once the logs are installed; read into
/// [`LOG_LINES_DROPPED`](crate::observe::metrics::LOG_LINES_DROPPED) when
/// metrics are rendered.
static DROPPED_LINES: OnceLock<BatchWriter> = OnceLock::new();

/// The installed logs: the tracer provider and the writer thread, both
/// flushed when [`Logs::finish`] is called.
pub struct Logs {
    provider: SdkTracerProvider,
    writer: BatchGuard,
}

impl Logs {
    /// Sends the spans still buffered, reports the lines dropped, and
    /// writes the lines still waiting.
    pub fn finish(self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!(%error, "traces not all exported");
        }
        let dropped = DROPPED_LINES.get().map_or(0, BatchWriter::dropped);
        if dropped > 0 {
            tracing::warn!(dropped, "log lines dropped: stderr fell behind");
        }
        drop(self.writer);
    }
}

/// Logs, metrics and traces.
#[derive(Debug, Clone, clap::Args)]
pub struct Telemetry {
    /// How log lines are written to stderr: `text` (coloured only on a
    /// terminal) or `json` (one object per line). Each request is one line
    /// on target `access`.
    #[arg(long, value_name = "FORMAT", default_value = "text", global = true)]
    pub log_format: LogFormat,
    /// Serve Prometheus metrics at `/metrics` on the API port, to anyone
    /// who can reach it (no token needed). Prefer `--metrics-listen` on a
    /// private address.
    #[arg(long)]
    pub metrics: bool,
    /// Serve Prometheus metrics at `/metrics` on this address (e.g.
    /// `127.0.0.1:9464`) instead of the API port.
    #[arg(long, value_name = "ADDRESS")]
    pub metrics_listen: Option<SocketAddr>,
    /// The prefix of the server's metric names (`PREFIX_http_requests_total`;
    /// default: the server's name, `''` for none). The process's series
    /// (`process_*`) keep their usual names.
    #[arg(long, value_name = "PREFIX", value_parser = metrics_prefix)]
    pub metrics_prefix: Option<String>,
    /// Append a JSON line for every write the API answers to this file
    /// (created readable by its owner only): the caller, the method, the
    /// resource and the mask, and for roles and role bindings the item
    /// before and after. Off by default.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<std::path::PathBuf>,
    /// Export traces over OTLP/gRPC to this collector (e.g.
    /// `http://127.0.0.1:4317`); needs a build with the `otlp` feature.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

impl Telemetry {
    /// Installs the log subscriber (with the OpenTelemetry layer, which
    /// exports the spans of tracer `service` when `--otlp-endpoint` is
    /// given). Lines are written to stderr in batches by a thread of their
    /// own, off the requests' path, through a buffer of [`LOG_BUFFER_BYTES`]
    /// ([`crate::observe::batch`]). Keep
    /// the [`Logs`] and [`Logs::finish`] them at exit.
    pub fn init_logs(&self, service: &'static str) -> Result<Logs, String> {
        let provider = self.tracer_provider()?;
        let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
        let (writer, guard) = BatchWriter::new(std::io::stderr(), LOG_BUFFER_BYTES);
        DROPPED_LINES.get_or_init(|| writer.clone());
        let ansi = std::io::stderr().is_terminal();
        if self.log_format == LogFormat::Text && !ansi {
            crate::observe::access_line::install(writer.clone());
        }
        let subscriber = crate::observe::trace::subscriber(
            self.log_format,
            ansi,
            writer,
            filter,
            // Spans are made for OpenTelemetry only when they are exported.
            self.otlp_endpoint
                .as_ref()
                .map(|_| provider.tracer(service)),
        );
        tracing::subscriber::set_global_default(subscriber).map_err(|e| e.to_string())?;
        Ok(Logs {
            provider,
            writer: guard,
        })
    }

    /// Runs a server's `work` with the logs installed (see
    /// [`Telemetry::init_logs`]), then sends the traces still buffered: the
    /// exit code of its `main`, a failure logged.
    pub async fn run<E: std::fmt::Display>(
        &self,
        service: &'static str,
        work: impl std::future::Future<Output = Result<(), E>>,
    ) -> ExitCode {
        let logs = match self.init_logs(service) {
            Ok(logs) => logs,
            Err(error) => {
                eprintln!("error: {error}");
                return ExitCode::FAILURE;
            }
        };
        let result = work.await;
        if let Err(error) = &result {
            tracing::error!("{error}");
        }
        logs.finish();
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        }
    }

    #[cfg(feature = "otlp")]
    fn tracer_provider(&self) -> Result<SdkTracerProvider, String> {
        use opentelemetry_otlp::WithExportConfig as _;
        let mut provider = SdkTracerProvider::builder();
        if let Some(endpoint) = &self.otlp_endpoint {
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(endpoint)
                .build()
                .map_err(|e| format!("cannot export traces to {endpoint}: {e}"))?;
            provider = provider.with_batch_exporter(exporter);
        }
        Ok(provider.build())
    }

    #[cfg(not(feature = "otlp"))]
    fn tracer_provider(&self) -> Result<SdkTracerProvider, String> {
        match &self.otlp_endpoint {
            Some(_) => {
                Err("--otlp-endpoint needs a server built with the `otlp` feature".to_owned())
            }
            None => Ok(SdkTracerProvider::builder().build()),
        }
    }

    /// The process's metrics registry of server `build`, when metrics are
    /// served anywhere; with `--metrics-listen`, served there from now on.
    pub async fn metrics(&self, build: Build) -> Result<Option<Metrics>, String> {
        if !self.metrics && self.metrics_listen.is_none() {
            return Ok(None);
        }
        let prefix = (self.metrics_prefix.clone()).unwrap_or_else(|| build.default_prefix());
        let metrics = Metrics::install(&prefix)?;
        metrics.build_info(build.version);
        metrics.sample_with(|| {
            if let Some(dropped) = DROPPED_LINES.get() {
                metrics::counter!(crate::observe::metrics::LOG_LINES_DROPPED)
                    .absolute(dropped.dropped());
            }
        });
        if let Some(address) = self.metrics_listen {
            let listener = tokio::net::TcpListener::bind(address)
                .await
                .map_err(|e| format!("cannot listen on {address} for metrics: {e}"))?;
            tracing::info!(%address, "serving metrics");
            serve_metrics(listener, metrics.router());
        }
        Ok(Some(metrics))
    }

    /// The audit log of `--audit-log`, opened for appending.
    pub fn audit_log(&self) -> Result<Option<protoapi_core::audit::AuditLog>, String> {
        (self.audit_log.as_deref())
            .map(|path| {
                protoapi_core::audit::AuditLog::append_to(path)
                    .map_err(|e| format!("cannot open the audit log {}: {e}", path.display()))
            })
            .transpose()
    }

    /// Whether `/metrics` is served on the API port.
    pub fn metrics_on_api_port(&self) -> bool {
        self.metrics && self.metrics_listen.is_none()
    }
}

/// A `--metrics-prefix`: empty, or the start of a metric name.
fn metrics_prefix(prefix: &str) -> Result<String, String> {
    if crate::observe::metrics::valid_prefix(prefix) {
        Ok(prefix.to_owned())
    } else {
        Err("a letter or `_`, then letters, digits or `_`".to_owned())
    }
}

/// Serves the metrics `router` on `listener` from now on, with the API
/// port's timeouts and at most [`METRICS_CONNECTIONS`] connections
/// (scrapers are few): idle clients there cannot hold the descriptors the
/// API port needs.
pub fn serve_metrics(listener: tokio::net::TcpListener, router: axum::Router) {
    let server = Server::new(listener, router).limits(Limits {
        max_connections: METRICS_CONNECTIONS,
        ..Limits::default()
    });
    tokio::spawn(server.serve(std::future::pending()));
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};
    use tokio::time::timeout;

    use super::*;

    #[derive(Debug, clap::Parser)]
    struct Args {
        #[command(flatten)]
        telemetry: Telemetry,
    }

    #[test]
    fn quiet_by_default() {
        use clap::Parser as _;
        let args = Args::parse_from(["server"]);
        assert_eq!(args.telemetry.log_format, LogFormat::Text);
        assert!(!args.telemetry.metrics_on_api_port());
        let args = Args::parse_from(["server", "--metrics", "--log-format", "json"]);
        assert!(args.telemetry.metrics_on_api_port());
        assert_eq!(args.telemetry.log_format, LogFormat::Json);
        assert!(Args::try_parse_from(["server", "--log-format", "xml"]).is_err());
        let elsewhere =
            Args::parse_from(["server", "--metrics", "--metrics-listen", "127.0.0.1:9464"]);
        assert!(!elsewhere.telemetry.metrics_on_api_port());
    }

    #[tokio::test]
    async fn idle_clients_of_the_metrics_listener_hold_only_its_own_few_connections() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let router =
            axum::Router::new().route("/metrics", axum::routing::get(|| async { "up 1\n" }));
        serve_metrics(listener, router);
        let mut idle = Vec::new();
        for _ in 0..METRICS_CONNECTIONS {
            idle.push(TcpStream::connect(address).await.unwrap());
        }
        let mut late = TcpStream::connect(address).await.unwrap();
        late.write_all(b"GET /metrics HTTP/1.1\r\nhost: m\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        let waiting = timeout(Duration::from_millis(500), late.read_to_end(&mut answer)).await;
        assert!(waiting.is_err(), "answered past the cap: {answer:?}");
        drop(idle.pop());
        timeout(Duration::from_secs(10), late.read_to_end(&mut answer))
            .await
            .expect("served once a connection closes")
            .unwrap();
        assert!(
            answer.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&answer)
        );
    }
}
