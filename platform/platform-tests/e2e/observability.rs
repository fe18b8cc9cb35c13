//! What operators see of a server (`protoapi_runtime::observe`): Prometheus metrics
//! at `/metrics` counting REST and gRPC requests by route template and
//! code, the access log (route template, status, caller, trace id; never a
//! token or a cookie), and per-caller rate limits (`protoapi_runtime::ratelimit`)
//! as clients meet them.
//!
//! Each test records into a metrics registry of its own, installed for its
//! thread (the server runs on the test's current-thread runtime), so the
//! counts are exactly this test's traffic; log lines go to one buffer of
//! the process, found by request id.

use std::num::NonZeroU32;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use opentelemetry::trace::TracerProvider as _;
use platform_api::platform::iam::v2::group_service_client::GroupServiceClient;
use platform_api::platform::iam::v2::{GetGroupRequest, ListGroupsRequest};
use platform_tests::{StatusCode, TestServer};
use protoapi_runtime::observe::Metrics;
use protoapi_runtime::observe::trace::LogFormat;
use protoapi_runtime::ratelimit::RateLimit;
use serde_json::{Value, json};
use tonic_types::StatusExt;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// The process's log buffer and a metrics registry of this test's own.
struct Observed {
    logs: &'static Mutex<Vec<u8>>,
    metrics: Metrics,
    _recorder: metrics::LocalRecorderGuard<'static>,
}

/// Appends to the log buffer.
struct Buffer(&'static Mutex<Vec<u8>>);

impl std::io::Write for Buffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The log of this test process: JSON lines, as the server's `--log-format
/// json` writes them, with the OpenTelemetry layer the server installs.
/// One global subscriber (tracing caches per call site which subscribers
/// want an event, which thread-local subscribers of concurrent tests
/// defeat); each test finds its lines by request id.
fn logs() -> &'static Mutex<Vec<u8>> {
    static LOGS: OnceLock<&'static Mutex<Vec<u8>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs: &'static Mutex<Vec<u8>> = Box::leak(Box::default());
        let tracer = opentelemetry_sdk::trace::SdkTracerProvider::builder()
            .build()
            .tracer("e2e");
        let subscriber = protoapi_runtime::observe::trace::subscriber(
            LogFormat::Json,
            false,
            move || Buffer(logs),
            tracing_subscriber::EnvFilter::new("info"),
            Some(tracer),
        );
        tracing::subscriber::set_global_default(subscriber).expect("no other subscriber");
        logs
    })
}

impl Observed {
    /// The log, and a metrics registry current on this thread (the
    /// server runs on the test's current-thread runtime).
    fn start() -> Observed {
        let (recorder, metrics) = Metrics::new();
        let recorder: &'static _ = Box::leak(Box::new(recorder));
        Observed {
            logs: logs(),
            metrics,
            _recorder: metrics::set_default_local_recorder(recorder),
        }
    }

    fn text(&self) -> String {
        String::from_utf8(self.logs.lock().unwrap().clone()).unwrap()
    }

    /// The access lines logged so far that mention `text`.
    fn access_lines(&self, text: &str) -> Vec<Value> {
        self.text()
            .lines()
            .filter(|line| line.contains(text))
            .map(|line| serde_json::from_str::<Value>(line).expect("JSON log lines"))
            .filter(|line| line["target"] == "access")
            .collect()
    }

    /// The access line of the request answered with `request_id`, once
    /// written (at the end of its response body).
    async fn access_line(&self, request_id: &str) -> Value {
        for _ in 0..1000 {
            if let Some(line) = self
                .access_lines(request_id)
                .into_iter()
                .find(|line| line["request_id"] == request_id)
            {
                return line;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no access line for {request_id}:\n{}", self.text());
    }
}

/// A raw HTTP/1.1 request with extra headers; status, headers and body.
async fn send(
    server: &TestServer,
    path: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, HeaderMap, Bytes) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut request = http::Request::builder().uri(format!("http://{}{path}", server.address));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = client
        .request(request.body(Full::new(Bytes::new())).unwrap())
        .await
        .expect("the server answers");
    let (parts, body) = response.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    (parts.status, parts.headers, body)
}

/// The value of the sample of `name` whose labels include `labels`.
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines()
        .filter(|line| {
            line.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .find(|line| {
            labels.iter().all(|(key, value)| {
                let pair = format!("{key}=\"{value}\"");
                line.contains(&format!("{{{pair}")) || line.contains(&format!(",{pair}"))
            })
        })
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
}

/// Scrapes `/metrics` until `ready` holds of the text (the counts of a
/// request are written when its response ends).
async fn scrape_until(server: &TestServer, ready: impl Fn(&str) -> bool) -> String {
    let mut text = String::new();
    for _ in 0..1000 {
        let (status, headers, body) = send(server, "/metrics", &[]).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            headers[http::header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("text/plain")
        );
        text = String::from_utf8(body.to_vec()).unwrap();
        if ready(&text) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the metrics never showed the traffic:\n{text}");
}

/// A uid of the platform's shape that names no group.
fn missing_group(server: &TestServer) -> String {
    format!("{}/00000000deadbeef", server.platform_root())
}

#[tokio::test]
async fn metrics_count_requests_by_route_template_and_code() {
    let observed = Observed::start();
    let metrics = observed.metrics.clone();
    let (server, _dir) = TestServer::start_configured(|config| {
        config.metrics = Some(metrics);
        config.serve_metrics = true;
        config.list_budget = Some(1);
    })
    .await;
    let admin = server.rest();
    for name in ["one", "two", "three"] {
        admin
            .create("/iam/v2/groups", json!({"name": format!("metrics-{name}")}))
            .await;
    }
    // A page of one item instead of ten: the byte budget ended it.
    let page = admin.get("/iam/v2/groups?pageSize=10").await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(page.body["items"].as_array().unwrap().len(), 1);
    let missing = missing_group(&server);
    let answer = admin.get(&format!("/iam/v2/groups/{missing}")).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    let (status, _, _) = send(&server, "/no/such/route/12345", &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let mut client = GroupServiceClient::with_interceptor(
        server.channel().await,
        platform_tests::bearer(&server.admin_token),
    );
    let status = client
        .get_group(GetGroupRequest {
            uid: missing.clone(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound);
    // gRPC-Web is counted as the gRPC call it is translated into.
    let web = crate::browsers::grpc_web(
        &server,
        false,
        false,
        Some(&server.admin_token),
        &GetGroupRequest {
            uid: missing.clone(),
        },
    )
    .await;
    assert_eq!(web.error().code(), protoapi_runtime::Code::NotFound);
    client
        .list_groups(ListGroupsRequest::default())
        .await
        .unwrap();

    let get = "/platform.iam.v2.GroupService/GetGroup";
    let list = "/platform.iam.v2.GroupService/ListGroups";
    let text = scrape_until(&server, |text| {
        sample(
            text,
            "http_requests_total",
            &[("route", list), ("code", "OK")],
        )
        .is_some()
    })
    .await;
    let count = |labels: &[(&str, &str)]| sample(&text, "http_requests_total", labels);
    assert_eq!(
        count(&[
            ("route", "/iam/v2/groups/{uid=**}"),
            ("method", "GET"),
            ("status", "404"),
            ("code", "NOT_FOUND")
        ]),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        count(&[
            ("route", "/iam/v2/groups/{parent=**}"),
            ("method", "POST"),
            ("status", "200"),
            ("code", "OK")
        ]),
        Some(3.0),
        "{text}"
    );
    // gRPC (and gRPC-Web) answers HTTP 200: the code is the status in its trailers.
    assert_eq!(
        count(&[("route", get), ("status", "200"), ("code", "NOT_FOUND")]),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        count(&[("route", list), ("code", "OK")]),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        count(&[("route", "unmatched"), ("status", "404")]),
        Some(1.0),
        "{text}"
    );
    assert!(
        sample(
            &text,
            "http_request_duration_seconds_count",
            &[("route", get)]
        ) == Some(2.0),
        "{text}"
    );
    // Both lists (REST and gRPC) held more than the budget allowed.
    assert_eq!(
        sample(&text, "list_budget_truncations_total", &[]),
        Some(2.0),
        "{text}"
    );
    assert!(
        sample(&text, "storage_pool_connections", &[]).is_some_and(|n| n >= 1.0),
        "{text}"
    );
    assert!(
        sample(&text, "storage_pool_idle_connections", &[]).is_some(),
        "{text}"
    );
    // This scrape is in flight while the registry renders.
    assert!(
        sample(&text, "http_requests_in_flight", &[]).is_some_and(|n| n >= 1.0),
        "{text}"
    );
    // Templates, never paths: no id or unknown path becomes a label.
    for leak in [missing.as_str(), "/no/such", "12345"] {
        assert!(!text.contains(leak), "`{leak}` in the metrics:\n{text}");
    }
    server.stop().await;
}

#[tokio::test]
async fn access_lines_name_the_route_status_caller_and_trace_never_the_token() {
    let observed = Observed::start();
    let (server, _dir) = TestServer::start_configured(|_| {}).await;
    let missing = missing_group(&server);
    let authorization = format!("Bearer {}", server.admin_token);
    let (status, headers, _) = send(
        &server,
        &format!("/iam/v2/groups/{missing}?view=secret-query"),
        &[
            ("authorization", &authorization),
            ("cookie", "session=cookie-secret-42"),
            ("traceparent", TRACEPARENT),
            ("tracestate", "vendor=opaque"),
        ],
    )
    .await;
    // An unknown query parameter: 400.
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let request_id = headers["x-request-id"].to_str().unwrap().to_owned();
    let line = observed.access_line(&request_id).await;
    assert_eq!(line["route"], "/iam/v2/groups/{uid=**}", "{line}");
    assert_eq!(line["method"], "GET", "{line}");
    assert_eq!(line["status"], 400, "{line}");
    assert_eq!(line["code"], "INVALID_ARGUMENT", "{line}");
    assert_eq!(line["caller"], server.admin_identity().as_str(), "{line}");
    assert_eq!(line["trace_id"], TRACE_ID, "{line}");
    assert!(line["latency_ms"].as_f64().is_some(), "{line}");
    let written = line.to_string();
    assert!(
        !written.contains(&missing) && !written.contains("secret-query"),
        "{line}"
    );

    // Without a traceparent the request starts a trace of its own.
    let (_, headers, _) = send(&server, "/iam/v2/groups?pageSize=1", &[]).await;
    let line = observed
        .access_line(headers["x-request-id"].to_str().unwrap())
        .await;
    assert_eq!(line["caller"], "-", "{line}");
    let own = line["trace_id"].as_str().unwrap();
    assert!(own.len() == 32 && own != TRACE_ID, "{line}");

    // gRPC: an error answered with HTTP 200 is logged with its code.
    let mut request = tonic::Request::new(GetGroupRequest {
        uid: missing.clone(),
    });
    let metadata = request.metadata_mut();
    metadata.insert(
        "authorization",
        "Bearer not-a-token-but-secret-7".parse().unwrap(),
    );
    metadata.insert("traceparent", TRACEPARENT.parse().unwrap());
    let status = GroupServiceClient::new(server.channel().await)
        .get_group(request)
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated);
    let request_id = status
        .metadata()
        .get("x-request-id")
        .unwrap()
        .to_str()
        .unwrap();
    let line = observed.access_line(request_id).await;
    assert_eq!(
        line["route"], "/platform.iam.v2.GroupService/GetGroup",
        "{line}"
    );
    assert_eq!(line["status"], 200, "{line}");
    assert_eq!(line["code"], "UNAUTHENTICATED", "{line}");
    assert_eq!(line["trace_id"], TRACE_ID, "{line}");
    server.stop().await;

    let logs = observed.text();
    for secret in [
        server_token_fragment(&authorization),
        "cookie-secret-42",
        "not-a-token-but-secret-7",
    ] {
        assert!(!logs.contains(secret), "`{secret}` in the log:\n{logs}");
    }
}

/// The signature of a bearer token: what must never be logged.
fn server_token_fragment(authorization: &str) -> &str {
    authorization.rsplit('.').next().unwrap()
}

#[tokio::test]
async fn callers_over_their_limit_are_told_when_to_retry() {
    // Two requests at once, one more a minute: nothing refills during the test.
    let (server, _dir) = TestServer::start_configured(|config| {
        config.rate_limit = Some(RateLimit {
            interval: Duration::from_secs(60),
            burst: NonZeroU32::new(2).unwrap(),
            max_keys: 1000,
        });
    })
    .await;
    let root = server.platform_root();
    let alice = server.token_for(&format!("{root}/00000000000a11ce"));
    let bob = server.token_for(&format!("{root}/0000000000000b0b"));
    let path = format!("/iam/v2/groups/{}", missing_group(&server));
    let as_alice = format!("Bearer {alice}");
    for _ in 0..2 {
        let (status, _, _) = send(&server, &path, &[("authorization", &as_alice)]).await;
        assert_ne!(status, StatusCode::TOO_MANY_REQUESTS);
    }
    let (status, headers, body) = send(&server, &path, &[("authorization", &as_alice)]).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = headers[http::header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (1..=60).contains(&retry_after),
        "Retry-After: {retry_after}"
    );
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED", "{body}");
    let details = body["error"]["details"].as_array().unwrap();
    let detail = |kind: &str| {
        details
            .iter()
            .find(|d| d["@type"].as_str().unwrap().ends_with(kind))
            .unwrap_or_else(|| panic!("no {kind} in {body}"))
    };
    assert_eq!(detail("ErrorInfo")["reason"], "RATE_LIMITED");
    let delay = detail("RetryInfo")["retryDelay"].as_str().unwrap();
    let seconds: f64 = delay.strip_suffix('s').unwrap().parse().unwrap();
    assert!(seconds > 0.0 && seconds <= 60.0, "retryDelay {delay}");

    // Over gRPC too, with RetryInfo in the status details.
    let status = GroupServiceClient::with_interceptor(
        server.channel().await,
        platform_tests::bearer(&alice),
    )
    .list_groups(ListGroupsRequest::default())
    .await
    .unwrap_err();
    assert_eq!(status.code(), tonic::Code::ResourceExhausted);
    let details = status.get_error_details();
    assert_eq!(details.error_info().unwrap().reason, "RATE_LIMITED");
    let delay = details.retry_info().unwrap().retry_delay.unwrap();
    assert!(delay > Duration::ZERO && delay <= Duration::from_secs(60));

    // Another caller has a bucket of its own.
    let (status, _, _) = send(
        &server,
        &path,
        &[("authorization", &format!("Bearer {bob}"))],
    )
    .await;
    assert_ne!(status, StatusCode::TOO_MANY_REQUESTS);

    // Callers without a token are limited by address.
    let anonymous: Vec<StatusCode> = {
        let mut statuses = Vec::new();
        for _ in 0..3 {
            statuses.push(send(&server, "/iam/v2/groups?pageSize=1", &[]).await.0);
        }
        statuses
    };
    assert_eq!(anonymous[2], StatusCode::TOO_MANY_REQUESTS, "{anonymous:?}");
    assert!(
        anonymous[..2]
            .iter()
            .all(|s| *s != StatusCode::TOO_MANY_REQUESTS)
    );
    server.stop().await;
}
