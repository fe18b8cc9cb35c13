//! A server killed (SIGKILL) in the middle of image pushes leaves no part of a
//! blob under any digest: every file of the blob store hashes to its name,
//! the blob being pushed is unknown after the restart, the blobs pushed
//! before are intact, and an upload session left in progress resumes on the
//! restarted server.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::Server;
use sha2::{Digest as _, Sha256};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

fn start(data_dir: &Path) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_platform-server"));
    if let Ok(url) = std::env::var("E2E_DATABASE_URL") {
        command.args(["--database-url", &url]);
    }
    Server::spawn(command, data_dir)
}

fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    format!(
        "sha256:{}",
        hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// Sends one request on a connection of its own; the status, the
/// headers' text and the body.
async fn send(
    address: &str,
    method: &str,
    path: &str,
    token: &str,
    extra: &str,
    body: &[u8],
) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n{extra}\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(answer.len(), |at| at + 4);
    let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head, answer[split..].to_vec())
}

fn uid(body: &[u8]) -> String {
    let value: serde_json::Value = serde_json::from_slice(body).unwrap();
    value["uid"].as_str().unwrap().to_owned()
}

/// Opens a request that declares `total` bytes and sends the first `sent`.
async fn half_sent(
    address: &str,
    method: &str,
    path: &str,
    token: &str,
    bytes: &[u8],
    total: usize,
) -> TcpStream {
    let mut stream = TcpStream::connect(address).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/octet-stream\r\nContent-Length: {total}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    stream.flush().await.unwrap();
    stream
}

#[tokio::test]
async fn a_killed_push_leaves_no_partial_blob_under_a_digest() {
    let data = tempfile::tempdir().unwrap();
    let mut server = start(data.path());
    let (address, token) = (server.address.clone(), server.token.trim().to_owned());
    let json = "Content-Type: application/json\r\n";
    let (status, _, body) = send(
        &address,
        "POST",
        "/iam/v2/groups/",
        &token,
        json,
        br#"{"name": "crash"}"#,
    )
    .await;
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let org = uid(&body);
    let (_, _, body) = send(
        &address,
        "POST",
        &format!("/registry/v2/repos/{org}"),
        &token,
        json,
        br#"{"name": "crashing"}"#,
    )
    .await;
    let repo = uid(&body);

    let before = vec![1u8; 1 << 20];
    let (status, _, body) = send(
        &address,
        "POST",
        &format!("/v2/{repo}/blobs/uploads/?digest={}", digest(&before)),
        &token,
        "",
        &before,
    )
    .await;
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&body));
    let (status, head, _) = send(
        &address,
        "POST",
        &format!("/v2/{repo}/blobs/uploads/"),
        &token,
        "",
        b"",
    )
    .await;
    assert_eq!(status, 202);
    let session = head
        .lines()
        .find_map(|line| line.strip_prefix("location: "))
        .unwrap()
        .trim()
        .to_owned();
    let resumable: Vec<u8> = (0..4_000_000u32).map(|i| (i % 253) as u8).collect();
    let (status, _, _) = send(
        &address,
        "PATCH",
        &session,
        &token,
        "Content-Range: 0-999999\r\n",
        &resumable[..1_000_000],
    )
    .await;
    assert_eq!(status, 202);

    // Pushes in flight: a monolithic blob and the session's next chunk, each
    // half sent when the server dies.
    let blob: Vec<u8> = (0..8_000_000u32).map(|i| (i % 241) as u8).collect();
    let monolithic = half_sent(
        &address,
        "POST",
        &format!("/v2/{repo}/blobs/uploads/?digest={}", digest(&blob)),
        &token,
        &blob[..4_000_000],
        blob.len(),
    )
    .await;
    let chunk = half_sent(
        &address,
        "PATCH",
        &session,
        &token,
        &resumable[1_000_000..2_000_000],
        3_000_000,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    drop((monolithic, chunk));

    let blobs = data.path().join("registry/blobs/sha256");
    let mut stored = 0;
    for prefix in std::fs::read_dir(&blobs).unwrap() {
        for file in std::fs::read_dir(prefix.unwrap().path()).unwrap() {
            let file = file.unwrap();
            let name = file.file_name().to_string_lossy().into_owned();
            assert_eq!(
                digest(&std::fs::read(file.path()).unwrap()),
                format!("sha256:{name}"),
                "a blob is its digest"
            );
            stored += 1;
        }
    }
    assert_eq!(stored, 1, "only the blob pushed before the kill");

    let server = start(data.path());
    let (address, token) = (server.address.clone(), server.token.trim().to_owned());
    let (status, _, body) = send(
        &address,
        "GET",
        &format!("/v2/{repo}/blobs/{}", digest(&blob)),
        &token,
        "",
        b"",
    )
    .await;
    assert_eq!(
        status,
        404,
        "the blob whose push was cut is unknown: {}",
        String::from_utf8_lossy(&body)
    );
    let (status, _, body) = send(
        &address,
        "GET",
        &format!("/v2/{repo}/blobs/{}", digest(&before)),
        &token,
        "",
        b"",
    )
    .await;
    assert_eq!(
        (status, body.len()),
        (200, before.len()),
        "the blob pushed before is intact"
    );

    let (status, head, _) = send(&address, "GET", &session, &token, "", b"").await;
    assert_eq!(status, 204, "the session outlives the server");
    let end: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("range: 0-"))
        .unwrap()
        .trim()
        .parse::<usize>()
        .unwrap()
        + 1;
    assert!((1_000_000..=2_000_000).contains(&end), "{end}");
    let range = format!("Content-Range: {end}-{}\r\n", resumable.len() - 1);
    let (status, _, body) = send(
        &address,
        "PATCH",
        &session,
        &token,
        &range,
        &resumable[end..],
    )
    .await;
    assert_eq!(status, 202, "{}", String::from_utf8_lossy(&body));
    let (status, _, body) = send(
        &address,
        "PUT",
        &format!("{session}?digest={}", digest(&resumable)),
        &token,
        "",
        b"",
    )
    .await;
    assert_eq!(
        status,
        201,
        "resumed and finished: {}",
        String::from_utf8_lossy(&body)
    );
    let (status, _, body) = send(
        &address,
        "GET",
        &format!("/v2/{repo}/blobs/{}", digest(&resumable)),
        &token,
        "",
        b"",
    )
    .await;
    assert_eq!((status, body.len()), (200, resumable.len()));
}
