//! Soft delete (AIP-164) of a UIDP-keyed resource (`archive.v1` records)
//! over a real socket, REST and gRPC, in memory, on SQLite and (when
//! `E2E_DATABASE_URL` names a server) on PostgreSQL: a deleted record is
//! still read, hidden from lists unless `showDeleted` (pages and totals
//! count what is shown), cannot change, and comes back by `:undelete`.

use std::sync::Arc;

use http_body_util::BodyExt;
use library::archive::v1::record_service_client::RecordServiceClient;
use library::archive::v1::{
    DeleteRecordRequest, ListRecordsRequest, UndeleteRecordRequest, UpdateRecordRequest,
};
use library::{MemoryStore, SqlStore};
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use serde_json::{Value, json};

/// Serves the API over `store` on an ephemeral port; its base URL.
async fn serve(store: Arc<impl library::Stores>) -> String {
    let context = ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all());
    let router = library::Services::new(context)
        .store(store)
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap();
    protoapi_runtime::testing::served::on_free_port(router).await
}

/// One REST call: the status and the JSON body.
async fn call(base: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http();
    let request = axum::http::Request::builder()
        .method(method)
        .uri(format!("{base}{path}"))
        .body(body.map(|b| b.to_string()).unwrap_or_default())
        .unwrap();
    let response = client.request(request).await.unwrap();
    let status = response.status().as_u16();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap())
}

/// The uids a list answers, every page of it (`pageSize` 1), and the
/// total each page reports.
async fn uids(base: &str, query: &str) -> (Vec<String>, Vec<i64>) {
    let (mut uids, mut totals) = (Vec::new(), Vec::new());
    let mut token = String::new();
    loop {
        let path = format!("/v1/records?pageSize=1&pageToken={token}{query}");
        let (status, page) = call(base, "GET", &path, None).await;
        assert_eq!(status, 200, "{page}");
        for item in page["records"].as_array().unwrap() {
            uids.push(item["uid"].as_str().unwrap().to_owned());
        }
        totals.push(page["totalSize"].as_i64().unwrap());
        token = page["nextPageToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if token.is_empty() {
            return (uids, totals);
        }
    }
}

async fn rest(base: &str) -> [String; 3] {
    let mut created = Vec::new();
    for text in ["one", "two", "three"] {
        let body = json!({"text": text});
        let (status, record) = call(base, "POST", "/v1/records", Some(body)).await;
        assert_eq!(status, 200, "{record}");
        created.push(record["uid"].as_str().unwrap().to_owned());
    }
    let [one, two, three]: [String; 3] = created.try_into().unwrap();
    let (status, deleted) = call(base, "DELETE", &format!("/v1/records/{two}"), None).await;
    assert_eq!(status, 200, "{deleted}");
    assert!(deleted["deleteTime"].is_string(), "{deleted}");
    let (status, body) = call(base, "DELETE", &format!("/v1/records/{two}"), None).await;
    assert_eq!(status, 404, "{body}");
    let (status, read) = call(base, "GET", &format!("/v1/records/{two}"), None).await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["deleteTime"], deleted["deleteTime"]);

    let (live, totals) = uids(base, "").await;
    assert_eq!(live.len(), 2, "{live:?}");
    assert!(!live.contains(&two));
    assert!(totals.iter().all(|total| *total == 2), "{totals:?}");
    let (all, totals) = uids(base, "&showDeleted=true").await;
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(totals.iter().all(|total| *total == 3), "{totals:?}");

    let path = format!("/v1/records/{two}?updateMask=text");
    let (status, body) = call(base, "PATCH", &path, Some(json!({"text": "2"}))).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["status"], "FAILED_PRECONDITION", "{body}");
    let path = format!("/v1/records/{one}:undelete");
    let (status, body) = call(base, "POST", &path, Some(json!({}))).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"]["status"], "ALREADY_EXISTS", "{body}");
    let path = format!("/v1/records/{two}:undelete");
    let (status, back) = call(base, "POST", &path, Some(json!({}))).await;
    assert_eq!(status, 200, "{back}");
    assert!(back.get("deleteTime").is_none(), "{back}");
    assert_eq!(uids(base, "").await.0.len(), 3);
    [one, two, three]
}

async fn grpc(base: &str, [_, _, three]: [String; 3]) {
    let channel = tonic::transport::Endpoint::from_shared(base.to_owned())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut records = RecordServiceClient::new(channel);
    let deleted = records
        .delete_record(DeleteRecordRequest {
            uid: three.clone(),
            etag: "\"stale\"".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(deleted.code(), tonic::Code::Aborted);
    let deleted = records
        .delete_record(DeleteRecordRequest {
            uid: three.clone(),
            etag: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(deleted.delete_time.is_some());
    let list = |show_deleted: bool| ListRecordsRequest {
        show_deleted,
        ..Default::default()
    };
    let page = records
        .list_records(list(false))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((page.records.len(), page.total_size), (2, 2));
    let page = records.list_records(list(true)).await.unwrap().into_inner();
    assert_eq!((page.records.len(), page.total_size), (3, 3));
    let update = UpdateRecordRequest {
        uid: three.clone(),
        record: Some(library::archive::v1::Record {
            text: "changed".into(),
            ..Default::default()
        }),
        update_mask: None,
    };
    let refused = records.update_record(update.clone()).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    let back = records
        .undelete_record(UndeleteRecordRequest {
            uid: three.clone(),
            etag: deleted.etag,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(back.delete_time.is_none());
    let changed = records.update_record(update).await.unwrap().into_inner();
    assert_eq!(changed.text, "changed");
}

async fn exercise(base: &str) {
    let created = rest(base).await;
    grpc(base, created).await;
}

#[tokio::test]
async fn soft_deleted_in_memory() {
    exercise(&serve(Arc::new(MemoryStore::default())).await).await;
}

#[tokio::test]
async fn soft_deleted_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("records.db").display()
    );
    let store: SqlStore = library::open(&url).await.unwrap();
    exercise(&serve(Arc::new(store)).await).await;
}

/// On PostgreSQL, in a database of its own, when `E2E_DATABASE_URL` names
/// a server (the role needs CREATEDB); skipped otherwise.
#[tokio::test]
async fn soft_deleted_in_postgres() {
    let Ok(server) = std::env::var("E2E_DATABASE_URL") else {
        eprintln!("E2E_DATABASE_URL is not set: skipped");
        return;
    };
    let database = postgres::Database::create(&server).await;
    let store = library::open(&database.url).await.unwrap();
    exercise(&serve(Arc::new(store)).await).await;
    database.drop_it().await;
}

#[path = "common/postgres.rs"]
mod postgres;
