//! A full disk, as the embedded database meets it: the server binary runs
//! with a file size limit (`ulimit -f`, `SIGXFSZ` ignored, so writes past
//! it fail with `EFBIG`, which SQLite reports as an I/O error writing).
//! Creates then answer 429 / `RESOURCE_EXHAUSTED` with reason
//! `STORAGE_FULL` (never 500, nothing of the cause), reads and `/readyz`
//! keep working, and after a SIGKILL and a restart without the limit every
//! acknowledged create is there, the database passes
//! `PRAGMA integrity_check`, and creates succeed again.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

/// Longest wait for the server to start.
const BOUND: Duration = Duration::from_secs(60);
/// The file size limit, in KiB: room for the bootstrap, not for much more.
const LIMIT_KIB: u64 = 1024;

/// A running `platform-server` process on the embedded database.
struct Server {
    child: Child,
    address: String,
    token: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts the binary on `data_dir`, under a file size limit if given.
    fn start(data_dir: &Path, limit_kib: Option<u64>) -> Server {
        let binary = env!("CARGO_BIN_EXE_platform-server");
        let mut command = match limit_kib {
            Some(limit) => {
                let mut command = Command::new("bash");
                command
                    .args(["-c", "trap '' XFSZ; ulimit -f \"$0\"; exec \"$@\""])
                    .arg(limit.to_string())
                    .arg(binary);
                command
            }
            None => Command::new(binary),
        };
        command
            .args(["--listen", "127.0.0.1:0"])
            .arg("--data-dir")
            .arg(data_dir)
            .env_remove("PLATFORM_DATABASE_URL")
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("the server binary starts");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (listening, address) = mpsc::channel();
        for output in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let log = Arc::clone(&log);
            let listening = listening.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(output).lines() {
                    let Ok(line) = line else { return };
                    if line.contains("listening")
                        && let Some(address) = field(&line, "address")
                    {
                        listening.send(address).ok();
                    }
                    log.lock().unwrap().push(line);
                }
            });
        }
        let Ok(address) = address.recv_timeout(BOUND) else {
            child.kill().ok();
            panic!("the server did not start: {:?}", log.lock().unwrap());
        };
        let token = std::fs::read_to_string(data_dir.join("admin.token")).unwrap();
        Server {
            child,
            address,
            token,
            log,
        }
    }

    /// One request as the administrator: status and JSON body.
    async fn request(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let client = Client::builder(TokioExecutor::new()).build_http();
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let request = axum::http::Request::builder()
            .method(method)
            .uri(format!("http://{}{path}", self.address))
            .header("authorization", format!("Bearer {}", self.token))
            .header("content-type", "application/json")
            .body(Full::new(bytes::Bytes::from(body)))
            .unwrap();
        let response = client.request(request).await.expect("the server answers");
        let status = response.status().as_u16();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    fn kill(mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

/// The value of `name=` in a log line.
fn field(line: &str, name: &str) -> Option<String> {
    let start = line.find(&format!("{name}="))? + name.len() + 1;
    let value = line[start..].split_whitespace().next()?;
    Some(value.trim_matches('"').to_owned())
}

fn reason(body: &Value) -> &str {
    body["error"]["details"]
        .as_array()
        .and_then(|details| details.iter().find_map(|d| d["reason"].as_str()))
        .unwrap_or_default()
}

#[tokio::test]
async fn a_full_disk_refuses_writes_keeps_reads_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let server = Server::start(data, Some(LIMIT_KIB));
    let (status, root) = server
        .request("POST", "/iam/v2/groups/", Some(json!({"name": "full"})))
        .await;
    assert_eq!(status, 200, "{root}");
    let root = root["uid"].as_str().unwrap().to_owned();

    let description = "x".repeat(1000);
    let mut acknowledged = Vec::new();
    let mut refused = 0;
    for i in 0..5000 {
        let body = json!({"name": format!("g{i}"), "description": description});
        let (status, answer) = server
            .request("POST", &format!("/iam/v2/groups/{root}"), Some(body))
            .await;
        match status {
            200 => acknowledged.push(answer["uid"].as_str().unwrap().to_owned()),
            _ => {
                assert_eq!(
                    status,
                    429,
                    "a create on a full disk: {answer}; log: {:?}",
                    server.log.lock().unwrap()
                );
                assert_eq!(answer["error"]["status"], "RESOURCE_EXHAUSTED");
                assert_eq!(reason(&answer), "STORAGE_FULL", "{answer}");
                let text = answer.to_string();
                assert!(!text.contains("I/O") && !text.contains(".db"), "{text}");
                refused += 1;
                if refused == 5 {
                    break;
                }
            }
        }
    }
    assert_eq!(refused, 5, "the file size limit was never reached");
    assert!(!acknowledged.is_empty(), "no create fitted below the limit");
    assert!(
        server
            .log
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("storage full")),
        "the cause is logged"
    );

    // Reads go on.
    for uid in acknowledged.iter().rev().take(5) {
        let (status, body) = server
            .request("GET", &format!("/iam/v2/groups/{uid}"), None)
            .await;
        assert_eq!(status, 200, "{body}");
    }
    let (status, list) = server
        .request(
            "GET",
            &format!("/iam/v2/groups?uidp.childrenOf={root}&pageSize=1"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(server.request("GET", "/readyz", None).await.0, 200);

    // Killed, restarted without the limit: everything acknowledged is there.
    server.kill();
    let server = Server::start(data, None);
    for uid in &acknowledged {
        let (status, body) = server
            .request("GET", &format!("/iam/v2/groups/{uid}"), None)
            .await;
        assert_eq!(status, 200, "acknowledged create {uid} is lost: {body}");
    }
    let body = json!({"name": "after", "description": description});
    let (status, answer) = server
        .request("POST", &format!("/iam/v2/groups/{root}"), Some(body))
        .await;
    assert_eq!(status, 200, "{answer}");
    server.kill();

    let path = data.join("platform.db");
    let url = format!("sqlite://{}", path.display());
    use sqlx::Connection as _;
    let mut connection = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    assert_eq!(check, "ok");
}
