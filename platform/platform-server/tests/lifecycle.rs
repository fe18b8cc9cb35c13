//! The server binary's lifecycle: SIGTERM during a burst of requests drains
//! them (every request gets a complete answer or a connection error, never
//! a truncated one) and exits cleanly; SIGKILL loses no acknowledged write.
//! Both restart on the same data (embedded SQLite, or PostgreSQL when
//! `E2E_DATABASE_URL` names a database) and read every acknowledged create
//! back.

mod common;

use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{BOUND, Server};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Starts the binary on `data_dir` (embedded SQLite, or PostgreSQL when
/// `E2E_DATABASE_URL` names a database).
fn start(data_dir: &Path) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_platform-server"));
    command.args(["--drain-timeout", "20s"]);
    if let Ok(url) = std::env::var("E2E_DATABASE_URL") {
        command.args(["--database-url", &url]);
    }
    Server::spawn(command, data_dir)
}

/// A log reader that stops reading (a stuck log shipper, a paused terminal)
/// does not stop the server: once the pipe is full and the writer's buffer
/// too, log lines are dropped and counted (`log_lines_dropped_total`), and
/// requests are still answered. 20,000 requests write more than the pipe
/// (64 KiB, about 260 access lines) and the buffer (16,384 lines) hold.
#[tokio::test]
async fn an_unread_log_does_not_stall_requests() {
    let data = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_platform-server"));
    command.arg("--metrics");
    if let Ok(url) = std::env::var("E2E_DATABASE_URL") {
        command.args(["--database-url", &url]);
    }
    let server = Server::spawn_unread(command, data.path());
    let mut connection = Connection::open(&server.address, true)
        .await
        .expect("the server accepts connections");
    for index in 0..20_000 {
        let path = format!("/iam/v2/groups?pageSize=1&pageToken=stale-{index}");
        let outcome = connection.exchange("GET", &path, &server.token, None).await;
        assert!(
            matches!(outcome, Outcome::Answered(400, _)),
            "request {index}: {outcome:?}"
        );
    }
    let mut stream = TcpStream::connect(&server.address).await.unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut exposition = String::new();
    stream.read_to_string(&mut exposition).await.unwrap();
    let dropped: u64 = exposition
        .lines()
        .find_map(|line| line.strip_prefix("platform_log_lines_dropped_total "))
        .unwrap_or_else(|| panic!("no platform_log_lines_dropped_total: {exposition}"))
        .trim()
        .parse()
        .unwrap();
    assert!(dropped > 0, "{exposition}");
}

/// What the lifecycle tests do to the process.
trait Lifecycle {
    fn signal(&self, signal: &str);
    fn wait(&mut self) -> ExitStatus;
}

impl Lifecycle for Server {
    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }

    /// Waits for the process to exit.
    fn wait(&mut self) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if started.elapsed() > BOUND {
                self.child.kill().ok();
                panic!("the server did not exit: {:?}", self.log.lock().unwrap());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// How an HTTP exchange ended.
#[derive(Debug)]
enum Outcome {
    /// A complete response: its status and JSON body.
    Answered(u16, Value),
    /// The connection failed before any byte of a response arrived.
    ConnectionError,
}

/// An HTTP/1.1 keep-alive connection with strict response reading.
struct Connection {
    stream: TcpStream,
    buffer: Vec<u8>,
    /// Whether a response that stops midway fails the test (it does unless
    /// the server is killed).
    strict: bool,
}

impl Connection {
    async fn open(address: &str, strict: bool) -> Option<Connection> {
        let stream = TcpStream::connect(address).await.ok()?;
        Some(Connection {
            stream,
            buffer: Vec::new(),
            strict,
        })
    }

    /// Sends a request and reads its response. A response that starts but
    /// does not arrive completely, or whose body is not JSON, fails the test.
    async fn exchange(
        &mut self,
        method: &str,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> Outcome {
        let body = body.map(Value::to_string).unwrap_or_default();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if self.stream.write_all(request.as_bytes()).await.is_err() {
            return Outcome::ConnectionError;
        }
        self.response().await
    }

    /// Reads the next response.
    async fn response(&mut self) -> Outcome {
        let head_end = loop {
            if let Some(end) = find(&self.buffer, b"\r\n\r\n") {
                break end;
            }
            if !self.fill().await {
                assert!(
                    self.buffer.is_empty() || !self.strict,
                    "truncated response head: {:?}",
                    String::from_utf8_lossy(&self.buffer)
                );
                return Outcome::ConnectionError;
            }
        };
        let head = String::from_utf8(self.buffer[..head_end].to_vec()).unwrap();
        let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
        let length: usize = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse().unwrap())
            })
            .unwrap_or_else(|| panic!("a response without Content-Length: {head}"));
        let start = head_end + 4;
        while self.buffer.len() < start + length {
            if !self.fill().await {
                assert!(
                    !self.strict,
                    "truncated response body ({} of {length} bytes): {head}",
                    self.buffer.len() - start
                );
                return Outcome::ConnectionError;
            }
        }
        let body: Value = serde_json::from_slice(&self.buffer[start..start + length])
            .unwrap_or_else(|e| panic!("a response body that is not JSON ({e}): {head}"));
        self.buffer.drain(..start + length);
        Outcome::Answered(status, body)
    }

    /// Reads more bytes; false at end of stream or on an error.
    async fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        match tokio::time::timeout(BOUND, self.stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => false,
            Ok(Ok(n)) => {
                self.buffer.extend_from_slice(&chunk[..n]);
                true
            }
            Err(_) => panic!("no answer within {BOUND:?}"),
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// One request on a new connection; panics unless it is answered.
async fn request(server: &Server, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut connection = Connection::open(&server.address, true)
        .await
        .expect("the server accepts connections");
    match connection
        .exchange(method, path, &server.token, body.as_ref())
        .await
    {
        Outcome::Answered(status, body) => (status, body),
        Outcome::ConnectionError => panic!("{method} {path}: no answer"),
    }
}

async fn create_root(server: &Server, name: &str) -> String {
    let (status, body) = request(
        server,
        "POST",
        "/iam/v2/groups/",
        Some(json!({"name": name})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["uid"].as_str().unwrap().to_owned()
}

/// What the workers of a burst saw.
#[derive(Debug, Default)]
struct Burst {
    /// uids of creates answered 200.
    acknowledged: Vec<String>,
    answered: usize,
    connection_errors: usize,
}

/// Runs `workers` clients against `root` until the server stops accepting:
/// each alternates creating a child group and reading it back on one
/// keep-alive connection (reconnecting after a connection error). With
/// `strict`, a truncated response fails the test.
async fn burst(
    server: &Server,
    root: &str,
    workers: usize,
    strict: bool,
    answered: Arc<AtomicUsize>,
) -> Burst {
    let mut tasks = tokio::task::JoinSet::new();
    for worker in 0..workers {
        let address = server.address.clone();
        let token = server.token.clone();
        let root = root.to_owned();
        let answered = Arc::clone(&answered);
        tasks.spawn(async move {
            let mut seen = Burst::default();
            let mut connection: Option<Connection> = None;
            for i in 0.. {
                if connection.is_none() {
                    connection = Connection::open(&address, strict).await;
                }
                // Refused: the server has stopped accepting.
                let Some(open) = connection.as_mut() else {
                    return seen;
                };
                let name = json!({"name": format!("worker {worker} group {i}")});
                let created = open
                    .exchange(
                        "POST",
                        &format!("/iam/v2/groups/{root}"),
                        &token,
                        Some(&name),
                    )
                    .await;
                let uid = match created {
                    Outcome::Answered(status, body) => {
                        seen.answered += 1;
                        answered.fetch_add(1, Ordering::Relaxed);
                        match (status, body["uid"].as_str()) {
                            (200, Some(uid)) => {
                                seen.acknowledged.push(uid.to_owned());
                                Some(uid.to_owned())
                            }
                            _ => None,
                        }
                    }
                    Outcome::ConnectionError => {
                        seen.connection_errors += 1;
                        connection = None;
                        None
                    }
                };
                let (Some(uid), Some(open)) = (uid, connection.as_mut()) else {
                    continue;
                };
                match open
                    .exchange("GET", &format!("/iam/v2/groups/{uid}"), &token, None)
                    .await
                {
                    Outcome::Answered(status, body) => {
                        seen.answered += 1;
                        answered.fetch_add(1, Ordering::Relaxed);
                        assert_eq!(status, 200, "{body}");
                        assert_eq!(body["uid"], uid.as_str());
                    }
                    Outcome::ConnectionError => {
                        seen.connection_errors += 1;
                        connection = None;
                    }
                }
            }
            unreachable!()
        });
    }
    let mut all = Burst::default();
    while let Some(seen) = tasks.join_next().await {
        let seen = seen.expect("a worker saw only complete answers");
        all.acknowledged.extend(seen.acknowledged);
        all.answered += seen.answered;
        all.connection_errors += seen.connection_errors;
    }
    all
}

/// Restarts on `data_dir` and reads every uid back.
async fn assert_all_readable(data_dir: &Path, uids: &[String]) {
    let mut server = start(data_dir);
    for uid in uids {
        let (status, body) = request(&server, "GET", &format!("/iam/v2/groups/{uid}"), None).await;
        assert_eq!(status, 200, "acknowledged create {uid} is lost: {body}");
    }
    server.signal("-TERM");
    assert!(server.wait().success());
}

async fn wait_for(answered: &AtomicUsize, count: usize) {
    let started = Instant::now();
    while answered.load(Ordering::Relaxed) < count {
        assert!(started.elapsed() < BOUND, "the burst is not being answered");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_in_flight_requests_and_exits_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path());
    let root = create_root(&server, "drain").await;

    // A create whose body is still arriving when the signal comes: it is in
    // flight, so it must be finished and answered.
    let body = json!({"name": "in flight at SIGTERM"}).to_string();
    let (first, rest) = body.split_at(body.len() / 2);
    let mut in_flight = Connection::open(&server.address, true).await.unwrap();
    let head = format!(
        "POST /iam/v2/groups/{root} HTTP/1.1\r\nHost: localhost\r\n\
         Authorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{first}",
        server.token,
        body.len()
    );
    in_flight.stream.write_all(head.as_bytes()).await.unwrap();

    let answered = Arc::new(AtomicUsize::new(0));
    let burst = {
        let answered = Arc::clone(&answered);
        let server = &server;
        let root = root.clone();
        async move { burst(server, &root, 16, true, answered).await }
    };
    let terminate = async {
        wait_for(&answered, 50).await;
        server.signal("-TERM");
        // Stopping is under way (the burst's connections are refused)
        // before the rest of the body is sent.
        tokio::time::sleep(Duration::from_millis(500)).await;
        in_flight.stream.write_all(rest.as_bytes()).await.unwrap();
        in_flight.response().await
    };
    let (mut burst, in_flight) = tokio::join!(burst, terminate);
    let Outcome::Answered(200, created) = in_flight else {
        panic!("the request in flight at SIGTERM was not answered: {in_flight:?}");
    };
    burst
        .acknowledged
        .push(created["uid"].as_str().unwrap().to_owned());

    let status = server.wait();
    eprintln!(
        "SIGTERM: {} answered, {} acknowledged creates, {} connection errors",
        burst.answered,
        burst.acknowledged.len(),
        burst.connection_errors
    );
    assert!(status.success(), "exit status {status}");
    assert!(server.logged("stopped"), "{:?}", server.log.lock().unwrap());
    assert!(burst.answered >= 50, "{burst:?}");
    assert!(!burst.acknowledged.is_empty());
    drop(server);

    assert_all_readable(dir.path(), &burst.acknowledged).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_loses_no_acknowledged_create() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start(dir.path());
    let root = create_root(&server, "crash").await;

    let answered = Arc::new(AtomicUsize::new(0));
    let burst = {
        let answered = Arc::clone(&answered);
        let server = &server;
        let root = root.clone();
        async move { burst(server, &root, 8, false, answered).await }
    };
    let kill = async {
        wait_for(&answered, 60).await;
        server.signal("-KILL");
    };
    let (burst, ()) = tokio::join!(burst, kill);
    let status = server.wait();
    eprintln!(
        "SIGKILL: {} answered, {} acknowledged creates, {} connection errors",
        burst.answered,
        burst.acknowledged.len(),
        burst.connection_errors
    );
    assert!(!status.success(), "killed, not exited: {status}");
    assert!(burst.acknowledged.len() >= 10, "{burst:?}");
    drop(server);

    assert_all_readable(dir.path(), &burst.acknowledged).await;
}

/// Starts the binary as [`start`] does, holding long-running operations
/// for `lease` between renewals.
fn start_leased(data_dir: &Path, lease: &str) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_platform-server"));
    command.args(["--operation-lease", lease]);
    if let Ok(url) = std::env::var("E2E_DATABASE_URL") {
        command.args(["--database-url", &url]);
    }
    Server::spawn(command, data_dir)
}

/// Long-running repository deletes (AIP-151) interrupted by SIGKILL: once
/// the server is back and their lease has passed, every operation it
/// acknowledged reads done, and its write is whole: a delete that
/// succeeded left no repository, one that ended `ABORTED` left it as it
/// was. Never a success whose repository remains, nor a repository gone
/// under a failed operation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_leaves_every_operation_ended_with_its_write_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = start_leased(dir.path(), "1s");
    let root = create_root(&server, "operations").await;
    let mut repos = Vec::new();
    for index in 0..48 {
        let path = format!("/registry/v2/repos/{root}");
        let (status, body) = request(
            &server,
            "POST",
            &path,
            Some(json!({"name": format!("r{index}")})),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        repos.push(body["uid"].as_str().unwrap().to_owned());
    }
    let started = Arc::new(std::sync::Mutex::new(Vec::new()));
    let workers = repos.chunks(6).map(|chunk| {
        let (server, started) = (&server, Arc::clone(&started));
        async move {
            let Some(mut connection) = Connection::open(&server.address, false).await else {
                return;
            };
            for repo in chunk {
                let path = format!("/registry/v2/repos/{repo}:delete");
                match connection
                    .exchange("POST", &path, &server.token, None)
                    .await
                {
                    Outcome::Answered(200, body) => {
                        let name = body["name"].as_str().unwrap().to_owned();
                        started.lock().unwrap().push((repo.clone(), name));
                    }
                    Outcome::Answered(status, body) => panic!("{status}: {body}"),
                    Outcome::ConnectionError => return,
                }
            }
        }
    });
    let kill = async {
        while started.lock().unwrap().len() < 16 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        server.signal("-KILL");
    };
    tokio::join!(futures_util::future::join_all(workers), kill);
    assert!(!server.wait().success());
    drop(server);

    let server = start_leased(dir.path(), "1s");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let started = started.lock().unwrap().clone();
    let (mut deleted, mut aborted) = (0, 0);
    for (repo, name) in &started {
        let (status, operation) =
            request(&server, "GET", &format!("/registry/v2/{name}"), None).await;
        assert_eq!(status, 200, "{operation}");
        assert_eq!(operation["done"], true, "{operation}");
        let (status, _) =
            request(&server, "GET", &format!("/registry/v2/repos/{repo}"), None).await;
        match operation.get("error") {
            None => {
                assert_eq!(status, 404, "{repo} deleted by {operation}");
                deleted += 1;
            }
            Some(error) => {
                assert_eq!(error["code"], 10, "ABORTED: {operation}");
                assert_eq!(status, 200, "{repo} kept under {operation}");
                aborted += 1;
            }
        }
    }
    eprintln!(
        "SIGKILL: {} operations acknowledged, {deleted} done, {aborted} aborted",
        started.len()
    );
    assert!(started.len() >= 16);
}
