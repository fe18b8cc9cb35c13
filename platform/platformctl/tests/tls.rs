//! `platformctl` and the credential helper against the server over TLS:
//! a private CA given with `--ca-file` (or `PLATFORMCTL_CA_FILE`), refused
//! without it, and plain HTTP to another host refused before connecting.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use platform_api::Client;
use platform_api::platform::iam::v2::{
    ClaimMatch, CreateGroupRequest, CreateIdentityRequest, Group, Identity,
};
use platform_tests::Issuer;
use platform_tests::tls::{TestCa, TlsServer};
use protoapi_runtime::client::{Connection, StaticToken};
use serde_json::{Value, json};

const ISSUER: &str = "https://issuer.test";

/// Runs `platformctl` with `args` (no CA file from the environment).
async fn platformctl(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_platformctl"))
            .args(args)
            .env_remove("PLATFORMCTL_CA_FILE")
            .env_remove("PLATFORMCTL_ALLOW_INSECURE_HTTP")
            .env_remove("PLATFORMCTL_TOKEN")
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|arg| (*arg).to_owned()).collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn platformctl_trusts_the_ca_file_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("platformctl test CA");
    let ca_file = ca.write(dir.path());
    let server = TlsServer::start(dir.path(), &ca, |_| {}).await;
    let ca_file = ca_file.to_str().unwrap();
    let token = server.admin_token.trim();

    for transport in ["--rest", "--grpc"] {
        let mut list = args(&["--server", &server.url, "--ca-file", ca_file]);
        list.extend(args(&["--token", token, "groups", "list", "-o", "json"]));
        if transport == "--grpc" {
            list.push("--grpc".to_owned());
        }
        let output = platformctl(list).await;
        assert!(
            output.status.success(),
            "{transport}: {}",
            text(&output.stderr)
        );
        let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
        // The root organization at least (a shared PostgreSQL database
        // holds other tests' groups too).
        assert!(
            answer["items"]
                .as_array()
                .is_some_and(|items| !items.is_empty()),
            "{answer}"
        );
    }

    // Without the CA: refused, saying why.
    let output = platformctl(args(&[
        "--server",
        &server.url,
        "--token",
        token,
        "groups",
        "list",
    ]))
    .await;
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("UNTRUSTED_CERTIFICATE"), "{stderr}");
    assert!(stderr.contains("is not trusted"), "{stderr}");

    // Plain HTTP to a host that is not loopback: refused before connecting,
    // naming the opt-in.
    let insecure = format!("http://0.0.0.0:{}", server.address.port());
    let output = platformctl(args(&[
        "--server", &insecure, "--token", token, "groups", "list",
    ]))
    .await;
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--allow-insecure-http"), "{stderr}");
    assert!(stderr.contains(&insecure), "{stderr}");
    server.stop().await;
}

/// `echo <host> | docker-credential-platform get` with `env`, as Docker runs it.
fn credential_helper(host: &str, env: &[(&str, &str)]) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_docker-credential-platform"))
        .arg("get")
        .env_remove("PLATFORMCTL_CONFIG_DIR")
        .env_remove("PLATFORMCTL_CA_FILE")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{host}").unwrap();
    child.wait_with_output().unwrap()
}

/// An identity named `name`, in a new root organization `organization`,
/// that identity tokens of `issuer` for `alice` may assume.
async fn assumable_identity(
    server: &TlsServer,
    ca: &TestCa,
    [organization, name, issuer]: [&str; 3],
) -> String {
    let connection = Connection::rest_with(&server.url, &TlsServer::client_tls(ca))
        .unwrap()
        .with_tokens(StaticToken::new(server.admin_token.trim()));
    let client = Client::new(connection);
    let root = client
        .groups()
        .create(CreateGroupRequest {
            group: Some(Group {
                name: organization.to_owned(),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    let identity = Identity {
        name: name.to_owned(),
        claim_match: Some(ClaimMatch {
            issuer: issuer.to_owned(),
            subject: "alice".to_owned(),
        }),
        ..Default::default()
    };
    let request = CreateIdentityRequest {
        parent: root.uid,
        identity: Some(identity),
    };
    client.identities().create(request).await.unwrap().uid
}

#[tokio::test(flavor = "multi_thread")]
async fn the_credential_helper_exchanges_over_tls() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("credential helper test CA");
    let ca_file = ca.write(dir.path());
    let issuer = Issuer::new("key-1");
    let jwks = dir.path().join("issuer.jwks.json");
    std::fs::write(&jwks, issuer.jwks.to_string()).unwrap();
    let server = TlsServer::start(dir.path(), &ca, |config| {
        config.trusted_issuers = vec![(ISSUER.to_owned(), jwks.clone())];
    })
    .await;
    let identity = assumable_identity(&server, &ca, ["ci", "builder", ISSUER]).await;
    let token_file = dir.path().join("identity.jwt");
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    let claims = json!({"iss": ISSUER, "sub": "alice", "aud": server.url, "exp": exp});
    std::fs::write(&token_file, issuer.token(claims)).unwrap();

    let host = format!("localhost:{}", server.address.port());
    let env = |ca: Option<&Path>| {
        let mut env = vec![
            ("PLATFORMCTL_SERVER", server.url.clone()),
            ("PLATFORM_IDENTITY", identity.clone()),
            (
                "PLATFORM_IDENTITY_TOKEN_FILE",
                token_file.to_str().unwrap().to_owned(),
            ),
        ];
        if let Some(ca) = ca {
            env.push(("PLATFORMCTL_CA_FILE", ca.to_str().unwrap().to_owned()));
        }
        env
    };
    let run = |env: Vec<(&'static str, String)>| {
        let host = host.clone();
        tokio::task::spawn_blocking(move || {
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            credential_helper(&host, &env)
        })
    };
    let output = run(env(Some(&ca_file))).await.unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(
        answer["Secret"]
            .as_str()
            .is_some_and(|s| s.split('.').count() == 3),
        "{answer}"
    );

    let output = run(env(None)).await.unwrap();
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(stderr.contains("UNTRUSTED_CERTIFICATE"), "{stderr}");
    server.stop().await;
}

/// An OIDC issuer over TLS, as far as the login fetches from it: discovery
/// and the token endpoint (the test plays the browser, so `/authorize` is
/// never visited). Its certificate is issued by `ca`.
async fn start_tls_issuer(dir: &Path, ca: &TestCa, signer: Arc<Issuer>) -> String {
    let files =
        protoapi_runtime::tls::CertFiles::new(dir.join("issuer.crt"), dir.join("issuer.key"));
    ca.issue().write(&files);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "https://localhost:{}",
        listener.local_addr().unwrap().port()
    );
    let discovery = json!({
        "issuer": url,
        "authorization_endpoint": format!("{url}/authorize"),
        "token_endpoint": format!("{url}/token"),
    });
    let issuer = url.clone();
    let app = axum::Router::new()
        .route(
            "/.well-known/openid-configuration",
            axum::routing::get(move || async move { axum::Json(discovery) }),
        )
        .route(
            "/token",
            axum::routing::post(
                move |form: axum::extract::Form<HashMap<String, String>>| async move {
                    let now = now();
                    let id_token = signer.token(json!({
                        "iss": issuer, "sub": "alice", "aud": form.0["client_id"],
                        "iat": now, "exp": now + 600,
                    }));
                    axum::Json(json!({"id_token": id_token, "token_type": "Bearer"}))
                },
            ),
        );
    let tls = protoapi_runtime::tls::ServerTls::load(&files).unwrap();
    let server = protoapi_runtime::serve::Server::new(listener, app).tls(tls);
    tokio::spawn(server.serve(std::future::pending()));
    url
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// `platformctl auth login --browser` with `extra` flags: the test reads the
/// login URL, sends the loopback redirect itself, and returns the exit
/// status and stderr.
async fn browser_login(
    server: &str,
    issuer: &str,
    identity: &str,
    dir: &Path,
    extra: &[&str],
) -> (bool, String) {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_platformctl"))
        .args(["--server", server, "--config-dir"])
        .arg(dir.join("config"))
        .args([
            "auth",
            "login",
            "--browser",
            "--issuer",
            issuer,
            "--identity",
            identity,
        ])
        .args(extra)
        .env_remove("BROWSER")
        .env_remove("PLATFORMCTL_CA_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Every line of stderr is kept; the login URL is also handed over as
    // soon as it is printed.
    let stderr = child.stderr.take().unwrap();
    let (found, url) = tokio::sync::oneshot::channel();
    let reader = std::thread::spawn(move || {
        let mut found = Some(found);
        let mut lines = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("Open this URL to log in: ") {
                found.take().map(|found| found.send(url.to_owned()));
            }
            lines.push(line);
        }
        lines.join("\n")
    });
    let Ok(url) = url.await else {
        // Failed before asking for the browser.
        let status = child.wait().unwrap();
        return (status.success(), reader.join().unwrap());
    };
    let query = url.split_once('?').unwrap().1;
    let params: HashMap<String, String> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let callback = format!(
        "{}?code=the-code&state={}",
        params["redirect_uri"], params["state"]
    );
    let http = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Empty<bytes::Bytes>>();
    let answer = http.get(callback.parse().unwrap()).await.unwrap();
    assert_eq!(answer.status(), 200, "the redirect is taken");
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    (status.success(), reader.join().unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_browser_login_reaches_an_https_issuer_with_the_ca_file() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("issuer test CA");
    let ca_file = ca.write(dir.path());
    let signer = Arc::new(Issuer::new("key-1"));
    let issuer = start_tls_issuer(dir.path(), &ca, Arc::clone(&signer)).await;
    let server = TlsServer::start(dir.path(), &ca, |config| {
        let jwks = dir.path().join("issuer.jwks.json");
        std::fs::write(&jwks, signer.jwks.to_string()).unwrap();
        config.trusted_issuers = vec![(issuer.clone(), jwks)];
    })
    .await;
    let identity = assumable_identity(&server, &ca, ["browser", "alice", &issuer]).await;

    let ca_flag = ["--ca-file", ca_file.to_str().unwrap()];
    let (ok, stderr) = browser_login(&server.url, &issuer, &identity, dir.path(), &ca_flag).await;
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains(&format!("logged in as {identity}")),
        "{stderr}"
    );

    // Without the CA file, discovery fails on the issuer's certificate.
    let (ok, stderr) = browser_login(&server.url, &issuer, &identity, dir.path(), &[]).await;
    assert!(!ok);
    assert!(stderr.contains("OIDC discovery at"), "{stderr}");
    assert!(stderr.contains("invalid peer certificate"), "{stderr}");
    server.stop().await;
}
