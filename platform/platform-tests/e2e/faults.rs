//! Storage faults as users see them: with PostgreSQL out of reach (a proxy
//! between the server and the database, cut and restored), `/readyz` and
//! every storage path (authorization lookups, list, get, create, update,
//! delete, the token exchange) answer 503 / `UNAVAILABLE` with a
//! `RetryInfo` and nothing of the cause, within the pool's acquire timeout,
//! over REST and gRPC; once the database is back, so is the server.
//! `/healthz` and `/readyz` need no credentials. The generated client waits
//! what a server's `RetryInfo` advises and retries nothing else.
//!
//! A full disk is the binary's test (`platform/platform-server/tests/disk_full.rs`):
//! it needs a process of its own with a file size limit.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use platform_api::Client;
use platform_api::platform::iam::v2 as iam;
use platform_tests::{Issuer, PgDatabase, Response, StatusCode, TestServer};
use protoapi_runtime::Code;
use protoapi_runtime::client::{Connection, Retry, StaticToken};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// The server's pool acquire timeout in these tests.
const ACQUIRE: Duration = Duration::from_millis(300);
/// A bound on "answers at all", well above [`ACQUIRE`].
const ANSWERS_WITHIN: Duration = Duration::from_secs(20);

/// A TCP proxy to one address that can be cut (listener and live
/// connections dropped, connections reset) and restored on the same port.
struct Proxy {
    address: SocketAddr,
    target: String,
    tasks: Option<JoinSet<()>>,
}

impl Proxy {
    async fn start(target: &str) -> Proxy {
        let listener = bind_below_ephemeral_ports().await;
        let mut proxy = Proxy {
            address: listener.local_addr().unwrap(),
            target: target.to_owned(),
            tasks: None,
        };
        proxy.serve(listener);
        proxy
    }

    fn serve(&mut self, listener: TcpListener) {
        let target = self.target.clone();
        let mut tasks = JoinSet::new();
        let connections = Arc::new(std::sync::Mutex::new(JoinSet::new()));
        let accepted = Arc::clone(&connections);
        tasks.spawn(async move {
            // Dropping this task drops every connection task with it.
            let _connections = accepted;
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let target = target.clone();
                _connections
                    .lock()
                    .unwrap()
                    .spawn(async move { forward(client, &target).await });
            }
        });
        self.tasks = Some(tasks);
    }

    /// Drops the listener and every live connection.
    async fn cut(&mut self) {
        if let Some(mut tasks) = self.tasks.take() {
            tasks.shutdown().await;
        }
    }

    /// Listens again on the same port.
    async fn restore(&mut self) {
        let listener = TcpListener::bind(self.address).await.unwrap();
        self.serve(listener);
    }
}

/// A listener on a port below Linux's ephemeral range (from 32768), so
/// that while the proxy is cut no outgoing connection takes its port.
async fn bind_below_ephemeral_ports() -> TcpListener {
    use std::hash::{BuildHasher, Hasher};
    for _ in 0..100 {
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let port = 20_000 + (random % 12_000) as u16;
        if let Ok(listener) = TcpListener::bind(("127.0.0.1", port)).await {
            return listener;
        }
    }
    panic!("no free port below the ephemeral range");
}

/// Copies both ways; when dropped, resets both connections (linger 0) as a
/// broken network would.
async fn forward(client: TcpStream, target: &str) {
    let Ok(server) = TcpStream::connect(target).await else {
        return;
    };
    for stream in [&client, &server] {
        #[allow(deprecated)] // `set_linger` blocks only on close, which is the point here.
        stream.set_linger(Some(Duration::ZERO)).ok();
    }
    let (mut client, mut server) = (client, server);
    tokio::io::copy_bidirectional(&mut client, &mut server)
        .await
        .ok();
}

/// `host:port` of a `postgres://user:password@host:port/db?…` URL, and the
/// URL with another address in its place.
fn split_address(url: &str) -> (String, impl Fn(SocketAddr) -> String) {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (credentials, rest) = rest.rsplit_once('@').map_or(("", rest), |(c, r)| (c, r));
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (address, tail) = rest.split_at(end);
    let address = if address.contains(':') {
        address.to_owned()
    } else {
        format!("{address}:5432")
    };
    let (scheme, credentials, tail) = (scheme.to_owned(), credentials.to_owned(), tail.to_owned());
    let at = if credentials.is_empty() { "" } else { "@" };
    (address, move |to: SocketAddr| {
        format!("{scheme}://{credentials}{at}{to}{tail}")
    })
}

/// Asserts a 503 answer with the error model, a `RetryInfo`, and nothing
/// that names the database.
fn assert_unavailable(response: &Response, what: &str, database: &str) {
    response.assert_error(StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE", what);
    assert!(
        response.detail("RetryInfo").is_some(),
        "{what}: {:?}",
        response.body
    );
    assert!(response.detail("ErrorInfo").is_some(), "{what}");
    let text = response.body.to_string();
    for secret in [database, "postgres", "sqlx", "connection refused", "pool"] {
        assert!(
            !text.to_lowercase().contains(secret),
            "{what} leaks `{secret}`: {text}"
        );
    }
}

/// `call`'s answer, or a failure if there is none within [`ANSWERS_WITHIN`].
async fn bounded<T>(what: &str, call: impl std::future::Future<Output = T>) -> (String, T) {
    match tokio::time::timeout(ANSWERS_WITHIN, call).await {
        Ok(answer) => (what.to_owned(), answer),
        Err(_) => panic!("{what}: no answer within {ANSWERS_WITHIN:?}"),
    }
}

/// The generated client over both transports, retrying nothing.
fn clients(server: &TestServer) -> [(&'static str, Client); 2] {
    let url = format!("http://{}", server.address);
    let token = StaticToken::new(server.admin_token.clone());
    [
        ("gRPC", Connection::grpc(&url).unwrap()),
        ("REST", Connection::rest(&url).unwrap()),
    ]
    .map(|(name, connection)| {
        let connection = connection
            .with_tokens(token.clone())
            .with_timeout(ANSWERS_WITHIN)
            .with_retry(Retry::NONE);
        (name, Client::new(connection))
    })
}

/// Polls `/readyz` until it answers `status` (each answer is cached for a
/// moment, so a change shows after it).
async fn await_readiness(server: &TestServer, status: StatusCode) {
    let anonymous = server.rest_as(None);
    let started = Instant::now();
    loop {
        if anonymous.get("/readyz").await.status == status {
            return;
        }
        assert!(
            started.elapsed() < ANSWERS_WITHIN,
            "/readyz never answered {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn postgres_out_of_reach_is_unavailable_until_it_is_back() {
    let Ok(url) = std::env::var("E2E_DATABASE_URL") else {
        eprintln!("note: E2E_DATABASE_URL is not set; the PostgreSQL fault test skips");
        return;
    };
    let database = PgDatabase::create(&url).await;
    let (target, through) = split_address(&database.url);
    let mut proxy = Proxy::start(&target).await;
    let dir = tempfile::tempdir().unwrap();
    let issuer = Issuer::new("faults");
    let jwks = dir.path().join("issuer.jwks.json");
    std::fs::write(&jwks, issuer.jwks.to_string()).unwrap();
    let mut config = TestServer::config(&dir.path().join("data"));
    config.database_url = Some(through(proxy.address));
    config.db_acquire_timeout = Some(ACQUIRE);
    config.trusted_issuers = vec![("https://issuer.example".to_owned(), jwks)];
    let server = TestServer::start_with(config).await;
    let root = server.platform_root();
    let admin = server.rest();
    let group = admin
        .create(&format!("/iam/v2/groups/{root}"), json!({"name": "before"}))
        .await;
    let reader = server
        .member_with(&root, "reader", &["groups.list", "groups.get"])
        .await;
    let anonymous = server.rest_as(None);
    assert_eq!(anonymous.get("/readyz").await.status, StatusCode::OK);
    assert_eq!(anonymous.get("/healthz").await.status, StatusCode::OK);

    proxy.cut().await;
    await_readiness(&server, StatusCode::SERVICE_UNAVAILABLE).await;
    let ready = anonymous.get("/readyz").await;
    assert_unavailable(&ready, "/readyz", &target);
    assert_eq!(anonymous.get("/healthz").await.status, StatusCode::OK);

    let children = format!("/iam/v2/groups?uidp.childrenOf={root}");
    let exchange = format!(
        "/sts/exchange?aud=http://{}&identity={}",
        server.address,
        server.admin_identity()
    );
    let token = issuer.token(json!({"iss": "https://issuer.example", "sub": "x"}));
    let reader_rest = &reader.rest;
    let exchanger = server.rest_as(Some(&token));
    let calls = [
        bounded("list", admin.get(&children)).await,
        bounded("get", admin.get(&format!("/iam/v2/groups/{group}"))).await,
        bounded(
            "create",
            admin.post(&format!("/iam/v2/groups/{root}"), json!({"name": "during"})),
        )
        .await,
        bounded(
            "update",
            admin.patch(
                &format!("/iam/v2/groups/{group}"),
                json!({"description": "x"}),
            ),
        )
        .await,
        bounded("delete", admin.delete(&format!("/iam/v2/groups/{group}"))).await,
        bounded("v1 list", admin.get("/iam/v1/groups")).await,
        bounded("list, authorized from bindings", reader_rest.get(&children)).await,
        bounded("token exchange", exchanger.get(&exchange)).await,
    ];
    for (what, response) in &calls {
        assert_unavailable(response, what, &target);
    }
    for (transport, client) in clients(&server) {
        let request = iam::ListGroupsRequest {
            uidp: Some(platform_api::protoapi::v1::UidpFilter {
                children_of: root.clone(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let error = client.groups().list(request).await.unwrap_err();
        assert_eq!(error.code(), Code::Unavailable, "{transport}: {error}");
        assert_eq!(error.reason(), "STORAGE_UNAVAILABLE", "{transport}");
        assert!(error.retry_delay().is_some(), "{transport}: no RetryInfo");
        assert!(!error.message().contains(&target), "{transport}: {error}");
    }

    proxy.restore().await;
    await_readiness(&server, StatusCode::OK).await;
    admin
        .create(&format!("/iam/v2/groups/{root}"), json!({"name": "after"}))
        .await;
    assert_eq!(reader.rest.get(&children).await.status, StatusCode::OK);
    for (transport, client) in clients(&server) {
        let request = iam::GetGroupRequest { uid: group.clone() };
        let got = client.groups().get(request).await;
        assert_eq!(got.expect(transport).uid, group);
    }
    server.stop().await;
}

#[tokio::test]
async fn probes_need_no_credentials() {
    let (server, _dir) = TestServer::start_configured(|_| {}).await;
    for path in ["/healthz", "/readyz"] {
        for token in [None, Some("not a token")] {
            let response = server.rest_as(token).get(path).await;
            assert_eq!(
                response.status,
                StatusCode::OK,
                "{path} {token:?}: {:?}",
                response.body
            );
        }
        let response = server.rest_as(None).post(path, json!({})).await;
        response.assert_reason(StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED", path);
    }
    server.stop().await;
}

/// A REST server that answers each call with the next of `answers` (status,
/// error body), then 200 with an empty list; counts the calls and notes when
/// each arrived.
async fn scripted(answers: Vec<(u16, serde_json::Value)>) -> (String, Arc<Calls>) {
    let calls = Arc::new(Calls::default());
    let seen = Arc::clone(&calls);
    let answer = move || {
        let seen = Arc::clone(&seen);
        let answers = answers.clone();
        async move {
            let n = seen.count.fetch_add(1, Ordering::SeqCst);
            seen.at.lock().unwrap().push(Instant::now());
            match answers.get(n) {
                Some((status, body)) => (
                    axum::http::StatusCode::from_u16(*status).unwrap(),
                    axum::Json(body.clone()),
                ),
                None => (axum::http::StatusCode::OK, axum::Json(json!({}))),
            }
        }
    };
    let router = axum::Router::new().route("/iam/v2/groups", axum::routing::get(answer));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.ok() });
    (url, calls)
}

#[derive(Default)]
struct Calls {
    count: AtomicUsize,
    at: std::sync::Mutex<Vec<Instant>>,
}

fn error_body(code: u16, status: &str, retry_delay: Option<&str>) -> serde_json::Value {
    let mut details = vec![json!({
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "SCRIPTED", "domain": "test", "metadata": {},
    })];
    if let Some(delay) = retry_delay {
        details.push(json!({
            "@type": "type.googleapis.com/google.rpc.RetryInfo",
            "retryDelay": delay,
        }));
    }
    json!({"error": {"code": code, "status": status, "message": "scripted", "details": details}})
}

#[tokio::test]
async fn the_client_waits_what_retry_info_advises_and_retries_nothing_else() {
    let retry = Retry {
        attempts: 3,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_secs(5),
    };
    let client = |url: &str| {
        Client::new(
            Connection::rest(url)
                .unwrap()
                .with_retry(retry)
                .with_timeout(ANSWERS_WITHIN),
        )
    };
    // UNAVAILABLE advising 400 ms, then success: one retry, 400 ms later at least.
    let (url, calls) = scripted(vec![(503, error_body(503, "UNAVAILABLE", Some("0.400s")))]).await;
    client(&url)
        .groups()
        .list(iam::ListGroupsRequest::default())
        .await
        .expect("the retry succeeds");
    assert_eq!(calls.count.load(Ordering::SeqCst), 2);
    let at = calls.at.lock().unwrap().clone();
    assert!(
        at[1] - at[0] >= Duration::from_millis(400),
        "{:?}",
        at[1] - at[0]
    );
    // RESOURCE_EXHAUSTED with advice is retried; without, it is not.
    let (url, calls) = scripted(vec![(
        429,
        error_body(429, "RESOURCE_EXHAUSTED", Some("0.010s")),
    )])
    .await;
    client(&url)
        .groups()
        .list(iam::ListGroupsRequest::default())
        .await
        .expect("the retry succeeds");
    assert_eq!(calls.count.load(Ordering::SeqCst), 2);
    for (code, status) in [
        (429, "RESOURCE_EXHAUSTED"),
        (504, "DEADLINE_EXCEEDED"),
        (409, "ABORTED"),
        (500, "INTERNAL"),
    ] {
        let advice = (status != "RESOURCE_EXHAUSTED").then_some("0.010s");
        let (url, calls) = scripted(vec![(code, error_body(code, status, advice))]).await;
        let error = client(&url)
            .groups()
            .list(iam::ListGroupsRequest::default())
            .await
            .unwrap_err();
        assert_eq!(error.code().name(), status);
        assert_eq!(
            calls.count.load(Ordering::SeqCst),
            1,
            "{status} is not retried"
        );
    }
}
