//! The generated client (`platform_api::Client`) against the running server,
//! over gRPC and over REST/JSON with the same types: every collection's
//! standard methods, lists walked to the end by the stream, stale etags,
//! field violations, retries and timeouts.

use futures_util::{StreamExt, TryStreamExt};
use platform_api::Client;
use platform_api::platform::advisory::v2 as advisory;
use platform_api::platform::iam::v2 as iam;
use platform_api::platform::libraries::v2 as libraries;
use platform_api::platform::registry::v2 as registry;
use platform_api::platform::vulnerabilities::v2 as vulnerabilities;
use platform_api::protoapi::v1::UidpFilter;
use platform_tests::{TestServer, is_child_uid};
use prost_types::{FieldMask, Timestamp};
use protoapi_runtime::Code;
use protoapi_runtime::client::{Connection, Retry, StaticToken};

/// Both transports, authenticated as the platform administrator.
fn clients(server: &TestServer) -> [(&'static str, Client); 2] {
    let url = format!("http://{}", server.address);
    let token = StaticToken::new(server.admin_token.clone());
    [
        ("gRPC", Connection::grpc(&url).unwrap()),
        ("REST", Connection::rest(&url).unwrap()),
    ]
    .map(|(name, connection)| (name, Client::new(connection.with_tokens(token.clone()))))
}

fn children_of(parent: &str) -> Option<UidpFilter> {
    Some(UidpFilter {
        children_of: parent.to_owned(),
        ..Default::default()
    })
}

fn mask(path: &str) -> Option<FieldMask> {
    Some(FieldMask {
        paths: vec![path.to_owned()],
    })
}

/// Creates three items of a collection under `root` (`make(i)` is the i-th),
/// reads one back, walks the list to the end one item per page, updates one
/// with its etag, then fails to update it with the stale etag (ABORTED) and
/// with an unknown mask path (a field violation), deletes it and finds it gone.
macro_rules! crud {
    ($transport:expr, $service:expr, $root:expr, $module:ident :: $Resource:ident,
     $field:ident, $make:expr) => {{
        use $module::*;
        paste_requests!($module, $Resource);
        let (transport, service, root): (&str, _, &str) = ($transport, $service, $root);
        let make = $make;
        let mut created: Vec<$Resource> = Vec::new();
        for i in 0..3 {
            let request = Create {
                parent: root.to_owned(),
                $field: Some(make(i)),
            };
            let item = service.create(request).await.expect(transport);
            assert!(is_child_uid(&item.uid, Some(root)), "{transport}: {item:?}");
            created.push(item);
        }
        let first = created[0].clone();
        let got = service
            .get(Get {
                uid: first.uid.clone(),
            })
            .await
            .expect(transport);
        assert_eq!(got, first, "{transport}");

        let list = List {
            uidp: children_of(root),
            page_size: 1,
            ..Default::default()
        };
        let listed: Vec<$Resource> = service
            .list_stream(list.clone())
            .try_collect()
            .await
            .expect(transport);
        let uids = |items: &[$Resource]| {
            let mut uids: Vec<String> = items.iter().map(|i| i.uid.clone()).collect();
            uids.sort();
            uids
        };
        assert_eq!(
            uids(&listed),
            uids(&created),
            "{transport}: every page read"
        );
        let pages = service.list_pages(list).count().await;
        assert!(pages >= 3, "{transport}: {pages} pages of one item");

        let mut changed = first.clone();
        changed.description = format!("changed over {transport}");
        let updated = service
            .update(Update {
                uid: first.uid.clone(),
                $field: Some(changed.clone()),
                update_mask: mask("description"),
            })
            .await
            .expect(transport);
        assert_eq!(updated.description, changed.description, "{transport}");
        assert_ne!(updated.etag, first.etag, "{transport}");

        let stale = service
            .update(Update {
                uid: first.uid.clone(),
                $field: Some(changed.clone()),
                update_mask: mask("description"),
            })
            .await
            .expect_err(transport);
        assert_eq!(stale.code(), Code::Aborted, "{transport}: {stale:?}");

        let bad = service
            .update(Update {
                uid: first.uid.clone(),
                $field: Some(updated.clone()),
                update_mask: mask("no_such_field"),
            })
            .await
            .expect_err(transport);
        assert_eq!(bad.code(), Code::InvalidArgument, "{transport}: {bad:?}");
        let fields: Vec<&str> = bad
            .field_violations()
            .iter()
            .map(|v| v.field.as_str())
            .collect();
        assert_eq!(fields, ["updateMask.noSuchField"], "{transport}: {bad:?}");

        service
            .delete(Delete {
                uid: first.uid.clone(),
                etag: updated.etag.clone(),
            })
            .await
            .expect(transport);
        let gone = service
            .get(Get {
                uid: first.uid.clone(),
            })
            .await
            .expect_err(transport);
        assert_eq!(gone.code(), Code::NotFound, "{transport}: {gone:?}");
        assert_eq!(
            gone.resource_info().map(|r| r.resource_name.as_str()),
            Some(first.uid.as_str()),
            "{transport}"
        );
        created
    }};
}

/// Local names for a collection's request messages (`Create`, `Get`, ...).
macro_rules! paste_requests {
    (iam, Group) => {
        requests!(
            CreateGroupRequest,
            GetGroupRequest,
            ListGroupsRequest,
            UpdateGroupRequest,
            DeleteGroupRequest
        );
    };
    (iam, Role) => {
        requests!(
            CreateRoleRequest,
            GetRoleRequest,
            ListRolesRequest,
            UpdateRoleRequest,
            DeleteRoleRequest
        );
    };
    (iam, Identity) => {
        requests!(
            CreateIdentityRequest,
            GetIdentityRequest,
            ListIdentitiesRequest,
            UpdateIdentityRequest,
            DeleteIdentityRequest
        );
    };
    (iam, RoleBinding) => {
        requests!(
            CreateRoleBindingRequest,
            GetRoleBindingRequest,
            ListRoleBindingsRequest,
            UpdateRoleBindingRequest,
            DeleteRoleBindingRequest
        );
    };
    (registry, Repo) => {
        requests!(
            CreateRepoRequest,
            GetRepoRequest,
            ListReposRequest,
            UpdateRepoRequest,
            DeleteRepoRequest
        );
    };
    (libraries, Artifact) => {
        requests!(
            CreateArtifactRequest,
            GetArtifactRequest,
            ListArtifactsRequest,
            UpdateArtifactRequest,
            DeleteArtifactRequest
        );
    };
    (advisory, Document) => {
        requests!(
            CreateDocumentRequest,
            GetDocumentRequest,
            ListDocumentsRequest,
            UpdateDocumentRequest,
            DeleteDocumentRequest
        );
    };
}

macro_rules! requests {
    ($create:ident, $get:ident, $list:ident, $update:ident, $delete:ident) => {
        use {$create as Create, $delete as Delete, $get as Get, $list as List, $update as Update};
    };
}

#[tokio::test]
async fn every_collection_over_both_transports() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    for (transport, client) in clients(&server) {
        let root = client
            .groups()
            .create(iam::CreateGroupRequest {
                parent: String::new(),
                group: Some(iam::Group {
                    name: format!("sdk over {transport}"),
                    ..Default::default()
                }),
            })
            .await
            .expect(transport);
        let root = root.uid.as_str();

        crud!(transport, client.groups(), root, iam::Group, group, |i| {
            iam::Group {
                name: format!("team {i}"),
                ..Default::default()
            }
        });
        crud!(transport, client.roles(), root, iam::Role, role, |i| {
            iam::Role {
                name: format!("reader {i}"),
                capabilities: vec!["groups.get".into()],
                ..Default::default()
            }
        });
        let identities = crud!(
            transport,
            client.identities(),
            root,
            iam::Identity,
            identity,
            |i| {
                iam::Identity {
                    name: format!("ci {i}"),
                    claim_match: Some(iam::ClaimMatch {
                        issuer: "https://issuer.example".into(),
                        subject: format!("repo:{transport}:{i}"),
                    }),
                    ..Default::default()
                }
            }
        );
        let viewer = server.builtin_role("viewer").await;
        let identity = identities[1].uid.clone();
        crud!(
            transport,
            client.role_bindings(),
            root,
            iam::RoleBinding,
            role_binding,
            |i| {
                iam::RoleBinding {
                    name: format!("ci reads {i}"),
                    identity: identity.clone(),
                    role: viewer.clone(),
                    ..Default::default()
                }
            }
        );
        crud!(transport, client.repos(), root, registry::Repo, repo, |i| {
            registry::Repo {
                name: format!("images-{i}"),
                aliases: vec![format!("img-{i}")],
                ..Default::default()
            }
        });
        crud!(
            transport,
            client.artifacts(),
            root,
            libraries::Artifact,
            artifact,
            |i| {
                libraries::Artifact {
                    name: format!("serde-{i}"),
                    ecosystem: libraries::Ecosystem::Python.into(),
                    latest_version: "1.0.0".into(),
                    version_count: 12,
                    ..Default::default()
                }
            }
        );
        crud!(
            transport,
            client.documents(),
            root,
            advisory::Document,
            document,
            |i| {
                advisory::Document {
                    name: format!("ADV-{i}"),
                    title: "Fixed".into(),
                    published: Some(Timestamp {
                        seconds: 1_767_323_045,
                        nanos: 0,
                    }),
                    content: "text".into(),
                    ..Default::default()
                }
            }
        );

        // Advisories are read-only in v2: stored directly, then read.
        let seeded = crate::collections::seed_advisory(&server, root).await;
        let advisories = client.advisories();
        let got = advisories
            .get(vulnerabilities::GetAdvisoryRequest {
                uid: seeded.clone(),
            })
            .await
            .expect(transport);
        assert_eq!(got.advisory_id, "GHSA-1234");
        let listed: Vec<_> = advisories
            .list_stream(vulnerabilities::ListAdvisoriesRequest {
                uidp: children_of(root),
                page_size: 1,
                ..Default::default()
            })
            .try_collect()
            .await
            .expect(transport);
        assert_eq!(listed, [got], "{transport}");
    }
    server.stop().await;
}

#[tokio::test]
async fn errors_carry_their_details_on_both_transports() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    for (transport, client) in clients(&server) {
        let error = client
            .groups()
            .create(iam::CreateGroupRequest {
                parent: String::new(),
                group: Some(iam::Group::default()),
            })
            .await
            .expect_err(transport);
        assert_eq!(
            error.code(),
            Code::InvalidArgument,
            "{transport}: {error:?}"
        );
        let fields: Vec<&str> = error
            .field_violations()
            .iter()
            .map(|v| v.field.as_str())
            .collect();
        assert!(fields.contains(&"group.name"), "{transport}: {fields:?}");
        assert!(
            !error.reason().is_empty() && !error.domain().is_empty(),
            "{transport}"
        );

        let anonymous = Client::new(match transport {
            "gRPC" => Connection::grpc(&format!("http://{}", server.address)).unwrap(),
            _ => Connection::rest(&format!("http://{}", server.address)).unwrap(),
        });
        let error = anonymous
            .groups()
            .list(iam::ListGroupsRequest::default())
            .await
            .expect_err(transport);
        assert_eq!(
            error.code(),
            Code::Unauthenticated,
            "{transport}: {error:?}"
        );
    }
    server.stop().await;
}

/// A listener that accepts connections, counts them and answers none of
/// them (`close`: closes each at once, else holds it open).
async fn silent_server(close: bool) -> (String, std::sync::Arc<std::sync::atomic::AtomicU32>) {
    use std::sync::atomic::Ordering;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = accepted.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            if !close {
                held.push(socket);
            }
        }
    });
    (url, accepted)
}

#[tokio::test]
async fn unavailable_is_retried_with_backoff_then_reported() {
    let (url, accepted) = silent_server(true).await;
    let retry = Retry {
        attempts: 3,
        initial_backoff: std::time::Duration::from_millis(10),
        max_backoff: std::time::Duration::from_millis(20),
    };
    let client = Client::new(Connection::rest(&url).unwrap().with_retry(retry));
    let error = client
        .groups()
        .get(iam::GetGroupRequest { uid: "x".into() })
        .await
        .unwrap_err();
    assert_eq!(error.code(), Code::Unavailable, "{error:?}");
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 3);
}

/// A server answering every request with `error`, counting the requests.
async fn failing_server(
    error: protoapi_runtime::Error,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicU32>) {
    use axum;
    use std::sync::atomic::Ordering;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counter = answered.clone();
    let app = axum::Router::new().fallback(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        let error = error.clone();
        async move { error }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, answered)
}

#[tokio::test]
async fn only_unavailable_is_retried() {
    use std::sync::atomic::Ordering;
    let retry = Retry {
        attempts: 3,
        initial_backoff: std::time::Duration::from_millis(10),
        max_backoff: std::time::Duration::from_millis(20),
    };
    let unavailable = protoapi_runtime::Error::new(Code::Unavailable, "DRAINING", "try again");
    let (url, answered) = failing_server(unavailable).await;
    let client = Client::new(Connection::rest(&url).unwrap().with_retry(retry));
    let error = client
        .groups()
        .get(iam::GetGroupRequest::default())
        .await
        .unwrap_err();
    assert_eq!(
        (error.code(), error.reason()),
        (Code::Unavailable, "DRAINING")
    );
    assert_eq!(answered.load(Ordering::SeqCst), 3);

    // A failed write is never sent twice.
    let aborted = protoapi_runtime::Error::new(Code::Aborted, "ETAG_MISMATCH", "stale");
    let (url, answered) = failing_server(aborted).await;
    let client = Client::new(Connection::rest(&url).unwrap().with_retry(retry));
    let error = client
        .groups()
        .create(iam::CreateGroupRequest::default())
        .await
        .unwrap_err();
    assert_eq!(
        (error.code(), error.reason()),
        (Code::Aborted, "ETAG_MISMATCH")
    );
    assert_eq!(answered.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unanswered_call_times_out() {
    let (url, _) = silent_server(false).await;
    for connection in [
        Connection::rest(&url).unwrap(),
        Connection::grpc(&url).unwrap(),
    ] {
        let client = Client::new(
            connection
                .with_timeout(std::time::Duration::from_millis(200))
                .with_retry(Retry::NONE),
        );
        let error = client
            .groups()
            .get(iam::GetGroupRequest { uid: "x".into() })
            .await
            .unwrap_err();
        assert_eq!(error.code(), Code::DeadlineExceeded, "{error:?}");
    }
}

#[tokio::test]
async fn an_oversized_answer_is_refused_not_buffered() {
    use axum;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    // A well-formed group whose description alone is 5 MiB.
    let body = format!(r#"{{"uid":"x","description":"{}"}}"#, "a".repeat(5 << 20));
    let app = axum::Router::new().fallback(move || {
        let body = body.clone();
        async move { ([(http::header::CONTENT_TYPE, "application/json")], body) }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = Client::new(Connection::rest(&url).unwrap().with_retry(Retry::NONE));
    let error = client
        .groups()
        .get(iam::GetGroupRequest { uid: "x".into() })
        .await
        .unwrap_err();
    assert_eq!(
        (error.code(), error.reason()),
        (Code::ResourceExhausted, "RESPONSE_TOO_LARGE"),
        "{error:?}"
    );
}

#[tokio::test]
async fn rest_requests_leave_out_fields_at_their_default() {
    use axum;
    use std::sync::{Arc, Mutex};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let record = seen.clone();
    let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
        let record = record.clone();
        async move {
            let uri = request.uri().to_string();
            let body = axum::body::to_bytes(request.into_body(), 1 << 20)
                .await
                .unwrap();
            let body = String::from_utf8(body.to_vec()).unwrap();
            record.lock().unwrap().push((uri, body));
            ([(http::header::CONTENT_TYPE, "application/json")], "{}")
        }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = Client::new(Connection::rest(&url).unwrap().with_retry(Retry::NONE));
    let groups = client.groups();
    groups
        .list(iam::ListGroupsRequest {
            page_size: 5,
            uidp: children_of("p"),
            ..Default::default()
        })
        .await
        .unwrap();
    groups
        .create(iam::CreateGroupRequest {
            parent: "p".into(),
            group: Some(iam::Group {
                name: "g".into(),
                ..Default::default()
            }),
        })
        .await
        .unwrap();
    let seen = seen.lock().unwrap();
    let (list_uri, list_body) = &seen[0];
    assert_eq!(
        list_uri.split_once('?').map(|(_, query)| query),
        Some("pageSize=5&uidp.childrenOf=p"),
        "{list_uri}"
    );
    assert_eq!(list_body, "");
    let (create_uri, create_body) = &seen[1];
    assert!(!create_uri.contains('?'), "{create_uri}");
    let body: serde_json::Value = serde_json::from_str(create_body).unwrap();
    assert_eq!(body["name"], "g", "{create_body}");
}
