//! Signing in to the console through an OIDC issuer: the authorization
//! code flow with PKCE against a stand-in issuer, the identity token
//! exchanged by the token service, and the ways a sign-in is refused (a
//! callback in another browser, a replayed state, a wrong verifier).

use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Form, Router};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use platform_tests::{Issuer, StatusCode, TestServer};
use protoapi_runtime::console::testing::Browser;
use serde_json::json;
use std::collections::HashMap;

const ISSUER: &str = "https://issuer.console.test";
const SUBJECT: &str = "person@example.com";

/// What the stand-in issuer saw of the sign-in it was asked for.
#[derive(Default)]
struct Asked {
    challenge: String,
    nonce: String,
    redirect_uri: String,
    /// The code was redeemed (a code is good once).
    redeemed: bool,
}

struct StandIn {
    keys: Issuer,
    audience: String,
    asked: Mutex<Asked>,
}

/// `GET /authorize`: the person is signed in at once; back with a code.
async fn authorize(
    State(issuer): State<Arc<StandIn>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    assert_eq!(query["response_type"], "code");
    assert_eq!(query["code_challenge_method"], "S256");
    *issuer.asked.lock().unwrap() = Asked {
        challenge: query["code_challenge"].clone(),
        nonce: query["nonce"].clone(),
        redirect_uri: query["redirect_uri"].clone(),
        redeemed: false,
    };
    Redirect::to(&format!(
        "{}?code=the-code&state={}",
        query["redirect_uri"], query["state"]
    ))
    .into_response()
}

/// `POST /token`: the code for an identity token, if the verifier answers
/// the challenge (RFC 7636).
async fn token(
    State(issuer): State<Arc<StandIn>>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let mut asked = issuer.asked.lock().unwrap();
    let verifier = form.get("code_verifier").cloned().unwrap_or_default();
    let challenge =
        URL_SAFE_NO_PAD.encode(<sha2::Sha256 as sha2::Digest>::digest(verifier.as_bytes()));
    if form.get("code").map(String::as_str) != Some("the-code")
        || challenge != asked.challenge
        || form["redirect_uri"] != asked.redirect_uri
        || std::mem::replace(&mut asked.redeemed, true)
    {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "invalid_grant"})),
        )
            .into_response();
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({"iss": ISSUER, "sub": SUBJECT, "aud": issuer.audience, "nonce": asked.nonce, "iat": now, "exp": now + 600});
    axum::Json(json!({"id_token": issuer.keys.token(claims), "token_type": "Bearer"}))
        .into_response()
}

/// The API's base URL (its tokens' audience): the issuer sends the
/// browser back to it, which the tests read as this server.
const BASE_URL: &str = "https://api.console.test";

/// The server trusting the stand-in issuer, the issuer, and an identity
/// matching its subject (no grants: it sees nothing, but signs in).
async fn world(dir: &std::path::Path) -> (TestServer, Arc<StandIn>, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer_url = format!("http://{}", listener.local_addr().unwrap());
    let keys = Issuer::new("key-1");
    let jwks = dir.join("issuer.jwks.json");
    std::fs::write(&jwks, keys.jwks.to_string()).unwrap();
    let stand_in = Arc::new(StandIn {
        keys,
        audience: BASE_URL.to_owned(),
        asked: Mutex::default(),
    });
    let app = Router::new()
        .route("/authorize", axum::routing::get(authorize))
        .route("/token", axum::routing::post(token))
        .with_state(stand_in.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let mut config = TestServer::config(&dir.join("data"));
    config.base_url = Some(BASE_URL.to_owned());
    config.trusted_issuers = vec![(ISSUER.to_owned(), jwks)];
    config.console.oidc = Some(protoapi_runtime::console::Issuer {
        name: "the test issuer".to_owned(),
        authorization_endpoint: format!("{issuer_url}/authorize"),
        token_endpoint: format!("{issuer_url}/token"),
        client_id: BASE_URL.to_owned(),
        client_secret: None,
    });
    let server = TestServer::start_with(config).await;
    let root = server.platform_root();
    let identity = server
        .rest()
        .create(
            &format!("/iam/v2/identities/{root}"),
            json!({"name": "person", "claimMatch": {"issuer": ISSUER, "subject": SUBJECT}}),
        )
        .await;
    (server, stand_in, identity)
}

/// The value of cookie `name` a response sets.
fn set_cookie(page: &protoapi_runtime::console::testing::Page, name: &str) -> Option<String> {
    page.headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with(&format!("{name}=")))
        .map(|v| v.split(';').next().unwrap().to_owned())
}

/// Starts a sign-in for `identity` in `browser` (which keeps its state
/// cookie) and signs in at the issuer: the callback the issuer sends the
/// browser back to.
async fn at_issuer(browser: &mut Browser, identity: &str) -> String {
    let start = browser
        .get(&format!(
            "/console/oidc/start?identity={identity}&next=%2Fconsole%2Fgroups"
        ))
        .await;
    assert_eq!(start.status, StatusCode::SEE_OTHER);
    browser.cookie =
        Some(set_cookie(&start, "console_oidc").expect("the sign-in is bound to this browser"));
    let at_issuer = Browser::new("").get(start.location()).await;
    at_issuer
        .location()
        .strip_prefix(BASE_URL)
        .expect("back to the console")
        .to_owned()
}

#[tokio::test]
async fn sign_in_through_an_issuer_with_pkce() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _issuer, identity) = world(dir.path()).await;
    let base = format!("http://{}", server.address);
    let mut browser = Browser::new(&base);
    let page = browser.get("/console/signin").await;
    assert!(
        page.html.contains("Sign in with the test issuer"),
        "{}",
        page.html
    );

    let callback = at_issuer(&mut browser, &identity).await;

    // The callback in another browser (no state cookie, or a forged one)
    // is refused, and cancels nothing: the state is the browser's.
    for forged in [None, Some(format!("console_oidc={}", "A".repeat(80)))] {
        let mut elsewhere = Browser::new(&base);
        elsewhere.cookie = forged;
        let elsewhere = elsewhere.get(&callback).await;
        assert_eq!(
            elsewhere.status,
            StatusCode::UNAUTHORIZED,
            "{}",
            elsewhere.html
        );
        assert!(set_cookie(&elsewhere, "console_session").is_none());
    }
    let done = browser.get(&callback).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.html);
    assert!(
        done.html.contains("url=/console/groups"),
        "continues to where it was going: {}",
        done.html
    );
    let session = set_cookie(&done, "console_session").expect("a session");
    assert!(!done.html.contains("eyJ"), "no token on the page");
    // The issuer redeems a code once: the same answer again signs nobody in.
    let replayed = browser.get(&callback).await;
    assert_eq!(
        replayed.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        replayed.html
    );
    browser.cookie = Some(session);
    let groups = browser.get("/console/groups").await;
    assert_eq!(
        groups.status,
        StatusCode::OK,
        "signed in as the identity: {}",
        groups.html
    );
    assert!(groups.html.contains("id=\"signout\""));
    server.stop().await;
}

#[tokio::test]
async fn a_code_without_its_verifier_signs_nobody_in() {
    let dir = tempfile::tempdir().unwrap();
    let (server, issuer, identity) = world(dir.path()).await;
    let base = format!("http://{}", server.address);
    let mut browser = Browser::new(&base);
    let callback = at_issuer(&mut browser, &identity).await;
    // Someone else's challenge: the console's verifier no longer answers it.
    issuer.asked.lock().unwrap().challenge = "another-challenge".to_owned();
    let refused = browser.get(&callback).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{}", refused.html);
    assert!(
        refused.html.contains("did not redeem the code"),
        "{}",
        refused.html
    );
    assert!(set_cookie(&refused, "console_session").is_none());
    server.stop().await;
}

#[tokio::test]
async fn anonymous_starts_keep_nothing_and_cannot_crowd_out_a_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _issuer, identity) = world(dir.path()).await;
    let base = format!("http://{}", server.address);
    let mut browser = Browser::new(&base);
    let callback = at_issuer(&mut browser, &identity).await;

    // More starts than the server ever kept (10,000), from anyone: each
    // is the starting browser's cookie, the server keeps none of them.
    let flooder = Browser::new(&base);
    for i in 0..10_500 {
        let start = flooder
            .get(&format!(
                "/console/oidc/start?identity=x{i}&next=%2Fconsole%2F"
            ))
            .await;
        assert_eq!(start.status, StatusCode::SEE_OTHER);
    }
    // An identity too long for any uid is refused, not carried.
    let long = flooder
        .get(&format!(
            "/console/oidc/start?identity={}",
            "a".repeat(60 << 10)
        ))
        .await;
    assert_eq!(long.status, StatusCode::BAD_REQUEST, "{}", long.html);
    assert!(set_cookie(&long, "console_oidc").is_none());

    let done = browser.get(&callback).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.html);
    assert!(set_cookie(&done, "console_session").is_some());
    server.stop().await;
}
