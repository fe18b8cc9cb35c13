//! What a browser meets on the API's port: gRPC-Web (binary and text, over
//! HTTP/1.1 and HTTP/2), CORS configured from the server's options, and
//! etags as HTTP entity-tags (`ETag`, `If-None-Match`, `If-Match`).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::{HeaderMap, HeaderValue};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use platform_api::platform::iam::v2::{GetGroupRequest, Group};
use platform_tests::{Method, StatusCode, TestServer};
use prost::Message;
use serde_json::{Value, json};

const GET_GROUP: &str = "/platform.iam.v2.GroupService/GetGroup";
const ORIGIN: &str = "https://console.example";

/// An answer with its headers and raw body.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }
}

/// Sends one request over HTTP/1.1, or HTTP/2 without TLS (`h2`).
async fn send(
    server: &TestServer,
    h2: bool,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Answer {
    let mut builder = Client::builder(TokioExecutor::new());
    builder.http2_only(h2);
    let client = builder.build_http::<Full<Bytes>>();
    let mut request = http::Request::builder()
        .method(method)
        .uri(format!("http://{}{path}", server.address));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = client
        .request(request.body(Full::new(Bytes::from(body))).unwrap())
        .await
        .expect("the server answers");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        headers,
        body,
    }
}

/// A gRPC-Web answer: its messages and its trailers.
#[derive(Debug)]
pub(crate) struct GrpcWeb {
    messages: Vec<Bytes>,
    trailers: HeaderMap,
}

impl GrpcWeb {
    fn status(&self) -> &str {
        self.trailers
            .get("grpc-status")
            .map(|v| v.to_str().unwrap())
            .unwrap_or_else(|| panic!("no grpc-status trailer: {self:?}"))
    }

    /// The error the trailers carry, details included.
    pub(crate) fn error(&self) -> protoapi_runtime::Error {
        let status = tonic::Status::from_header_map(&self.trailers).expect("a status");
        protoapi_runtime::Error::from_grpc_status(&status)
    }
}

/// Calls `GetGroup` over gRPC-Web with `message`, binary or `text` (base64).
pub(crate) async fn grpc_web(
    server: &TestServer,
    h2: bool,
    text: bool,
    token: Option<&str>,
    message: &impl Message,
) -> GrpcWeb {
    let encoded = message.encode_to_vec();
    let mut frame = BytesMut::new();
    frame.put_u8(0);
    frame.put_u32(u32::try_from(encoded.len()).unwrap());
    frame.put_slice(&encoded);
    let (content_type, body) = if text {
        (
            "application/grpc-web-text",
            STANDARD.encode(&frame).into_bytes(),
        )
    } else {
        ("application/grpc-web+proto", frame.to_vec())
    };
    let authorization = token.map(|token| format!("Bearer {token}"));
    // No `Accept`: the answer is encoded as the request was.
    let mut headers = vec![("content-type", content_type), ("x-grpc-web", "1")];
    if let Some(authorization) = &authorization {
        headers.push(("authorization", authorization));
    }
    let answer = send(server, h2, Method::POST, GET_GROUP, &headers, body).await;
    assert_eq!(answer.status, StatusCode::OK, "gRPC-Web answers 200");
    let answered_type = answer.header("content-type").unwrap();
    assert!(
        answered_type.starts_with(content_type),
        "{answered_type} for {content_type}"
    );
    let mut body = if text {
        decode_base64_chunks(&answer.body)
    } else {
        answer.body.clone()
    };
    read_frames(&mut body)
}

/// The text form may concatenate base64 chunks, each with its padding: read
/// it four characters at a time.
fn decode_base64_chunks(text: &[u8]) -> Bytes {
    assert_eq!(text.len() % 4, 0, "whole base64 quanta");
    let mut out = Vec::new();
    for quantum in text.chunks(4) {
        out.extend(STANDARD.decode(quantum).expect("base64"));
    }
    Bytes::from(out)
}

fn read_frames(body: &mut Bytes) -> GrpcWeb {
    let mut messages = Vec::new();
    let mut trailers = HeaderMap::new();
    while body.has_remaining() {
        let flag = body.get_u8();
        let length = body.get_u32() as usize;
        let payload = body.split_to(length);
        if flag & 0x80 == 0 {
            messages.push(payload);
            continue;
        }
        for line in std::str::from_utf8(&payload).unwrap().split("\r\n") {
            if let Some((name, value)) = line.split_once(':') {
                trailers.insert(
                    http::HeaderName::from_bytes(name.trim().as_bytes()).unwrap(),
                    HeaderValue::from_str(value.trim()).unwrap(),
                );
            }
        }
    }
    GrpcWeb { messages, trailers }
}

fn quoted(etag: &Value) -> String {
    format!("\"{}\"", etag.as_str().expect("an etag"))
}

#[tokio::test]
async fn grpc_web_binary_and_text_reach_the_grpc_service_over_http1_and_http2() {
    let (server, _dir) = TestServer::start_configured(|_| {}).await;
    let created = server
        .rest()
        .post("/iam/v2/groups/", json!({"name": "web"}))
        .await;
    assert_eq!(created.status, StatusCode::OK, "{:?}", created.body);
    let uid = created.body["uid"].as_str().unwrap().to_owned();
    let request = GetGroupRequest { uid: uid.clone() };
    let token = server.admin_token.clone();

    for (h2, text) in [(false, false), (false, true), (true, false), (true, true)] {
        let answer = grpc_web(&server, h2, text, Some(&token), &request).await;
        assert_eq!(answer.status(), "0", "h2 {h2}, text {text}: {answer:?}");
        let [message] = answer.messages.as_slice() else {
            panic!("one message: {answer:?}");
        };
        let group = Group::decode(message.clone()).unwrap();
        assert_eq!(group.uid, uid);
        assert_eq!(group.name, "web");
        assert_eq!(group.etag, created.body["etag"].as_str().unwrap());
    }
    server.stop().await;
}

#[tokio::test]
async fn grpc_web_errors_arrive_in_trailers_with_their_details() {
    let (server, _dir) = TestServer::start_configured(|_| {}).await;
    let root = server
        .rest()
        .create("/iam/v2/groups/", json!({"name": "errors"}))
        .await;
    let missing = GetGroupRequest {
        uid: format!("{root}/{}", "0".repeat(16)),
    };
    let token = server.admin_token.clone();
    for text in [false, true] {
        let answer = grpc_web(&server, false, text, Some(&token), &missing).await;
        assert!(answer.messages.is_empty(), "{answer:?}");
        assert_eq!(answer.status(), "5", "NOT_FOUND, text {text}");
        let error = answer.error();
        assert_eq!(error.code(), protoapi_runtime::Code::NotFound);
        assert_eq!(error.reason(), "RESOURCE_NOT_FOUND");
        assert!(error.resource_info().is_some(), "details kept: {error:?}");
    }

    // The authentication layer sees gRPC-Web requests as gRPC.
    let refused = grpc_web(&server, false, false, Some("not-a-token"), &missing).await;
    assert_eq!(refused.status(), "16", "UNAUTHENTICATED: {refused:?}");
    assert_eq!(
        refused.error().code(),
        protoapi_runtime::Code::Unauthenticated
    );

    // An identity without a grant on the group is denied, as over gRPC.
    let outsider = server
        .rest()
        .create("/iam/v2/groups/", json!({"name": "elsewhere"}))
        .await;
    let viewer = server.builtin_role("viewer").await;
    let member = server
        .member(&outsider, "stranger", &viewer, &outsider)
        .await;
    let existing = GetGroupRequest { uid: root.clone() };
    let denied = grpc_web(&server, true, false, Some(&member.token), &existing).await;
    assert_eq!(denied.status(), "7", "PERMISSION_DENIED: {denied:?}");
    assert_eq!(
        denied.error().code(),
        protoapi_runtime::Code::PermissionDenied
    );
    server.stop().await;
}

#[tokio::test]
async fn cors_preflights_are_answered_for_allowed_origins_only() {
    let (server, _dir) = TestServer::start_configured(|config| {
        config.cors = protoapi_runtime::web::Cors::allow([ORIGIN]).unwrap();
    })
    .await;
    let group = server
        .rest()
        .create("/iam/v2/groups/", json!({"name": "cors"}))
        .await;

    // Preflights carry no Authorization: answered before authentication.
    let preflights = [
        (
            format!("/iam/v2/groups/{group}"),
            "PATCH",
            "authorization,content-type,if-match",
        ),
        (
            GET_GROUP.to_owned(),
            "POST",
            "content-type,x-grpc-web,x-user-agent,grpc-timeout",
        ),
    ];
    for (path, method, asked) in &preflights {
        let answer = send(
            &server,
            false,
            Method::OPTIONS,
            path,
            &[
                ("origin", ORIGIN),
                ("access-control-request-method", method),
                ("access-control-request-headers", asked),
            ],
            Vec::new(),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_eq!(answer.header("access-control-allow-origin"), Some(ORIGIN));
        let methods = answer.header("access-control-allow-methods").unwrap();
        assert!(methods.contains(method), "{methods}");
        let allowed = answer.header("access-control-allow-headers").unwrap();
        for name in asked.split(',') {
            assert!(allowed.contains(name), "{name} in {allowed}");
        }
        assert_eq!(answer.header("access-control-allow-credentials"), None);

        let other = send(
            &server,
            false,
            Method::OPTIONS,
            path,
            &[
                ("origin", "https://console.example.evil"),
                ("access-control-request-method", method),
            ],
            Vec::new(),
        )
        .await;
        let cors_headers: Vec<_> = other
            .headers
            .keys()
            .filter(|name| name.as_str().starts_with("access-control-"))
            .collect();
        assert!(cors_headers.is_empty(), "{path}: {cors_headers:?}");
    }

    // An actual answer names the origin and exposes what clients read.
    let token = format!("Bearer {}", server.admin_token);
    let got = send(
        &server,
        false,
        Method::GET,
        &format!("/iam/v2/groups/{group}"),
        &[("origin", ORIGIN), ("authorization", &token)],
        Vec::new(),
    )
    .await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.header("access-control-allow-origin"), Some(ORIGIN));
    let exposed = got.header("access-control-expose-headers").unwrap();
    for name in [
        "grpc-status",
        "grpc-message",
        "grpc-status-details-bin",
        "etag",
    ] {
        assert!(exposed.contains(name), "{name} in {exposed}");
    }
    let elsewhere = send(
        &server,
        false,
        Method::GET,
        &format!("/iam/v2/groups/{group}"),
        &[("origin", "http://localhost"), ("authorization", &token)],
        Vec::new(),
    )
    .await;
    assert_eq!(elsewhere.status, StatusCode::OK);
    assert!(
        !elsewhere
            .headers
            .keys()
            .any(|name| name.as_str().starts_with("access-control-")),
        "{:?}",
        elsewhere.headers
    );
    server.stop().await;
}

#[tokio::test]
async fn without_cors_options_no_origin_gets_cors_headers() {
    let (server, _dir) = TestServer::start_configured(|_| {}).await;
    let answer = send(
        &server,
        false,
        Method::OPTIONS,
        "/iam/v2/groups",
        &[("origin", ORIGIN), ("access-control-request-method", "GET")],
        Vec::new(),
    )
    .await;
    assert!(
        !answer
            .headers
            .keys()
            .any(|name| name.as_str().starts_with("access-control-")),
        "{:?}",
        answer.headers
    );
    server.stop().await;
}

/// A REST call as the administrator, with extra headers.
async fn rest(
    server: &TestServer,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> Answer {
    let token = format!("Bearer {}", server.admin_token);
    let mut all = vec![("authorization", token.as_str())];
    if body.is_some() {
        all.push(("content-type", "application/json"));
    }
    all.extend_from_slice(headers);
    let body = body.map(|b| b.to_string().into_bytes()).unwrap_or_default();
    send(server, false, method, path, &all, body).await
}

#[tokio::test]
async fn etags_are_entity_tags_of_rest_answers() {
    let (server, _dir) = TestServer::start_configured(|_| {}).await;
    let created = rest(
        &server,
        Method::POST,
        "/iam/v2/groups/",
        &[],
        Some(json!({"name": "tagged", "description": "v1"})),
    )
    .await;
    assert_eq!(created.status, StatusCode::OK);
    let body = created.json();
    let path = format!("/iam/v2/groups/{}", body["uid"].as_str().unwrap());
    let etag = quoted(&body["etag"]);
    assert_eq!(created.header("etag"), Some(etag.as_str()), "create");

    let got = rest(&server, Method::GET, &path, &[], None).await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.header("etag"), Some(etag.as_str()), "get");
    assert_eq!(quoted(&got.json()["etag"]), etag);

    // If-None-Match: the current tag (alone, in a list, weak, or `*`) is 304.
    let listed = format!("\"stale\", {etag}");
    let weak = format!("W/{etag}");
    for matching in [etag.as_str(), &listed, &weak, "*"] {
        let cached = rest(
            &server,
            Method::GET,
            &path,
            &[("if-none-match", matching)],
            None,
        )
        .await;
        assert_eq!(cached.status, StatusCode::NOT_MODIFIED, "{matching}");
        assert!(cached.body.is_empty(), "no body with 304");
        assert_eq!(cached.header("etag"), Some(etag.as_str()));
    }
    let stale = rest(
        &server,
        Method::GET,
        &path,
        &[("if-none-match", "\"stale\"")],
        None,
    )
    .await;
    assert_eq!(stale.status, StatusCode::OK);
    assert_eq!(stale.json(), got.json());
    let malformed = rest(
        &server,
        Method::GET,
        &path,
        &[("if-none-match", "stale")],
        None,
    )
    .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    assert_eq!(malformed.json()["error"]["status"], "INVALID_ARGUMENT");

    // If-Match on update: stale is ABORTED like a stale body etag, and
    // nothing changes; the current tag applies the update.
    let patch = format!("{path}?updateMask=description");
    let stale = rest(
        &server,
        Method::PATCH,
        &patch,
        &[("if-match", "\"stale\"")],
        Some(json!({"description": "lost"})),
    )
    .await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    let error = stale.json();
    assert_eq!(error["error"]["status"], "ABORTED");
    let info = error["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["@type"].as_str().unwrap().ends_with("ErrorInfo"))
        .unwrap();
    assert_eq!(info["reason"], "ETAG_MISMATCH");
    assert_eq!(
        rest(&server, Method::GET, &path, &[], None).await.json()["description"],
        "v1"
    );

    let conflicting = rest(
        &server,
        Method::PATCH,
        &patch,
        &[("if-match", &etag)],
        Some(json!({"description": "v2", "etag": "other"})),
    )
    .await;
    assert_eq!(conflicting.status, StatusCode::BAD_REQUEST);
    let violations = &conflicting.json()["error"]["details"];
    assert!(
        violations.to_string().contains("group.etag"),
        "{violations}"
    );

    for refused in ["W/\"x\"", "\"a\", \"b\""] {
        let answer = rest(
            &server,
            Method::PATCH,
            &patch,
            &[("if-match", refused)],
            Some(json!({"description": "v2"})),
        )
        .await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{refused}");
    }

    let updated = rest(
        &server,
        Method::PATCH,
        &patch,
        &[("if-match", &etag)],
        Some(json!({"description": "v2"})),
    )
    .await;
    assert_eq!(updated.status, StatusCode::OK);
    let new_etag = quoted(&updated.json()["etag"]);
    assert_ne!(new_etag, etag);
    assert_eq!(updated.header("etag"), Some(new_etag.as_str()), "update");

    // If-Match on a get: a stale tag is 412.
    let precondition = rest(&server, Method::GET, &path, &[("if-match", &etag)], None).await;
    assert_eq!(precondition.status, StatusCode::PRECONDITION_FAILED);
    assert_eq!(
        precondition.json()["error"]["status"],
        "FAILED_PRECONDITION"
    );

    // If-Match on delete, stale then current.
    let stale = rest(&server, Method::DELETE, &path, &[("if-match", &etag)], None).await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    let deleted = rest(
        &server,
        Method::DELETE,
        &path,
        &[("if-match", &new_etag)],
        None,
    )
    .await;
    assert_eq!(deleted.status, StatusCode::OK);
    server.stop().await;
}

#[tokio::test]
async fn routes_of_earlier_versions_have_no_entity_tags() {
    let (server, _dir) = TestServer::start_configured(|_| {}).await;
    let root = server
        .rest()
        .create("/iam/v2/groups/", json!({"name": "legacy"}))
        .await;
    let created = rest(
        &server,
        Method::POST,
        &format!("/iam/v1/groups/{root}"),
        &[],
        Some(json!({"name": "old"})),
    )
    .await;
    assert_eq!(created.status, StatusCode::OK, "{:?}", created.body);
    assert_eq!(created.header("etag"), None, "v1 answers carry no etag");
    let id = created.json()["id"].as_str().unwrap().to_owned();
    let path = format!("/iam/v1/groups/{id}");

    // If-Match cannot be checked there: refused, not ignored.
    let put = rest(
        &server,
        Method::PUT,
        &path,
        &[("if-match", "\"anything\"")],
        Some(json!({"name": "renamed"})),
    )
    .await;
    assert_eq!(put.status, StatusCode::PRECONDITION_FAILED);
    assert_eq!(put.json()["error"]["status"], "FAILED_PRECONDITION");
    let delete = rest(&server, Method::DELETE, &path, &[("if-match", "*")], None).await;
    assert_eq!(delete.status, StatusCode::PRECONDITION_FAILED);

    let current = rest(
        &server,
        Method::GET,
        &format!("/iam/v2/groups/{id}"),
        &[],
        None,
    )
    .await;
    assert_eq!(current.status, StatusCode::OK, "neither applied");
    assert_eq!(current.json()["name"], "old");
    server.stop().await;
}
