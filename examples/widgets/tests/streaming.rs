//! Server streaming and `google.api.HttpBody` over real sockets: drawings
//! uploaded and answered raw over REST, streamed as NDJSON or Server-Sent
//! Events, failures before and during a stream in the error model, and the
//! generated client reading streams over gRPC and REST.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::{BodyExt, Full};
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::client::Connection;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::{Caller, Code};
use serde_json::Value;
use widgets::google::api::HttpBody;
use widgets::widgets::v1::{DownloadDrawingRequest, UploadDrawingRequest, WatchDrawingsRequest};

const WORKSHOP: &str = "1111111111111111111111111111111111111111";

async fn serve() -> String {
    let context = ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all());
    let app = widgets::Services::new(context)
        .store(Arc::new(widgets::MemoryStore::default()))
        .drawing_service(Arc::new(widgets::Drawings::default()))
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(app).await
}

/// An answer: status, headers, body.
struct Answer {
    status: u16,
    headers: http::HeaderMap,
    body: Bytes,
}

impl Answer {
    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map_or("", |value| value.to_str().unwrap())
    }

    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
}

async fn send(
    method: &str,
    url: String,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Answer {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let mut request = http::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = client
        .request(request.body(Full::new(body.into())).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        headers,
        body,
    }
}

fn widget(n: u8) -> String {
    format!("{WORKSHOP}/{n:016x}")
}

/// Not UTF-8, not JSON: the bytes come back as they were sent.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\x00\xff\xfe drawing";

async fn upload(base: &str, widget: &str, content_type: &str, data: &'static [u8]) {
    let answer = send(
        "PUT",
        format!("{base}/v1/drawings/{widget}"),
        &[("content-type", content_type)],
        data,
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.json(), serde_json::json!({}));
}

#[tokio::test]
async fn http_body_is_taken_and_answered_raw_over_rest() {
    let base = serve().await;
    upload(&base, &widget(1), "image/png", PNG).await;

    let answer = send("GET", format!("{base}/v1/drawings/{}", widget(1)), &[], "").await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), "image/png");
    assert_eq!(answer.header("x-content-type-options"), "nosniff");
    // Raw data is sandboxed: an uploaded page never runs as this origin.
    assert_eq!(
        answer.header("content-security-policy"),
        "sandbox; default-src 'none'"
    );
    assert_eq!(&answer.body[..], PNG);

    // A request that is an `HttpBody` is the raw body.
    let url = format!("{base}/v1/drawingMeasures");
    let answer = send("POST", url, &[("content-type", "image/png")], PNG).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.json()["size"], PNG.len().to_string());
    assert_eq!(answer.json()["contentType"], "image/png");

    // Streamed in chunks of 3 bytes: one body of the first chunk's type.
    let url = format!("{base}/v1/drawingChunks/{}?chunkBytes=3", widget(1));
    let answer = send("GET", url, &[], "").await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), "image/png");
    assert_eq!(&answer.body[..], PNG);

    // The chunk size bound by the path: an integer path variable, read as
    // canonical JSON reads it; a value that is no integer is refused.
    let url = format!("{base}/v1/chunkedDrawings/3/{}", widget(1));
    let answer = send("GET", url, &[], "").await;
    assert_eq!(
        (answer.status, &answer.body[..]),
        (200, PNG),
        "{}",
        answer.text()
    );
    let url = format!("{base}/v1/chunkedDrawings/0x/{}", widget(1));
    let bad = send("GET", url, &[], "").await;
    assert_eq!(bad.status, 400, "{}", bad.text());
    let url = format!("{base}/v1/chunkedDrawings/-1/{}", widget(1));
    let bad = send("GET", url, &[], "").await;
    assert_eq!(
        bad.json()["error"]["details"][1]["fieldViolations"][0]["field"],
        "chunkBytes"
    );

    // Failures are the error model, before any data.
    let missing = send("GET", format!("{base}/v1/drawings/{}", widget(2)), &[], "").await;
    assert_eq!(missing.status, 404, "{}", missing.text());
    assert_eq!(missing.json()["error"]["status"], "NOT_FOUND");
    let url = format!("{base}/v1/drawingChunks/{}?chunkBytes=0x", widget(1));
    let bad = send("GET", url, &[], "").await;
    assert_eq!(bad.status, 400, "{}", bad.text());
    let url = format!("{base}/v1/drawingChunks/{}?chunkBytes=-1", widget(1));
    let bad = send("GET", url, &[], "").await;
    assert_eq!(bad.status, 400, "{}", bad.text());
    assert_eq!(
        bad.json()["error"]["details"][1]["fieldViolations"][0]["field"],
        "chunkBytes"
    );
    let missing = send(
        "GET",
        format!("{base}/v1/drawingChunks/{}", widget(2)),
        &[],
        "",
    )
    .await;
    assert_eq!(missing.status, 404, "{}", missing.text());

    // The body limit of JSON bodies holds for raw ones.
    let huge = vec![0u8; protoapi_runtime::rest::MAX_BODY_BYTES + 1];
    let url = format!("{base}/v1/drawings/{}", widget(3));
    let answer = send("PUT", url, &[("content-type", "image/png")], huge).await;
    assert_eq!(answer.status, 413, "{}", answer.text());
    assert_eq!(answer.json()["error"]["status"], "RESOURCE_EXHAUSTED");
    let nothing = send("GET", format!("{base}/v1/drawings/{}", widget(3)), &[], "").await;
    assert_eq!(nothing.status, 404);
}

#[tokio::test]
async fn a_stream_is_ndjson_or_server_sent_events_and_ends_with_the_error_model() {
    let base = serve().await;
    upload(&base, &widget(1), "image/png", PNG).await;
    upload(&base, &widget(2), "text/plain", b"two").await;
    let events = format!("{base}/v1/drawingEvents/{WORKSHOP}");

    let answer = send("GET", events.clone(), &[], "").await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.header("content-type"), "application/x-ndjson");
    let lines: Vec<Value> = answer
        .text()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{}", answer.text());
    assert_eq!(lines[0]["widget"], widget(1));
    assert_eq!(lines[0]["size"], PNG.len().to_string());
    assert_eq!(lines[0]["drawing"]["contentType"], "image/png");
    assert_eq!(lines[1]["contentType"], "text/plain");
    // The drawing inline is canonical JSON: its data in base64.
    assert_eq!(lines[1]["drawing"]["data"], "dHdv");

    // Failing after one event: that event, then the REST error body.
    let failing = format!("{events}?failAfter=1");
    let answer = send("GET", failing.clone(), &[], "").await;
    assert_eq!(answer.status, 200);
    let lines: Vec<Value> = answer
        .text()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{}", answer.text());
    assert_eq!(lines[0]["widget"], widget(1));
    let error = &lines[1]["error"];
    assert_eq!(error["status"], "ABORTED", "{}", answer.text());
    assert_eq!(error["details"][0]["reason"], "FEED_INTERRUPTED");

    // Server-Sent Events when asked for.
    let accept = [("accept", "text/event-stream")];
    let answer = send("GET", failing, &accept, "").await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), "text/event-stream");
    let events: Vec<&str> = answer
        .text()
        .split("\n\n")
        .filter(|e| !e.is_empty())
        .collect();
    assert_eq!(events.len(), 2, "{}", answer.text());
    let data: Value = serde_json::from_str(events[0].strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(data["widget"], widget(1));
    let (kind, data) = events[1].split_once('\n').unwrap();
    assert_eq!(kind, "event: error");
    let data: Value = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(data["error"]["status"], "ABORTED");

    // An error before the first event is an ordinary error response.
    let url = format!("{base}/v1/drawingEvents/{WORKSHOP}?failAfter=-1");
    let answer = send("GET", url, &accept, "").await;
    assert_eq!(answer.status, 400, "{}", answer.text());
    assert_eq!(answer.header("content-type"), "application/json");
    assert_eq!(answer.json()["error"]["status"], "INVALID_ARGUMENT");
}

/// The generated client reads streams over both transports: gRPC messages,
/// or NDJSON lines, each ending with the error that ends the stream.
#[tokio::test]
async fn the_generated_client_reads_streams_over_grpc_and_rest() {
    let base = serve().await;
    upload(&base, &widget(1), "image/png", PNG).await;
    upload(&base, &widget(2), "text/plain", b"two").await;
    for connection in [
        Connection::grpc(&base).unwrap(),
        Connection::rest(&base).unwrap(),
    ] {
        let transport = if connection.is_grpc() { "gRPC" } else { "REST" };
        let drawings = widgets::Client::new(connection).drawing();
        let watch = WatchDrawingsRequest {
            parent: WORKSHOP.to_owned(),
            fail_after: 0,
        };
        let events: Vec<_> = drawings
            .watch_drawings(watch.clone())
            .await
            .expect(transport)
            .collect()
            .await;
        let widgets: Vec<String> = events
            .into_iter()
            .map(|event| event.expect(transport).widget)
            .collect();
        assert_eq!(widgets, [widget(1), widget(2)], "{transport}");

        let failing = WatchDrawingsRequest {
            fail_after: 1,
            ..watch
        };
        let events: Vec<_> = drawings
            .watch_drawings(failing)
            .await
            .expect(transport)
            .collect()
            .await;
        assert_eq!(events.len(), 2, "{transport}");
        assert_eq!(events[0].as_ref().expect(transport).widget, widget(1));
        let error = events[1].as_ref().unwrap_err();
        assert_eq!(error.code(), Code::Aborted, "{transport}: {error}");
        assert_eq!(error.reason(), "FEED_INTERRUPTED", "{transport}");

        let refused = WatchDrawingsRequest {
            fail_after: -1,
            ..Default::default()
        };
        let error = drawings
            .watch_drawings(refused)
            .await
            .err()
            .expect(transport);
        assert_eq!(error.code(), Code::InvalidArgument, "{transport}: {error}");
    }
}

/// The generated client sends and reads `HttpBody` raw over REST, and as a
/// message over gRPC: the same calls either way.
#[tokio::test]
async fn the_generated_client_moves_http_bodies_over_grpc_and_rest() {
    let base = serve().await;
    let grpc = widgets::Client::new(Connection::grpc(&base).unwrap()).drawing();
    let rest = widgets::Client::new(Connection::rest(&base).unwrap()).drawing();
    for (n, (transport, drawings)) in [(5, ("gRPC", &grpc)), (7, ("REST", &rest))] {
        exchange(&base, transport, drawings, widget(n)).await;
    }
}

async fn exchange(
    base: &str,
    transport: &str,
    drawings: &widgets::widgets::v1::client::DrawingService,
    widget: String,
) {
    let drawing = HttpBody {
        content_type: "image/png".to_owned(),
        data: PNG.to_vec(),
        extensions: Vec::new(),
    };
    let measured = drawings
        .measure_drawing(drawing.clone())
        .await
        .expect(transport);
    assert_eq!(
        measured.size,
        i64::try_from(PNG.len()).unwrap(),
        "{transport}"
    );
    assert_eq!(measured.content_type, "image/png", "{transport}");
    let upload = UploadDrawingRequest {
        widget: widget.clone(),
        drawing: Some(drawing.clone()),
    };
    drawings.upload_drawing(upload).await.expect(transport);
    let download = DownloadDrawingRequest {
        widget: widget.clone(),
        chunk_bytes: 4,
    };
    assert_eq!(
        drawings
            .download_drawing(download.clone())
            .await
            .expect(transport),
        drawing,
        "{transport}"
    );
    let chunks: Vec<HttpBody> = drawings
        .stream_drawing(download)
        .await
        .expect(transport)
        .map(|chunk| chunk.expect(transport))
        .collect()
        .await;
    // gRPC keeps the chunks; REST has one body, read as it arrives.
    if transport == "gRPC" {
        assert_eq!(chunks.len(), PNG.len().div_ceil(4));
    }
    assert_eq!(chunks[0].content_type, "image/png", "{transport}");
    let data: Vec<u8> = chunks.into_iter().flat_map(|chunk| chunk.data).collect();
    assert_eq!(data, PNG, "{transport}");
    // Uploaded through the client, answered raw over REST.
    let answer = send("GET", format!("{base}/v1/drawings/{widget}"), &[], "").await;
    assert_eq!(answer.header("content-type"), "image/png");
    assert_eq!(&answer.body[..], PNG);

    let missing = DownloadDrawingRequest {
        widget: format!("{widget}0"),
        chunk_bytes: 0,
    };
    let error = drawings
        .stream_drawing(missing.clone())
        .await
        .err()
        .unwrap();
    assert_eq!(error.code(), Code::NotFound, "{transport}: {error}");
    let error = drawings.download_drawing(missing).await.unwrap_err();
    assert_eq!(error.code(), Code::NotFound, "{transport}: {error}");
}

/// Client and bidirectional streaming, over a real gRPC channel with
/// tonic's generated client: every request of the stream reaches the
/// handler, each answer comes back as it is made, a refusal mid-stream ends
/// the call with its status; over REST the client-streaming method's rule
/// is not served.
#[tokio::test]
async fn client_and_bidirectional_streams_over_grpc() {
    use widgets::widgets::v1::drawing_service_client::DrawingServiceClient;

    let base = serve().await;
    let channel = tonic::transport::Endpoint::from_shared(base.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut drawings = DrawingServiceClient::new(channel);
    let uploads: Vec<UploadDrawingRequest> = ["a", "b", "c"]
        .iter()
        .map(|suffix| UploadDrawingRequest {
            widget: format!("{WORKSHOP}{suffix}"),
            drawing: Some(HttpBody {
                content_type: "image/png".into(),
                data: PNG.to_vec(),
                extensions: Vec::new(),
            }),
        })
        .collect();
    let answer = drawings
        .upload_drawings(futures_util::stream::iter(uploads.clone()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.size, 3);
    let stored = send("GET", format!("{base}/v1/drawings/{WORKSHOP}b"), &[], "").await;
    assert_eq!((stored.status, &stored.body[..]), (200, PNG));

    // The first refusal ends the call: nothing after it is stored.
    let mut refused = uploads.clone();
    refused[1].widget.clear();
    refused[2].widget = format!("{WORKSHOP}d");
    let status = drawings
        .upload_drawings(futures_util::stream::iter(refused))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    let after = send("GET", format!("{base}/v1/drawings/{WORKSHOP}d"), &[], "").await;
    assert_eq!(after.status, 404);

    // One event per drawing, then the refusal of an untyped one ends the stream.
    let bodies = ["image/png", "image/gif", ""].map(|content_type| HttpBody {
        content_type: content_type.into(),
        data: vec![0; 5],
        extensions: Vec::new(),
    });
    let mut events = drawings
        .measure_drawings(futures_util::stream::iter(bodies))
        .await
        .unwrap()
        .into_inner();
    let first = events.next().await.unwrap().unwrap();
    assert_eq!((first.content_type.as_str(), first.size), ("image/png", 5));
    let second = events.next().await.unwrap().unwrap();
    assert_eq!(second.content_type, "image/gif");
    let end = events.next().await.unwrap().unwrap_err();
    assert_eq!(end.code(), tonic::Code::InvalidArgument, "{end:?}");
    assert!(events.next().await.is_none());

    // REST cannot carry a stream of requests: the rule is not routed.
    let rest = send("POST", format!("{base}/v1/drawings:batchUpload"), &[], "{}").await;
    assert!(matches!(rest.status, 404 | 405), "{}", rest.status);
}
