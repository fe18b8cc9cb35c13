//! A full disk, as the embedded database meets it: the server binary runs
//! with a file size limit (`ulimit -f`, `SIGXFSZ` ignored, so writes past
//! it fail with `EFBIG`, which SQLite reports as an I/O error writing).
//! Creates then answer 429 / `RESOURCE_EXHAUSTED` with reason
//! `STORAGE_FULL` (never 500, nothing of the cause), reads and `/readyz`
//! keep working, and after a SIGKILL and a restart without the limit every
//! acknowledged create is there, the database passes
//! `PRAGMA integrity_check`, and creates succeed again.

mod common;

use std::path::Path;
use std::process::Command;

use common::Server;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

/// The file size limit, in KiB: room for the bootstrap, not for much more.
const LIMIT_KIB: u64 = 2048;

/// Starts the binary on `data_dir` (the embedded database), under a file
/// size limit if given.
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
    command.env_remove("PLATFORM_DATABASE_URL");
    Server::spawn(command, data_dir)
}

/// One request as the administrator: status and JSON body.
async fn request(server: &Server, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let client = Client::builder(TokioExecutor::new()).build_http();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = axum::http::Request::builder()
        .method(method)
        .uri(format!("http://{}{path}", server.address))
        .header("authorization", format!("Bearer {}", server.token))
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
    let server = start(data, Some(LIMIT_KIB));
    let (status, root) = request(
        &server,
        "POST",
        "/iam/v2/groups/",
        Some(json!({"name": "full"})),
    )
    .await;
    assert_eq!(status, 200, "{root}");
    let root = root["uid"].as_str().unwrap().to_owned();

    let description = "x".repeat(1000);
    let mut acknowledged = Vec::new();
    let mut refused = 0;
    for i in 0..5000 {
        let body = json!({"name": format!("g{i}"), "description": description});
        let (status, answer) = request(
            &server,
            "POST",
            &format!("/iam/v2/groups/{root}"),
            Some(body),
        )
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
    assert!(server.logged("storage full"), "the cause is logged");

    // Reads go on.
    for uid in acknowledged.iter().rev().take(5) {
        let (status, body) = request(&server, "GET", &format!("/iam/v2/groups/{uid}"), None).await;
        assert_eq!(status, 200, "{body}");
    }
    let (status, list) = request(
        &server,
        "GET",
        &format!("/iam/v2/groups?uidp.childrenOf={root}&pageSize=1"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(request(&server, "GET", "/readyz", None).await.0, 200);

    // Killed, restarted without the limit: everything acknowledged is there.
    drop(server);
    let server = start(data, None);
    for uid in &acknowledged {
        let (status, body) = request(&server, "GET", &format!("/iam/v2/groups/{uid}"), None).await;
        assert_eq!(status, 200, "acknowledged create {uid} is lost: {body}");
    }
    let body = json!({"name": "after", "description": description});
    let (status, answer) = request(
        &server,
        "POST",
        &format!("/iam/v2/groups/{root}"),
        Some(body),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    drop(server);

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
