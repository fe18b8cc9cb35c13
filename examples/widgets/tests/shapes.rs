//! Gadgets: standard methods in the shapes of the AIPs (declared in
//! `proto/widgets/v1/gadgets.proto`), over REST and gRPC, in memory and in
//! SQLite. The list answers `gadgets` and `totalSize` and takes no `skip`;
//! the update mask is REQUIRED; a delete answers the deleted gadget; gadgets
//! have no etag and no timestamps, so answers carry no `ETag` and `If-Match`
//! is refused.

use std::sync::Arc;

use http_body_util::BodyExt;
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use serde_json::{Value, json};
use widgets::widgets::v1::gadget_service_client::GadgetServiceClient;
use widgets::widgets::v1::{
    BatchGetGadgetsRequest, DeleteGadgetRequest, Gadget, ListGadgetsRequest, UpdateGadgetRequest,
};

const WORKSHOP: &str = "1111111111111111111111111111111111111111";

async fn serve<S>(store: S) -> String
where
    widgets::Services: WithStore<S>,
{
    let context = ApiContext::new(PageTokens::new([9; 32]), Authorizer::allow_all());
    let app = widgets::Services::new(context)
        .with(store)
        .drawing_service(Arc::new(widgets::Drawings::default()))
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(app).await
}

/// `Services::store` for the two stores the tests serve.
trait WithStore<S> {
    fn with(self, store: S) -> Self;
}

impl WithStore<widgets::MemoryStore> for widgets::Services {
    fn with(self, store: widgets::MemoryStore) -> Self {
        self.store(Arc::new(store))
    }
}

impl WithStore<widgets::SqlStore> for widgets::Services {
    fn with(self, store: widgets::SqlStore) -> Self {
        self.store(Arc::new(store))
    }
}

/// The status, the `ETag` header and the JSON body of a REST call.
async fn call(
    base: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (u16, Option<String>, Value) {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<String>();
    let mut request = http::Request::builder()
        .method(method)
        .uri(format!("{base}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let response = client.request(request.body(body).unwrap()).await.unwrap();
    let status = response.status().as_u16();
    let etag = response
        .headers()
        .get("etag")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        etag,
        serde_json::from_slice(&bytes).unwrap_or_default(),
    )
}

async fn create(base: &str, name: &str, size: i32) -> String {
    let (status, etag, gadget) = call(
        base,
        "POST",
        &format!("/v1/gadgets/{WORKSHOP}"),
        &[],
        Some(json!({"displayName": name, "size": size})),
    )
    .await;
    assert_eq!(status, 200, "{gadget}");
    assert_eq!(etag, None, "a resource without an etag is not tagged");
    for absent in ["etag", "createTime", "updateTime"] {
        assert!(gadget.get(absent).is_none(), "{absent} in {gadget}");
    }
    gadget["uid"].as_str().unwrap().to_owned()
}

async fn rest_shapes(base: &str) {
    let small = create(base, "small", 1).await;
    let middle = create(base, "middle", 2).await;
    let large = create(base, "large", 3).await;
    batch_get_rest(base, [&small, &middle, &large]).await;

    // AIP-132: the items in the plural's field, `totalSize`, no `skip`.
    let (status, _, page) = call(
        base,
        "GET",
        "/v1/gadgets?pageSize=2&orderBy=size",
        &[],
        None,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    let sizes: Vec<i64> = page["gadgets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["size"].as_i64().unwrap())
        .collect();
    assert_eq!(sizes, [1, 2]);
    assert_eq!(page["totalSize"], 3);
    assert!(
        page.get("items").is_none() && page.get("totalCount").is_none(),
        "{page}"
    );
    let token = page["nextPageToken"].as_str().unwrap();
    let (_, _, rest) = call(
        base,
        "GET",
        &format!("/v1/gadgets?pageSize=2&orderBy=size&pageToken={token}"),
        &[],
        None,
    )
    .await;
    assert_eq!(rest["gadgets"][0]["size"], 3, "{rest}");
    assert_eq!(rest["nextPageToken"], "", "the last page: {rest}");
    // An AIP-160 filter is evaluated (tests/filters.rs), and one naming a
    // field that is not filterable is refused, not ignored.
    let (status, _, body) = call(base, "GET", "/v1/gadgets?filter=size%3E2", &[], None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["totalSize"], 1, "{body}");
    let (status, _, body) = call(base, "GET", "/v1/gadgets?filter=uid%3E2", &[], None).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["details"][1]["fieldViolations"][0]["field"], "filter",
        "{body}"
    );
    let (status, _, body) = call(base, "GET", "/v1/gadgets?skip=1", &[], None).await;
    assert_eq!(status, 400, "a request without `skip` takes none: {body}");

    // AIP-134: the REQUIRED mask, absent or empty, is refused by name.
    for path in [
        format!("/v1/gadgets/{small}"),
        format!("/v1/gadgets/{small}?updateMask="),
    ] {
        let (status, _, body) = call(base, "PATCH", &path, &[], Some(json!({"size": 9}))).await;
        assert_eq!(status, 400, "{body}");
        let violation = &body["error"]["details"][1]["fieldViolations"][0];
        assert_eq!(violation["field"], "updateMask", "{body}");
    }
    let (status, etag, changed) = call(
        base,
        "PATCH",
        &format!("/v1/gadgets/{small}?updateMask=size"),
        &[],
        Some(json!({"size": 9, "displayName": "ignored"})),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(
        (changed["size"].clone(), changed["displayName"].clone()),
        (json!(9), json!("small"))
    );
    assert_eq!(etag, None);
    // Without an etag, `If-Match` cannot be checked: refused, not ignored.
    let (status, _, body) = call(
        base,
        "PATCH",
        &format!("/v1/gadgets/{small}?updateMask=size"),
        &[("if-match", "\"abc\"")],
        Some(json!({"size": 8})),
    )
    .await;
    assert_eq!(status, 412, "{body}");
    let (status, _, body) = call(
        base,
        "DELETE",
        &format!("/v1/gadgets/{small}"),
        &[("if-match", "\"abc\"")],
        None,
    )
    .await;
    assert_eq!(status, 412, "{body}");

    // AIP-135: a delete answers the gadget it deleted.
    let (status, _, deleted) =
        call(base, "DELETE", &format!("/v1/gadgets/{small}"), &[], None).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(
        (deleted["uid"].as_str(), deleted["size"].as_i64()),
        (Some(small.as_str()), Some(9))
    );
    let (status, _, _) = call(base, "GET", &format!("/v1/gadgets/{small}"), &[], None).await;
    assert_eq!(status, 404);
    let (status, _, _) = call(base, "DELETE", &format!("/v1/gadgets/{small}"), &[], None).await;
    assert_eq!(status, 404);
}

/// AIP-231 over REST: in the order asked, all or nothing, bounded.
async fn batch_get_rest(base: &str, [small, middle, large]: [&str; 3]) {
    let batch = |body: Value| call(base, "POST", "/v1/batch-get/gadgets", &[], Some(body));
    let (status, _, found) = batch(json!({"uids": [large, small, middle]})).await;
    assert_eq!(status, 200, "{found}");
    let names: Vec<&str> = found["gadgets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["displayName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["large", "small", "middle"]);
    let (status, _, found) = batch(json!({"parent": WORKSHOP, "uids": [middle]})).await;
    assert_eq!(
        (status, found["gadgets"][0]["uid"].as_str()),
        (200, Some(middle))
    );

    let missing = format!("{WORKSHOP}/00000000000000aa");
    let (status, _, body) = batch(json!({"uids": [small, missing, "also missing"]})).await;
    assert_eq!(
        status, 400,
        "every key is checked before any is read: {body}"
    );
    let (status, _, body) = batch(json!({"uids": [small, missing, large]})).await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body.to_string().contains(&missing),
        "names the missing one: {body}"
    );
    assert!(body.get("gadgets").is_none(), "all or nothing: {body}");

    let elsewhere = "2".repeat(40);
    let (status, _, body) = batch(json!({"parent": elsewhere, "uids": [small]})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["details"][1]["fieldViolations"][0]["field"], "uids[0]",
        "{body}"
    );

    // Under `body: "*"` the body holds every field: a query parameter is
    // refused, not bound beside it.
    let path = format!("/v1/batch-get/gadgets?uids={large}");
    let (status, _, body) = call(base, "POST", &path, &[], Some(json!({"uids": [small]}))).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["details"][1]["fieldViolations"][0]["field"], "uids",
        "{body}"
    );

    let too_many = vec![small; protoapi_runtime::standard::MAX_BATCH_GET + 1];
    let (status, _, body) = batch(json!({"uids": too_many})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["details"][1]["fieldViolations"][0]["field"], "uids",
        "{body}"
    );
}

async fn grpc_shapes(base: &str) {
    let channel = tonic::transport::Endpoint::from_shared(base.to_owned())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut grpc = GadgetServiceClient::new(channel);
    let page = grpc
        .list_gadgets(ListGadgetsRequest {
            order_by: "size desc".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(page.total_size, 2);
    let sizes: Vec<i32> = page.gadgets.iter().map(|g| g.size).collect();
    assert_eq!(sizes, [3, 2]);
    let large = page.gadgets[0].uid.clone();
    let batch = grpc
        .batch_get_gadgets(BatchGetGadgetsRequest {
            parent: String::new(),
            uids: vec![page.gadgets[1].uid.clone(), large.clone()],
        })
        .await
        .unwrap()
        .into_inner();
    let sizes: Vec<i32> = batch.gadgets.iter().map(|g| g.size).collect();
    assert_eq!(sizes, [2, 3]);

    let refused = grpc
        .update_gadget(UpdateGadgetRequest {
            uid: large.clone(),
            gadget: Some(Gadget {
                size: 4,
                ..Default::default()
            }),
            update_mask: None,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(
        refused.message().contains("updateMask") || format!("{refused:?}").contains("updateMask")
    );

    let deleted = grpc
        .delete_gadget(DeleteGadgetRequest {
            uid: large.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((deleted.uid.as_str(), deleted.size), (large.as_str(), 3));
    let missing = grpc
        .delete_gadget(DeleteGadgetRequest {
            uid: large,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
}

#[tokio::test]
async fn aip_shapes_in_memory() {
    let base = serve(widgets::MemoryStore::default()).await;
    rest_shapes(&base).await;
    grpc_shapes(&base).await;
}

#[tokio::test]
async fn aip_shapes_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = widgets::open_sqlite(&dir.path().join("widgets.db"))
        .await
        .unwrap();
    let base = serve(store).await;
    rest_shapes(&base).await;
    grpc_shapes(&base).await;
}

const ALICE: &str = "ffffffffffffffffffffffffffffffffffffffff/0000000000000001";

/// Alice may read gadgets of workshop 1 only.
struct AliceReadsWorkshopOne;

impl protoapi_runtime::auth::Access for AliceReadsWorkshopOne {
    fn grants<'a>(
        &'a self,
        identity: &'a str,
    ) -> protoapi_runtime::auth::BoxFuture<
        'a,
        Result<protoapi_runtime::auth::Grants, protoapi_runtime::Error>,
    > {
        Box::pin(async move {
            let mut grants = protoapi_runtime::auth::Grants::default();
            if identity == ALICE {
                grants.add(WORKSHOP.to_owned(), ["gadgets.get".to_owned()]);
            }
            Ok(grants)
        })
    }
}

/// `x-identity: <uid>` acts as that identity; no header acts as the system.
async fn identity(
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let caller = match request.headers().get("x-identity") {
        Some(uid) => Caller::Identity {
            uid: uid.to_str().unwrap().to_owned(),
            admin: false,
        },
        None => Caller::System,
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

#[tokio::test]
async fn batch_get_authorizes_each_item_as_get_does() {
    let context = ApiContext::new(
        PageTokens::new([9; 32]),
        Authorizer::new(Arc::new(AliceReadsWorkshopOne)),
    );
    let app = widgets::Services::new(context)
        .store(Arc::new(widgets::MemoryStore::default()))
        .drawing_service(Arc::new(widgets::Drawings::default()))
        .layer(axum::middleware::from_fn(identity))
        .build()
        .unwrap();
    let base = protoapi_runtime::testing::served::on_free_port(app).await;
    let mine = create(&base, "mine", 1).await;
    let (status, _, theirs) = call(
        &base,
        "POST",
        &format!("/v1/gadgets/{}", "2".repeat(40)),
        &[],
        Some(json!({"displayName": "theirs"})),
    )
    .await;
    assert_eq!(status, 200, "{theirs}");
    let theirs = theirs["uid"].as_str().unwrap();
    let alice = [("x-identity", ALICE)];
    let batch = |uids: Value| {
        call(
            &base,
            "POST",
            "/v1/batch-get/gadgets",
            &alice,
            Some(json!({"uids": uids})),
        )
    };
    let (status, _, found) = batch(json!([mine])).await;
    assert_eq!(
        (status, found["gadgets"][0]["uid"].as_str()),
        (200, Some(mine.as_str()))
    );
    let (get_status, _, get_body) =
        call(&base, "GET", &format!("/v1/gadgets/{theirs}"), &alice, None).await;
    assert_eq!(get_status, 403, "{get_body}");
    let (status, _, body) = batch(json!([mine, theirs])).await;
    assert_eq!(
        (status, &body),
        (get_status, &get_body),
        "as its Get answers"
    );
}
