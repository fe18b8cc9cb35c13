//! `platformctl auth login --browser` against a small OIDC issuer written here,
//! with the test acting as the browser, and a server that trusts the issuer.
//!
//! The issuer grants without asking: `/authorize` redirects straight back to
//! the loopback callback with a code (or, when told to deny, with
//! `error=access_denied`); `/token` redeems the code only with the PKCE
//! verifier of its challenge, for the client and redirect it was issued to.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Form, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use platform_tests::{Issuer, StatusCode, TestServer};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

const SUBJECT: &str = "alice@example.test";

type Params = HashMap<String, String>;

/// What `/authorize` was asked for, kept until its code is redeemed.
struct Grant {
    client_id: String,
    redirect_uri: String,
    challenge: String,
}

#[derive(Clone)]
struct TestIssuer {
    url: String,
    signer: Arc<Issuer>,
    /// Answer every authorization request with `access_denied`.
    deny: bool,
    /// Codes handed out and not redeemed yet.
    grants: Arc<Mutex<HashMap<String, Grant>>>,
}

/// Starts the issuer on an ephemeral port; returns it with its URL set.
async fn start_issuer(deny: bool) -> TestIssuer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = TestIssuer {
        url: format!("http://{}", listener.local_addr().unwrap()),
        signer: Arc::new(Issuer::new("key-1")),
        deny,
        grants: Arc::default(),
    };
    let app = axum::Router::new()
        .route("/.well-known/openid-configuration", get(discovery))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(issuer.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    issuer
}

async fn discovery(State(issuer): State<TestIssuer>) -> Response {
    axum::Json(json!({
        "issuer": issuer.url,
        "authorization_endpoint": format!("{}/authorize", issuer.url),
        "token_endpoint": format!("{}/token", issuer.url),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "code_challenge_methods_supported": ["S256"],
    }))
    .into_response()
}

/// Grants at once: a redirect to the callback with a fresh code (or the denial).
async fn authorize(State(issuer): State<TestIssuer>, Query(params): Query<Params>) -> Response {
    let param = |name: &str| params.get(name).cloned().unwrap_or_default();
    let redirect_uri = param("redirect_uri");
    let problems = [
        (
            param("response_type") == "code",
            "response_type must be code",
        ),
        (
            param("scope").split(' ').any(|s| s == "openid"),
            "scope lacks openid",
        ),
        (
            param("code_challenge_method") == "S256",
            "code_challenge_method must be S256",
        ),
        (
            param("code_challenge").len() == 43,
            "code_challenge is not a SHA-256",
        ),
        (!param("state").is_empty(), "no state"),
        (!param("client_id").is_empty(), "no client_id"),
        (
            redirect_uri.starts_with("http://127.0.0.1:") && redirect_uri.ends_with("/callback"),
            "redirect_uri is not a loopback /callback",
        ),
    ];
    if let Some((_, problem)) = problems.iter().find(|(ok, _)| !ok) {
        return (StatusCode::BAD_REQUEST, *problem).into_response();
    }
    let mut answer = form_urlencoded::Serializer::new(String::new());
    if issuer.deny {
        answer
            .append_pair("error", "access_denied")
            .append_pair("error_description", "the user said no");
    } else {
        let code = protoapi_runtime::oidc::random_secret();
        answer.append_pair("code", &code);
        issuer.grants.lock().unwrap().insert(
            code,
            Grant {
                client_id: param("client_id"),
                redirect_uri: redirect_uri.clone(),
                challenge: param("code_challenge"),
            },
        );
    }
    answer.append_pair("state", &param("state"));
    let location = format!("{redirect_uri}?{}", answer.finish());
    (StatusCode::FOUND, [(http::header::LOCATION, location)]).into_response()
}

/// Redeems a code once, for its client and redirect, with its PKCE verifier.
async fn token(State(issuer): State<TestIssuer>, Form(params): Form<Params>) -> Response {
    let param = |name: &str| params.get(name).cloned().unwrap_or_default();
    let refuse = |error: &str, description: &str| {
        let body = json!({"error": error, "error_description": description});
        (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
    };
    if param("grant_type") != "authorization_code" {
        return refuse("unsupported_grant_type", "only authorization_code");
    }
    let Some(grant) = issuer.grants.lock().unwrap().remove(&param("code")) else {
        return refuse("invalid_grant", "unknown or used code");
    };
    if param("redirect_uri") != grant.redirect_uri || param("client_id") != grant.client_id {
        return refuse("invalid_grant", "issued to another client or redirect");
    }
    let verified = URL_SAFE_NO_PAD.encode(Sha256::digest(param("code_verifier").as_bytes()));
    if verified != grant.challenge {
        return refuse(
            "invalid_grant",
            "the code verifier does not match the challenge",
        );
    }
    let now = now();
    let id_token = issuer.signer.token(json!({
        "iss": issuer.url,
        "sub": SUBJECT,
        "aud": grant.client_id,
        "iat": now,
        "exp": now + 600,
    }));
    axum::Json(json!({"id_token": id_token, "token_type": "Bearer", "access_token": "x"}))
        .into_response()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A server trusting `issuer`, and an identity it may assume (`SUBJECT` at the
/// issuer) that may read one group.
struct World {
    server: TestServer,
    base: String,
    identity: String,
    team: String,
    dir: tempfile::TempDir,
}

async fn world(issuer: &TestIssuer) -> World {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_trusting(dir.path(), &issuer.url, &issuer.signer).await;
    let base = format!("http://{}", server.address);

    let admin = server.rest();
    let root = admin
        .create("/iam/v2/groups/", json!({"name": "browser login"}))
        .await;
    let viewer_role = json!({"name": "viewer", "capabilities": ["groups.get", "groups.list"]});
    let viewer = admin
        .create(&format!("/iam/v2/roles/{root}"), viewer_role)
        .await;
    let team = admin
        .create(&format!("/iam/v2/groups/{root}"), json!({"name": "team"}))
        .await;
    let claim_match = json!({"issuer": issuer.url, "subject": SUBJECT});
    let identity = admin
        .create(
            &format!("/iam/v2/identities/{root}"),
            json!({"name": "alice", "claimMatch": claim_match}),
        )
        .await;
    admin
        .create(
            &format!("/iam/v2/roleBindings/{team}"),
            json!({"name": "alice views team", "identity": identity, "role": viewer}),
        )
        .await;
    World {
        server,
        base,
        identity,
        team,
        dir,
    }
}

/// `platformctl auth login --browser` running, with no `$BROWSER`, its
/// stderr read line by line.
struct Login {
    child: Child,
    stderr: mpsc::UnboundedReceiver<String>,
    lines: Vec<String>,
}

impl Login {
    fn start(world: &World, issuer: &TestIssuer) -> Login {
        let mut child = Command::new(env!("CARGO_BIN_EXE_platformctl"))
            .args(["--server", &world.base, "--config-dir"])
            .arg(world.dir.path().join("config"))
            .args(["auth", "login", "--browser", "--issuer", &issuer.url])
            .args(["--identity", &world.identity])
            .env_remove("BROWSER")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (lines, stderr) = mpsc::unbounded_channel();
        let pipe = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in pipe.lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        Login {
            child,
            stderr,
            lines: Vec::new(),
        }
    }

    /// The URL the user is asked to open.
    async fn url(&mut self) -> String {
        const PROMPT: &str = "Open this URL to log in: ";
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let line = tokio::time::timeout_at(deadline, self.stderr.recv()).await;
            match line {
                Ok(Some(line)) => {
                    self.lines.push(line.clone());
                    if let Some(url) = line.strip_prefix(PROMPT) {
                        return url.to_owned();
                    }
                }
                _ => panic!("no login URL; stderr: {}", self.lines.join("\n")),
            }
        }
    }

    /// Waits for the exit (killing it after a minute); its success and all of stderr.
    async fn finish(mut self) -> (bool, String) {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > Duration::from_secs(60) {
                self.child.kill().unwrap();
                panic!("platformctl did not exit: {}", self.lines.join("\n"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        while let Some(line) = self.stderr.recv().await {
            self.lines.push(line);
        }
        (status.success(), self.lines.join("\n"))
    }
}

/// A GET as a browser sends it, without following redirects: the status, the
/// `Location` and the body.
async fn browse(url: &str) -> (StatusCode, Option<String>, String) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<bytes::Bytes>>();
    let response = client.get(url.parse().unwrap()).await.unwrap();
    let status = response.status();
    let location = response
        .headers()
        .get(http::header::LOCATION)
        .map(|l| l.to_str().unwrap().to_owned());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        location,
        String::from_utf8_lossy(&body).into_owned(),
    )
}

/// Follows the issuer's redirect to the loopback callback; its answer.
async fn authorize_in_browser(url: &str) -> (StatusCode, String) {
    let (status, location, body) = browse(url).await;
    assert_eq!(status, StatusCode::FOUND, "the issuer grants: {body}");
    let callback = location.expect("a redirect names its target");
    assert!(callback.starts_with("http://127.0.0.1:"), "{callback}");
    let (status, _, page) = browse(&callback).await;
    (status, page)
}

fn claims(jwt: &str) -> Value {
    let payload = jwt.split('.').nth(1).expect("a JWT");
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn browser_login_gets_a_token_the_server_accepts() {
    let issuer = start_issuer(false).await;
    let world = world(&issuer).await;

    let mut login = Login::start(&world, &issuer);
    let url = login.url().await;
    assert!(
        url.starts_with(&format!("{}/authorize?", issuer.url)),
        "{url}"
    );
    let (status, page) = authorize_in_browser(&url).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("You may close this window"), "{page}");
    let (ok, stderr) = login.finish().await;
    assert!(ok, "login: {stderr}");
    assert!(
        stderr.contains(&format!("logged in as {}", world.identity)),
        "{stderr}"
    );
    assert!(
        issuer.grants.lock().unwrap().is_empty(),
        "the code was redeemed"
    );

    // The ID token is kept for later exchanges; its audience is the server.
    let config = world.dir.path().join("config");
    let id_token = std::fs::read_to_string(config.join("identity-token.jwt")).unwrap();
    let id_claims = claims(id_token.trim());
    assert_eq!(
        id_claims["aud"], world.base,
        "the client id defaults to --server"
    );
    assert_eq!(id_claims["sub"], SUBJECT);

    let (base, config_dir) = (world.base.clone(), config.clone());
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_platformctl"))
            .args(["--server", &base, "--config-dir"])
            .arg(config_dir)
            .args(["auth", "token"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "auth token: {stderr}");
    let token = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    assert_eq!(claims(&token)["sub"], world.identity.as_str());
    let read = world
        .server
        .rest_as(Some(&token))
        .get(&format!("/iam/v2/groups/{}", world.team))
        .await;
    assert_eq!(
        read.status,
        StatusCode::OK,
        "the server accepts the token: {:?}",
        read.body
    );
    world.server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_authorization_fails_the_login_and_says_why() {
    let issuer = start_issuer(true).await;
    let world = world(&issuer).await;

    let mut login = Login::start(&world, &issuer);
    let url = login.url().await;
    let (status, page) = authorize_in_browser(&url).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    assert!(page.contains("The login failed"), "{page}");
    let (ok, stderr) = login.finish().await;
    assert!(!ok, "a denied login fails: {stderr}");
    assert!(stderr.contains("access_denied"), "{stderr}");
    assert!(stderr.contains("the user said no"), "{stderr}");
    assert!(
        !world.dir.path().join("config/credentials.json").exists(),
        "nothing is cached"
    );
    world.server.stop().await;
}

/// Serves `document(its own URL)` as the discovery document of an issuer on
/// an ephemeral port; returns that URL.
async fn start_discovery(document: impl Fn(&str) -> Value) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let body = document(&url);
    let app = axum::Router::new().route(
        "/.well-known/openid-configuration",
        get(move || async move { axum::Json(body) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// A discovery document that names endpoints the login must not use is
/// refused before the login starts: no URL to open, no request to them.
#[tokio::test(flavor = "multi_thread")]
async fn untrustworthy_discovery_documents_are_refused_before_use() {
    // Stands for the endpoints; a different port is a different origin.
    let bystander = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    bystander.set_nonblocking(true).unwrap();
    let elsewhere = format!("http://{}", bystander.local_addr().unwrap());
    // What the refusal says, then the issuer and endpoints the document
    // names (`SELF` is the issuer's own URL, `ELSEWHERE` the bystander's).
    let cases = [
        (
            "is for issuer",
            "ELSEWHERE",
            "ELSEWHERE/authorize",
            "ELSEWHERE/token",
        ),
        (
            "`token_endpoint`",
            "SELF",
            "SELF/authorize",
            "ELSEWHERE/token",
        ),
        (
            "`authorization_endpoint`",
            "SELF",
            "ELSEWHERE/authorize",
            "SELF/token",
        ),
        (
            "is not https://",
            "SELF",
            "SELF/authorize",
            "http://login.example.test/token",
        ),
    ];
    for (expected, named, authorization, token) in cases {
        let elsewhere = elsewhere.clone();
        let document = move |url: &str| {
            let fill = |text: &str| text.replace("SELF", url).replace("ELSEWHERE", &elsewhere);
            json!({
                "issuer": fill(named),
                "authorization_endpoint": fill(authorization),
                "token_endpoint": fill(token),
            })
        };
        let issuer = start_discovery(document).await;
        let config = tempfile::tempdir().unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_platformctl"));
        command
            .args(["--server", "http://127.0.0.1:9", "--config-dir"])
            .arg(config.path())
            .args(["auth", "login", "--browser", "--issuer", &issuer])
            .args(["--identity", "any"])
            .env_remove("BROWSER")
            .stdin(Stdio::null());
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{expected}: {stderr}");
        assert!(stderr.contains("OIDC discovery at"), "{expected}: {stderr}");
        assert!(stderr.contains(expected), "{expected}: {stderr}");
        assert!(!stderr.contains("Open this URL"), "{expected}: {stderr}");
        match bystander.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("{expected}: the endpoints were contacted: {other:?}"),
        }
    }
}
