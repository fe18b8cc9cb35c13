//! Keyword-named fields in the service glue, over REST: `refs`, whose
//! requests carry the item in a field named `ref`; its reference field
//! `fn`, naming a thing; and `hostile.v0`, the older version, whose id
//! field is `ref`.

mod common;

use axum::http::StatusCode;
use serde_json::{Value, json};

use common::{app, call};

/// The parent every item is created under.
fn parent() -> String {
    "1".repeat(40)
}

/// Creates a thing, the target of a ref's `fn`, and answers its uid.
async fn thing(app: &axum::Router) -> String {
    let body = json!({"name": "a thing", "type": "small"});
    let (status, thing) = call(app, "POST", &format!("/v1/things/{}", parent()), Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{thing}");
    thing["uid"].as_str().unwrap().to_owned()
}

/// Creates a ref naming `target` in `fn`.
async fn create_ref(app: &axum::Router, target: &str) -> (StatusCode, Value) {
    let body = json!({"name": "a ref", "fn": target});
    call(app, "POST", &format!("/v1/refs/{}", parent()), Some(body)).await
}

#[tokio::test]
async fn keyword_body_field_over_rest() {
    let app = app();
    let target = thing(&app).await;
    let (status, created) = create_ref(&app, &target).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(created["name"], "a ref");
    assert_eq!(created["fn"], target);
    let uid = created["uid"].as_str().unwrap();
    assert!(uid.starts_with(&parent()), "{uid}");

    let (status, got) = call(&app, "GET", &format!("/v1/refs/{uid}"), None).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(got, created);

    let (status, listed) = call(&app, "GET", "/v1/refs", None).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["items"], json!([created]));

    // The body field `ref` carries the change; the mask picks `name`.
    let (status, patched) = call(
        &app,
        "PATCH",
        &format!("/v1/refs/{uid}?updateMask=name"),
        Some(json!({"name": "renamed", "fn": "ignored"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["name"], "renamed");
    assert_eq!(patched["fn"], target);
    let (status, got) = call(&app, "GET", &format!("/v1/refs/{uid}"), None).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(got, patched);

    // A mask path the body field's message lacks, named through it.
    let (status, body) = call(
        &app,
        "PATCH",
        &format!("/v1/refs/{uid}?updateMask=nothing"),
        Some(json!({"name": "x"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    let (status, body) = call(&app, "DELETE", &format!("/v1/refs/{uid}"), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = call(&app, "GET", &format!("/v1/refs/{uid}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

#[tokio::test]
async fn keyword_reference_field_over_rest() {
    let app = app();
    let target = thing(&app).await;

    // A missing thing, a malformed uid, none: refused, naming `fn`.
    let missing = format!("{}/0123456789abcdef", parent());
    for named in [missing.as_str(), "not a uid", ""] {
        let (status, body) = create_ref(&app, named).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{named:?}: {body}");
        let violations = &body["error"]["details"][1]["fieldViolations"];
        assert_eq!(violations.as_array().map(Vec::len), Some(1), "{body}");
        assert_eq!(violations[0]["field"], "ref.fn", "{body}");
    }
    let (status, listed) = call(&app, "GET", "/v1/refs", None).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["items"], json!([]), "{listed}");

    // An existing one is kept, and cannot be changed (IMMUTABLE).
    let (status, created) = create_ref(&app, &target).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(created["fn"], target);
    let uid = created["uid"].as_str().unwrap();
    let (status, body) = call(
        &app,
        "PATCH",
        &format!("/v1/refs/{uid}?updateMask=fn"),
        Some(json!({"fn": missing})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, got) = call(&app, "GET", &format!("/v1/refs/{uid}"), None).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(got, created);
}

#[tokio::test]
async fn keyword_legacy_id_over_rest() {
    let app = app();
    let target = thing(&app).await;
    let (status, created) = create_ref(&app, &target).await;
    assert_eq!(status, StatusCode::OK, "{created}");
    let uid = created["uid"].as_str().unwrap();

    // v0 names the uid `ref`, in the path and in the item.
    let (status, got) = call(&app, "GET", &format!("/v0/refs/{uid}"), None).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(got, json!({"ref": uid, "name": "a ref"}));
    // A malformed uid is refused naming `ref`; a missing one is not found.
    let (status, body) = call(&app, "GET", &format!("/v0/refs/{uid}x"), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body["error"]["details"][1]["fieldViolations"][0]["field"], "ref",
        "{body}"
    );
    let missing = format!("{}/0123456789abcdef", parent());
    let (status, body) = call(&app, "GET", &format!("/v0/refs/{missing}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    // A v0 replacement changes what v0 shows and keeps the rest.
    let (status, replaced) = call(
        &app,
        "PUT",
        &format!("/v0/refs/{uid}"),
        Some(json!({"ref": "ignored", "name": "replaced"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{replaced}");
    assert_eq!(replaced, json!({"ref": uid, "name": "replaced"}));
    let (status, got) = call(&app, "GET", &format!("/v1/refs/{uid}"), None).await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(got["name"], "replaced");
    assert_eq!(got["fn"], target);

    let (status, body) = call(&app, "DELETE", &format!("/v0/refs/{uid}"), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = call(&app, "GET", &format!("/v1/refs/{uid}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}
