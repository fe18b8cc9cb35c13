//! Calls of methods two traits of one store share, over REST: the custom
//! `InsertWidget` reaches the handler, Create the store's `insert_widget`;
//! List reaches the widgets' `list_widgets`, not the healths', with the
//! shop in its field `name` (a parent, not a filter on names).

mod common;

use axum::http::StatusCode;
use serde_json::json;

use common::{app, call};

#[tokio::test]
async fn shared_method_names_reach_their_own_traits() {
    let app = app();
    let (status, inserted) = call(
        &app,
        "POST",
        "/clash/shops/s1/widgets:insert",
        Some(json!({"position": 3})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{inserted}");
    assert_eq!(inserted["name"], "shops/s1/widgets/at-3");
    assert_eq!(inserted["purpose"], "inserted");

    let body = json!({"purpose": "holds doors"});
    let (status, created) = call(
        &app,
        "POST",
        "/clash/shops/s1/widgets?widgetId=w1",
        Some(body),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{created}");
    assert_eq!(created["name"], "shops/s1/widgets/w1");

    // Only the created widget is stored: the custom method wrote nothing.
    let (status, listed) = call(&app, "GET", "/clash/shops/s1/widgets", None).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["widgets"], json!([created]));

    let (status, health) = call(&app, "GET", "/clash/shops/s1/widgets/w1:getHealth", None).await;
    assert_eq!(status, StatusCode::OK, "{health}");
    assert_eq!(
        health,
        json!({"name": "shops/s1/widgets/w1", "healthy": true})
    );
}
