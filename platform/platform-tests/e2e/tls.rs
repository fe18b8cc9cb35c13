//! The server over TLS (`--tls-cert`/`--tls-key`): REST over HTTP/1.1 and
//! HTTP/2 and gRPC on one port, the generated client trusting a private
//! CA, untrusted certificates and plain HTTP to other hosts refused,
//! certificates replaced while serving, and stalled handshakes.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HttpClient;
use hyper_util::rt::TokioExecutor;
use platform_api::Client;
use platform_api::platform::iam::v2::ListGroupsRequest;
use platform_tests::tls::{TestCa, TlsServer, client_config};
use protoapi_runtime::Code;
use protoapi_runtime::client::{Connection, Retry, StaticToken, Tls};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The generated client over both transports to `url`, trusting `tls`, as
/// the administrator.
fn clients(url: &str, tls: &Tls, token: &str) -> [(&'static str, Client); 2] {
    let token = StaticToken::new(token.to_owned());
    [
        ("gRPC", Connection::grpc_with(url, tls).unwrap()),
        ("REST", Connection::rest_with(url, tls).unwrap()),
    ]
    .map(|(name, connection)| {
        let connection = connection
            .with_tokens(token.clone())
            .with_retry(Retry::NONE);
        (name, Client::new(connection))
    })
}

async fn list_one(client: &Client) -> Result<usize, protoapi_runtime::Error> {
    let request = ListGroupsRequest {
        page_size: 1,
        ..Default::default()
    };
    Ok(client.groups().list(request).await?.items.len())
}

/// GETs `path` over HTTPS with only HTTP/1.1 or only HTTP/2 offered, and
/// returns the version answered with and the status.
async fn get(
    server: &TlsServer,
    ca: &TestCa,
    http2: bool,
    path: &str,
) -> (http::Version, http::StatusCode) {
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(client_config(ca, &[]))
        .https_only();
    let connector = if http2 {
        builder.enable_http2().build()
    } else {
        builder.enable_http1().build()
    };
    let client = HttpClient::builder(TokioExecutor::new())
        .http2_only(http2)
        .build(connector);
    let request = http::Request::get(format!("{}{path}", server.url))
        .header("authorization", format!("Bearer {}", server.admin_token))
        .body(Full::<Bytes>::default())
        .unwrap();
    let response = client.request(request).await.expect("an answer over TLS");
    let (version, status) = (response.version(), response.status());
    response.into_body().collect().await.unwrap();
    (version, status)
}

#[tokio::test(flavor = "multi_thread")]
async fn rest_and_grpc_share_the_tls_port() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("e2e test CA");
    let server = TlsServer::start(dir.path(), &ca, |_| {}).await;

    for http2 in [false, true] {
        let (version, status) = get(&server, &ca, http2, "/iam/v2/groups?pageSize=1").await;
        let expected = if http2 {
            http::Version::HTTP_2
        } else {
            http::Version::HTTP_11
        };
        assert_eq!((version, status), (expected, http::StatusCode::OK));
    }
    let tls = TlsServer::client_tls(&ca);
    for url in [
        server.url.clone(),
        format!("https://127.0.0.1:{}", server.address.port()),
    ] {
        for (transport, client) in clients(&url, &tls, &server.admin_token) {
            let items = list_one(&client).await;
            assert_eq!(
                items.map_err(|e| e.to_string()),
                Ok(1),
                "{transport} at {url}"
            );
        }
    }
    // Plain HTTP on the TLS port is not served.
    let plain = Connection::rest(&format!("http://{}", server.address))
        .unwrap()
        .with_retry(Retry::NONE)
        .with_timeout(Duration::from_secs(30));
    let refused = list_one(&Client::new(plain)).await.unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_certificate_the_client_does_not_trust_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("e2e test CA");
    let server = TlsServer::start(dir.path(), &ca, |_| {}).await;
    let other = TlsServer::client_tls(&TestCa::new("another CA"));
    for (transport, client) in clients(&server.url, &other, &server.admin_token) {
        let error = list_one(&client).await.unwrap_err();
        assert_eq!(
            error.code(),
            Code::FailedPrecondition,
            "{transport}: {error}"
        );
        assert_eq!(
            error.reason(),
            "UNTRUSTED_CERTIFICATE",
            "{transport}: {error}"
        );
        assert!(
            error.message().contains(&server.url),
            "{transport}: {error}"
        );
        assert!(
            error.message().contains("UnknownIssuer"),
            "{transport}: {error}"
        );
    }
    server.stop().await;
}

/// `http://0.0.0.0:<port>` reaches a listener on 127.0.0.1 on this machine,
/// but `0.0.0.0` is not a loopback host: without the opt-in nothing connects.
#[tokio::test]
async fn plain_http_to_a_host_that_is_not_loopback_is_refused_before_connecting() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://0.0.0.0:{}", listener.local_addr().unwrap().port());

    // With the opt-in, the URL does reach the listener.
    let insecure = Tls::new().allow_insecure_http(true);
    let connection = Connection::rest_with(&url, &insecure)
        .unwrap()
        .with_retry(Retry::NONE);
    let call = tokio::spawn(async move { list_one(&Client::new(connection)).await });
    let (reached, _) = listener.accept().await.unwrap();
    drop(reached);
    call.abort();

    for (transport, refused) in [
        ("gRPC", Connection::grpc(&url).map(drop)),
        ("REST", Connection::rest(&url).map(drop)),
        ("gRPC", Connection::grpc_with(&url, &Tls::new()).map(drop)),
    ] {
        let error = refused.unwrap_err();
        assert_eq!(error.code(), Code::InvalidArgument, "{transport}");
        let description = &error.field_violations()[0].description;
        assert!(description.contains(&format!("`{url}`")), "{description}");
        assert!(description.contains("allow_insecure_http"), "{description}");
    }
    // Nothing connected: the next connection the listener accepts is ours.
    let ours = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (first, peer) = listener.accept().await.unwrap();
    assert_eq!(peer, ours.local_addr().unwrap());
    drop(first);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replaced_certificate_is_served_to_new_connections() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("e2e test CA");
    let server = TlsServer::start(dir.path(), &ca, |_| {}).await;
    let before = server.presented(&ca).await.unwrap();
    let renewed = ca.issue();
    assert_ne!(renewed.der, before);
    renewed.write(&server.files);

    // Checked at most once a second: poll until it shows.
    let mut seen = before.clone();
    for _ in 0..200 {
        seen = server.presented(&ca).await.unwrap();
        if seen != before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(seen, renewed.der, "the new certificate is served");
    assert_served(&server, &ca).await;
    server.stop().await;
}

/// Opens connections that stall in the handshake: one silent, two with
/// part of a ClientHello.
async fn stall(server: &TlsServer) -> Vec<TcpStream> {
    let mut stalled = Vec::new();
    for partial in [
        &b""[..],
        b"\x16\x03\x01\x02\x00",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc",
    ] {
        let mut stream = TcpStream::connect(server.address).await.unwrap();
        stream.write_all(partial).await.unwrap();
        stalled.push(stream);
    }
    stalled
}

/// Handshakes run in their connections' tasks: while clients stall in
/// theirs (for up to the header timeout, here far longer than the calls
/// may take), others are accepted and served.
#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_handshake_does_not_hold_up_others() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("e2e test CA");
    let server = TlsServer::start(dir.path(), &ca, |config| {
        config.timeouts.header = Duration::from_secs(600);
    })
    .await;
    let stalled = stall(&server).await;
    let tls = TlsServer::client_tls(&ca);
    for (transport, client) in clients(&server.url, &tls, &server.admin_token) {
        let served = tokio::time::timeout(Duration::from_secs(60), list_one(&client)).await;
        let served = served.map(|items| items.map_err(|e| e.to_string()));
        assert_eq!(served, Ok(Ok(1)), "{transport} while handshakes stall");
    }
    drop(stalled);
    server.stop().await;
}

/// A handshake not completed within the header timeout is cut off like a
/// slow request head: the connection is closed unanswered, its slot freed.
#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_handshake_is_cut_at_the_header_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("e2e test CA");
    let server = TlsServer::start(dir.path(), &ca, |config| {
        config.timeouts.header = Duration::from_secs(1);
        config.limits.max_connections = 3;
    })
    .await;
    // The stalled connections take every slot; once they are cut, clients
    // are served again.
    for mut stream in stall(&server).await {
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut answer))
            .await
            .expect("a stalled handshake is cut off");
        assert!(read.is_err() || answer.is_empty(), "{answer:?}");
    }
    assert_served(&server, &ca).await;
    server.stop().await;
}

#[tokio::test]
async fn the_server_does_not_start_without_a_valid_pair() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("e2e test CA");
    let files = protoapi_runtime::tls::CertFiles::new(
        dir.path().join("server.crt"),
        dir.path().join("server.key"),
    );
    let start = || async {
        let mut config = platform_tests::TestServer::config(&dir.path().join("data"));
        config.tls = Some(files.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        platform_server::serve(config, listener, async {})
            .await
            .unwrap_err()
            .to_string()
    };
    let missing = start().await;
    assert!(missing.contains("server.crt"), "{missing}");

    // A certificate with the key of another.
    let (one, other) = (ca.issue(), ca.issue());
    std::fs::write(&files.cert, &one.cert_pem).unwrap();
    std::fs::write(&files.key, &other.key_pem).unwrap();
    let mismatched = start().await;
    assert!(
        mismatched.contains("are not a certificate and its key"),
        "{mismatched}"
    );
}

/// Both transports of the generated client, trusting `ca`, are answered.
async fn assert_served(server: &TlsServer, ca: &TestCa) {
    let tls = TlsServer::client_tls(ca);
    for (transport, client) in clients(&server.url, &tls, &server.admin_token) {
        assert_eq!(
            list_one(&client).await.map_err(|e| e.to_string()),
            Ok(1),
            "{transport}"
        );
    }
}
