//! Browsers reach any generated API, not only the platform's: the widgets
//! API, generated in build.rs, answers gRPC-Web, CORS preflights and
//! conditional requests with no code of its own.

use std::sync::Arc;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use http::{HeaderMap, Method, StatusCode};
use http_body_util::{BodyExt, Full};
use prost::Message;
use protoapi_runtime::auth::{Access, Authorizer, BoxFuture, Grants};
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use serde_json::{Value, json};
use widgets::widgets::v1::{GetWidgetRequest, Widget};

const ORIGIN: &str = "http://localhost:5173";
const WORKSHOP: &str = "1111111111111111111111111111111111111111";

/// No grants: every call here is made as the system.
struct NoGrants;

impl Access for NoGrants {
    fn grants<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Grants, protoapi_runtime::Error>> {
        Box::pin(async { Ok(Grants::default()) })
    }
}

async fn serve() -> String {
    let context = ApiContext::new(
        PageTokens::new([7; 32]),
        Authorizer::new(Arc::new(NoGrants)),
    );
    let app = widgets::Services::new(context)
        .store(Arc::new(widgets::MemoryStore::default()))
        .drawing_service(Arc::new(widgets::Drawings::default()))
        .layer(axum::Extension(protoapi_runtime::Caller::System))
        .cors(protoapi_runtime::web::Cors::allow([ORIGIN]).unwrap())
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(app).await
}

async fn send(
    url: String,
    method: Method,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (StatusCode, HeaderMap, Bytes) {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let mut request = http::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = client
        .request(request.body(Full::new(Bytes::from(body))).unwrap())
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    (
        parts.status,
        parts.headers,
        body.collect().await.unwrap().to_bytes(),
    )
}

#[tokio::test]
async fn a_generated_api_serves_browsers() {
    let base = serve().await;
    let json_headers = [("content-type", "application/json")];
    let (status, headers, body) = send(
        format!("{base}/v1/widgets/{WORKSHOP}"),
        Method::POST,
        &json_headers,
        json!({"name": "gear", "colour": "red"})
            .to_string()
            .into_bytes(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let gear: Value = serde_json::from_slice(&body).unwrap();
    let etag = format!("\"{}\"", gear["etag"].as_str().unwrap());
    assert_eq!(headers["etag"], etag.as_str());
    let uid = gear["uid"].as_str().unwrap().to_owned();
    let url = format!("{base}/v1/widgets/{uid}");

    let (status, headers, body) = send(
        url.clone(),
        Method::GET,
        &[("if-none-match", &etag)],
        vec![],
    )
    .await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    assert_eq!(headers["etag"], etag.as_str());
    assert!(body.is_empty());

    let (status, _, body) = send(
        format!("{url}?updateMask=stock"),
        Method::PATCH,
        &[
            ("content-type", "application/json"),
            ("if-match", "\"stale\""),
        ],
        json!({"stock": 9}).to_string().into_bytes(),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(error["error"]["status"], "ABORTED");

    // gRPC-Web, binary, over HTTP/1.1.
    let message = GetWidgetRequest { uid: uid.clone() }.encode_to_vec();
    let mut frame = BytesMut::new();
    frame.put_u8(0);
    frame.put_u32(message.len() as u32);
    frame.put_slice(&message);
    let (status, headers, mut body) = send(
        format!("{base}/widgets.v1.WidgetService/GetWidget"),
        Method::POST,
        &[
            ("content-type", "application/grpc-web+proto"),
            ("origin", ORIGIN),
        ],
        frame.to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["access-control-allow-origin"], ORIGIN);
    assert_eq!(body.get_u8(), 0, "a message frame first");
    let length = body.get_u32() as usize;
    let widget = Widget::decode(body.split_to(length)).unwrap();
    assert_eq!(widget.uid, uid);
    assert_eq!(body.get_u8(), 0x80, "then the trailers frame");
    let length = body.get_u32() as usize;
    let trailers = String::from_utf8(body.split_to(length).to_vec()).unwrap();
    assert!(trailers.contains("grpc-status:0"), "{trailers}");

    // A preflight for the REST route, answered by the generic router.
    let (status, headers, _) = send(
        url,
        Method::OPTIONS,
        &[
            ("origin", ORIGIN),
            ("access-control-request-method", "PATCH"),
            ("access-control-request-headers", "if-match"),
        ],
        vec![],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["access-control-allow-origin"], ORIGIN);
}
