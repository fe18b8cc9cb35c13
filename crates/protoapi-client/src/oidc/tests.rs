//! The flow's pieces against their RFCs, and the checks of a discovery
//! document.

use std::collections::HashMap;

use serde_json::Value;

use super::*;

#[test]
fn challenge_is_rfc_7636_s256() {
    // RFC 7636, appendix B.
    assert_eq!(
        challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    );
}

#[test]
fn verifiers_are_long_unreserved_and_fresh() {
    let verifier = random_secret();
    assert!((43..=128).contains(&verifier.len()), "{verifier}");
    assert!(
        verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b)),
        "{verifier}"
    );
    assert_ne!(verifier, random_secret());
}

#[test]
fn authorization_url_carries_the_request() {
    let url = Authorization {
        endpoint: "http://issuer.test/authorize?tenant=a",
        client_id: "http://api.test",
        redirect_uri: "http://127.0.0.1:1234/callback",
        state: "the state",
        nonce: Some("the nonce"),
        verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    }
    .url();
    let (endpoint, query) = url.split_once("/authorize?").unwrap();
    assert_eq!(endpoint, "http://issuer.test");
    let params: HashMap<String, String> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    for (name, value) in [
        ("tenant", "a"),
        ("response_type", "code"),
        ("client_id", "http://api.test"),
        ("redirect_uri", "http://127.0.0.1:1234/callback"),
        ("scope", "openid"),
        ("state", "the state"),
        ("nonce", "the nonce"),
        (
            "code_challenge",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        ),
        ("code_challenge_method", "S256"),
    ] {
        assert_eq!(params.get(name).map(String::as_str), Some(value), "{name}");
    }
}

fn document(issuer: &str, authorization: &str, token: &str) -> Value {
    serde_json::json!({
        "issuer": issuer,
        "authorization_endpoint": authorization,
        "token_endpoint": token,
    })
}

#[test]
fn discovery_endpoints_are_secure_and_on_the_issuers_origin() {
    let issuer = "https://login.example/tenant";
    let good = document(
        issuer,
        "https://LOGIN.example:443/authorize",
        "https://login.example/token",
    );
    let endpoints = check_discovery(issuer, &good).unwrap();
    assert_eq!(endpoints.token, "https://login.example/token");
    let local = "http://127.0.0.1:5556";
    let endpoints = check_discovery(
        local,
        &document(local, &format!("{local}/a"), &format!("{local}/t")),
    );
    assert!(endpoints.is_ok(), "{endpoints:?}");
    let v6 = "http://[::1]:5556";
    let endpoints = check_discovery(v6, &document(v6, &format!("{v6}/a"), &format!("{v6}/t")));
    assert!(endpoints.is_ok(), "{endpoints:?}");

    let refused = |document: Value, expected: &str| {
        let error = check_discovery(issuer, &document).unwrap_err();
        assert!(error.contains(expected), "{expected}: {error}");
    };
    let token = "https://login.example/token";
    refused(
        document("https://evil.example", token, token),
        "is for issuer",
    );
    refused(
        document(issuer, token, "http://login.example/token"),
        "is not https://",
    );
    for foreign in [
        "https://evil.example/token",
        "https://login.example:8443/token",
        "https://login.example.evil.example/token",
        "http://127.0.0.1/token",
    ] {
        refused(
            document(issuer, token, foreign),
            "not on the issuer's origin",
        );
        refused(document(issuer, foreign, token), "`authorization_endpoint`");
    }
    refused(
        document(issuer, token, "https://login.example@evil.example/token"),
        "user information",
    );
    refused(document(issuer, token, "/token"), "not an absolute URL");
    refused(
        document(issuer, token, "ftp://login.example/token"),
        "not an http(s) URL",
    );
    let plain = "http://login.example";
    let error = check_discovery(plain, &document(plain, plain, plain)).unwrap_err();
    assert!(error.contains("must be an https:// URL"), "{error}");
}
