//! Every v2 collection answers its standard methods over REST and gRPC, with
//! NOT_FOUND + ResourceInfo for a missing uid.

use platform_api::platform::vulnerabilities::v2::{Advisory, AdvisoryStore};
use platform_tests::{StatusCode, TestServer, call, is_child_uid};
use protoapi_runtime::Caller;
use serde_json::{Value, json};
use tonic_types::StatusExt;

struct Collection {
    path: &'static str,
    service: &'static str,
    kind: &'static str,
    plural: &'static str,
    body_field: &'static str,
    resource_type: &'static str,
    /// A valid body for Create; `None` for read-only collections.
    create: Option<Value>,
}

/// Every collection; role bindings bind `identity` to `role` (built in, so
/// nothing else is created under the root the test works in).
fn collections(identity: &str, role: &str) -> Vec<Collection> {
    let collection = |path, service, kind, plural, body_field, resource_type, create| Collection {
        path,
        service,
        kind,
        plural,
        body_field,
        resource_type,
        create,
    };
    vec![
        collection(
            "/iam/v2/groups",
            "platform.iam.v2.GroupService",
            "Group",
            "Groups",
            "group",
            "iam.platform/Group",
            Some(
                json!({"name": "team", "resourceLimits": {"clusters": 2, "idps": 1, "repositories": 0}}),
            ),
        ),
        collection(
            "/iam/v2/roles",
            "platform.iam.v2.RoleService",
            "Role",
            "Roles",
            "role",
            "iam.platform/Role",
            Some(json!({"name": "reader", "capabilities": ["groups.get", "groups.list"]})),
        ),
        collection(
            "/iam/v2/identities",
            "platform.iam.v2.IdentityService",
            "Identity",
            "Identities",
            "identity",
            "iam.platform/Identity",
            Some(
                json!({"name": "ci", "claimMatch": {"issuer": "https://issuer.example", "subject": "repo:x"}}),
            ),
        ),
        collection(
            "/iam/v2/roleBindings",
            "platform.iam.v2.RoleBindingService",
            "RoleBinding",
            "RoleBindings",
            "role_binding",
            "iam.platform/RoleBinding",
            Some(json!({"name": "ci reads", "identity": identity, "role": role})),
        ),
        collection(
            "/registry/v2/repos",
            "platform.registry.v2.RepoService",
            "Repo",
            "Repos",
            "repo",
            "registry.platform/Repo",
            Some(
                json!({"name": "images", "public": true, "aliases": ["img"], "readme": "# Images"}),
            ),
        ),
        collection(
            "/vulnerabilities/v2/advisories",
            "platform.vulnerabilities.v2.AdvisoryService",
            "Advisory",
            "Advisories",
            "advisory",
            "vulnerabilities.platform/Advisory",
            None,
        ),
        collection(
            "/libraries/v2/artifacts",
            "platform.libraries.v2.ArtifactService",
            "Artifact",
            "Artifacts",
            "artifact",
            "libraries.platform/Artifact",
            Some(
                json!({"name": "serde", "ecosystem": "PYTHON", "latestVersion": "1.0.0", "versionCount": "12"}),
            ),
        ),
        collection(
            "/advisory/v2/documents",
            "platform.advisory.v2.DocumentService",
            "Document",
            "Documents",
            "document",
            "advisory.platform/Document",
            Some(
                json!({"name": "ADV-1", "title": "Fixed", "published": "2026-01-02T03:04:05Z", "content": "text"}),
            ),
        ),
    ]
}

/// Stores an advisory directly: v2 serves advisories read-only.
pub(crate) async fn seed_advisory(server: &TestServer, parent: &str) -> String {
    let store = match std::env::var("E2E_DATABASE_URL") {
        Ok(url) => platform_server::store::open_postgres(&url).await.unwrap(),
        Err(_) => platform_server::store::open_sqlite(&server.data_dir)
            .await
            .unwrap(),
    };
    let advisory = Advisory {
        name: "advisory".into(),
        advisory_id: "GHSA-1234".into(),
        aliases: vec!["CVE-2026-0001".into()],
        ..Default::default()
    };
    let advisory = protoapi_runtime::standard::prepare_create(
        &Caller::System,
        parent,
        Some(advisory),
        "advisory",
    )
    .unwrap();
    store.insert_advisory(&advisory).await.unwrap();
    store.close().await;
    advisory.uid
}

#[tokio::test]
async fn every_collection_over_rest() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let root_uid = rest
        .create("/iam/v2/groups/", json!({"name": "acme"}))
        .await;

    let (identity, role) = (server.admin_identity(), server.builtin_role("viewer").await);
    for collection in collections(&identity, &role) {
        let path = collection.path;
        let uid = match &collection.create {
            Some(body) => {
                let created = rest.post(&format!("{path}/{root_uid}"), body.clone()).await;
                assert_eq!(created.status, StatusCode::OK, "{path}: {:?}", created.body);
                for (key, value) in body.as_object().unwrap() {
                    assert_eq!(&created.body[key], value, "{path}: {key} round-trips");
                }
                created.body["uid"].as_str().unwrap().to_owned()
            }
            None => {
                let refused = rest
                    .post(&format!("{path}/{root_uid}"), json!({"name": "x"}))
                    .await;
                assert_eq!(
                    refused.status,
                    StatusCode::METHOD_NOT_ALLOWED,
                    "{path} is read-only"
                );
                seed_advisory(&server, &root_uid).await
            }
        };
        assert!(is_child_uid(&uid, Some(&root_uid)), "{path}: {uid}");

        let got = rest.get(&format!("{path}/{uid}")).await;
        assert_eq!(got.status, StatusCode::OK, "{path}: {:?}", got.body);
        let listed = rest
            .get(&format!("{path}?uidp.children_of={root_uid}"))
            .await;
        assert_eq!(listed.status, StatusCode::OK, "{path}: {:?}", listed.body);
        assert_eq!(listed.body["items"], json!([got.body]), "{path}");
        assert_eq!(listed.body["totalCount"], 1, "{path}");

        if collection.create.is_some() {
            let patched = rest
                .patch(
                    &format!("{path}/{uid}?updateMask=description"),
                    json!({"description": "changed"}),
                )
                .await;
            assert_eq!(patched.status, StatusCode::OK, "{path}: {:?}", patched.body);
            assert_eq!(patched.body["description"], "changed", "{path}");
            assert_eq!(patched.body["name"], got.body["name"], "{path}");
            let deleted = rest.delete(&format!("{path}/{uid}")).await;
            assert_eq!(
                (deleted.status, &deleted.body),
                (StatusCode::OK, &json!({})),
                "{path}"
            );
        }

        let missing_uid = if collection.create.is_some() {
            uid.clone()
        } else {
            format!("{root_uid}/0000000000000000")
        };
        let missing = rest.get(&format!("{path}/{missing_uid}")).await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND, "{path}");
        let info = missing
            .detail("ResourceInfo")
            .unwrap_or_else(|| panic!("{path}: ResourceInfo"));
        assert_eq!(info["resourceType"], collection.resource_type, "{path}");
        assert_eq!(info["resourceName"], missing_uid.as_str(), "{path}");
        let domain = collection.resource_type.split('/').next().unwrap();
        assert_eq!(
            missing.detail("ErrorInfo").unwrap()["domain"],
            domain,
            "{path}"
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn every_collection_over_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let channel = server.channel().await;
    let pool = &*platform_api::DESCRIPTOR_POOL;
    let root = server
        .rest()
        .post("/iam/v2/groups/", json!({"name": "acme"}))
        .await
        .body;
    let root_uid = root["uid"].as_str().unwrap().to_owned();

    let (identity, role) = (server.admin_identity(), server.builtin_role("viewer").await);
    for collection in collections(&identity, &role) {
        let service = pool.get_service_by_name(collection.service).unwrap();
        let method = |verb: &str, noun: &str| {
            let name = format!("{verb}{noun}");
            service
                .methods()
                .find(|m| m.name() == name)
                .unwrap_or_else(|| panic!("{} has no {name}", collection.service))
        };
        let kind = collection.kind;
        let uid = match &collection.create {
            Some(body) => {
                let request = json!({"parent": root_uid, collection.body_field: body});
                let created = call(
                    &channel,
                    Some(&server.admin_token),
                    &method("Create", kind),
                    &request.to_string(),
                )
                .await
                .unwrap();
                created
                    .get_field_by_name("uid")
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_owned()
            }
            None => {
                assert!(
                    service.methods().all(|m| !m.name().starts_with("Create")),
                    "{kind} is read-only"
                );
                seed_advisory(&server, &root_uid).await
            }
        };
        let uid_request = json!({"uid": uid}).to_string();
        let got = call(
            &channel,
            Some(&server.admin_token),
            &method("Get", kind),
            &uid_request,
        )
        .await
        .unwrap();
        let list_request = json!({"uidp": {"childrenOf": root_uid}}).to_string();
        let listed = call(
            &channel,
            Some(&server.admin_token),
            &method("List", collection.plural),
            &list_request,
        )
        .await
        .unwrap();
        assert_eq!(
            listed.get_field_by_name("total_count").unwrap().as_i32(),
            Some(1),
            "{kind}"
        );
        let items = listed.get_field_by_name("items").unwrap();
        assert_eq!(
            items.as_list().unwrap()[0].as_message(),
            Some(&got),
            "{kind}"
        );

        if collection.create.is_some() {
            let request = json!({"uid": uid, collection.body_field: {"description": "changed"}, "updateMask": "description"});
            let updated = call(
                &channel,
                Some(&server.admin_token),
                &method("Update", kind),
                &request.to_string(),
            )
            .await
            .unwrap();
            assert_eq!(
                updated.get_field_by_name("description").unwrap().as_str(),
                Some("changed"),
                "{kind}"
            );
            call(
                &channel,
                Some(&server.admin_token),
                &method("Delete", kind),
                &uid_request,
            )
            .await
            .unwrap();
        }
        let missing_uid = if collection.create.is_some() {
            uid.clone()
        } else {
            format!("{root_uid}/0000000000000000")
        };
        let status = call(
            &channel,
            Some(&server.admin_token),
            &method("Get", kind),
            &json!({"uid": missing_uid}).to_string(),
        )
        .await
        .unwrap_err();
        assert_eq!(status.code(), tonic::Code::NotFound, "{kind}");
        let details = status.get_error_details();
        let info = details
            .resource_info()
            .unwrap_or_else(|| panic!("{kind}: ResourceInfo"));
        assert_eq!(info.resource_type, collection.resource_type, "{kind}");
        assert_eq!(info.resource_name, missing_uid, "{kind}");
    }
    server.stop().await;
}
