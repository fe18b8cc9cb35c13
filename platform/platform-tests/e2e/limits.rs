//! Connection limits and the timeouts that bound what a client holds, on
//! real sockets: the write timeout (a client that does not read its
//! answer), the body timeout for a whole gRPC body (one that trickles in a
//! byte at a time), the connection limit, the stream timeout (a health
//! `Watch` that would stay open forever) and the HTTP/2 stream limit.
//!
//! Timeouts are configured short (hundreds of ms); every wait for the server
//! to act is bounded by [`BOUND`], and the tests check that it did not act
//! before the timeout either.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::{BodyExt, Empty, Full, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::{TokioExecutor, TokioIo};
use platform_tests::{StatusCode, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Longest wait for the server to act on a timeout.
const BOUND: Duration = Duration::from_secs(15);
const GET_GROUP: &str = "/platform.iam.v2.GroupService/GetGroup";
const HEALTH_WATCH: &str = "/grpc.health.v1.Health/Watch";

/// Reads the head of an HTTP/1.1 response (and whatever of its body comes
/// with it) and returns its status; fails when none arrives within [`BOUND`].
async fn read_status(stream: &mut TcpStream) -> u16 {
    let mut received = Vec::new();
    let read = async {
        let mut buf = [0u8; 16 * 1024];
        while !received.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).await.expect("a response");
            assert!(n > 0, "the connection closed before a response");
            received.extend_from_slice(&buf[..n]);
        }
    };
    tokio::time::timeout(BOUND, read)
        .await
        .expect("the server answers");
    let text = String::from_utf8_lossy(&received);
    text.split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status line")
}

/// Fails if anything arrives on `stream` (or it closes) within `wait`.
async fn assert_not_served(stream: &mut TcpStream, wait: Duration) {
    let mut buf = [0u8; 64];
    if let Ok(read) = tokio::time::timeout(wait, stream.read(&mut buf)).await {
        panic!("expected no answer while the server is full, got {read:?}");
    }
}

/// A connection with a small receive buffer, so that a client that does not
/// read stops the server's writes after a few kilobytes.
async fn small_window_connection(address: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(address).await.unwrap()
}

fn get(path: &str, token: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\r\n")
}

#[tokio::test]
async fn a_client_that_does_not_read_is_disconnected() {
    const WRITE: Duration = Duration::from_millis(500);
    let (server, _dir) = TestServer::start_configured(|c| c.timeouts.write = WRITE).await;
    let document = platform_api::OPENAPI_JSON.len();

    // HTTP/1.1: 64 pipelined requests for the OpenAPI document (about
    // 10 MB of answers, far more than the socket buffers hold), then no
    // reading. Without a write timeout the server would wait for ever, and
    // once the client reads it would get every answer on a connection kept
    // open for the idle timeout (60 s).
    let requests = 64;
    let mut stream = small_window_connection(server.address).await;
    let request = get("/openapi.json", &server.admin_token);
    stream
        .write_all(request.repeat(requests).as_bytes())
        .await
        .unwrap();
    tokio::time::sleep(WRITE * 6).await;
    // Reading now only drains what was sent before the server closed the
    // connection (with a reset, some of it may be lost).
    let received = platform_tests::read_until_closed(&mut stream, BOUND).await;
    assert!(
        received.len() < requests * document,
        "the server stopped writing: {} of {} bytes arrived",
        received.len(),
        requests * document
    );

    // HTTP/2, where the client's flow-control window (64 KiB) stops the
    // server, not the socket: the response is never read, and the whole
    // connection is closed once the write timeout passes.
    let io = TokioIo::new(TcpStream::connect(server.address).await.unwrap());
    let (mut sender, connection) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
        .initial_stream_window_size(65_535)
        .initial_connection_window_size(65_535)
        .handshake::<_, Empty<Bytes>>(io)
        .await
        .unwrap();
    let connection = tokio::spawn(connection);
    let request = http::Request::get(format!("http://{}/openapi.json", server.address))
        .header(
            http::header::AUTHORIZATION,
            format!("Bearer {}", server.admin_token),
        )
        .body(Empty::new())
        .unwrap();
    // Timed from before the request: the server's clock starts later.
    let sent = Instant::now();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    tokio::time::timeout(BOUND, connection)
        .await
        .expect("the server closes a connection whose client does not read")
        .unwrap()
        .ok();
    assert!(sent.elapsed() >= WRITE, "closed before the write timeout");
    // Kept until here: dropping it would reset the stream.
    drop(response);
    server.stop().await;
}

#[tokio::test]
async fn a_client_that_reads_slowly_gets_its_whole_answer() {
    const WRITE: Duration = Duration::from_millis(500);
    let (server, _dir) = TestServer::start_configured(|c| c.timeouts.write = WRITE).await;
    let document = platform_api::OPENAPI_JSON.len();

    // The write timeout is for a client that stops reading, not for a slow
    // answer: 4 KiB every 50 ms takes several write timeouts in all, and
    // each read lets the server go on.
    let mut stream = small_window_connection(server.address).await;
    stream
        .write_all(get("/openapi.json", &server.admin_token).as_bytes())
        .await
        .unwrap();
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let complete = |received: &[u8]| {
        received
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .is_some_and(|head| received.len() >= head + 4 + document)
    };
    while !complete(&received) {
        let n = tokio::time::timeout(BOUND, stream.read(&mut buf))
            .await
            .expect("the answer goes on")
            .unwrap();
        assert!(
            n > 0,
            "closed after {} bytes in {:?}",
            received.len(),
            started.elapsed()
        );
        received.extend_from_slice(&buf[..n]);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let head_end = received.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(received.starts_with(b"HTTP/1.1 200"));
    assert_eq!(received.len(), head_end + document);
    assert!(
        started.elapsed() > WRITE * 2,
        "the answer took longer than the write timeout in all ({:?})",
        started.elapsed()
    );
    // The connection is still open and serves the next request.
    stream
        .write_all(get("/iam/v2/groups?pageSize=1", &server.admin_token).as_bytes())
        .await
        .unwrap();
    assert_eq!(read_status(&mut stream).await, 200);
    server.stop().await;
}

/// A gRPC frame prefix: the compressed flag and the message length.
fn frame(length: u32) -> Vec<u8> {
    let mut bytes = vec![0];
    bytes.extend_from_slice(&length.to_be_bytes());
    bytes
}

fn message(payload: &[u8]) -> Vec<u8> {
    let mut bytes = frame(payload.len() as u32);
    bytes.extend_from_slice(payload);
    bytes
}

/// A request body sending `bytes` one at a time, `every` apart.
fn trickle(bytes: Vec<u8>, every: Duration) -> GrpcBody {
    let stream = futures_util::stream::iter(bytes).then(move |byte| async move {
        tokio::time::sleep(every).await;
        Ok(Frame::data(Bytes::copy_from_slice(&[byte])))
    });
    BodyExt::boxed_unsync(StreamBody::new(Box::pin(stream)))
}

/// A request body sent at once.
fn whole(bytes: Vec<u8>) -> GrpcBody {
    BodyExt::boxed_unsync(Full::new(Bytes::from(bytes)))
}

/// An HTTP/2 connection to the server, driven in the background.
async fn http2(address: SocketAddr) -> hyper::client::conn::http2::SendRequest<GrpcBody> {
    let io = TokioIo::new(TcpStream::connect(address).await.unwrap());
    let (sender, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
        .await
        .unwrap();
    tokio::spawn(connection);
    sender
}

type GrpcBody = http_body_util::combinators::UnsyncBoxBody<Bytes, std::convert::Infallible>;

/// A gRPC request as the administrator.
fn grpc_request(server: &TestServer, path: &str, body: GrpcBody) -> http::Request<GrpcBody> {
    http::Request::post(format!("http://{}{path}", server.address))
        .header(http::header::CONTENT_TYPE, "application/grpc")
        .header(http::header::TE, "trailers")
        .header(
            http::header::AUTHORIZATION,
            format!("Bearer {}", server.admin_token),
        )
        .body(body)
        .unwrap()
}

/// The status of a gRPC response: from its headers (trailers-only) or its
/// trailers.
async fn grpc_status(response: http::Response<hyper::body::Incoming>) -> tonic::Status {
    assert_eq!(response.status(), StatusCode::OK);
    if let Some(status) = tonic::Status::from_header_map(response.headers()) {
        return status;
    }
    let collected = response.into_body().collect().await.unwrap();
    let trailers = collected.trailers().cloned().unwrap_or_default();
    tonic::Status::from_header_map(&trailers).expect("a grpc-status")
}

/// Asserts a DEADLINE_EXCEEDED status with this ErrorInfo reason.
fn assert_deadline_exceeded(status: &tonic::Status, reason: &str) {
    assert_eq!(status.code(), tonic::Code::DeadlineExceeded, "{status:?}");
    let error = protoapi_runtime::Error::from_status(status).expect("an ErrorInfo");
    assert_eq!(error.reason(), reason);
}

/// The head of a create of a group as the administrator, announcing a
/// body of `length` bytes.
fn create_head(server: &TestServer, length: usize) -> String {
    format!(
        "POST /iam/v2/groups/ HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n",
        server.admin_token
    )
}

#[tokio::test]
async fn a_trickling_grpc_body_is_cut_off_as_a_whole() {
    const BODY: Duration = Duration::from_millis(800);
    let (server, _dir) = TestServer::start_configured(|c| c.timeouts.body = BODY).await;
    // A valid GetGroup request of 47 bytes, sent one byte every BODY / 4:
    // no pause comes near the body timeout, but the whole body would take
    // about 10 s.
    let body = message(&[[0x0a, 40].as_slice(), &[b'0'; 40]].concat());
    let trickled = body.len() as u32 * BODY / 4;
    let mut sender = http2(server.address).await;
    let started = Instant::now();
    let response = tokio::time::timeout(
        BOUND,
        sender.send_request(grpc_request(&server, GET_GROUP, trickle(body, BODY / 4))),
    )
    .await
    .expect("the server answers")
    .unwrap();
    let status = grpc_status(response).await;
    let elapsed = started.elapsed();
    assert_deadline_exceeded(&status, "REQUEST_BODY_TIMEOUT");
    assert!(elapsed >= BODY, "answered before the body timeout");
    assert!(
        elapsed < trickled / 2,
        "answered after {elapsed:?}, not at the body timeout"
    );

    // The same body sent at once is served (the group does not exist).
    let body = message(&[[0x0a, 40].as_slice(), &[b'0'; 40]].concat());
    let response = sender
        .send_request(grpc_request(&server, GET_GROUP, whole(body)))
        .await
        .unwrap();
    let status = grpc_status(response).await;
    assert_ne!(status.code(), tonic::Code::DeadlineExceeded, "{status:?}");

    // A REST body trickling the same way is cut off at the same time.
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    let json = br#"{"name": "trickled", "description": "one byte at a time"}"#;
    let head = create_head(&server, json.len());
    stream.write_all(head.as_bytes()).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let started = Instant::now();
    let sending = tokio::spawn(async move {
        for byte in json {
            tokio::time::sleep(BODY / 4).await;
            if writer.write_all(&[*byte]).await.is_err() {
                return;
            }
        }
    });
    let mut received = Vec::new();
    tokio::time::timeout(BOUND, reader.read_to_end(&mut received))
        .await
        .expect("the server answers and closes")
        .ok();
    let elapsed = started.elapsed();
    sending.abort();
    assert!(
        received.starts_with(b"HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&received)
    );
    assert!(elapsed >= BODY);
    assert!(elapsed < json.len() as u32 * BODY / 8);
    server.stop().await;
}

/// Sends the head of a create and half of its body on a new connection,
/// which the server then holds as a request in progress.
async fn half_a_create(server: &TestServer, name: &str) -> (TcpStream, String) {
    let body = serde_json::json!({ "name": name }).to_string();
    let (first, rest) = body.split_at(body.len() / 2);
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    let head = create_head(server, body.len()) + first;
    stream.write_all(head.as_bytes()).await.unwrap();
    (stream, rest.to_owned())
}

/// Connects and sends `request`, which the server, full, must not serve
/// within `hold`.
async fn wait_in_line(server: &TestServer, request: &str, hold: Duration) -> TcpStream {
    let mut waiting = TcpStream::connect(server.address).await.unwrap();
    waiting.write_all(request.as_bytes()).await.unwrap();
    assert_not_served(&mut waiting, hold).await;
    waiting
}

#[tokio::test]
async fn connections_beyond_the_limit_wait_for_a_free_one() {
    const MAX: usize = 3;
    /// How long a waiting connection is watched for an answer it must not get.
    const HOLD: Duration = Duration::from_secs(1);
    let (server, _dir) = TestServer::start_configured(|c| c.limits.max_connections = MAX).await;
    let list = format!(
        "GET /iam/v2/groups?pageSize=1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\n\
         Connection: close\r\n\r\n",
        server.admin_token
    );

    // MAX connections, each with a request in progress (half a body sent):
    // none is idle, so none can be closed to make room.
    let mut busy = Vec::new();
    for i in 0..MAX {
        busy.push(half_a_create(&server, &format!("busy {i}")).await);
    }
    // One more connects (the kernel completes the handshake) but is not
    // served while they are open.
    let mut waiting = wait_in_line(&server, &list, HOLD).await;

    // A client closing its connection frees a place: the waiting one is
    // served.
    let (closed, _) = busy.remove(0);
    drop(closed);
    assert_eq!(read_status(&mut waiting).await, 200);
    drop(waiting);

    // Full again: a new busy connection takes the freed place, and the next
    // one waits.
    busy.push(half_a_create(&server, "busy again").await);
    let mut waiting = wait_in_line(&server, &list, HOLD).await;

    // A request finishing leaves its keep-alive connection idle: while
    // clients wait, the server closes it at once instead of after the idle
    // timeout (60 s), and the waiting connection is served.
    let (mut finished, rest) = busy.remove(0);
    finished.write_all(rest.as_bytes()).await.unwrap();
    let started = Instant::now();
    assert_eq!(read_status(&mut finished).await, 200);
    platform_tests::read_until_closed(&mut finished, BOUND).await;
    assert_eq!(read_status(&mut waiting).await, 200);
    assert!(started.elapsed() < Duration::from_secs(10));

    // Every request in progress is still served once its body arrives.
    for (mut stream, rest) in busy {
        stream.write_all(rest.as_bytes()).await.unwrap();
        assert_eq!(read_status(&mut stream).await, 200);
    }
    server.stop().await;
}

#[tokio::test]
async fn a_server_stream_ends_at_the_stream_timeout() {
    const STREAM: Duration = Duration::from_millis(800);
    let (server, _dir) = TestServer::start_configured(|c| c.timeouts.stream = STREAM).await;
    // Health `Watch` of the whole server: the current status, then an update
    // whenever it changes, for ever.
    let mut sender = http2(server.address).await;
    let started = Instant::now();
    let response = sender
        .send_request(grpc_request(&server, HEALTH_WATCH, whole(message(&[]))))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let first = tokio::time::timeout(BOUND, body.frame())
        .await
        .expect("the current status")
        .expect("a frame")
        .unwrap();
    // HealthCheckResponse { status: SERVING }.
    assert_eq!(
        first.into_data().expect("a message").as_ref(),
        message(&[0x08, 0x01])
    );
    let rest = tokio::time::timeout(BOUND, body.collect())
        .await
        .expect("the stream ends")
        .unwrap();
    let elapsed = started.elapsed();
    let status = tonic::Status::from_header_map(&rest.trailers().cloned().unwrap_or_default())
        .expect("a grpc-status in the trailers");
    assert_deadline_exceeded(&status, "STREAM_TIMEOUT");
    assert!(elapsed >= STREAM, "ended before the stream timeout");

    // The connection goes on serving.
    let response = sender
        .send_request(grpc_request(
            &server,
            "/grpc.health.v1.Health/Check",
            whole(message(&[])),
        ))
        .await
        .unwrap();
    assert_eq!(grpc_status(response).await.code(), tonic::Code::Ok);
    server.stop().await;
}

#[tokio::test]
async fn http2_connections_advertise_the_stream_limit() {
    let (server, _dir) =
        TestServer::start_configured(|c| c.limits.max_concurrent_streams = 7).await;
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    // The preface and an empty SETTINGS frame.
    stream
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .await
        .unwrap();
    // The server's first frame is its SETTINGS: 6-byte entries of an id and
    // a value; SETTINGS_MAX_CONCURRENT_STREAMS is 0x3.
    let mut head = [0u8; 9];
    tokio::time::timeout(BOUND, stream.read_exact(&mut head))
        .await
        .expect("the server's SETTINGS")
        .unwrap();
    assert_eq!(head[3], 0x4, "a SETTINGS frame");
    let length = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
    let mut payload = vec![0u8; length];
    stream.read_exact(&mut payload).await.unwrap();
    let limit = payload
        .chunks_exact(6)
        .find(|entry| entry[..2] == [0, 3])
        .map(|entry| u32::from_be_bytes([entry[2], entry[3], entry[4], entry[5]]));
    assert_eq!(limit, Some(7));
    drop(stream);
    server.stop().await;
}

/// `curl` posting `file` as a create over `version`: its exit code and
/// what it printed (the answer, then its status). curl reports a stream
/// reset or a connection closed under its unfinished upload as an error
/// instead of reading the answer sent before it, as browsers may too.
async fn curl_create(
    server: &TestServer,
    version: &str,
    chunked: bool,
    file: &Path,
) -> (i32, String) {
    let mut curl = std::process::Command::new("curl");
    curl.args(["-sS", version, "-X", "POST", "--data-binary"])
        .arg(format!("@{}", file.display()))
        .args(["-H", "content-type: application/json", "-H"])
        .arg(format!("authorization: Bearer {}", server.admin_token))
        .args(["-w", "\n%{http_code}"])
        .arg(format!("http://{}/iam/v2/groups/", server.address));
    if chunked {
        curl.args(["-H", "transfer-encoding: chunked"]);
    }
    let output = tokio::task::spawn_blocking(move || curl.output())
        .await
        .unwrap()
        .expect("curl is installed (.ci/run installs it)");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap_or(-1), text)
}

/// A client still sending a body a little over the limit when the server
/// refuses it reads the 413: over HTTP/2 the stream ends cleanly instead of
/// being reset, over HTTP/1.1 the connection is not closed under the
/// upload. The server reads and drops up to 512 KiB past the limit first.
#[tokio::test]
async fn a_body_a_little_too_large_is_answered_413_while_it_is_still_sent() {
    let (server, dir) = TestServer::start_configured(|_| {}).await;
    let limit = protoapi_runtime::rest::MAX_BODY_BYTES;
    for (length, chunked) in [(limit + 1, false), (limit + (512 << 10), true)] {
        let file = dir.path().join(format!("body-{length}.json"));
        std::fs::write(&file, vec![b' '; length]).unwrap();
        for version in ["--http2-prior-knowledge", "--http1.1"] {
            let (code, answer) = curl_create(&server, version, chunked, &file).await;
            assert_eq!(code, 0, "{version}, {length} bytes: {answer}");
            assert!(answer.ends_with("\n413"), "{version}: {answer}");
            assert!(answer.contains("BODY_TOO_LARGE"), "{answer}");
        }
    }
    server.stop().await;
}
