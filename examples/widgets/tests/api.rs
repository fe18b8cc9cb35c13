//! The build.rs-generated widgets API over a real socket: REST and gRPC,
//! field behaviours, capability checks declared only in annotations.toml,
//! and the generated wiring (fallbacks, OpenAPI, services without a handler).

use std::sync::Arc;

use axum::extract::Request;
use axum::middleware::Next;
use http_body_util::BodyExt;
use protoapi_runtime::Caller;
use protoapi_runtime::auth::{Access, Authorizer, BoxFuture, Grants};
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use serde_json::{Value, json};
use widgets::widgets::v1::widget::Delivery;
use widgets::widgets::v1::widget_service_client::WidgetServiceClient;
use widgets::widgets::v1::{GetWidgetRequest, ListWidgetsRequest};

const ALICE: &str = "ffffffffffffffffffffffffffffffffffffffff/0000000000000001";

fn workshop(n: u8) -> String {
    format!("{n}").repeat(40)
}

/// Alice may read and list widgets in workshop 1; nothing else.
struct DemoAccess;

impl Access for DemoAccess {
    fn grants<'a>(
        &'a self,
        identity: &'a str,
    ) -> BoxFuture<'a, Result<Grants, protoapi_runtime::Error>> {
        Box::pin(async move {
            let mut grants = Grants::default();
            if identity == ALICE {
                grants.add(
                    workshop(1),
                    ["widgets.get".to_owned(), "widgets.list".to_owned()],
                );
            }
            Ok(grants)
        })
    }
}

/// `x-identity: <uid>` acts as that identity; no header acts as the system.
async fn demo_caller(mut request: Request, next: Next) -> axum::response::Response {
    let caller = match request
        .headers()
        .get("x-identity")
        .and_then(|v| v.to_str().ok())
    {
        Some(uid) => Caller::Identity {
            uid: uid.to_owned(),
            admin: false,
        },
        None => Caller::System,
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

async fn serve() -> String {
    let context = ApiContext::new(
        PageTokens::new([5; 32]),
        Authorizer::new(Arc::new(DemoAccess)),
    );
    let app = widgets::Services::new(context)
        .store(Arc::new(widgets::MemoryStore::default()))
        .drawing_service(Arc::new(widgets::Drawings::default()))
        .layer(axum::middleware::from_fn(demo_caller))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(app).await
}

async fn call(
    base: &str,
    method: &str,
    path: &str,
    identity: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let client = hyper_util_client();
    let mut request = axum::http::Request::builder()
        .method(method)
        .uri(format!("{base}{path}"));
    if let Some(identity) = identity {
        request = request.header("x-identity", identity);
    }
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let response = client.request(request.body(body).unwrap()).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn hyper_util_client()
-> hyper_util::client::legacy::Client<hyper_util::client::legacy::connect::HttpConnector, String> {
    hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build_http()
}

#[tokio::test]
async fn generated_api_serves_rest_and_grpc_with_declared_permissions() {
    let base = serve().await;
    let (status, gear) = call(
        &base,
        "POST",
        &format!("/v1/widgets/{}", workshop(1)),
        None,
        Some(json!({"name": "gear", "colour": "red", "stock": 3})),
    )
    .await;
    assert_eq!(status, 200, "{gear}");
    let gear_uid = gear["uid"].as_str().unwrap().to_owned();
    let (_, cog) = call(
        &base,
        "POST",
        &format!("/v1/widgets/{}", workshop(2)),
        None,
        Some(json!({"name": "cog"})),
    )
    .await;
    let cog_uid = cog["uid"].as_str().unwrap().to_owned();

    // Field behaviours from the proto: IMMUTABLE colour, REQUIRED name, typed stock.
    let (status, body) = call(
        &base,
        "PATCH",
        &format!("/v1/widgets/{gear_uid}?updateMask=colour"),
        None,
        Some(json!({"colour": "blue"})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["details"][1]["fieldViolations"][0]["field"],
        "widget.colour"
    );
    let (status, _) = call(
        &base,
        "PATCH",
        &format!("/v1/widgets/{gear_uid}?updateMask=colour,stock"),
        None,
        Some(json!({"colour": "red", "stock": 4})),
    )
    .await;
    assert_eq!(
        status, 200,
        "an immutable field may be named with its current value"
    );
    let (status, _) = call(
        &base,
        "POST",
        &format!("/v1/widgets/{}", workshop(1)),
        None,
        Some(json!({"stock": "many"})),
    )
    .await;
    assert_eq!(status, 400);

    // Capabilities from annotations.toml, enforced with no hand-written auth code.
    let (status, _) = call(
        &base,
        "GET",
        &format!("/v1/widgets/{gear_uid}"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 200, "alice reads in workshop 1");
    let (status, body) = call(
        &base,
        "GET",
        &format!("/v1/widgets/{cog_uid}"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 403, "not in workshop 2: {body}");
    let (status, _) = call(
        &base,
        "POST",
        &format!("/v1/widgets/{}", workshop(1)),
        Some(ALICE),
        Some(json!({"name": "x"})),
    )
    .await;
    assert_eq!(status, 403, "alice may not create");
    let (status, listed) = call(&base, "GET", "/v1/widgets", Some(ALICE), None).await;
    assert_eq!(status, 200);
    assert_eq!(
        listed["items"].as_array().unwrap().len(),
        1,
        "alice lists what she may see: {listed}"
    );

    // The same service over gRPC on the same port.
    let channel = tonic::transport::Endpoint::from_shared(base.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut grpc = WidgetServiceClient::new(channel);
    let widget = grpc
        .get_widget(GetWidgetRequest {
            uid: gear_uid.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((widget.name.as_str(), widget.stock), ("gear", 4));
    let page = grpc
        .list_widgets(ListWidgetsRequest {
            order_by: "stock desc".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(page.total_count, 2);
    assert_eq!(page.items[0].uid, gear_uid, "ordered by stock, descending");
}

#[tokio::test]
async fn declared_references_and_delete_blockers_hold_for_a_memory_store() {
    let base = serve().await;
    let widget = |workshop: String| {
        let base = base.clone();
        async move {
            let (status, body) = call(
                &base,
                "POST",
                &format!("/v1/widgets/{workshop}"),
                None,
                Some(json!({"name": "gear"})),
            )
            .await;
            assert_eq!(status, 200, "{body}");
            body["uid"].as_str().unwrap().to_owned()
        }
    };
    let gear = widget(workshop(1)).await;
    let elsewhere = widget(workshop(2)).await;
    let parts = format!("/v1/parts/{}", workshop(1));
    let part = |widget: String| {
        call(
            &base,
            "POST",
            &parts,
            None,
            Some(json!({"name": "tooth", "widget": widget})),
        )
    };

    // A widget of another organization, a missing one, none: INVALID_ARGUMENT
    // naming the field, all alike.
    let missing = format!("{}/0123456789abcdef", workshop(1));
    for target in [elsewhere.clone(), missing, String::new()] {
        let (status, body) = part(target.clone()).await;
        assert_eq!(status, 400, "{target:?}: {body}");
        assert_eq!(
            body["error"]["details"][1]["fieldViolations"][0]["field"], "part.widget",
            "{body}"
        );
        assert!(!body.to_string().contains(&elsewhere), "{body}");
    }
    let (status, tooth) = part(gear.clone()).await;
    assert_eq!(status, 200, "{tooth}");
    let tooth = tooth["uid"].as_str().unwrap().to_owned();

    // The widget cannot go while a part names it.
    let (status, body) = call(&base, "DELETE", &format!("/v1/widgets/{gear}"), None, None).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["status"], "FAILED_PRECONDITION");
    assert!(body.to_string().contains(&tooth), "{body}");
    let (status, _) = call(&base, "DELETE", &format!("/v1/parts/{tooth}"), None, None).await;
    assert_eq!(status, 200);
    let (status, body) = call(&base, "DELETE", &format!("/v1/widgets/{gear}"), None, None).await;
    assert_eq!(status, 200, "{body}");
}

/// v0, declared as a legacy version of v1 in `proto/widgets/v0`, reads and
/// replaces the same widgets under its old names, with v1's permissions.
#[tokio::test]
async fn a_legacy_version_shows_the_same_widgets() {
    let base = serve().await;
    let (status, gear) = call(
        &base,
        "POST",
        &format!("/v1/widgets/{}", workshop(1)),
        None,
        Some(json!({"name": "gear", "colour": "red", "stock": 3})),
    )
    .await;
    assert_eq!(status, 200, "{gear}");
    let uid = gear["uid"].as_str().unwrap().to_owned();

    let (status, listed) = call(
        &base,
        "GET",
        &format!("/v0/widgets?id={uid}"),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(
        listed,
        json!({"items": [{"id": uid, "title": "gear", "colour": "red", "stock": 3, "created": gear["createTime"]}]})
    );

    // A full replacement: `stock` left out is cleared; v1 reads the result.
    let (status, replaced) = call(
        &base,
        "PUT",
        &format!("/v0/widgets/{uid}"),
        None,
        Some(json!({"title": "big gear", "colour": "red"})),
    )
    .await;
    assert_eq!(status, 200, "{replaced}");
    let (_, read) = call(&base, "GET", &format!("/v1/widgets/{uid}"), None, None).await;
    assert_eq!(
        (read["name"].as_str(), read["stock"].as_i64()),
        (Some("big gear"), Some(0))
    );
    assert_eq!(
        read["createTime"], gear["createTime"],
        "output-only fields keep their values"
    );

    // v1's rules hold: IMMUTABLE colour, REQUIRED name (as v0 spells it: the path is v1's).
    let (status, body) = call(
        &base,
        "PUT",
        &format!("/v0/widgets/{uid}"),
        None,
        Some(json!({"colour": "blue"})),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let fields: Vec<&str> = body["error"]["details"][1]["fieldViolations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["colour", "name"], "{body}");

    // Permissions are v1's: Alice may list workshop 1 but not replace in it,
    // and a workshop she cannot see lists as empty (v0's ambiguity).
    let (status, _) = call(
        &base,
        "PUT",
        &format!("/v0/widgets/{uid}"),
        Some(ALICE),
        Some(json!({"title": "x"})),
    )
    .await;
    assert_eq!(status, 403);
    let (status, listed) = call(
        &base,
        "GET",
        &format!("/v0/widgets?uidp.children_of={}", workshop(2)),
        Some(ALICE),
        None,
    )
    .await;
    assert_eq!((status, listed), (200, json!({"items": []})));

    let (status, deleted) = call(&base, "DELETE", &format!("/v0/widgets/{uid}"), None, None).await;
    assert_eq!((status, deleted), (200, json!({})));
    let (status, _) = call(&base, "GET", &format!("/v1/widgets/{uid}"), None, None).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn generated_wiring_answers_unknown_routes_and_methods_with_error_bodies() {
    let base = serve().await;
    let (status, body) = call(&base, "GET", "/v1/sprockets", None, None).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["error"]["code"], 404, "{body}");
    assert_eq!(body["error"]["status"], "NOT_FOUND", "{body}");
    assert_eq!(
        body["error"]["details"][0]["reason"], "ROUTE_NOT_FOUND",
        "{body}"
    );

    // `/v1/widgets/{uid}` is served, but not with PUT.
    let path = format!("/v1/widgets/{}", workshop(1));
    let (status, body) = call(&base, "PUT", &path, None, Some(json!({}))).await;
    assert_eq!(status, 405, "{body}");
    assert_eq!(
        body["error"]["details"][0]["reason"], "METHOD_NOT_ALLOWED",
        "{body}"
    );
    let (status, body) = call(&base, "DELETE", "/openapi.json", None, None).await;
    assert_eq!(status, 405, "{body}");
    assert_eq!(
        body["error"]["details"][0]["reason"], "METHOD_NOT_ALLOWED",
        "{body}"
    );

    let (status, openapi) = call(&base, "GET", "/openapi.json", None, None).await;
    assert_eq!(status, 200);
    assert_eq!(
        openapi,
        serde_json::from_str::<Value>(widgets::OPENAPI_JSON).unwrap()
    );
    assert!(
        openapi["paths"]["/v1/widgets/{uid}"].is_object(),
        "{openapi}"
    );
}

#[test]
fn generated_wiring_names_services_without_a_handler() {
    let context = ApiContext::new(PageTokens::new([5; 32]), Authorizer::allow_all());
    let missing = widgets::Services::new(context).build().unwrap_err();
    let names: Vec<&str> = missing.services.iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "widgets.v0.WidgetService",
            "widgets.v1.DrawingService",
            "widgets.v1.GadgetService",
            "widgets.v1.PartService",
            "widgets.v1.WidgetService"
        ]
    );
    let served_by: Vec<&str> = missing.services.iter().map(|s| s.served_by).collect();
    assert_eq!(
        served_by,
        ["store", "drawing_service", "store", "store", "store"]
    );
    assert!(
        missing
            .to_string()
            .contains("widgets.v1.PartService (`.store(…)`)"),
        "{missing}"
    );
}

/// The client generated beside the server, over both transports: any API
/// built with the generator gets one.
#[tokio::test]
async fn the_generated_client_speaks_grpc_and_rest() {
    use protoapi_runtime::client::Connection;
    use widgets::widgets::v1::{
        CreateWidgetRequest, DeleteWidgetRequest, UpdateWidgetRequest, Widget,
    };

    let base = serve().await;
    for connection in [
        Connection::grpc(&base).unwrap(),
        Connection::rest(&base).unwrap(),
    ] {
        let (transport, workshop) = if connection.is_grpc() {
            ("gRPC", workshop(3))
        } else {
            ("REST", workshop(4))
        };
        let widgets = widgets::Client::new(connection).widgets();
        let mut created = Vec::new();
        for name in ["gear", "cog", "sprocket"] {
            let widget = Widget {
                name: format!("{name} over {transport}"),
                stock: 3,
                ..Default::default()
            };
            let request = CreateWidgetRequest {
                parent: workshop.clone(),
                widget: Some(widget),
            };
            created.push(widgets.create(request).await.expect(transport));
        }
        let get = GetWidgetRequest {
            uid: created[0].uid.clone(),
        };
        assert_eq!(widgets.get(get.clone()).await.expect(transport), created[0]);

        let list = ListWidgetsRequest {
            uidp: Some(widgets::protoapi::v1::UidpFilter {
                children_of: workshop.clone(),
                ..Default::default()
            }),
            page_size: 1,
            ..Default::default()
        };
        let listed: Vec<Widget> =
            futures_util::TryStreamExt::try_collect(widgets.list_stream(list))
                .await
                .expect(transport);
        let mut uids: Vec<&str> = listed.iter().map(|w| w.uid.as_str()).collect();
        uids.sort_unstable();
        let mut expected: Vec<&str> = created.iter().map(|w| w.uid.as_str()).collect();
        expected.sort_unstable();
        assert_eq!(uids, expected, "{transport}: every page read");

        let mut more = created[0].clone();
        more.stock = 9;
        let update = UpdateWidgetRequest {
            uid: more.uid.clone(),
            widget: Some(more),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["stock".into()],
            }),
        };
        assert_eq!(widgets.update(update).await.expect(transport).stock, 9);
        let immutable = UpdateWidgetRequest {
            uid: created[0].uid.clone(),
            widget: Some(Widget {
                colour: "blue".into(),
                ..Default::default()
            }),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["colour".into()],
            }),
        };
        let error = widgets.update(immutable).await.expect_err(transport);
        let fields: Vec<&str> = error
            .field_violations()
            .iter()
            .map(|v| v.field.as_str())
            .collect();
        assert_eq!(fields, ["widget.colour"], "{transport}: {error:?}");

        let delete = DeleteWidgetRequest {
            uid: created[0].uid.clone(),
            etag: String::new(),
        };
        widgets.delete(delete).await.expect(transport);
        let gone = widgets.get(get).await.expect_err(transport);
        assert_eq!(gone.code(), protoapi_runtime::Code::NotFound, "{transport}");
    }
}

#[tokio::test]
async fn update_masks_name_oneof_members_and_optional_fields_on_their_own() {
    let base = serve().await;
    let (status, created) = call(
        &base,
        "POST",
        &format!("/v1/widgets/{}", workshop(1)),
        None,
        Some(json!({"name": "gear", "address": "1 Mill Lane"})),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    let at = format!("/v1/widgets/{}", created["uid"].as_str().unwrap());
    let patch = |mask: &'static str, body: Value| {
        let (base, at) = (base.clone(), at.clone());
        async move {
            let (status, widget) = call(
                &base,
                "PATCH",
                &format!("{at}?updateMask={mask}"),
                None,
                Some(body),
            )
            .await;
            assert_eq!(status, 200, "{mask}: {widget}");
            (widget["address"].clone(), widget["locker"].clone())
        }
    };
    // Setting one member replaces the other.
    assert_eq!(
        patch("locker", json!({"locker": 12})).await,
        (Value::Null, json!(12))
    );
    // A member named but not sent is cleared only if it is the one held.
    assert_eq!(patch("address", json!({})).await, (Value::Null, json!(12)));
    assert_eq!(
        patch("locker,name", json!({"name": "cog"})).await,
        (Value::Null, Value::Null)
    );
    // Both named: the member sent wins.
    assert_eq!(
        patch("locker,address", json!({"address": "2 Mill Lane"})).await,
        (json!("2 Mill Lane"), Value::Null)
    );
    // A member left out of the mask is kept.
    assert_eq!(
        patch("name", json!({"name": "gear", "locker": 3})).await,
        (json!("2 Mill Lane"), Value::Null)
    );

    // An `optional` field keeps an empty value it was given.
    let (status, widget) = call(
        &base,
        "PATCH",
        &format!("{at}?updateMask=nickname"),
        None,
        Some(json!({"nickname": ""})),
    )
    .await;
    assert_eq!((status, &widget["nickname"]), (200, &json!("")), "{widget}");

    let channel = tonic::transport::Endpoint::from_shared(base.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let widget = WidgetServiceClient::new(channel)
        .get_widget(GetWidgetRequest {
            uid: created["uid"].as_str().unwrap().to_owned(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (widget.name.as_str(), widget.delivery, widget.nickname),
        (
            "gear",
            Some(Delivery::Address("2 Mill Lane".into())),
            Some(String::new())
        )
    );
}

#[tokio::test]
async fn a_deeply_nested_query_parameter_is_refused_not_followed() {
    let base = serve().await;
    let (_, created) = call(
        &base,
        "POST",
        &format!("/v1/widgets/{}", workshop(1)),
        None,
        Some(json!({"name": "gear"})),
    )
    .await;
    let at = format!("/v1/widgets/{}", created["uid"].as_str().unwrap());
    let patch = |revisions: usize| {
        let (base, at) = (base.clone(), at.clone());
        // `widget.specification.revises….certified`: 3 + `revisions` fields.
        let key = format!(
            "widget.specification{}.certified",
            ".revises".repeat(revisions)
        );
        let uri = format!("{at}?updateMask=name&{key}=true");
        async move { call(&base, "PATCH", &uri, None, Some(json!({"name": "cog"}))).await }
    };
    let (status, body) = patch(protoapi_runtime::rest::MAX_QUERY_DEPTH - 3).await;
    assert_eq!(status, 200, "as deep as allowed: {body}");
    // Deep enough to overflow the stack if it were followed.
    let (status, body) = patch(7_000).await;
    assert_eq!(status, 400, "{body}");
    let violation = &body["error"]["details"][1]["fieldViolations"][0];
    assert_eq!(
        violation["description"],
        format!(
            "nested more than {} fields deep",
            protoapi_runtime::rest::MAX_QUERY_DEPTH
        ),
        "{violation}"
    );
}

#[tokio::test]
async fn a_body_nested_as_deep_as_json_parsing_allows_is_answered() {
    let base = serve().await;
    // serde_json refuses nesting past 128 levels; just below that, the body
    // decodes and is stored without exhausting the stack.
    let create = |revisions: usize| {
        let mut specification = json!({"certified": true});
        for _ in 0..revisions {
            specification = json!({"revises": specification});
        }
        let body = json!({"name": "deep", "specification": specification});
        let (base, at) = (base.clone(), format!("/v1/widgets/{}", workshop(1)));
        async move { call(&base, "POST", &at, None, Some(body)).await }
    };
    let (status, body) = create(120).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = create(200).await;
    assert_eq!(status, 400, "{body}");
}

#[tokio::test]
async fn the_declared_depth_bounds_creates_and_uids() {
    let base = serve().await;
    let level = |n: usize| {
        let mut uid = workshop(1);
        for segment in 0..n {
            uid.push_str(&format!("/{segment:016x}"));
        }
        uid
    };
    let create = |parent: String| {
        let base = base.clone();
        async move {
            let path = format!("/v1/widgets/{parent}");
            call(&base, "POST", &path, None, Some(json!({"name": "gear"}))).await
        }
    };
    let (status, body) = create(level(2)).await;
    assert_eq!(status, 200, "a widget three levels down: {body}");
    let (status, body) = create(level(3)).await;
    assert_eq!(status, 400, "one level deeper than declared: {body}");
    assert_eq!(
        body["error"]["details"][1]["fieldViolations"][0]["field"], "parent",
        "{body}"
    );
    let (status, body) = call(
        &base,
        "GET",
        &format!("/v1/widgets/{}", level(4)),
        None,
        None,
    )
    .await;
    assert_eq!(
        status, 400,
        "a uid longer than the declared depth allows: {body}"
    );
}
