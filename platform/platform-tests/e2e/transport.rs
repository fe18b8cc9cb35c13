//! The transport on real sockets: header, body and idle timeouts, duplicate
//! `Authorization` headers, and gRPC requests that fail before a handler
//! runs (undecodable, oversized or malformed frames).
//!
//! Timeouts are configured short (1 s); every wait for the server to act is
//! bounded by [`BOUND`], and the tests check that it did not act before the
//! timeout either.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame};
use hyper_util::rt::{TokioExecutor, TokioIo};
use platform_api::platform::iam::v2::GetGroupRequest;
use platform_api::platform::iam::v2::group_service_client::GroupServiceClient;
use platform_tests::{StatusCode, TestServer};
use protoapi_runtime::Code;
use protoapi_runtime::serve::Timeouts;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The timeout under test.
const SHORT: Duration = Duration::from_secs(1);
/// Longest wait for the server to act on a timeout.
const BOUND: Duration = Duration::from_secs(15);
const GET_GROUP: &str = "/platform.iam.v2.GroupService/GetGroup";

async fn start(timeouts: Timeouts) -> (TestServer, tempfile::TempDir) {
    TestServer::start_configured(|config| config.timeouts = timeouts).await
}

/// Status and body of a raw HTTP/1.1 response.
fn parse_response(bytes: &[u8]) -> (u16, Value) {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\r\n\r\n").expect("a complete head");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    let body = serde_json::from_str(body).unwrap_or(Value::Null);
    (status, body)
}

fn error_reason(body: &Value) -> &str {
    body["error"]["details"]
        .as_array()
        .and_then(|details| {
            details.iter().find(|d| {
                d["@type"]
                    .as_str()
                    .is_some_and(|t| t.ends_with(".ErrorInfo"))
            })
        })
        .and_then(|info| info["reason"].as_str())
        .unwrap_or_default()
}

#[tokio::test]
async fn slow_request_heads_are_cut_off() {
    let (server, _dir) = start(Timeouts {
        header: SHORT,
        ..Timeouts::default()
    })
    .await;
    let partial_heads: [&[u8]; 4] = [
        b"",
        b"GET /iam/v2/groups HTTP/1.1\r\nHost: x\r\n",
        b"PRI * HTTP/2.0\r\n",
        b"P",
    ];
    for head in partial_heads {
        let started = Instant::now();
        let mut stream = TcpStream::connect(server.address).await.unwrap();
        stream.write_all(head).await.unwrap();
        let received = platform_tests::read_until_closed(&mut stream, BOUND).await;
        assert!(
            received.is_empty(),
            "{head:?}: nothing is answered, got {received:?}"
        );
        assert!(
            started.elapsed() >= SHORT,
            "{head:?}: closed before the timeout"
        );
    }

    // A head trickling in byte by byte is cut off too: the timeout bounds
    // the whole head, not the pause between bytes.
    let started = Instant::now();
    let stream = TcpStream::connect(server.address).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let trickle = tokio::spawn(async move {
        for byte in b"GET /iam/v2/groups HTTP/1.1\r\nHost: localhost\r\nX-Slow: "
            .iter()
            .cycle()
        {
            if writer.write_all(&[*byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let closed = tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 64];
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => {}
            Ok(_) => panic!("a trickled head is not answered"),
        }
    })
    .await;
    trickle.abort();
    assert!(closed.is_ok(), "a trickling head is cut off");
    assert!(started.elapsed() >= SHORT);

    // A later request on a new connection is served as usual, and so is one
    // on a keep-alive connection whose head arrives in time.
    assert_eq!(
        server.rest().get("/iam/v2/groups?pageSize=1").await.status,
        StatusCode::OK
    );
    server.stop().await;
}

#[tokio::test]
async fn many_slow_connections_are_all_closed() {
    let (server, _dir) = start(Timeouts {
        header: SHORT,
        ..Timeouts::default()
    })
    .await;
    let mut slow = tokio::task::JoinSet::new();
    for i in 0..200 {
        // Timed from before the connection exists: the server's clock starts
        // at accept, and a busy machine may run this task much later.
        let started = Instant::now();
        let mut stream = TcpStream::connect(server.address).await.unwrap();
        slow.spawn(async move {
            stream
                .write_all(format!("GET /iam/v2/groups?n={i} HTTP/1.1\r\nHost:").as_bytes())
                .await
                .unwrap();
            let received = platform_tests::read_until_closed(&mut stream, BOUND).await;
            (received, started.elapsed())
        });
    }
    // The server keeps serving while they are open.
    assert_eq!(
        server.rest().get("/iam/v2/groups?pageSize=1").await.status,
        StatusCode::OK
    );
    let mut closed = 0;
    while let Some(result) = slow.join_next().await {
        let (received, elapsed) = result.unwrap();
        assert!(received.is_empty());
        assert!(elapsed >= SHORT, "closed after {elapsed:?}");
        closed += 1;
    }
    assert_eq!(closed, 200);
    server.stop().await;
}

/// Sends a request head declaring `length` body bytes, then 12 of them, then
/// nothing; returns what arrived before the server closed the connection.
async fn stalled_body(server: &TestServer, length: usize) -> Vec<u8> {
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    let head = format!(
        "POST /iam/v2/groups/ HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n{{\"name\": \"a",
        server.admin_token
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    platform_tests::read_until_closed(&mut stream, BOUND).await
}

#[tokio::test]
async fn slow_request_bodies_are_cut_off() {
    let (server, _dir) = start(Timeouts {
        body: SHORT,
        ..Timeouts::default()
    })
    .await;

    // Declared within the 1 MiB limit: answered 408 when the timeout passes,
    // then the connection is closed.
    let started = Instant::now();
    let received = stalled_body(&server, 500 * 1024).await;
    assert!(started.elapsed() >= SHORT);
    let (status, body) = parse_response(&received);
    assert_eq!(status, 408, "{body}");
    assert_eq!(body["error"]["status"], "DEADLINE_EXCEEDED");
    assert_eq!(error_reason(&body), "REQUEST_BODY_TIMEOUT");

    // Declared above the limit: refused at once as too large, without
    // waiting for the body.
    let started = Instant::now();
    let received = stalled_body(&server, 2 << 20).await;
    assert!(
        started.elapsed() < SHORT,
        "answered before the body timeout"
    );
    let (status, body) = parse_response(&received);
    assert_eq!(status, 413, "{body}");
    assert_eq!(error_reason(&body), "BODY_TOO_LARGE");

    // A body that arrives in time is served.
    let root = server
        .rest()
        .create("/iam/v2/groups/", serde_json::json!({"name": "in time"}))
        .await;
    assert!(!root.is_empty());
    server.stop().await;
}

/// A request body that sends `first`, then `rest` once `gate` opens.
struct Gated {
    first: Option<Bytes>,
    rest: Option<Bytes>,
    gate: tokio::sync::oneshot::Receiver<()>,
}

impl Body for Gated {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(first) = self.first.take() {
            return Poll::Ready(Some(Ok(Frame::data(first))));
        }
        if self.rest.is_none() {
            return Poll::Ready(None);
        }
        if Pin::new(&mut self.gate).poll(cx).is_pending() {
            return Poll::Pending;
        }
        Poll::Ready(self.rest.take().map(|rest| Ok(Frame::data(rest))))
    }
}

#[tokio::test]
async fn requests_in_flight_finish_during_the_drain() {
    let (server, _dir) = start(Timeouts::default()).await;
    let root = server
        .rest()
        .create("/iam/v2/groups/", serde_json::json!({"name": "drain"}))
        .await;
    let (address, token) = (server.address, server.admin_token.clone());

    // A REST create and a gRPC create, each with half of its body sent.
    let body = serde_json::json!({"name": "over REST"}).to_string();
    let (first, rest) = body.split_at(body.len() / 2);
    let mut over_rest = TcpStream::connect(address).await.unwrap();
    over_rest
        .write_all(
            format!(
                "POST /iam/v2/groups/{root} HTTP/1.1\r\nHost: localhost\r\n\
                 Authorization: Bearer {token}\r\nContent-Type: application/json\r\n\
                 Content-Length: {}\r\n\r\n{first}",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let request = platform_api::platform::iam::v2::CreateGroupRequest {
        parent: root.clone(),
        group: Some(platform_api::platform::iam::v2::Group {
            name: "over gRPC".into(),
            ..Default::default()
        }),
    };
    let message = message(&prost::Message::encode_to_vec(&request));
    let (open, gate) = tokio::sync::oneshot::channel();
    let over_grpc = tokio::spawn({
        let token = token.clone();
        async move {
            grpc_call(
                address,
                &token,
                "/platform.iam.v2.GroupService/CreateGroup",
                Gated {
                    first: Some(Bytes::copy_from_slice(&message[..message.len() / 2])),
                    rest: Some(Bytes::copy_from_slice(&message[message.len() / 2..])),
                    gate,
                },
            )
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;

    // Shut down; once new connections are refused, send the rest.
    let stopped = tokio::spawn(server.stop());
    tokio::time::timeout(BOUND, async {
        while TcpStream::connect(address).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the server stops accepting");
    over_rest.write_all(rest.as_bytes()).await.unwrap();
    open.send(()).unwrap();

    let received = platform_tests::read_until_closed(&mut over_rest, BOUND).await;
    let (status, body) = parse_response(&received);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["name"], "over REST");
    let (status, reply) = tokio::time::timeout(BOUND, over_grpc)
        .await
        .expect("the gRPC request is answered")
        .unwrap();
    assert_eq!(status.code(), tonic::Code::Ok, "{status:?}");
    let created: platform_api::platform::iam::v2::Group =
        prost::Message::decode(&reply[5..]).unwrap();
    assert_eq!(created.name, "over gRPC");
    tokio::time::timeout(BOUND, stopped)
        .await
        .expect("the drain ends")
        .unwrap();
}

/// A request body that sends `first` and then never ends.
struct Stalled(Option<Bytes>);

impl Body for Stalled {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.0.take() {
            Some(bytes) => Poll::Ready(Some(Ok(Frame::data(bytes)))),
            None => Poll::Pending,
        }
    }
}

#[tokio::test]
async fn a_stalled_grpc_request_stream_is_answered() {
    let (server, _dir) = start(Timeouts {
        body: SHORT,
        ..Timeouts::default()
    })
    .await;
    // A frame announcing 100 bytes, of which 10 arrive.
    let mut first = frame(0, 100);
    first.extend_from_slice(&[0x0a; 10]);
    let started = Instant::now();
    let status = tokio::time::timeout(
        BOUND,
        grpc_raw(&server, GET_GROUP, Stalled(Some(first.into()))),
    )
    .await
    .expect("the server answers the stalled request");
    assert!(started.elapsed() >= SHORT);
    assert_eq!(status.code(), tonic::Code::DeadlineExceeded, "{status:?}");
    let error = protoapi_runtime::Error::from_status(&status).expect("an ErrorInfo");
    assert_eq!(error.reason(), "REQUEST_BODY_TIMEOUT");
    server.stop().await;
}

#[tokio::test]
async fn idle_connections_are_closed() {
    let (server, _dir) = start(Timeouts {
        idle: SHORT,
        ..Timeouts::default()
    })
    .await;
    let authorization = format!("Bearer {}", server.admin_token);
    let uri = format!("http://{}/iam/v2/groups?pageSize=1", server.address);
    let request = || {
        http::Request::get(&uri)
            .header(http::header::AUTHORIZATION, &authorization)
            .body(Full::new(Bytes::new()))
            .unwrap()
    };

    // HTTP/1.1 keep-alive: reused within the idle timeout, then closed.
    let io = TokioIo::new(TcpStream::connect(server.address).await.unwrap());
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await.unwrap();
    let connection = tokio::spawn(connection);
    let response = sender.send_request(request()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.into_body().collect().await.unwrap();
    tokio::time::sleep(SHORT / 4).await;
    // The server's idle period starts after it answers, so never before the request is sent.
    let idle_since = Instant::now();
    let response = sender.send_request(request()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.into_body().collect().await.unwrap();
    tokio::time::timeout(BOUND, connection)
        .await
        .expect("the server closes the idle HTTP/1.1 connection")
        .unwrap()
        .ok();
    assert!(idle_since.elapsed() >= SHORT);

    // HTTP/2 (how gRPC clients connect): closed the same way, with a GOAWAY.
    let io = TokioIo::new(TcpStream::connect(server.address).await.unwrap());
    let (mut sender, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
        .await
        .unwrap();
    let connection = tokio::spawn(connection);
    let idle_since = Instant::now();
    let response = sender.send_request(request()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.into_body().collect().await.unwrap();
    tokio::time::timeout(BOUND, connection)
        .await
        .expect("the server closes the idle HTTP/2 connection")
        .unwrap()
        .ok();
    assert!(idle_since.elapsed() >= SHORT);

    // An HTTP/2 connection that never sends a request is closed as well.
    let io = TokioIo::new(TcpStream::connect(server.address).await.unwrap());
    let (_sender, connection) =
        hyper::client::conn::http2::handshake::<_, _, Full<Bytes>>(TokioExecutor::new(), io)
            .await
            .unwrap();
    tokio::time::timeout(BOUND, connection)
        .await
        .expect("the server closes the unused HTTP/2 connection")
        .ok();
    server.stop().await;
}

#[tokio::test]
async fn two_authorization_headers_are_unauthenticated() {
    let (server, _dir) = start(Timeouts::default()).await;
    let bearer = format!("Bearer {}", server.admin_token);

    // REST: 401 with the error body, even when both carry a valid token.
    let client = hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build_http();
    for second in [bearer.as_str(), "Bearer other"] {
        let request = http::Request::get(format!("http://{}/iam/v2/groups", server.address))
            .header(http::header::AUTHORIZATION, &bearer)
            .header(http::header::AUTHORIZATION, second)
            .body(Full::new(Bytes::new()))
            .unwrap();
        let response = client.request(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        let body: Value =
            serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes())
                .unwrap();
        assert_eq!(body["error"]["status"], "UNAUTHENTICATED");
        assert_eq!(error_reason(&body), "AUTHORIZATION_DUPLICATED");
    }
    // One header is still fine.
    assert_eq!(
        server.rest().get("/iam/v2/groups?pageSize=1").await.status,
        StatusCode::OK
    );

    // gRPC: UNAUTHENTICATED with the ErrorInfo in grpc-status-details-bin.
    let mut client = GroupServiceClient::new(server.channel().await);
    let mut request = tonic::Request::new(GetGroupRequest {
        uid: "0".repeat(40),
    });
    for _ in 0..2 {
        request
            .metadata_mut()
            .append("authorization", bearer.parse().unwrap());
    }
    let status = client.get_group(request).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated);
    let error = protoapi_runtime::Error::from_status(&status).expect("an ErrorInfo");
    assert_eq!(error.code(), Code::Unauthenticated);
    assert_eq!(error.reason(), "AUTHORIZATION_DUPLICATED");
    server.stop().await;
}

/// A gRPC frame prefix: the compressed flag and the message length.
fn frame(flag: u8, length: u32) -> Vec<u8> {
    let mut bytes = vec![flag];
    bytes.extend_from_slice(&length.to_be_bytes());
    bytes
}

fn message(payload: &[u8]) -> Vec<u8> {
    let mut bytes = frame(0, payload.len() as u32);
    bytes.extend_from_slice(payload);
    bytes
}

/// Sends `body` as a gRPC request over HTTP/2 as the administrator and
/// returns the status the server answers with (from the response headers of
/// a trailers-only answer, or from the trailers).
async fn grpc_raw<B>(server: &TestServer, path: &str, body: B) -> tonic::Status
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    grpc_call(server.address, &server.admin_token, path, body)
        .await
        .0
}

/// Sends `body` as a gRPC request over HTTP/2 with `token`; returns the
/// status and the response messages' bytes.
async fn grpc_call<B>(
    address: std::net::SocketAddr,
    token: &str,
    path: &str,
    body: B,
) -> (tonic::Status, Bytes)
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let io = TokioIo::new(TcpStream::connect(address).await.unwrap());
    let (mut sender, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
        .await
        .unwrap();
    tokio::spawn(connection);
    let request = http::Request::post(format!("http://{address}{path}"))
        .header(http::header::CONTENT_TYPE, "application/grpc")
        .header(http::header::TE, "trailers")
        .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
        .body(body)
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    if let Some(status) = tonic::Status::from_header_map(response.headers()) {
        return (status, Bytes::new());
    }
    let collected = response.into_body().collect().await.unwrap();
    let trailers = collected.trailers().cloned().unwrap_or_default();
    let status = tonic::Status::from_header_map(&trailers).expect("a grpc-status");
    (status, collected.to_bytes())
}

async fn grpc_bytes(server: &TestServer, path: &str, body: Vec<u8>) -> tonic::Status {
    grpc_raw(server, path, Full::new(Bytes::from(body))).await
}

#[tokio::test]
async fn undecodable_grpc_requests_are_invalid_argument() {
    let (server, _dir) = start(Timeouts::default()).await;
    let cases: [(&str, Vec<u8>, &str); 9] = [
        (
            "a string field whose length runs past the message",
            message(&[0x0a, 0x05, b'a']),
            "MALFORMED_REQUEST",
        ),
        (
            "an invalid wire type",
            message(&[0x0f, 0x01]),
            "MALFORMED_REQUEST",
        ),
        (
            "a varint that never ends",
            message(&[0xff; 11]),
            "MALFORMED_REQUEST",
        ),
        (
            "text instead of protobuf",
            message(b"{\"uid\": 1}"),
            "MALFORMED_REQUEST",
        ),
        ("no message at all", Vec::new(), "MALFORMED_REQUEST"),
        (
            "the compressed flag without a grpc-encoding",
            [frame(1, 2), vec![0x0a, 0x00]].concat(),
            "MALFORMED_FRAME",
        ),
        (
            "an undefined compressed flag",
            [frame(7, 2), vec![0x0a, 0x00]].concat(),
            "MALFORMED_FRAME",
        ),
        (
            "a truncated length prefix",
            vec![0, 0, 0],
            "MALFORMED_FRAME",
        ),
        (
            "a message shorter than its prefix says",
            [frame(0, 40), vec![0x0a, 0x26, b'0']].concat(),
            "MALFORMED_FRAME",
        ),
    ];
    for (name, body, reason) in cases {
        let status = grpc_bytes(&server, GET_GROUP, body).await;
        assert_eq!(
            status.code(),
            tonic::Code::InvalidArgument,
            "{name}: {status:?}"
        );
        let error = protoapi_runtime::Error::from_status(&status)
            .unwrap_or_else(|| panic!("{name}: no ErrorInfo in {status:?}"));
        assert_eq!(error.reason(), reason, "{name}");
        let message = status.message().to_ascii_lowercase();
        for internal in ["decode", "protobuf message:", "wire type", "buffer", "eof"] {
            assert!(!message.contains(internal), "{name}: {message}");
        }
    }

    // A well-formed request still reaches the handler (and its own errors).
    let status = grpc_bytes(&server, GET_GROUP, message(&[0x0a, 0x01, b'x'])).await;
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    let error = protoapi_runtime::Error::from_status(&status).unwrap();
    assert_eq!(error.field_violations()[0].field, "uid");
    server.stop().await;
}

#[tokio::test]
async fn oversized_grpc_messages_are_resource_exhausted() {
    let (server, _dir) = start(Timeouts::default()).await;

    // From the generated client: a 2 MiB request.
    let mut client = GroupServiceClient::with_interceptor(
        server.channel().await,
        platform_tests::bearer(&server.admin_token),
    );
    let status = client
        .get_group(GetGroupRequest {
            uid: "a".repeat(2 << 20),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    let error = protoapi_runtime::Error::from_status(&status).expect("an ErrorInfo");
    assert_eq!(error.reason(), "MESSAGE_TOO_LARGE");

    // A prefix announcing 2 MiB is refused before the message arrives.
    let status = grpc_raw(&server, GET_GROUP, Stalled(Some(frame(0, 2 << 20).into()))).await;
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    assert_eq!(
        protoapi_runtime::Error::from_status(&status)
            .unwrap()
            .reason(),
        "MESSAGE_TOO_LARGE"
    );

    // Just under the limit is decoded and answered by the handler: an
    // unknown field filling the message, then a uid that is not a UIDP.
    let filler = (1 << 20) - 16;
    let mut payload = vec![0x7a];
    let mut length = filler;
    while length >= 0x80 {
        payload.push((length as u8 & 0x7f) | 0x80);
        length >>= 7;
    }
    payload.push(length as u8);
    payload.resize(payload.len() + filler, 0);
    payload.extend_from_slice(&[0x0a, 0x01, b'x']);
    assert!(payload.len() <= 1 << 20);
    let status = grpc_bytes(&server, GET_GROUP, message(&payload)).await;
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    let error = protoapi_runtime::Error::from_status(&status).unwrap();
    assert_eq!(error.field_violations()[0].field, "uid");
    server.stop().await;
}
