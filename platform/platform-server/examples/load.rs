//! Load and memory-bound measurements against a running `platform-server`.
//!
//! ```text
//! cargo run --release -p platform-server --example load -- \
//!     --url http://127.0.0.1:8080 --token-file data/admin.token \
//!     --connections 64 --duration 60s --server-pid <PID>
//! ```
//!
//! Two workloads (`--mode`):
//!
//! - `mixed` (default): in a root organization of its own with 200 seed
//!   groups, each connection repeatedly picks 70% GET of a seed group, 15%
//!   one page of `uidp.children_of=<root>` (following its own page tokens, so
//!   deep pages are read too), 10% create of a child group, 5% PATCH of a
//!   seed group's description. Reports requests/s, errors by kind, latency
//!   percentiles overall and per operation, and the server's resident set
//!   size 10 s into the run and at its end. Targets: no errors, RSS growth
//!   between the two samples under `--max-rss-growth` percent.
//! - `oversized-lists`: a group holding 100 public repos with 64 KiB readmes
//!   and 100 child groups with 1,024-character descriptions; each connection
//!   walks every page of `pageSize=200` lists in turn: the repos with the
//!   token, the repos anonymously (public repos are readable without one),
//!   the groups with the token. Samples the server's RSS every 50 ms and
//!   fails when its peak exceeds `--max-rss-mib`, when a response is larger
//!   than `--max-page-mib`, or when a walk misses items.
//! - `long-uids`: requests carrying maximal-size uids (well-formed UIDPs,
//!   far deeper than the 16 levels a uid may have) in every uid-bearing
//!   field, each with the token and anonymously. REST: the path uids of
//!   Get, Patch and Delete, the create parent, the hierarchy filters
//!   (`uidp.descendants_of`, `children_of`, `ancestors_of`, 100 `uidp.ids`),
//!   v1's `?id=`, each as long as the longest request target the server
//!   reads (found first by bisection; beyond it hyper answers 414), and a
//!   role binding whose `identity` and `role` fill a body just under 1 MiB.
//!   gRPC: `GetGroup`, `ListGroups` filters and `CreateRoleBinding` with
//!   messages just under the 1 MiB limit. Every answer must be
//!   INVALID_ARGUMENT (413/414/431 from the HTTP layer are counted apart);
//!   samples the server's RSS every 50 ms and fails when its peak exceeds
//!   `--max-rss-mib`. Each connection is one HTTP/1.1 connection and one
//!   HTTP/2 (gRPC) channel.
//!
//! Every REST connection is one HTTP/1.1 keep-alive connection, reopened
//! only after a transport error. In `mixed` and `oversized-lists` an error
//! is any non-2xx answer (counted by status and reason) or any transport
//! failure (counted by kind); in `long-uids` it is any answer but
//! INVALID_ARGUMENT or the HTTP layer's 413/414/431. The exit
//! status is 0 when the targets are met, 1 when one is missed, 2 when the
//! run could not be set up.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use clap::{Parser, ValueEnum};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpStream;

/// Drives a running platform-server and reports throughput, errors,
/// latency and the server's memory.
#[derive(Debug, Parser)]
struct Args {
    /// Base URL of the server (`http://HOST:PORT`).
    #[arg(long)]
    url: String,
    /// File holding the platform administrator's token (`DATA_DIR/admin.token`).
    #[arg(long)]
    token_file: PathBuf,
    /// The workload.
    #[arg(long, value_enum, default_value_t = Mode::Mixed)]
    mode: Mode,
    /// Concurrent keep-alive connections, one request in flight on each.
    #[arg(long, default_value_t = 64)]
    connections: usize,
    /// How long to drive the load (e.g. `60s`, `2m`).
    #[arg(long, default_value = "60s", value_parser = protoapi_runtime::time::parse_duration)]
    duration: Duration,
    /// The server's process id, for its resident set size (/proc/PID/status).
    #[arg(long)]
    server_pid: Option<u32>,
    /// `mixed`: when to take the first RSS sample; the second is taken at the end.
    #[arg(long, default_value = "10s", value_parser = protoapi_runtime::time::parse_duration)]
    rss_at: Duration,
    /// `mixed`: largest acceptable RSS growth between the two samples, in percent.
    #[arg(long, default_value_t = 10.0)]
    max_rss_growth: f64,
    /// `mixed`: seed groups read and patched.
    #[arg(long, default_value_t = 200)]
    seed_groups: usize,
    /// `oversized-lists`, `long-uids`: fail when the server's peak RSS
    /// exceeds this many MiB [default: 400 for `oversized-lists`, 64 for
    /// `long-uids`].
    #[arg(long)]
    max_rss_mib: Option<f64>,
    /// `oversized-lists`: public repos with 64 KiB readmes.
    #[arg(long, default_value_t = 100)]
    repos: usize,
    /// `oversized-lists`: groups with 1,024-character descriptions.
    #[arg(long, default_value_t = 100)]
    groups: usize,
    /// `oversized-lists`: fail when a list response is larger than this many
    /// MiB (the server's list byte budget is 4 MiB).
    #[arg(long, default_value_t = 4.0)]
    max_page_mib: f64,
    /// `oversized-lists`: what the 64 KiB readmes are made of. `text` is plain
    /// ASCII; `control` is control characters, each of which JSON spells as
    /// six bytes (`\u0001`).
    #[arg(long, value_enum, default_value_t = Fill::Text)]
    readme_fill: Fill,
    /// Give up on one request after this long (counted as a `timeout` error).
    #[arg(long, default_value = "30s", value_parser = protoapi_runtime::time::parse_duration)]
    request_timeout: Duration,
}

impl Args {
    /// `--max-rss-mib`, or the bound of the chosen workload.
    fn max_rss_mib(&self) -> f64 {
        let default = match self.mode {
            Mode::LongUids => 64.0,
            Mode::Mixed | Mode::OversizedLists => 400.0,
        };
        self.max_rss_mib.unwrap_or(default)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    Mixed,
    OversizedLists,
    LongUids,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Fill {
    Text,
    Control,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(args).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("load: {error}");
            ExitCode::from(2)
        }
    }
}

/// Runs the chosen workload; `Ok(false)` when a target is missed.
async fn run(args: Args) -> Result<bool, String> {
    let authority = args
        .url
        .strip_prefix("http://")
        .ok_or("--url must start with http://")?
        .trim_end_matches('/')
        .to_owned();
    let token = std::fs::read_to_string(&args.token_file)
        .map_err(|e| format!("cannot read {}: {e}", args.token_file.display()))?
        .trim()
        .to_owned();
    let target = Target {
        authority,
        token,
        timeout: args.request_timeout,
    };
    if let Some(pid) = args.server_pid {
        rss(pid).ok_or(format!("cannot read /proc/{pid}/status"))?;
    }
    match args.mode {
        Mode::Mixed => mixed(&args, target).await,
        Mode::OversizedLists => oversized_lists(&args, target).await,
        Mode::LongUids => long_uids::run(&args, target).await,
    }
}

/// Where requests go and with which token.
#[derive(Clone, Debug)]
struct Target {
    /// `host:port`.
    authority: String,
    token: String,
    timeout: Duration,
}

/// Whether a request carries the administrator's token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Auth {
    Admin,
    Anonymous,
}

/// One HTTP/1.1 keep-alive connection, reopened after a transport error.
struct Connection {
    target: Arc<Target>,
    sender: Option<SendRequest<Full<Bytes>>>,
    opened: u64,
}

/// How a request failed.
#[derive(Debug)]
enum Failure {
    /// A transport failure, by kind.
    Transport(String),
    /// A non-2xx answer.
    Status(StatusCode, Bytes),
}

impl Failure {
    /// The kind it is counted under: `transport: <kind>`, or
    /// `<status> <STATUS> <REASON>` from the error model's body.
    fn kind(&self) -> String {
        match self {
            Failure::Transport(kind) => format!("transport: {kind}"),
            Failure::Status(status, body) => {
                let error = serde_json::from_slice::<Value>(body)
                    .map(|body| body["error"].clone())
                    .unwrap_or(Value::Null);
                let reason = error["details"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find_map(|detail| detail["reason"].as_str())
                    .unwrap_or("-");
                format!(
                    "{} {} {reason}",
                    status.as_u16(),
                    error["status"].as_str().unwrap_or("(no error body)")
                )
            }
        }
    }

    /// A short description for the first occurrence of a kind.
    fn example(&self) -> String {
        match self {
            Failure::Transport(kind) => kind.clone(),
            Failure::Status(_, body) => {
                let text = String::from_utf8_lossy(body);
                text.chars().take(300).collect()
            }
        }
    }
}

fn transport(error: impl std::fmt::Display) -> Failure {
    Failure::Transport(error.to_string())
}

/// Classifies a hyper error into a stable kind.
fn hyper_failure(error: &hyper::Error) -> Failure {
    let kind = if error.is_closed() {
        "connection closed"
    } else if error.is_incomplete_message() {
        "incomplete message"
    } else if error.is_canceled() {
        "canceled"
    } else if error.is_parse() {
        "parse"
    } else if error.is_timeout() {
        "timeout"
    } else {
        "other"
    };
    Failure::Transport(format!("{kind} ({error})"))
}

impl Connection {
    fn new(target: Arc<Target>) -> Self {
        Connection {
            target,
            sender: None,
            opened: 0,
        }
    }

    async fn open(&mut self) -> Result<(), Failure> {
        let stream = TcpStream::connect(&self.target.authority)
            .await
            .map_err(|e| Failure::Transport(format!("connect ({})", e.kind())))?;
        stream.set_nodelay(true).map_err(transport)?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| hyper_failure(&e))?;
        tokio::spawn(connection);
        self.sender = Some(sender);
        self.opened += 1;
        Ok(())
    }

    /// Sends one request and reads the whole answer: the body of a 2xx, or
    /// the failure. A transport failure drops the connection.
    async fn send(
        &mut self,
        method: Method,
        path: &str,
        auth: Auth,
        body: Option<&Value>,
    ) -> Result<Bytes, Failure> {
        let body = body.map(|body| Bytes::from(body.to_string()));
        self.send_json(method, path, auth, body).await
    }

    /// [`send`](Self::send) with the JSON body already serialized.
    async fn send_json(
        &mut self,
        method: Method,
        path: &str,
        auth: Auth,
        body: Option<Bytes>,
    ) -> Result<Bytes, Failure> {
        let timeout = self.target.timeout;
        match tokio::time::timeout(timeout, self.exchange(method, path, auth, body)).await {
            Ok(Err(failure @ Failure::Transport(_))) => {
                self.sender = None;
                Err(failure)
            }
            Ok(result) => result,
            Err(_) => {
                self.sender = None;
                Err(Failure::Transport("timeout".into()))
            }
        }
    }

    async fn exchange(
        &mut self,
        method: Method,
        path: &str,
        auth: Auth,
        body: Option<Bytes>,
    ) -> Result<Bytes, Failure> {
        if self.sender.as_ref().is_none_or(SendRequest::is_closed) {
            self.open().await?;
        }
        let sender = self.sender.as_mut().expect("opened above");
        sender.ready().await.map_err(|e| hyper_failure(&e))?;
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(hyper::header::HOST, &self.target.authority);
        if auth == Auth::Admin {
            request = request.header(
                hyper::header::AUTHORIZATION,
                format!("Bearer {}", self.target.token),
            );
        }
        let body = match body {
            Some(body) => {
                request = request.header(hyper::header::CONTENT_TYPE, "application/json");
                body
            }
            None => Bytes::new(),
        };
        let request = request.body(Full::new(body)).map_err(transport)?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| hyper_failure(&e))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| hyper_failure(&e))?
            .to_bytes();
        if status.is_success() {
            Ok(body)
        } else {
            Err(Failure::Status(status, body))
        }
    }
}

/// Sends a setup request; any failure stops the run.
async fn setup(
    connection: &mut Connection,
    method: Method,
    path: &str,
    body: Value,
) -> Result<Value, String> {
    let answer = connection
        .send(method.clone(), path, Auth::Admin, Some(&body))
        .await
        .map_err(|failure| format!("setup {method} {path}: {}", failure.example()))?;
    serde_json::from_slice(&answer).map_err(|e| format!("setup {method} {path}: {e}"))
}

fn uid_of(value: &Value) -> Result<String, String> {
    value["uid"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("an answer without a uid: {value}"))
}

/// Percent-encodes a query parameter value.
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

fn run_label() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    format!("{seconds}-{}", std::process::id())
}

/// The resident set size (`VmRSS`) of a process, in KiB.
fn rss(pid: u32) -> Option<u64> {
    proc_status_kib(pid, "VmRSS:")
}

/// Starts a load on the server `pid`: its resident set size before (printed
/// with the load's connections and duration), the counters the workers
/// share, the start time, and the server's CPU clock.
fn start_load(pid: u32, args: &Args) -> Result<(u64, Arc<Counters>, Instant, CpuClock), String> {
    let before = rss(pid).ok_or("the server exited")?;
    println!(
        "load          {} connections for {:.0} s; server RSS before {:.1} MiB",
        args.connections,
        args.duration.as_secs_f64(),
        mib(before)
    );
    let counters = Arc::new(Counters::default());
    Ok((before, counters, Instant::now(), CpuClock::start(Some(pid))))
}

/// A `kB` line of /proc/PID/status.
fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
}

/// CPU time (user + system) a process has used, in seconds; `self` for this one.
fn cpu_seconds(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name: state is the 3rd field, utime the 14th.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    // Clock ticks are 1/100 s on Linux (USER_HZ).
    Some((user + system) as f64 / 100.0)
}

/// CPU time of the server and of the load generator since the run started.
struct CpuClock {
    server: Option<(String, f64)>,
    generator: Option<f64>,
}

impl CpuClock {
    fn start(pid: Option<u32>) -> Self {
        CpuClock {
            server: pid.and_then(|pid| {
                let pid = pid.to_string();
                cpu_seconds(&pid).map(|seconds| (pid, seconds))
            }),
            generator: cpu_seconds("self"),
        }
    }

    /// Prints the cores each process kept busy on average.
    fn print(&self, elapsed: Duration) {
        let cores = |used: Option<f64>| {
            used.map_or("-".to_owned(), |used| {
                format!("{:.2}", used / elapsed.as_secs_f64())
            })
        };
        let server = self
            .server
            .as_ref()
            .and_then(|(pid, start)| cpu_seconds(pid).map(|now| now - start));
        let generator = self
            .generator
            .and_then(|start| cpu_seconds("self").map(|now| now - start));
        println!(
            "cpu           server {} cores, load generator {} cores (of {} on this machine)",
            cores(server),
            cores(generator),
            std::thread::available_parallelism().map_or(0, usize::from)
        );
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// The server's resident set size over a run, in KiB.
struct RssPeak {
    before: u64,
    /// The largest sample, and when it was taken.
    peak: u64,
    peak_at: Duration,
}

impl RssPeak {
    /// Samples the server's RSS every 50 ms until `duration` has passed
    /// since `started`, printing progress every 5 s, then sets the stop
    /// flag. Fails when the server exits.
    async fn sample(
        pid: u32,
        before: u64,
        started: Instant,
        duration: Duration,
        counters: &Counters,
    ) -> Result<Self, String> {
        let mut sampled = RssPeak {
            before,
            peak: before,
            peak_at: Duration::ZERO,
        };
        let mut next_report = Duration::from_secs(5);
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let elapsed = started.elapsed();
            let Some(current) = rss(pid) else {
                counters.stop.store(true, Ordering::Relaxed);
                return Err("the server exited during the run".into());
            };
            if current > sampled.peak {
                sampled.peak = current;
                sampled.peak_at = elapsed;
            }
            if elapsed >= next_report {
                println!(
                    "  {:>5.1} s  requests {:>6}  errors {:>4}  server RSS {:.1} MiB (peak {:.1} MiB)",
                    elapsed.as_secs_f64(),
                    counters.requests.load(Ordering::Relaxed),
                    counters.errors.load(Ordering::Relaxed),
                    mib(current),
                    mib(sampled.peak)
                );
                next_report += Duration::from_secs(5);
            }
            if elapsed >= duration {
                break;
            }
        }
        counters.stop.store(true, Ordering::Relaxed);
        Ok(sampled)
    }

    /// Prints the figures with the server's VmHWM (its peak since it
    /// started, read now); whether neither exceeds `bound_mib`.
    fn report(&self, pid: u32, bound_mib: f64) -> bool {
        let high_water = proc_status_kib(pid, "VmHWM:");
        println!(
            "server RSS    before {:.1} MiB, peak sampled {:.1} MiB at {:.1} s, VmHWM {} (bound {bound_mib:.0} MiB)",
            mib(self.before),
            mib(self.peak),
            self.peak_at.as_secs_f64(),
            high_water.map_or("-".into(), |kib| format!("{:.1} MiB", mib(kib))),
        );
        mib(self.peak.max(high_water.unwrap_or(0))) <= bound_mib
    }
}

/// Tiny deterministic generator (xorshift64*) for picking operations.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) % bound as u64) as usize
    }
}

/// What one worker measured.
#[derive(Default)]
struct Tally {
    /// Latency of every answered request (2xx or not), in microseconds, by operation.
    latencies: BTreeMap<&'static str, Vec<u32>>,
    /// Errors by kind, with the first example of each.
    errors: BTreeMap<String, (u64, String)>,
    opened: u64,
    /// Largest 2xx body, in bytes.
    largest_body: usize,
    /// Requests slower than [`SLOW`]: operation, latency (µs), when sent.
    slow: Vec<(&'static str, u32, Instant)>,
}

/// Requests slower than this are listed with the time they were sent.
const SLOW: Duration = Duration::from_secs(1);

impl Tally {
    /// Records one request's outcome; the body of a 2xx comes back.
    fn record(
        &mut self,
        operation: &'static str,
        started: Instant,
        result: Result<Bytes, Failure>,
        counters: &Counters,
    ) -> Option<Bytes> {
        let latency = started.elapsed();
        let micros = latency.as_micros().min(u128::from(u32::MAX)) as u32;
        counters.requests.fetch_add(1, Ordering::Relaxed);
        if latency > SLOW {
            self.slow.push((operation, micros, started));
        }
        match result {
            Ok(body) => {
                self.latencies.entry(operation).or_default().push(micros);
                self.largest_body = self.largest_body.max(body.len());
                Some(body)
            }
            Err(failure) => {
                counters.errors.fetch_add(1, Ordering::Relaxed);
                if let Failure::Status(..) = failure {
                    self.latencies.entry(operation).or_default().push(micros);
                }
                let kind = format!("{operation}: {}", failure.kind());
                let entry = self
                    .errors
                    .entry(kind)
                    .or_insert_with(|| (0, failure.example()));
                entry.0 += 1;
                None
            }
        }
    }

    fn merge(&mut self, other: Tally) {
        for (operation, latencies) in other.latencies {
            self.latencies
                .entry(operation)
                .or_default()
                .extend(latencies);
        }
        for (kind, (count, example)) in other.errors {
            self.errors.entry(kind).or_insert((0, example)).0 += count;
        }
        self.opened += other.opened;
        self.largest_body = self.largest_body.max(other.largest_body);
        self.slow.extend(other.slow);
    }

    fn error_count(&self) -> u64 {
        self.errors.values().map(|(count, _)| count).sum()
    }
}

/// Shared progress counters and the stop flag.
#[derive(Default)]
struct Counters {
    requests: AtomicU64,
    errors: AtomicU64,
    stop: AtomicBool,
}

/// Nearest-rank percentile of sorted microseconds, in milliseconds.
fn percentile(sorted: &[u32], percent: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((percent / 100.0) * sorted.len() as f64).ceil() as usize;
    f64::from(sorted[rank.clamp(1, sorted.len()) - 1]) / 1000.0
}

/// Prints request counts, throughput, latency and errors.
fn print_tally(tally: &mut Tally, run_started: Instant, elapsed: Duration) {
    let total: usize = tally.latencies.values().map(Vec::len).sum::<usize>()
        + tally
            .errors
            .iter()
            .filter(|(kind, _)| kind.contains("transport:"))
            .map(|(_, (count, _))| *count as usize)
            .sum::<usize>();
    let seconds = elapsed.as_secs_f64();
    println!(
        "requests      {total} in {seconds:.1} s = {:.0} req/s",
        total as f64 / seconds
    );
    let mut all: Vec<u32> = tally.latencies.values().flatten().copied().collect();
    all.sort_unstable();
    println!(
        "latency       p50 {:.2} ms   p99 {:.2} ms   max {:.2} ms",
        percentile(&all, 50.0),
        percentile(&all, 99.0),
        percentile(&all, 100.0)
    );
    for (operation, latencies) in &mut tally.latencies {
        latencies.sort_unstable();
        println!(
            "  {operation:<22} {:>8} ({:>4.1}%)   p50 {:>7.2} ms   p99 {:>7.2} ms   max {:>8.2} ms",
            latencies.len(),
            100.0 * latencies.len() as f64 / total.max(1) as f64,
            percentile(latencies, 50.0),
            percentile(latencies, 99.0),
            percentile(latencies, 100.0)
        );
    }
    tally
        .slow
        .sort_by_key(|(_, micros, _)| std::cmp::Reverse(*micros));
    println!(
        "slow (> {} s)  {} requests{}",
        SLOW.as_secs(),
        tally.slow.len(),
        if tally.slow.len() > 10 {
            ", the 10 slowest:"
        } else {
            ""
        }
    );
    for (operation, micros, sent) in tally.slow.iter().take(10) {
        println!(
            "  {operation:<22} {:>8.2} ms, sent at {:.1} s",
            f64::from(*micros) / 1000.0,
            sent.saturating_duration_since(run_started).as_secs_f64()
        );
    }
    println!("connections   {} opened", tally.opened);
    println!("errors        {}", tally.error_count());
    for (kind, (count, example)) in &tally.errors {
        println!("  {count:>8}  {kind}\n            e.g. {example}");
    }
}

/// The mixed workload.
async fn mixed(args: &Args, target: Target) -> Result<bool, String> {
    let target = Arc::new(target);
    let mut connection = Connection::new(Arc::clone(&target));
    let setup_started = Instant::now();
    let root = uid_of(
        &setup(
            &mut connection,
            Method::POST,
            "/iam/v2/groups/",
            json!({"name": format!("load {}", run_label())}),
        )
        .await?,
    )?;
    let mut seeds = Vec::with_capacity(args.seed_groups);
    for i in 0..args.seed_groups {
        let group = setup(
            &mut connection,
            Method::POST,
            &format!("/iam/v2/groups/{root}"),
            json!({"name": format!("seed {i}"), "description": "seed group"}),
        )
        .await?;
        seeds.push(uid_of(&group)?);
    }
    drop(connection);
    println!(
        "workload      mixed: 70% GET group, 15% list page (pageSize=50), 10% create group, 5% PATCH description"
    );
    println!(
        "setup         root {root}, {} seed groups ({:.1} s)",
        seeds.len(),
        setup_started.elapsed().as_secs_f64()
    );
    println!(
        "load          {} connections (HTTP/1.1 keep-alive) for {:.0} s against {}",
        args.connections,
        args.duration.as_secs_f64(),
        target.authority
    );

    let seeds = Arc::new(seeds);
    let counters = Arc::new(Counters::default());
    let started = Instant::now();
    let cpu = CpuClock::start(args.server_pid);
    let mut workers = tokio::task::JoinSet::new();
    for worker in 0..args.connections {
        let target = Arc::clone(&target);
        let seeds = Arc::clone(&seeds);
        let counters = Arc::clone(&counters);
        let root = root.clone();
        workers.spawn(async move {
            let mut connection = Connection::new(target);
            let mut tally = Tally::default();
            let mut rng = Rng::new(worker as u64 + 1);
            let mut page_token = String::new();
            let mut n = 0u64;
            while !counters.stop.load(Ordering::Relaxed) {
                n += 1;
                let roll = rng.below(100);
                let seed = &seeds[rng.below(seeds.len())];
                let request_started = Instant::now();
                if roll < 70 {
                    let path = format!("/iam/v2/groups/{seed}");
                    let result = connection.send(Method::GET, &path, Auth::Admin, None).await;
                    tally.record("get group", request_started, result, &counters);
                } else if roll < 85 {
                    let mut path = format!("/iam/v2/groups?uidp.children_of={root}&pageSize=50");
                    if !page_token.is_empty() {
                        let _ = write!(path, "&pageToken={}", encode(&page_token));
                    }
                    let result = connection.send(Method::GET, &path, Auth::Admin, None).await;
                    let body = tally.record("list groups", request_started, result, &counters);
                    page_token = body
                        .and_then(|body| serde_json::from_slice::<ListPage>(&body).ok())
                        .map(|page| page.next_page_token)
                        .unwrap_or_default();
                } else if roll < 95 {
                    let path = format!("/iam/v2/groups/{root}");
                    let body = json!({"name": format!("worker {worker} group {n}")});
                    let result = connection
                        .send(Method::POST, &path, Auth::Admin, Some(&body))
                        .await;
                    tally.record("create group", request_started, result, &counters);
                } else {
                    let path = format!("/iam/v2/groups/{seed}?updateMask=description");
                    let body = json!({"description": format!("patched by worker {worker} ({n})")});
                    let result = connection
                        .send(Method::PATCH, &path, Auth::Admin, Some(&body))
                        .await;
                    tally.record("patch description", request_started, result, &counters);
                }
            }
            tally.opened = connection.opened;
            tally
        });
    }

    // Progress every 10 s; the RSS samples at `--rss-at` and at the end.
    let pid = args.server_pid;
    let mut first_sample = None;
    let mut peak = 0;
    let mut last_report = (Duration::ZERO, 0u64);
    let mut next_report = Duration::from_secs(10).min(args.duration);
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let elapsed = started.elapsed();
        let current = pid.and_then(rss);
        peak = peak.max(current.unwrap_or(0));
        if first_sample.is_none() && elapsed >= args.rss_at {
            first_sample = current.map(|kib| (elapsed, kib));
        }
        if elapsed >= next_report || elapsed >= args.duration {
            let requests = counters.requests.load(Ordering::Relaxed);
            let rate = (requests - last_report.1) as f64 / (elapsed - last_report.0).as_secs_f64();
            println!(
                "  {:>5.1} s  {rate:>7.0} req/s  errors {:>5}  server RSS {}",
                elapsed.as_secs_f64(),
                counters.errors.load(Ordering::Relaxed),
                current.map_or("-".into(), |kib| format!("{:.1} MiB", mib(kib)))
            );
            last_report = (elapsed, requests);
            next_report += Duration::from_secs(10);
        }
        if elapsed >= args.duration {
            break;
        }
    }
    let last_sample = pid.and_then(rss).map(|kib| (started.elapsed(), kib));
    counters.stop.store(true, Ordering::Relaxed);
    let mut tally = Tally::default();
    while let Some(worker) = workers.join_next().await {
        tally.merge(worker.map_err(|e| format!("a worker failed: {e}"))?);
    }
    let elapsed = started.elapsed();

    println!();
    print_tally(&mut tally, started, elapsed);
    cpu.print(elapsed);
    let errors_met = tally.error_count() == 0;
    let mut growth_met = true;
    match (first_sample, last_sample) {
        (Some((at_first, first)), Some((at_last, last))) => {
            let growth = 100.0 * (last as f64 - first as f64) / first as f64;
            growth_met = growth < args.max_rss_growth;
            println!(
                "server RSS    {:.1} MiB at {:.0} s, {:.1} MiB at {:.0} s ({growth:+.1}%), peak sampled {:.1} MiB",
                mib(first),
                at_first.as_secs_f64(),
                mib(last),
                at_last.as_secs_f64(),
                mib(peak)
            );
        }
        _ if pid.is_some() => {
            growth_met = false;
            println!(
                "server RSS    not sampled (the run was shorter than --rss-at, or the server exited)"
            );
        }
        _ => println!("server RSS    not sampled (no --server-pid)"),
    }
    println!(
        "targets       errors = 0: {}; RSS growth < {}%: {}",
        verdict(errors_met),
        args.max_rss_growth,
        if pid.is_some() {
            verdict(growth_met)
        } else {
            "not checked"
        }
    );
    Ok(errors_met && growth_met)
}

/// What the load generator reads of a list response (items are skipped,
/// not built).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListPage {
    #[serde(default)]
    items: Vec<serde::de::IgnoredAny>,
    #[serde(default)]
    next_page_token: String,
    #[serde(default)]
    total_count: Value,
}

/// A JSON count: a number, or an int64 spelled as a string.
fn count(value: &Value) -> Option<u64> {
    value
        .as_u64()
        .or_else(|| value.as_str().and_then(|text| text.parse().ok()))
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}

/// The oversized-list memory-bound check.
async fn oversized_lists(args: &Args, target: Target) -> Result<bool, String> {
    let (repos, groups) = (args.repos, args.groups);
    const README_BYTES: usize = 65_536;
    const DESCRIPTION_CHARS: usize = 1_024;
    let pid = args
        .server_pid
        .ok_or("--mode oversized-lists needs --server-pid")?;
    let target = Arc::new(target);
    let mut connection = Connection::new(Arc::clone(&target));
    let setup_started = Instant::now();
    let label = run_label();
    let root = uid_of(
        &setup(
            &mut connection,
            Method::POST,
            "/iam/v2/groups/",
            json!({"name": format!("memory bound {label}")}),
        )
        .await?,
    )?;
    let holder = uid_of(
        &setup(
            &mut connection,
            Method::POST,
            &format!("/iam/v2/groups/{root}"),
            json!({"name": "oversized lists"}),
        )
        .await?,
    )?;
    let readme = match args.readme_fill {
        Fill::Text => "0123456789abcdef".repeat(README_BYTES / 16),
        Fill::Control => "\u{1}".repeat(README_BYTES),
    };
    let description = "d".repeat(DESCRIPTION_CHARS);
    for i in 0..repos {
        setup(
            &mut connection,
            Method::POST,
            &format!("/registry/v2/repos/{holder}"),
            json!({"name": format!("repo-{i}"), "public": true, "readme": readme}),
        )
        .await?;
    }
    for i in 0..groups {
        setup(
            &mut connection,
            Method::POST,
            &format!("/iam/v2/groups/{holder}"),
            json!({"name": format!("group {i}"), "description": description}),
        )
        .await?;
    }
    drop(connection);
    let walks: [(&'static str, &'static str, Auth, usize); 3] = [
        (
            "list repos (token)",
            "/registry/v2/repos",
            Auth::Admin,
            repos,
        ),
        (
            "list repos (anonymous)",
            "/registry/v2/repos",
            Auth::Anonymous,
            repos,
        ),
        ("list groups (token)", "/iam/v2/groups", Auth::Admin, groups),
    ];
    println!(
        "workload      oversized lists: {repos} public repos with {README_BYTES}-byte readmes ({:?}) and {groups} groups with {DESCRIPTION_CHARS}-character descriptions under {holder}",
        args.readme_fill
    );
    println!(
        "              each connection walks every page of pageSize=200 in turn: repos with the token, repos anonymously, groups with the token"
    );
    println!(
        "setup         {:.1} s",
        setup_started.elapsed().as_secs_f64()
    );
    let (before, counters, started, cpu) = start_load(pid, args)?;
    let mut workers = tokio::task::JoinSet::new();
    for worker in 0..args.connections {
        let target = Arc::clone(&target);
        let counters = Arc::clone(&counters);
        let holder = holder.clone();
        workers.spawn(async move {
            let mut connection = Connection::new(target);
            let mut tally = Tally::default();
            let mut incomplete = Vec::new();
            let mut pages_per_walk: BTreeMap<&'static str, (u64, u64)> = BTreeMap::new();
            let mut turn = worker;
            while !counters.stop.load(Ordering::Relaxed) {
                let (operation, collection, auth, expected) = walks[turn % walks.len()];
                turn += 1;
                let mut seen = 0;
                let mut pages = 0;
                let mut page_token = String::new();
                let complete = loop {
                    let mut path = format!("{collection}?uidp.children_of={holder}&pageSize=200");
                    if !page_token.is_empty() {
                        let _ = write!(path, "&pageToken={}", encode(&page_token));
                    }
                    let request_started = Instant::now();
                    let result = connection.send(Method::GET, &path, auth, None).await;
                    let Some(body) = tally.record(operation, request_started, result, &counters)
                    else {
                        break false;
                    };
                    let Ok(page) = serde_json::from_slice::<ListPage>(&body) else {
                        break false;
                    };
                    pages += 1;
                    seen += page.items.len();
                    page_token = page.next_page_token;
                    if page_token.is_empty() || counters.stop.load(Ordering::Relaxed) {
                        break page_token.is_empty()
                            && seen == expected
                            && count(&page.total_count) == Some(expected as u64);
                    }
                };
                if complete {
                    let entry = pages_per_walk.entry(operation).or_default();
                    entry.0 += 1;
                    entry.1 += pages;
                } else if !counters.stop.load(Ordering::Relaxed) {
                    incomplete.push(format!("{operation}: {seen} of {expected} items"));
                }
            }
            tally.opened = connection.opened;
            (tally, pages_per_walk, incomplete)
        });
    }

    let peak = RssPeak::sample(pid, before, started, args.duration, &counters).await?;
    let mut tally = Tally::default();
    let mut walks_done: BTreeMap<&'static str, (u64, u64)> = BTreeMap::new();
    let mut incomplete = Vec::new();
    while let Some(worker) = workers.join_next().await {
        let (worker_tally, pages, worker_incomplete) =
            worker.map_err(|e| format!("a worker failed: {e}"))?;
        tally.merge(worker_tally);
        for (operation, (count, page_count)) in pages {
            let entry = walks_done.entry(operation).or_default();
            entry.0 += count;
            entry.1 += page_count;
        }
        incomplete.extend(worker_incomplete);
    }
    let elapsed = started.elapsed();

    println!();
    print_tally(&mut tally, started, elapsed);
    cpu.print(elapsed);
    for (operation, (count, pages)) in &walks_done {
        println!(
            "walks         {operation}: {count} complete, {:.1} pages each",
            *pages as f64 / (*count).max(1) as f64
        );
    }
    for problem in incomplete.iter().take(5) {
        println!("incomplete    {problem}");
    }
    println!(
        "largest page  {} bytes ({:.2} MiB; list byte budget 4 MiB)",
        tally.largest_body,
        tally.largest_body as f64 / (1024.0 * 1024.0)
    );
    let bound = args.max_rss_mib();
    let bound_met = peak.report(pid, bound);
    let page_met = tally.largest_body as f64 <= args.max_page_mib * 1024.0 * 1024.0;
    let errors_met = tally.error_count() == 0 && incomplete.is_empty();
    println!(
        "targets       peak RSS <= {bound:.0} MiB: {}; list responses <= {} MiB: {}; errors = 0 and every walk complete: {}",
        verdict(bound_met),
        args.max_page_mib,
        verdict(page_met),
        verdict(errors_met)
    );
    Ok(bound_met && page_met && errors_met)
}

/// The memory check of maximal-size uids (`--mode long-uids`).
mod long_uids {
    use std::io::{Read as _, Write as _};

    use platform_api::platform::iam::v2::group_service_client::GroupServiceClient;
    use platform_api::platform::iam::v2::role_binding_service_client::RoleBindingServiceClient;
    use platform_api::platform::iam::v2::{
        CreateRoleBindingRequest, GetGroupRequest, ListGroupsRequest, RoleBinding,
    };
    use platform_api::protoapi::v1::UidpFilter;
    use tonic::metadata::{Ascii, MetadataValue};
    use tonic::transport::Channel;

    use super::*;

    /// The largest JSON body sent: just under the 1 MiB body limit.
    const BODY_BYTES: usize = (1 << 20) - 1024;
    /// The uid characters of one gRPC message: just under its 1 MiB limit.
    const GRPC_BYTES: usize = 1_040_000;
    /// `uidp.ids` holds at most this many uids.
    const IDS: usize = 100;
    /// Request targets tried when looking for the server's limit.
    const SHORTEST_TARGET: usize = 1024;
    const LONGEST_TARGET: usize = 256 * 1024;

    /// A well-formed UIDP of at most `len` characters: a 40-character root
    /// and as many 16-character levels as fit. Every character passes the
    /// per-character checks; only its length (or depth) is wrong.
    fn deep_uid(len: usize) -> String {
        let levels = len.saturating_sub(40) / 17;
        let mut uid = String::with_capacity(40 + 17 * levels);
        uid.push_str("0123456789abcdef0123456789abcdef01234567");
        for level in 0..levels {
            let _ = write!(uid, "/{level:016x}");
        }
        uid
    }

    /// One request of the workload, built once and sent over and over.
    enum Call {
        Rest {
            method: Method,
            path: String,
            body: Option<Bytes>,
        },
        GetGroup(GetGroupRequest),
        ListGroups(ListGroupsRequest),
        CreateRoleBinding(CreateRoleBindingRequest),
    }

    impl Call {
        fn transport(&self) -> &'static str {
            match self {
                Call::Rest { .. } => "REST",
                _ => "gRPC",
            }
        }
    }

    struct Case {
        operation: &'static str,
        call: Call,
    }

    fn rest(operation: &'static str, method: Method, path: String, body: Option<Bytes>) -> Case {
        let call = Call::Rest { method, path, body };
        Case { operation, call }
    }

    /// `prefix`, the longest deep uid that keeps the request target within
    /// `max_target` bytes, then `suffix`.
    fn fill(prefix: &str, suffix: &str, max_target: usize) -> String {
        let uid = deep_uid(max_target - prefix.len() - suffix.len());
        format!("{prefix}{uid}{suffix}")
    }

    /// `uidp.ids` repeated [`IDS`] times, sharing the request target.
    fn ids_query(max_target: usize) -> String {
        let prefix = "/iam/v2/groups?";
        let each = (max_target - prefix.len() - IDS * "&uidp.ids=".len()) / IDS;
        let ids: Vec<String> = (0..IDS)
            .map(|_| format!("uidp.ids={}", deep_uid(each)))
            .collect();
        format!("{prefix}{}", ids.join("&"))
    }

    /// A role binding whose `identity` and `role` share `bytes`.
    fn binding(bytes: usize) -> RoleBinding {
        RoleBinding {
            identity: deep_uid(bytes / 2),
            role: deep_uid(bytes / 2),
            ..Default::default()
        }
    }

    /// The REST requests without a body whose request target ends with the
    /// uid: operation, method, and the target before the uid.
    const IN_TARGET: [(&str, Method, &str); 10] = [
        ("get group", Method::GET, "/iam/v2/groups/"),
        ("delete group", Method::DELETE, "/iam/v2/groups/"),
        ("get repo", Method::GET, "/registry/v2/repos/"),
        ("delete repo", Method::DELETE, "/registry/v2/repos/"),
        ("v1 list groups id=", Method::GET, "/iam/v1/groups?id="),
        ("v1 delete group", Method::DELETE, "/iam/v1/groups/"),
        (
            "list groups descendants_of",
            Method::GET,
            "/iam/v2/groups?uidp.descendants_of=",
        ),
        (
            "list groups children_of",
            Method::GET,
            "/iam/v2/groups?uidp.children_of=",
        ),
        (
            "list groups ancestors_of",
            Method::GET,
            "/iam/v2/groups?uidp.ancestors_of=",
        ),
        (
            "list repos ancestors_of",
            Method::GET,
            "/registry/v2/repos?uidp.ancestors_of=",
        ),
    ];

    /// The REST requests with a small body whose request target carries the
    /// uid: operation, method, the target before and after the uid, and the
    /// body.
    const WITH_BODY: [(&str, Method, &str, &str, &str); 3] = [
        (
            "patch group",
            Method::PATCH,
            "/iam/v2/groups/",
            "?updateMask=description",
            DESCRIPTION,
        ),
        (
            "create group (parent)",
            Method::POST,
            "/iam/v2/groups/",
            "",
            r#"{"name":"n"}"#,
        ),
        (
            "patch repo",
            Method::PATCH,
            "/registry/v2/repos/",
            "?updateMask=readme",
            README,
        ),
    ];
    const DESCRIPTION: &str = r#"{"description":"d"}"#;
    const README: &str = r#"{"readme":"r"}"#;

    /// Every uid-bearing field over REST: [`IN_TARGET`], [`WITH_BODY`], 100
    /// `uidp.ids`, and role binding references filling a body.
    fn rest_cases(max_target: usize, parent: &str) -> Vec<Case> {
        let bare =
            IN_TARGET.map(|(operation, method, prefix)| (operation, method, prefix, "", None));
        let with_body = WITH_BODY.map(|(operation, method, prefix, suffix, body)| {
            (operation, method, prefix, suffix, Some(body))
        });
        let mut cases: Vec<Case> = bare
            .into_iter()
            .chain(with_body)
            .map(|(operation, method, prefix, suffix, body)| {
                let path = fill(prefix, suffix, max_target);
                let body = body.map(|body| Bytes::from_static(body.as_bytes()));
                rest(operation, method, path, body)
            })
            .collect();
        let ids = ids_query(max_target);
        cases.push(rest("list groups ids x100", Method::GET, ids, None));
        let references = binding(BODY_BYTES - r#"{"identity":"","role":""}"#.len());
        let body = json!({"identity": references.identity, "role": references.role});
        let path = format!("/iam/v2/roleBindings/{parent}");
        let body = Some(Bytes::from(body.to_string()));
        cases.push(rest("create role binding (body)", Method::POST, path, body));
        cases
    }

    /// Every uid-bearing field over gRPC, each message just under 1 MiB.
    fn grpc_cases(parent: &str) -> Vec<Case> {
        let list = |operation, filter: fn(&mut UidpFilter)| {
            let mut uidp = UidpFilter::default();
            filter(&mut uidp);
            Case {
                operation,
                call: Call::ListGroups(ListGroupsRequest {
                    uidp: Some(uidp),
                    ..Default::default()
                }),
            }
        };
        vec![
            Case {
                operation: "GetGroup",
                call: Call::GetGroup(GetGroupRequest {
                    uid: deep_uid(GRPC_BYTES),
                }),
            },
            list("ListGroups ancestors_of", |f| {
                f.ancestors_of = deep_uid(GRPC_BYTES)
            }),
            list("ListGroups descendants_of", |f| {
                f.descendants_of = deep_uid(GRPC_BYTES)
            }),
            list("ListGroups children_of", |f| {
                f.children_of = deep_uid(GRPC_BYTES)
            }),
            list("ListGroups ids x100", |f| {
                f.ids = vec![deep_uid(GRPC_BYTES / IDS); IDS]
            }),
            Case {
                operation: "CreateRoleBinding",
                call: Call::CreateRoleBinding(CreateRoleBindingRequest {
                    parent: parent.to_owned(),
                    role_binding: Some(binding(GRPC_BYTES)),
                }),
            },
        ]
    }

    /// The status line's code of one raw HTTP/1.1 GET whose request target
    /// is `len` bytes (the client library cannot build targets over 64 KiB,
    /// which is what this looks for).
    fn raw_status(authority: &str, len: usize, timeout: Duration) -> Result<u16, String> {
        let prefix = "/iam/v2/groups/";
        let target = format!("{prefix}{}", "a".repeat(len - prefix.len()));
        let request =
            format!("GET {target} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n");
        let failed = |e: std::io::Error| format!("probe of a {len}-byte request target: {e}");
        let mut stream = std::net::TcpStream::connect(authority).map_err(failed)?;
        stream.set_read_timeout(Some(timeout)).map_err(failed)?;
        stream.set_write_timeout(Some(timeout)).map_err(failed)?;
        stream.write_all(request.as_bytes()).map_err(failed)?;
        let mut head = [0u8; 32];
        let mut read = 0;
        while read < head.len() {
            match stream.read(&mut head[read..]).map_err(failed)? {
                0 => break,
                n => read += n,
            }
        }
        let head = String::from_utf8_lossy(&head[..read]);
        head.split(' ')
            .nth(1)
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| format!("probe of a {len}-byte request target: answered {head:?}"))
    }

    /// Whether a REST status is the HTTP layer refusing a request by its size.
    fn http_layer(status: u16) -> bool {
        matches!(status, 413 | 414 | 431)
    }

    /// The longest request target the server reads before answering 414 or
    /// 431 (by bisection), and what it answers one byte beyond it.
    async fn target_limit(target: &Target) -> Result<(usize, u16), String> {
        let (authority, timeout) = (target.authority.clone(), target.timeout);
        tokio::task::spawn_blocking(move || {
            let status = |len| raw_status(&authority, len, timeout);
            if http_layer(status(SHORTEST_TARGET)?) {
                return Err(format!(
                    "a {SHORTEST_TARGET}-byte request target is refused"
                ));
            }
            let refused_at_longest = status(LONGEST_TARGET)?;
            if !http_layer(refused_at_longest) {
                return Err(format!(
                    "a {LONGEST_TARGET}-byte request target is accepted"
                ));
            }
            let (mut accepted, mut refused) = (SHORTEST_TARGET, LONGEST_TARGET);
            let mut beyond = refused_at_longest;
            while refused - accepted > 1 {
                let middle = (accepted + refused) / 2;
                match status(middle)? {
                    code if http_layer(code) => (refused, beyond) = (middle, code),
                    _ => accepted = middle,
                }
            }
            Ok((accepted, beyond))
        })
        .await
        .map_err(|e| format!("the probe failed: {e}"))?
    }

    /// Whether an answer is the expected refusal, a size limit of the HTTP
    /// layer, or anything else (which fails the run).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    enum Verdict {
        InvalidArgument,
        HttpLayer,
        Unexpected,
    }

    /// One answer: its verdict, how it is counted, and an example of it.
    struct Answer {
        verdict: Verdict,
        kind: String,
        example: String,
    }

    fn rest_answer(result: Result<Bytes, Failure>) -> Answer {
        let failure = match result {
            Ok(body) => {
                let example = String::from_utf8_lossy(&body).chars().take(300).collect();
                let kind = "2xx (success)".to_owned();
                let verdict = Verdict::Unexpected;
                return Answer {
                    verdict,
                    kind,
                    example,
                };
            }
            Err(failure) => failure,
        };
        let kind = failure.kind();
        let verdict = match &failure {
            Failure::Status(status, _) if http_layer(status.as_u16()) => Verdict::HttpLayer,
            Failure::Status(..) if kind.starts_with("400 INVALID_ARGUMENT ") => {
                Verdict::InvalidArgument
            }
            _ => Verdict::Unexpected,
        };
        let example = failure.example();
        Answer {
            verdict,
            kind,
            example,
        }
    }

    fn grpc_answer(result: Result<(), tonic::Status>) -> Answer {
        let status = result.err().unwrap_or_else(|| tonic::Status::ok(""));
        let verdict = match status.code() {
            tonic::Code::InvalidArgument => Verdict::InvalidArgument,
            _ => Verdict::Unexpected,
        };
        let example: String = status.message().chars().take(300).collect();
        Answer {
            verdict,
            kind: format!("{:?}", status.code()),
            example,
        }
    }

    /// One worker's connections: HTTP/1.1 keep-alive for REST, one HTTP/2
    /// channel for gRPC.
    struct Clients {
        rest: Connection,
        groups: GroupServiceClient<Channel>,
        bindings: RoleBindingServiceClient<Channel>,
        bearer: MetadataValue<Ascii>,
        timeout: Duration,
    }

    impl Clients {
        fn new(target: Arc<Target>) -> Result<Self, String> {
            let url = format!("http://{}", target.authority);
            let channel = tonic::transport::Endpoint::from_shared(url)
                .map_err(|e| format!("gRPC endpoint: {e}"))?
                .connect_lazy();
            let bearer = format!("Bearer {}", target.token)
                .parse()
                .map_err(|e| format!("the token is not a header value: {e}"))?;
            Ok(Clients {
                timeout: target.timeout,
                rest: Connection::new(target),
                groups: GroupServiceClient::new(channel.clone()),
                bindings: RoleBindingServiceClient::new(channel),
                bearer,
            })
        }

        async fn send(&mut self, call: &Call, auth: Auth) -> Answer {
            let Call::Rest { method, path, body } = call else {
                return grpc_answer(self.grpc(call, auth).await);
            };
            rest_answer(
                self.rest
                    .send_json(method.clone(), path, auth, body.clone())
                    .await,
            )
        }

        fn request<T>(&self, message: &T, auth: Auth) -> tonic::Request<T>
        where
            T: Clone,
        {
            let mut request = tonic::Request::new(message.clone());
            if auth == Auth::Admin {
                request
                    .metadata_mut()
                    .insert("authorization", self.bearer.clone());
            }
            request
        }

        async fn grpc(&mut self, call: &Call, auth: Auth) -> Result<(), tonic::Status> {
            let timeout = self.timeout;
            let answer = async {
                match call {
                    Call::GetGroup(message) => {
                        let request = self.request(message, auth);
                        self.groups.get_group(request).await.map(drop)
                    }
                    Call::ListGroups(message) => {
                        let request = self.request(message, auth);
                        self.groups.list_groups(request).await.map(drop)
                    }
                    Call::CreateRoleBinding(message) => {
                        let request = self.request(message, auth);
                        self.bindings.create_role_binding(request).await.map(drop)
                    }
                    Call::Rest { .. } => unreachable!("sent over REST"),
                }
            };
            tokio::time::timeout(timeout, answer)
                .await
                .unwrap_or_else(|_| Err(tonic::Status::deadline_exceeded("timeout")))
        }
    }

    /// Answers by operation (with `token` or `anonymous`) and kind, with
    /// the first example of each, and the slowest answer per operation.
    #[derive(Default)]
    struct Answers {
        counts: BTreeMap<(String, String), (Verdict, u64, String)>,
        slowest: BTreeMap<String, Duration>,
        opened: u64,
    }

    impl Answers {
        fn record(
            &mut self,
            operation: String,
            answer: Answer,
            latency: Duration,
            counters: &Counters,
        ) {
            counters.requests.fetch_add(1, Ordering::Relaxed);
            if answer.verdict == Verdict::Unexpected {
                counters.errors.fetch_add(1, Ordering::Relaxed);
            }
            let slowest = self.slowest.entry(operation.clone()).or_default();
            *slowest = (*slowest).max(latency);
            let entry = self.counts.entry((operation, answer.kind)).or_insert((
                answer.verdict,
                0,
                answer.example,
            ));
            entry.1 += 1;
        }

        fn merge(&mut self, other: Answers) {
            for (key, (verdict, count, example)) in other.counts {
                self.counts.entry(key).or_insert((verdict, 0, example)).1 += count;
            }
            for (operation, latency) in other.slowest {
                let slowest = self.slowest.entry(operation).or_default();
                *slowest = (*slowest).max(latency);
            }
            self.opened += other.opened;
        }

        /// Answers with this verdict.
        fn total(&self, verdict: Verdict) -> u64 {
            self.counts
                .values()
                .filter(|(seen, ..)| *seen == verdict)
                .map(|(_, count, _)| count)
                .sum()
        }

        fn print(&self, elapsed: Duration) {
            let all: u64 = self.counts.values().map(|(_, count, _)| count).sum();
            println!(
                "requests      {all} in {:.1} s = {:.0} req/s; REST connections opened {}",
                elapsed.as_secs_f64(),
                all as f64 / elapsed.as_secs_f64(),
                self.opened
            );
            println!("answers       count  operation (caller)  answer  [slowest]");
            for ((operation, kind), (verdict, count, example)) in &self.counts {
                let slowest = self.slowest.get(operation).copied().unwrap_or_default();
                println!(
                    "  {count:>9}  {operation:<44} {kind}  [{:.1} ms]{}",
                    slowest.as_secs_f64() * 1000.0,
                    if *verdict == Verdict::Unexpected {
                        "  UNEXPECTED"
                    } else {
                        ""
                    }
                );
                if *verdict == Verdict::Unexpected {
                    println!("             e.g. {example}");
                }
            }
            println!(
                "totals        INVALID_ARGUMENT {}; refused by the HTTP layer (413/414/431) {}; other {}",
                self.total(Verdict::InvalidArgument),
                self.total(Verdict::HttpLayer),
                self.total(Verdict::Unexpected)
            );
        }
    }

    /// One connection's loop: every case in turn, with the token and
    /// anonymously, starting at its own offset.
    async fn work(
        worker: usize,
        target: Arc<Target>,
        cases: Arc<Vec<Case>>,
        counters: Arc<Counters>,
    ) -> Result<Answers, String> {
        let mut clients = Clients::new(target)?;
        let mut answers = Answers::default();
        let mut turn = worker;
        while !counters.stop.load(Ordering::Relaxed) {
            let case = &cases[(turn / 2) % cases.len()];
            let (auth, caller) = match turn % 2 {
                0 => (Auth::Admin, "token"),
                _ => (Auth::Anonymous, "anonymous"),
            };
            turn += 1;
            let started = Instant::now();
            let answer = clients.send(&case.call, auth).await;
            let transport = case.call.transport();
            let operation = format!("{transport} {} ({caller})", case.operation);
            answers.record(operation, answer, started.elapsed(), &counters);
        }
        answers.opened = clients.rest.opened;
        Ok(answers)
    }

    /// Finds the request-target limit, creates a root group (the valid
    /// parent of the role bindings), and builds every case.
    async fn prepare(target: &Arc<Target>) -> Result<Vec<Case>, String> {
        let (max_target, beyond) = target_limit(target).await?;
        println!(
            "limit         the longest request target read: {max_target} bytes; {} bytes: {beyond}",
            max_target + 1
        );
        let mut connection = Connection::new(Arc::clone(target));
        let name = json!({"name": format!("long uids {}", run_label())});
        let parent = uid_of(&setup(&mut connection, Method::POST, "/iam/v2/groups/", name).await?)?;
        let mut cases = rest_cases(max_target, &parent);
        cases.extend(grpc_cases(&parent));
        Ok(cases)
    }

    pub(super) async fn run(args: &Args, target: Target) -> Result<bool, String> {
        let pid = args
            .server_pid
            .ok_or("--mode long-uids needs --server-pid")?;
        let target = Arc::new(target);
        let cases = Arc::new(prepare(&target).await?);
        println!(
            "workload      long uids: {} requests carrying well-formed UIDPs far deeper than 16 levels (REST: the longest request target read, bodies up to {BODY_BYTES} bytes; gRPC: {GRPC_BYTES} bytes of uids per message), each with the token and anonymously",
            cases.len()
        );
        let (before, counters, started, cpu) = start_load(pid, args)?;
        let mut workers = tokio::task::JoinSet::new();
        for worker in 0..args.connections {
            let work = work(
                worker,
                Arc::clone(&target),
                Arc::clone(&cases),
                Arc::clone(&counters),
            );
            workers.spawn(work);
        }
        let peak = RssPeak::sample(pid, before, started, args.duration, &counters).await?;
        let mut answers = Answers::default();
        while let Some(worker) = workers.join_next().await {
            answers.merge(worker.map_err(|e| format!("a worker failed: {e}"))??);
        }
        let elapsed = started.elapsed();
        println!();
        answers.print(elapsed);
        cpu.print(elapsed);
        let bound = args.max_rss_mib();
        let bound_met = peak.report(pid, bound);
        let answers_met =
            answers.total(Verdict::Unexpected) == 0 && answers.total(Verdict::InvalidArgument) > 0;
        println!(
            "targets       peak RSS <= {bound:.0} MiB: {}; every answer INVALID_ARGUMENT (or 413/414/431 over REST): {}",
            verdict(bound_met),
            verdict(answers_met)
        );
        Ok(bound_met && answers_met)
    }
}
