//! The whole `google.api.http` grammar over a real socket: an additional
//! binding with a pattern and a `:verb` (`GetWidget` at
//! `/v1/widgets/{uid=*/*}:fetch`), one with two variables and a nested
//! field path (`ListWidgets` at
//! `/v1/workshops/{uidp.descendants_of=*}/widgets/{order_by}`), the
//! standard routes they share a prefix with, and the generated client.

use std::sync::Arc;

use http_body_util::BodyExt;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use serde_json::{Value, json};

async fn serve() -> String {
    let context = ApiContext::new(PageTokens::new([5; 32]), Authorizer::allow_all());
    let app = widgets::Services::new(context)
        .store(Arc::new(widgets::MemoryStore::default()))
        .drawing_service(Arc::new(widgets::Drawings::default()))
        .layer(axum::middleware::from_fn(system_caller))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(app).await
}

/// Every request acts as the system (permissions are not what this tests).
async fn system_caller(
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    request
        .extensions_mut()
        .insert(protoapi_runtime::Caller::System);
    next.run(request).await
}

async fn call(base: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<String>();
    let request = axum::http::Request::builder()
        .method(method)
        .uri(format!("{base}{path}"))
        .body(body.map(|b| b.to_string()).unwrap_or_default())
        .unwrap();
    let response = client.request(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn workshop(n: u8) -> String {
    format!("{n}").repeat(40)
}

#[tokio::test]
async fn additional_bindings_patterns_and_verbs_are_served() {
    let base = serve().await;
    let mut uids = Vec::new();
    for name in ["b-gear", "a-cog"] {
        let (status, widget) = call(
            &base,
            "POST",
            &format!("/v1/widgets/{}", workshop(1)),
            Some(json!({"name": name})),
        )
        .await;
        assert_eq!(status, 200, "{widget}");
        uids.push(widget["uid"].as_str().unwrap().to_owned());
    }
    // The trailing `{parent=**}` matches nothing too: widgets need a
    // parent, so the method itself refuses the empty one.
    let (status, root) = call(&base, "POST", "/v1/widgets", Some(json!({"name": "root"}))).await;
    assert_eq!(status, 400, "{root}");
    assert_eq!(
        root["error"]["details"][1]["fieldViolations"][0]["field"],
        "parent"
    );

    // `{uid=*/*}:fetch` binds the whole matched text, `/` included.
    let (status, fetched) = call(
        &base,
        "GET",
        &format!("/v1/widgets/{}:fetch", uids[0]),
        None,
    )
    .await;
    assert_eq!(status, 200, "{fetched}");
    assert_eq!(fetched["name"], "b-gear");
    // `response_body: "name"` answers that field alone.
    let (status, name) = call(&base, "GET", &format!("/v1/widgets/{}:name", uids[0]), None).await;
    assert_eq!((status, name), (200, json!("b-gear")));
    // `HEAD` is served as `GET`, without a body.
    let (status, head) = call(
        &base,
        "HEAD",
        &format!("/v1/widgets/{}:fetch", uids[0]),
        None,
    )
    .await;
    assert_eq!((status, head), (200, Value::Null));
    // A value that is not UTF-8 once percent-decoded is a 400, not a panic.
    let (status, body) = call(&base, "GET", "/v1/workshops/%FF/widgets/name", None).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["details"][1]["fieldViolations"][0]["field"],
        "uidp.descendants_of"
    );
    // The primary binding still answers the same widget.
    let (status, got) = call(&base, "GET", &format!("/v1/widgets/{}", uids[0]), None).await;
    assert_eq!((status, &got["name"]), (200, &json!("b-gear")));
    // A UIDP of three segments does not fit `*/*`: the `**` binding takes
    // it whole, verb included, and finds no such widget.
    let (status, body) = call(
        &base,
        "GET",
        &format!("/v1/widgets/{}/x:fetch", uids[0]),
        None,
    )
    .await;
    assert_ne!(status, 200, "{body}");
    // A method no binding of the path has is 405 with the error body (a
    // POST would be a create: `{parent=**}` takes `…:fetch` as a parent).
    let (status, body) = call(
        &base,
        "PUT",
        &format!("/v1/widgets/{}:fetch", uids[0]),
        None,
    )
    .await;
    assert_eq!(status, 405, "{body}");
    assert_eq!(body["error"]["details"][0]["reason"], "METHOD_NOT_ALLOWED");

    // Two variables, one a nested field (`uidp.descendants_of`), with a
    // literal between them; the rest of the request from the query.
    let (status, list) = call(
        &base,
        "GET",
        &format!("/v1/workshops/{}/widgets/name?pageSize=1", workshop(1)),
        None,
    )
    .await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["items"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(
        list["items"][0]["name"], "a-cog",
        "ordered by the path's `name`"
    );
    let (status, list) = call(
        &base,
        "GET",
        &format!("/v1/workshops/{}/widgets/name", workshop(2)),
        None,
    )
    .await;
    assert_eq!(status, 200, "{list}");
    assert!(list["items"].as_array().is_none_or(Vec::is_empty), "{list}");
    // A path none of the templates matches is 404 with the error body.
    let (status, body) = call(&base, "GET", "/v1/workshops/x/widgets", None).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["details"][0]["reason"], "ROUTE_NOT_FOUND");
    // A percent-encoded single segment is decoded: `na%6De` is `name`.
    let (status, list) = call(
        &base,
        "GET",
        &format!("/v1/workshops/{}/widgets/na%6De", workshop(1)),
        None,
    )
    .await;
    assert_eq!(status, 200, "{list}");
}

#[tokio::test]
async fn the_generated_client_calls_routes_served_by_the_matcher() {
    use protoapi_runtime::client::Connection;
    use widgets::widgets::v1::{CreateWidgetRequest, GetWidgetRequest, Widget};

    let base = serve().await;
    for connection in [
        Connection::grpc(&base).unwrap(),
        Connection::rest(&base).unwrap(),
    ] {
        let widgets = widgets::Client::new(connection).widgets();
        let created = widgets
            .create(CreateWidgetRequest {
                parent: workshop(3),
                widget: Some(Widget {
                    name: "gear".to_owned(),
                    ..Default::default()
                }),
            })
            .await
            .unwrap();
        let got = widgets
            .get(GetWidgetRequest {
                uid: created.uid.clone(),
            })
            .await
            .unwrap();
        assert_eq!(got.name, "gear");
    }
}
