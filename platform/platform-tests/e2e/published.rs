//! Documents are public once published (`public_after = "published"` in the
//! advisory annotations): anyone reads a document whose `published` time has
//! passed; a draft (no `published`) and an embargoed document (a time still to
//! come) are read only with `documents.get` / `documents.list`, and answer
//! everyone else exactly as a document that does not exist does, on REST and
//! gRPC alike, in the SQL store of the server and in the memory store.

use std::sync::Arc;

use platform_api::platform::advisory::v2::document_service_client::DocumentServiceClient;
use platform_api::platform::advisory::v2::{
    CreateDocumentRequest, Document, DocumentServiceApi, GetDocumentRequest, ListDocumentsRequest,
};
use platform_api::platform::iam::v2::Group;
use platform_api::protoapi::v1::UidpFilter;
use platform_tests::{Rest, StatusCode, TestServer, bearer};
use protoapi_runtime::Caller;
use protoapi_runtime::auth::{Access, Authorizer, BoxFuture, Grants};
use protoapi_runtime::memory::MemoryStore;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::store::Backend;
use serde_json::{Value, json};
use tonic::transport::Channel;
use tonic_types::StatusExt;

const PAST: &str = "2020-01-02T03:04:05Z";
const FUTURE: &str = "2999-01-02T03:04:05Z";

/// The three documents of a root of their own, and a uid nothing has.
struct Documents {
    root: String,
    published: String,
    draft: String,
    embargoed: String,
    missing: String,
}

impl Documents {
    /// Uids that anyone without the capabilities must find alike.
    fn hidden(&self) -> [(&str, &str); 3] {
        [
            ("draft", &self.draft),
            ("embargoed", &self.embargoed),
            ("missing", &self.missing),
        ]
    }
}

async fn documents(admin: &Rest) -> Documents {
    // A root of its own: other tests may share the database.
    let root = admin
        .create("/iam/v2/groups/", json!({"name": "published documents"}))
        .await;
    let create = |body: Value| {
        let path = format!("/advisory/v2/documents/{root}");
        async move { admin.create(&path, body).await }
    };
    let published = create(json!({"name": "ADV-1", "published": PAST})).await;
    let draft = create(json!({"name": "ADV-2"})).await;
    let embargoed = create(json!({"name": "ADV-3", "published": FUTURE})).await;
    let missing = format!("{root}/0123456789abcdef");
    Documents {
        root,
        published,
        draft,
        embargoed,
        missing,
    }
}

/// A REST answer with `uid` written as `<uid>`, to compare answers about
/// different uids.
fn rest_answer(rest: &platform_tests::Response, uid: &str) -> (StatusCode, String) {
    (rest.status, rest.body.to_string().replace(uid, "<uid>"))
}

/// The uids of a REST list's items, and its `totalCount`.
fn listed(response: &platform_tests::Response) -> (Vec<String>, i64) {
    assert_eq!(response.status, StatusCode::OK, "{:?}", response.body);
    let uids = response.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["uid"].as_str().unwrap().to_owned())
        .collect();
    (uids, response.body["totalCount"].as_i64().unwrap())
}

fn sorted(uids: &[&String]) -> Vec<String> {
    let mut uids: Vec<String> = uids.iter().map(|uid| (*uid).clone()).collect();
    uids.sort();
    uids
}

/// Every hidden uid answers `caller` as the missing one does, and is not
/// that answer a success.
async fn rest_hides(caller: &Rest, docs: &Documents, who: &str) -> (StatusCode, String) {
    let get = |uid: &str| {
        let path = format!("/advisory/v2/documents/{uid}");
        async move { caller.get(&path).await }
    };
    let missing = rest_answer(&get(&docs.missing).await, &docs.missing);
    assert_ne!(missing.0, StatusCode::OK, "{who}");
    for (what, uid) in docs.hidden() {
        assert_eq!(
            rest_answer(&get(uid).await, uid),
            missing,
            "{who}: a {what} document reads as a missing one"
        );
    }
    missing
}

#[tokio::test]
async fn published_documents_are_public_drafts_and_embargoed_ones_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let admin = server.rest();
    let docs = documents(&admin).await;
    let reader = server
        .member_with(&docs.root, "reader", &["documents.get", "documents.list"])
        .await
        .rest;
    let stranger = server
        .member_with(&docs.root, "stranger", &["groups.get"])
        .await
        .rest;
    let anonymous = server.rest_as(None);

    // Get: the published document needs no token and no capability.
    for (caller, who) in [(&anonymous, "anonymous"), (&stranger, "no documents.get")] {
        let got = caller
            .get(&format!("/advisory/v2/documents/{}", docs.published))
            .await;
        assert_eq!(got.status, StatusCode::OK, "{who}: {:?}", got.body);
        assert_eq!(got.body["uid"], docs.published.as_str(), "{who}");
        assert_eq!(got.body["published"], PAST, "{who}");
    }
    // Drafts and embargoed documents answer as a missing one does: the
    // same denial as for any uid, so nothing is learnt of them.
    let (status, body) = rest_hides(&anonymous, &docs, "anonymous").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body.contains("TOKEN_REQUIRED"), "{body}");
    let (status, body) = rest_hides(&stranger, &docs, "no documents.get").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("PERMISSION_DENIED"), "{body}");
    // The capability reads every document; a missing one is NOT_FOUND.
    for uid in [&docs.published, &docs.draft, &docs.embargoed] {
        let got = reader.get(&format!("/advisory/v2/documents/{uid}")).await;
        assert_eq!(got.status, StatusCode::OK, "{uid}: {:?}", got.body);
    }
    let got = reader
        .get(&format!("/advisory/v2/documents/{}", docs.missing))
        .await;
    assert_eq!(got.status, StatusCode::NOT_FOUND, "{:?}", got.body);

    // A presented token is still checked, even where none is needed.
    let garbage = server.rest_as(Some("not-a-token"));
    for path in [
        format!("/advisory/v2/documents/{}", docs.published),
        format!("/advisory/v2/documents?uidp.children_of={}", docs.root),
    ] {
        let refused = garbage.get(&path).await;
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{path}");
        assert_eq!(refused.error_status(), "UNAUTHENTICATED", "{path}");
    }

    // List: drafts and embargoed documents are absent, and not counted.
    let children = format!("/advisory/v2/documents?uidp.children_of={}", docs.root);
    let ids = format!(
        "/advisory/v2/documents?uidp.ids={}&uidp.ids={}&uidp.ids={}",
        docs.published, docs.draft, docs.embargoed
    );
    for (caller, who) in [(&anonymous, "anonymous"), (&stranger, "no documents.list")] {
        for path in [&children, &ids] {
            assert_eq!(
                listed(&caller.get(path).await),
                (vec![docs.published.clone()], 1),
                "{who}: {path}"
            );
        }
        // One page of one: the count and the items agree, no page follows.
        let page = caller.get(&format!("{children}&pageSize=1")).await;
        assert_eq!(listed(&page), (vec![docs.published.clone()], 1), "{who}");
        assert_eq!(
            page.body["nextPageToken"].as_str().unwrap_or_default(),
            "",
            "{who}"
        );
    }
    // Unfiltered, anonymous callers see published documents only, on every
    // page (a shared PostgreSQL database holds other tests' documents too).
    let mut all = Vec::new();
    let mut query = "pageSize=200".to_owned();
    loop {
        let page = anonymous
            .get(&format!("/advisory/v2/documents?{query}"))
            .await;
        let (uids, total) = listed(&page);
        let next = page.body["nextPageToken"].as_str().unwrap_or_default();
        if all.is_empty() && next.is_empty() {
            assert_eq!(total, uids.len() as i64, "only what is listed is counted");
        }
        all.extend(uids);
        if next.is_empty() {
            break;
        }
        query = format!("pageSize=200&pageToken={next}");
    }
    assert!(all.contains(&docs.published), "{all:?}");
    assert!(
        !all.contains(&docs.draft) && !all.contains(&docs.embargoed),
        "{all:?}"
    );
    // Holders of documents.list see every document.
    let every = sorted(&[&docs.published, &docs.draft, &docs.embargoed]);
    for path in [&children, &ids] {
        let (mut uids, total) = listed(&reader.get(path).await);
        uids.sort();
        assert_eq!((uids, total), (every.clone(), 3), "{path}");
    }

    // Publishing a draft makes it public; moving the time ahead embargoes it again.
    let draft = format!("/advisory/v2/documents/{}", docs.draft);
    let published = admin
        .patch(
            &format!("{draft}?updateMask=published"),
            json!({"published": PAST}),
        )
        .await;
    assert_eq!(published.status, StatusCode::OK, "{:?}", published.body);
    assert_eq!(anonymous.get(&draft).await.status, StatusCode::OK);
    assert_eq!(listed(&anonymous.get(&children).await).1, 2);
    let embargoed = admin
        .patch(
            &format!("{draft}?updateMask=published"),
            json!({"published": FUTURE}),
        )
        .await;
    assert_eq!(embargoed.status, StatusCode::OK, "{:?}", embargoed.body);
    assert_eq!(anonymous.get(&draft).await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(listed(&anonymous.get(&children).await).1, 1);
    server.stop().await;
}

/// A gRPC answer: code, message and ErrorInfo reason, with `uid` as `<uid>`.
fn grpc_answer(status: &tonic::Status, uid: &str) -> (tonic::Code, String, String) {
    let reason = status
        .get_error_details()
        .error_info()
        .map(|info| info.reason.clone())
        .unwrap_or_default();
    (
        status.code(),
        status.message().replace(uid, "<uid>"),
        reason,
    )
}

async fn grpc_get(
    channel: &Channel,
    token: Option<&str>,
    uid: &str,
) -> Result<Document, tonic::Status> {
    let request = GetDocumentRequest { uid: uid.into() };
    match token {
        Some(token) => {
            DocumentServiceClient::with_interceptor(channel.clone(), bearer(token))
                .get_document(request)
                .await
        }
        None => {
            DocumentServiceClient::new(channel.clone())
                .get_document(request)
                .await
        }
    }
    .map(tonic::Response::into_inner)
}

async fn grpc_list(channel: &Channel, token: Option<&str>, root: &str) -> (Vec<String>, i32) {
    let request = ListDocumentsRequest {
        uidp: Some(UidpFilter {
            children_of: root.into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let listed = match token {
        Some(token) => {
            DocumentServiceClient::with_interceptor(channel.clone(), bearer(token))
                .list_documents(request)
                .await
        }
        None => {
            DocumentServiceClient::new(channel.clone())
                .list_documents(request)
                .await
        }
    }
    .unwrap()
    .into_inner();
    let mut uids: Vec<String> = listed.items.into_iter().map(|d| d.uid).collect();
    uids.sort();
    (uids, listed.total_count)
}

#[tokio::test]
async fn published_documents_over_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let docs = documents(&server.rest()).await;
    let reader = server
        .member_with(&docs.root, "reader", &["documents.get", "documents.list"])
        .await
        .token;
    let stranger = server
        .member_with(&docs.root, "stranger", &["groups.get"])
        .await
        .token;
    let channel = server.channel().await;

    for (token, who, code) in [
        (None, "anonymous", tonic::Code::Unauthenticated),
        (
            Some(stranger.as_str()),
            "no documents.get",
            tonic::Code::PermissionDenied,
        ),
    ] {
        let got = grpc_get(&channel, token, &docs.published).await;
        assert_eq!(got.unwrap().uid, docs.published, "{who}");
        let missing = grpc_get(&channel, token, &docs.missing).await.unwrap_err();
        let missing = grpc_answer(&missing, &docs.missing);
        assert_eq!(missing.0, code, "{who}: {missing:?}");
        for (what, uid) in docs.hidden() {
            let answer = grpc_get(&channel, token, uid).await.unwrap_err();
            assert_eq!(
                grpc_answer(&answer, uid),
                missing,
                "{who}: a {what} document reads as a missing one"
            );
        }
        assert_eq!(
            grpc_list(&channel, token, &docs.root).await,
            (vec![docs.published.clone()], 1),
            "{who}"
        );
    }
    for uid in [&docs.published, &docs.draft, &docs.embargoed] {
        grpc_get(&channel, Some(&reader), uid).await.unwrap();
    }
    let missing = grpc_get(&channel, Some(&reader), &docs.missing)
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
    assert_eq!(
        grpc_list(&channel, Some(&reader), &docs.root).await,
        (sorted(&[&docs.published, &docs.draft, &docs.embargoed]), 3)
    );
    // A presented token that is not valid is refused before any answer.
    let refused = grpc_get(&channel, Some("not-a-token"), &docs.published)
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unauthenticated);
    server.stop().await;
}

/// Grants `documents.get` and `documents.list` on one root to `reader`.
struct ReaderOnly(String);

impl Access for ReaderOnly {
    fn grants<'a>(
        &'a self,
        identity: &'a str,
    ) -> BoxFuture<'a, Result<Grants, protoapi_runtime::Error>> {
        Box::pin(async move {
            let mut grants = Grants::default();
            if identity == "reader" {
                grants.add(
                    self.0.clone(),
                    ["documents.get".to_owned(), "documents.list".to_owned()],
                );
            }
            Ok(grants)
        })
    }
}

/// The same rule over the memory store, which decides it without SQL.
#[tokio::test]
async fn published_documents_in_the_memory_store() {
    let root = "0123456789abcdef0123456789abcdef01234567".to_owned();
    let store = Arc::new(MemoryStore::default());
    let group = Group {
        uid: root.clone(),
        name: "root".into(),
        ..Default::default()
    };
    Backend::insert(&*store, &group).await.unwrap();
    let context = ApiContext::new(
        PageTokens::new([7; 32]),
        Authorizer::new(Arc::new(ReaderOnly(root.clone()))),
    );
    let api = DocumentServiceApi::new(store, context);
    let time = |text: &str| Some(text.parse::<prost_types::Timestamp>().unwrap());
    let mut uids = Vec::new();
    for (name, published) in [
        ("ADV-1", time(PAST)),
        ("ADV-2", None),
        ("ADV-3", time(FUTURE)),
    ] {
        let created = api
            .create_document(
                &Caller::System,
                CreateDocumentRequest {
                    parent: root.clone(),
                    document: Some(Document {
                        name: name.into(),
                        published,
                        ..Default::default()
                    }),
                },
            )
            .await
            .unwrap();
        uids.push(created.uid);
    }
    let missing = format!("{root}/0123456789abcdef");
    let reader = Caller::Identity {
        uid: "reader".into(),
        admin: false,
    };
    let stranger = Caller::Identity {
        uid: "stranger".into(),
        admin: false,
    };
    let get = |caller: &Caller, uid: &str| {
        let request = GetDocumentRequest { uid: uid.into() };
        let caller = caller.clone();
        let api = api.clone();
        async move { api.get_document(&caller, request).await }
    };
    let list = |caller: &Caller| {
        let request = ListDocumentsRequest {
            uidp: Some(UidpFilter {
                children_of: root.clone(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let caller = caller.clone();
        let api = api.clone();
        async move {
            let listed = api.list_documents(&caller, request).await.unwrap();
            let mut uids: Vec<String> = listed.items.into_iter().map(|d| d.uid).collect();
            uids.sort();
            (uids, listed.total_count)
        }
    };
    for (caller, who) in [(&Caller::Anonymous, "anonymous"), (&stranger, "stranger")] {
        assert_eq!(get(caller, &uids[0]).await.unwrap().uid, uids[0], "{who}");
        let answer = |error: protoapi_runtime::Error, uid: &str| {
            error.to_json().to_string().replace(uid, "<uid>")
        };
        let absent = answer(get(caller, &missing).await.unwrap_err(), &missing);
        for uid in &uids[1..] {
            assert_eq!(
                answer(get(caller, uid).await.unwrap_err(), uid),
                absent,
                "{who}"
            );
        }
        assert_eq!(list(caller).await, (vec![uids[0].clone()], 1), "{who}");
    }
    for uid in &uids {
        get(&reader, uid).await.unwrap();
    }
    let mut every = uids.clone();
    every.sort();
    assert_eq!(list(&reader).await, (every, 3));
}

/// A database whose documents table predates the `published` column (an
/// earlier release) gets the column at the next start, filled from the
/// stored documents, so documents published before the upgrade stay public
/// and drafts stay hidden.
#[tokio::test]
async fn the_published_column_is_added_to_an_existing_database() {
    use protoapi_runtime::resource::Public;
    use protoapi_runtime::store::{Hierarchy, ListQuery, OrderBy, PublicItems};

    let dir = tempfile::tempdir().unwrap();
    let root = "89abcdef0123456789abcdef0123456789abcdef".to_owned();
    let document = |segment: &str, published: Option<&str>| Document {
        uid: format!("{root}/{segment}"),
        name: segment.into(),
        published: published.map(|time| time.parse().unwrap()),
        ..Default::default()
    };
    let stored = [
        document("0000000000000001", Some(PAST)),
        document("0000000000000002", None),
        document("0000000000000003", Some(FUTURE)),
    ];
    let store = platform_server::store::open_sqlite(dir.path())
        .await
        .unwrap();
    let group = Group {
        uid: root.clone(),
        name: "root".into(),
        ..Default::default()
    };
    Backend::insert(&store, &group).await.unwrap();
    for document in &stored {
        Backend::insert(&store, document).await.unwrap();
    }
    // As the earlier release left it: no column, no indexes on it.
    for statement in [
        "DROP INDEX documents_by_published",
        "DROP INDEX documents_by_parent_published",
        "ALTER TABLE documents DROP COLUMN published",
    ] {
        sqlx::query(statement).execute(store.pool()).await.unwrap();
    }
    store.close().await;

    let store = platform_server::store::open_sqlite(dir.path())
        .await
        .unwrap();
    let query = ListQuery {
        filter: Hierarchy::ChildrenOf(root.clone()),
        matching: Default::default(),
        order_by: vec![OrderBy {
            field: "uid".into(),
            descending: false,
        }],
        after: None,
        skip: 0,
        limit: 10,
        byte_budget: u64::MAX,
        public: Some(PublicItems::Only(Public::After("published"))),
    };
    let page = Backend::list::<Document>(&store, &query).await.unwrap();
    let uids: Vec<&str> = page.items.iter().map(|d| d.uid.as_str()).collect();
    assert_eq!(uids, [stored[0].uid.as_str()]);
    assert_eq!(page.total_count, 1);
    store.close().await;
}
