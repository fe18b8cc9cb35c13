//! v1 over gRPC beside v2 on the same port: the generated v1 clients drive
//! every collection (reading the results back through the v2 clients), a
//! client that knows only server reflection finds and calls the v1
//! services, and tokens and grants are those of v2.

use platform_api::platform::advisory::{v1 as advisory_v1, v2 as advisory_v2};
use platform_api::platform::iam::{v1 as iam_v1, v2 as iam_v2};
use platform_api::platform::libraries::{v1 as libraries_v1, v2 as libraries_v2};
use platform_api::platform::registry::{v1 as registry_v1, v2 as registry_v2};
use platform_api::platform::vulnerabilities::{v1 as vulnerabilities_v1, v2 as vulnerabilities_v2};
use platform_api::protoapi::v1::UidpFilter;
use platform_tests::{TestServer, call, is_child_uid};
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, ReflectMessage};
use prost_types::Timestamp;
use serde_json::{Value, json};
use tonic::Code;
use tonic_types::StatusExt;

/// Every v1 service, its resource kind, the plural of its List method and the
/// field of its Create request holding the resource.
const SERVICES: [(&str, &str, &str, &str); 8] = [
    ("platform.iam.v1.GroupService", "Group", "Groups", "group"),
    ("platform.iam.v1.RoleService", "Role", "Roles", "role"),
    (
        "platform.iam.v1.IdentityService",
        "Identity",
        "Identities",
        "identity",
    ),
    (
        "platform.iam.v1.RoleBindingService",
        "RoleBinding",
        "RoleBindings",
        "role_binding",
    ),
    ("platform.registry.v1.RepoService", "Repo", "Repos", "repo"),
    (
        "platform.vulnerabilities.v1.AdvisoryService",
        "Advisory",
        "Advisories",
        "advisory",
    ),
    (
        "platform.libraries.v1.ArtifactService",
        "Artifact",
        "Artifacts",
        "artifact",
    ),
    (
        "platform.advisory.v1.DocumentService",
        "Document",
        "Documents",
        "document",
    ),
];

/// A valid resource for `kind`, as proto JSON.
fn body(kind: &str, identity: &str, role: &str) -> Value {
    match kind {
        "Group" => json!({"name": "team", "resourceLimits": {"clusters": 2}}),
        "Role" => json!({"name": "reader", "capabilities": ["groups.get", "groups.list"]}),
        "Identity" => {
            json!({"name": "ci", "claimMatch": {"issuer": "https://issuer.example", "subject": "s"}})
        }
        "RoleBinding" => json!({"name": "ci reads", "identity": identity, "role": role}),
        "Repo" => json!({"name": "images", "readme": "# Images", "aliases": ["img"]}),
        "Advisory" => json!({
            "name": "advisory",
            "advisoryId": "GHSA-1234",
            "severity": {"type": "CVSS_V3", "score": 7.5},
        }),
        "Artifact" => json!({"name": "serde", "ecosystem": "JAVA", "versionCount": "3"}),
        "Document" => {
            json!({"name": "ADV-1", "title": "Fixed", "published": "2026-01-02T03:04:05Z"})
        }
        other => panic!("no body for {other}"),
    }
}

/// A server with a root organization of its own, an identity in it and the
/// built-in `viewer` role.
struct World {
    server: TestServer,
    channel: tonic::transport::Channel,
    root: String,
    identity: String,
    role: String,
    _dir: tempfile::TempDir,
}

impl World {
    async fn new(name: &str) -> World {
        let dir = tempfile::tempdir().unwrap();
        let server = TestServer::start(dir.path()).await;
        let admin = server.rest();
        let root = admin
            .create("/iam/v2/groups/", json!({ "name": name }))
            .await;
        let identity = admin
            .create(
                &format!("/iam/v2/identities/{root}"),
                json!({"name": "bound"}),
            )
            .await;
        let role = server.builtin_role("viewer").await;
        let channel = server.channel().await;
        World {
            server,
            channel,
            root,
            identity,
            role,
            _dir: dir,
        }
    }

    /// A uid under the root that names nothing.
    fn missing(&self) -> String {
        format!("{}/00000000000000ff", self.root)
    }
}

fn micros(timestamp: &Option<Timestamp>) -> i64 {
    let timestamp = timestamp.as_ref().expect("a timestamp");
    timestamp.seconds * 1_000_000 + i64::from(timestamp.nanos) / 1_000
}

/// Create, list by id, replace, (get,) delete one resource through a v1
/// client, reading it back through the v2 client after every step.
macro_rules! lifecycle {
    (
        $world:expr,
        $v1:ident::$client_mod:ident::$Client:ident,
        $v2:ident::$v2_client_mod:ident::$V2Client:ident,
        $Resource:ident,
        create: $create:ident($Create:ident.$field:ident),
        list: $list:ident($List:ident),
        update: $update:ident,
        delete: $delete:ident($Delete:ident),
        v2_get: $v2_get:ident($V2Get:ident),
        $(get: $get:ident($Get:ident),)?
        resource: $resource:expr,
        same: $same:expr $(,)?
    ) => {{
        let world: &World = $world;
        let what = stringify!($v1::$Resource);
        let token = platform_tests::bearer(&world.server.admin_token);
        let mut client =
            $v1::$client_mod::$Client::with_interceptor(world.channel.clone(), token.clone());
        let mut v2 = $v2::$v2_client_mod::$V2Client::with_interceptor(world.channel.clone(), token);
        let resource: $v1::$Resource = $resource;
        let same = $same;

        // Create: v1 names, read back by v2.
        let created = client
            .$create($v1::$Create {
                parent: world.root.clone(),
                $field: Some(resource.clone()),
            })
            .await
            .unwrap_or_else(|status| panic!("{what}: create: {status:?}"))
            .into_inner();
        assert!(is_child_uid(&created.id, Some(&world.root)), "{what}: {}", created.id);
        assert!(created.created_at.is_some() && created.updated_at.is_some(), "{what}");
        assert_eq!(created.name, resource.name, "{what}");
        assert_eq!(created.description, resource.description, "{what}");
        let read = v2
            .$v2_get($v2::$V2Get {
                uid: created.id.clone(),
            })
            .await
            .unwrap_or_else(|status| panic!("{what}: v2 get: {status:?}"))
            .into_inner();
        assert_eq!(read.uid, created.id, "{what}");
        assert_eq!(micros(&read.create_time), micros(&created.created_at), "{what}");
        assert_eq!(micros(&read.update_time), micros(&created.updated_at), "{what}");
        assert_eq!(read.name, created.name, "{what}");
        assert_eq!(read.description, created.description, "{what}");
        assert!(!read.etag.is_empty(), "{what}: v2 has an etag");
        assert!(same(&created, &read), "{what}: {created:?} vs {read:?}");

        // List by id: that one item; nothing for a missing id.
        let by_id = |id: &str| $v1::$List {
            id: id.to_owned(),
            ..Default::default()
        };
        let listed = client.$list(by_id(&created.id)).await.unwrap().into_inner();
        assert_eq!(listed.items, vec![created.clone()], "{what}");
        let listed = client.$list(by_id(&world.missing())).await.unwrap().into_inner();
        assert!(listed.items.is_empty(), "{what}: a missing id lists nothing");
        let listed = client
            .$list($v1::$List {
                uidp: Some(UidpFilter {
                    children_of: world.root.clone(),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(listed.items.contains(&created), "{what}");

        // Bad input is INVALID_ARGUMENT with a BadRequest.
        for bad in [
            by_id("NOT-A-UID"),
            $v1::$List {
                offset: -1,
                ..Default::default()
            },
            $v1::$List {
                limit: -1,
                ..Default::default()
            },
        ] {
            let status = client.$list(bad).await.unwrap_err();
            assert_eq!(status.code(), Code::InvalidArgument, "{what}: {status:?}");
            assert!(status.get_error_details().bad_request().is_some(), "{what}");
        }

        $(
            let got = client
                .$get($v1::$Get {
                    id: created.id.clone(),
                })
                .await
                .unwrap_or_else(|status| panic!("{what}: get: {status:?}"))
                .into_inner();
            assert_eq!(got, created, "{what}: get");
        )?

        // Replace: description left out is cleared, OUTPUT_ONLY fields sent
        // are ignored.
        let replacement = $v1::$Resource {
            id: created.id.clone(),
            created_at: Some(Timestamp {
                seconds: 1,
                nanos: 0,
            }),
            updated_at: None,
            name: "replaced".into(),
            description: String::new(),
            ..created.clone()
        };
        let updated = client
            .$update(replacement)
            .await
            .unwrap_or_else(|status| panic!("{what}: update: {status:?}"))
            .into_inner();
        assert_eq!(updated.id, created.id, "{what}");
        assert_eq!(updated.name, "replaced", "{what}");
        assert_eq!(updated.description, "", "{what}: cleared");
        assert_eq!(updated.created_at, created.created_at, "{what}: created_at kept");
        assert!(
            micros(&updated.updated_at) > micros(&created.updated_at),
            "{what}: updated_at advances"
        );
        let read = v2
            .$v2_get($v2::$V2Get {
                uid: created.id.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(read.name, "replaced", "{what}");
        assert_eq!(read.description, "", "{what}");
        assert_eq!(micros(&read.create_time), micros(&created.created_at), "{what}");
        assert_eq!(micros(&read.update_time), micros(&updated.updated_at), "{what}");
        assert!(same(&updated, &read), "{what}: {updated:?} vs {read:?}");
        let listed = client.$list(by_id(&created.id)).await.unwrap().into_inner();
        assert_eq!(listed.items, vec![updated.clone()], "{what}");

        // Delete: gone from both versions.
        client
            .$delete($v1::$Delete {
                id: created.id.clone(),
            })
            .await
            .unwrap_or_else(|status| panic!("{what}: delete: {status:?}"));
        let listed = client.$list(by_id(&created.id)).await.unwrap().into_inner();
        assert!(listed.items.is_empty(), "{what}");
        let gone = v2
            .$v2_get($v2::$V2Get {
                uid: created.id.clone(),
            })
            .await
            .unwrap_err();
        assert_eq!(gone.code(), Code::NotFound, "{what}");
        let details = gone.get_error_details();
        let info = details.resource_info().expect("a ResourceInfo");
        assert_eq!(info.resource_name, created.id, "{what}");
        $(
            let gone = client
                .$get($v1::$Get {
                    id: created.id.clone(),
                })
                .await
                .unwrap_err();
            assert_eq!(gone.code(), Code::NotFound, "{what}: v1 get");
            assert_eq!(
                gone.get_error_details().resource_info().map(|i| i.resource_name.clone()),
                Some(created.id.clone()),
                "{what}"
            );
        )?
        let again = client
            .$delete($v1::$Delete {
                id: created.id.clone(),
            })
            .await
            .unwrap_err();
        assert_eq!(again.code(), Code::NotFound, "{what}: deleted twice");
    }};
}

#[tokio::test]
async fn legacy_v1_services_over_grpc_with_generated_clients() {
    let world = World::new("legacy grpc").await;
    let limits = |clusters, idps, repositories| {
        [
            ("clusters", clusters),
            ("idps", idps),
            ("repositories", repositories),
        ]
        .into_iter()
        .filter(|(_, value)| *value != 0)
        .map(|(key, value)| (key.to_owned(), value))
        .collect::<std::collections::HashMap<_, _>>()
    };

    lifecycle!(
        &world,
        iam_v1::group_service_client::GroupServiceClient,
        iam_v2::group_service_client::GroupServiceClient,
        Group,
        create: create_group(CreateGroupRequest.group),
        list: list_groups(ListGroupsRequest),
        update: update_group,
        delete: delete_group(DeleteGroupRequest),
        v2_get: get_group(GetGroupRequest),
        resource: iam_v1::Group {
            name: "team".into(),
            description: "the team".into(),
            resource_limits: limits(2, 1, 3),
            ..Default::default()
        },
        same: |v1: &iam_v1::Group, v2: &iam_v2::Group| {
            let stored = v2.resource_limits.unwrap_or_default();
            v1.resource_limits == limits(stored.clusters, stored.idps, stored.repositories)
                && v1.verified == v2.verified
        },
    );
    lifecycle!(
        &world,
        iam_v1::role_service_client::RoleServiceClient,
        iam_v2::role_service_client::RoleServiceClient,
        Role,
        create: create_role(CreateRoleRequest.role),
        list: list_roles(ListRolesRequest),
        update: update_role,
        delete: delete_role(DeleteRoleRequest),
        v2_get: get_role(GetRoleRequest),
        resource: iam_v1::Role {
            name: "reader".into(),
            description: "reads groups".into(),
            capabilities: vec!["groups.get".into(), "groups.list".into()],
            ..Default::default()
        },
        same: |v1: &iam_v1::Role, v2: &iam_v2::Role| v1.capabilities == v2.capabilities,
    );
    lifecycle!(
        &world,
        iam_v1::identity_service_client::IdentityServiceClient,
        iam_v2::identity_service_client::IdentityServiceClient,
        Identity,
        create: create_identity(CreateIdentityRequest.identity),
        list: list_identities(ListIdentitiesRequest),
        update: update_identity,
        delete: delete_identity(DeleteIdentityRequest),
        v2_get: get_identity(GetIdentityRequest),
        resource: iam_v1::Identity {
            name: "ci".into(),
            description: "the pipeline".into(),
            claim_match: Some(iam_v1::ClaimMatch {
                issuer: "https://issuer.example".into(),
                subject: "repo:x".into(),
            }),
            ..Default::default()
        },
        same: |v1: &iam_v1::Identity, v2: &iam_v2::Identity| {
            let (a, b) = (v1.claim_match.as_ref().unwrap(), v2.claim_match.as_ref().unwrap());
            a.issuer == b.issuer && a.subject == b.subject
        },
    );
    lifecycle!(
        &world,
        iam_v1::role_binding_service_client::RoleBindingServiceClient,
        iam_v2::role_binding_service_client::RoleBindingServiceClient,
        RoleBinding,
        create: create_role_binding(CreateRoleBindingRequest.role_binding),
        list: list_role_bindings(ListRoleBindingsRequest),
        update: update_role_binding,
        delete: delete_role_binding(DeleteRoleBindingRequest),
        v2_get: get_role_binding(GetRoleBindingRequest),
        resource: iam_v1::RoleBinding {
            name: "ci reads".into(),
            description: "read access".into(),
            identity: world.identity.clone(),
            role: world.role.clone(),
            ..Default::default()
        },
        same: |v1: &iam_v1::RoleBinding, v2: &iam_v2::RoleBinding| {
            v1.identity == v2.identity && v1.role == v2.role
        },
    );
    lifecycle!(
        &world,
        registry_v1::repo_service_client::RepoServiceClient,
        registry_v2::repo_service_client::RepoServiceClient,
        Repo,
        create: create_repo(CreateRepoRequest.repo),
        list: list_repos(ListReposRequest),
        update: update_repo,
        delete: delete_repo(DeleteRepoRequest),
        v2_get: get_repo(GetRepoRequest),
        resource: registry_v1::Repo {
            name: "images".into(),
            description: "container images".into(),
            public: true,
            readme: "# Images".into(),
            aliases: vec!["img".into(), "pics".into()],
            ..Default::default()
        },
        same: |v1: &registry_v1::Repo, v2: &registry_v2::Repo| {
            v1.public == v2.public && v1.readme == v2.readme && v1.aliases == v2.aliases
        },
    );
    lifecycle!(
        &world,
        vulnerabilities_v1::advisory_service_client::AdvisoryServiceClient,
        vulnerabilities_v2::advisory_service_client::AdvisoryServiceClient,
        Advisory,
        create: create_advisory(CreateAdvisoryRequest.advisory),
        list: list_advisories(ListAdvisoriesRequest),
        update: update_advisory,
        delete: delete_advisory(DeleteAdvisoryRequest),
        v2_get: get_advisory(GetAdvisoryRequest),
        get: get_advisory(GetAdvisoryRequest),
        resource: vulnerabilities_v1::Advisory {
            name: "advisory".into(),
            description: "a bad one".into(),
            advisory_id: "GHSA-1234".into(),
            aliases: vec!["CVE-2026-0001".into()],
            artifact_name: "serde".into(),
            severity: Some(vulnerabilities_v1::Severity {
                r#type: vulnerabilities_v1::severity::Type::CvssV4 as i32,
                score: 9.25,
            }),
            ..Default::default()
        },
        same: |v1: &vulnerabilities_v1::Advisory, v2: &vulnerabilities_v2::Advisory| {
            let (a, b) = (v1.severity.unwrap(), v2.severity.unwrap());
            v1.advisory_id == v2.advisory_id
                && v1.aliases == v2.aliases
                && v1.artifact_name == v2.artifact_name
                && a.r#type == b.r#type
                && a.score == b.score
        },
    );
    lifecycle!(
        &world,
        libraries_v1::artifact_service_client::ArtifactServiceClient,
        libraries_v2::artifact_service_client::ArtifactServiceClient,
        Artifact,
        create: create_artifact(CreateArtifactRequest.artifact),
        list: list_artifacts(ListArtifactsRequest),
        update: update_artifact,
        delete: delete_artifact(DeleteArtifactRequest),
        v2_get: get_artifact(GetArtifactRequest),
        get: get_artifact(GetArtifactRequest),
        resource: libraries_v1::Artifact {
            name: "serde".into(),
            description: "serialization".into(),
            ecosystem: libraries_v1::Ecosystem::Python as i32,
            latest_version: "1.0.0".into(),
            version_count: 12,
            ..Default::default()
        },
        same: |v1: &libraries_v1::Artifact, v2: &libraries_v2::Artifact| {
            v1.ecosystem == v2.ecosystem
                && v1.latest_version == v2.latest_version
                && v1.version_count == v2.version_count
        },
    );
    lifecycle!(
        &world,
        advisory_v1::document_service_client::DocumentServiceClient,
        advisory_v2::document_service_client::DocumentServiceClient,
        Document,
        create: create_document(CreateDocumentRequest.document),
        list: list_documents(ListDocumentsRequest),
        update: update_document,
        delete: delete_document(DeleteDocumentRequest),
        v2_get: get_document(GetDocumentRequest),
        get: get_document(GetDocumentRequest),
        resource: advisory_v1::Document {
            name: "ADV-1".into(),
            description: "fixed in 1.1".into(),
            title: "Fixed".into(),
            published: Some(Timestamp {
                seconds: 1_767_323_045,
                nanos: 0,
            }),
            content: "text".into(),
            ..Default::default()
        },
        same: |v1: &advisory_v1::Document, v2: &advisory_v2::Document| {
            v1.title == v2.title && v1.published == v2.published && v1.content == v2.content
        },
    );
    world.server.stop().await;
}

#[tokio::test]
async fn legacy_v1_lists_window_and_hide_over_grpc() {
    let world = World::new("legacy grpc lists").await;
    let admin = world.server.rest();
    let token = platform_tests::bearer(&world.server.admin_token);
    let mut groups = iam_v1::group_service_client::GroupServiceClient::with_interceptor(
        world.channel.clone(),
        token,
    );
    let parent = admin
        .create(
            &format!("/iam/v2/groups/{}", world.root),
            json!({"name": "five"}),
        )
        .await;
    let mut five = Vec::new();
    for i in 0..5 {
        five.push(
            admin
                .create(
                    &format!("/iam/v2/groups/{parent}"),
                    json!({"name": format!("g{i}")}),
                )
                .await,
        );
    }
    five.sort();
    let window = |offset, limit| iam_v1::ListGroupsRequest {
        uidp: Some(UidpFilter {
            children_of: parent.clone(),
            ..Default::default()
        }),
        offset,
        limit,
        ..Default::default()
    };
    for (offset, limit, expected) in [
        (0, 0, &five[..]),
        (0, 2, &five[..2]),
        (2, 2, &five[2..4]),
        (4, 2, &five[4..]),
        (5, 2, &five[5..]),
        (3, 0, &five[3..]),
    ] {
        let listed = groups
            .list_groups(window(offset, limit))
            .await
            .unwrap()
            .into_inner();
        let ids: Vec<String> = listed.items.into_iter().map(|g| g.id).collect();
        assert_eq!(ids, expected, "offset={offset} limit={limit}");
    }

    // A caller of another organization sees nothing of this one: an empty
    // list, where v2 refuses.
    let other_root = admin
        .create("/iam/v2/groups/", json!({"name": "legacy grpc other"}))
        .await;
    let owner_role = world.server.builtin_role("owner").await;
    let other = world
        .server
        .member(&other_root, "other", &owner_role, &other_root)
        .await;
    let mut as_other = iam_v1::group_service_client::GroupServiceClient::with_interceptor(
        world.channel.clone(),
        platform_tests::bearer(&other.token),
    );
    let listed = as_other
        .list_groups(window(0, 0))
        .await
        .unwrap()
        .into_inner();
    assert!(listed.items.is_empty(), "children of another organization");
    let listed = as_other
        .list_groups(iam_v1::ListGroupsRequest {
            id: five[0].clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(listed.items.is_empty(), "an id of another organization");
    let mut as_other_v2 = iam_v2::group_service_client::GroupServiceClient::with_interceptor(
        world.channel.clone(),
        platform_tests::bearer(&other.token),
    );
    let refused = as_other_v2
        .list_groups(iam_v2::ListGroupsRequest {
            uidp: Some(UidpFilter {
                children_of: parent.clone(),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "v2 refuses");
    let own = as_other
        .list_groups(iam_v1::ListGroupsRequest {
            id: other_root.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        own.items.iter().map(|g| &g.id).collect::<Vec<_>>(),
        vec![&other_root],
        "its own organization"
    );
    world.server.stop().await;
}

#[tokio::test]
async fn legacy_v1_grpc_same_tokens_and_grants() {
    let world = World::new("legacy grpc auth").await;
    let stranger = world
        .server
        .rest()
        .create(
            &format!("/iam/v2/identities/{}", world.root),
            json!({"name": "stranger"}),
        )
        .await;
    let stranger = world.server.token_for(&stranger);
    let pool = &*platform_api::DESCRIPTOR_POOL;
    for (service, kind, plural, field) in SERVICES {
        let service = pool
            .get_service_by_name(service)
            .unwrap_or_else(|| panic!("{service} is generated"));
        let method = |name: String| {
            service
                .methods()
                .find(|m| m.name() == name)
                .unwrap_or_else(|| panic!("{} has no {name}", service.full_name()))
        };
        let create = method(format!("Create{kind}"));
        let request =
            json!({"parent": world.root, field: body(kind, &world.identity, &world.role)})
                .to_string();
        let refused = call(&world.channel, None, &create, &request)
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::Unauthenticated, "{kind}: {refused:?}");
        let refused = call(&world.channel, Some("not-a-token"), &create, &request)
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::Unauthenticated, "{kind}: {refused:?}");
        let refused = call(&world.channel, Some(&stranger), &create, &request)
            .await
            .unwrap_err();
        assert_eq!(
            refused.code(),
            Code::PermissionDenied,
            "{kind}: {refused:?}"
        );
        assert!(
            refused.get_error_details().error_info().is_some(),
            "{kind}: ErrorInfo"
        );

        // The administrator's token works the same on v1.
        let created = call(
            &world.channel,
            Some(&world.server.admin_token),
            &create,
            &request,
        )
        .await
        .unwrap_or_else(|status| panic!("{kind}: {status:?}"));
        let id = created
            .get_field_by_name("id")
            .unwrap()
            .as_str()
            .unwrap()
            .to_owned();

        // Listing without grants: nothing (published documents are public;
        // this one's `published` time has passed).
        let list = method(format!("List{plural}"));
        let by_id = json!({"id": id}).to_string();
        let listed = call(&world.channel, Some(&stranger), &list, &by_id)
            .await
            .unwrap_or_else(|status| panic!("{kind}: {status:?}"));
        let count = listed
            .get_field_by_name("items")
            .unwrap()
            .as_list()
            .unwrap()
            .len();
        let public = kind == "Document";
        assert_eq!(count, usize::from(public), "{kind}: listed without grants");
        // Repos are listable without a token (public ones only).
        if !public && kind != "Repo" {
            let refused = call(&world.channel, None, &list, &by_id).await.unwrap_err();
            assert_eq!(refused.code(), Code::Unauthenticated, "{kind}: {refused:?}");
        }

        let delete = method(format!("Delete{kind}"));
        let refused = call(&world.channel, Some(&stranger), &delete, &by_id)
            .await
            .unwrap_err();
        assert_eq!(
            refused.code(),
            Code::PermissionDenied,
            "{kind}: {refused:?}"
        );
        call(
            &world.channel,
            Some(&world.server.admin_token),
            &delete,
            &by_id,
        )
        .await
        .unwrap_or_else(|status| panic!("{kind}: {status:?}"));
    }
    world.server.stop().await;
}

#[tokio::test]
async fn legacy_v1_services_in_reflection() {
    let world = World::new("legacy reflection").await;
    let channel = &world.channel;

    // Both reflection versions list every v1 service beside the v2 ones.
    let listed = v1alpha::list_services(channel).await;
    let listed_v1 = v1::list_services(channel).await;
    for (service, ..) in SERVICES {
        assert!(
            listed.iter().any(|s| s == service),
            "v1alpha: {service} in {listed:?}"
        );
        assert!(
            listed_v1.iter().any(|s| s == service),
            "v1: {service} in {listed_v1:?}"
        );
        let v2 = service.replace(".v1.", ".v2.");
        assert!(listed.contains(&v2), "{v2} in {listed:?}");
    }

    // A client that knows only reflection builds every v1 service from it.
    for (service_name, kind, plural, field) in SERVICES {
        let pool = v1alpha::pool_for(channel, service_name).await;
        let service = pool
            .get_service_by_name(service_name)
            .unwrap_or_else(|| panic!("{service_name} from reflection"));
        let method = |name: String| {
            service
                .methods()
                .find(|m| m.name() == name)
                .unwrap_or_else(|| panic!("{service_name} has no {name}"))
        };
        let resource = pool
            .get_message_by_name(&service_name.replace(&format!("{kind}Service"), kind))
            .unwrap();
        let created_at = resource.get_field_by_name("created_at").unwrap();
        assert_eq!(created_at.json_name(), "created_at", "{service_name}");
        assert_eq!(
            resource
                .get_field_by_name("updated_at")
                .unwrap()
                .json_name(),
            "updated_at"
        );
        assert!(
            resource.get_field_by_name("etag").is_none(),
            "{service_name}"
        );
        let has_get = service.methods().any(|m| m.name() == format!("Get{kind}"));
        assert_eq!(
            has_get,
            matches!(kind, "Advisory" | "Artifact" | "Document"),
            "{service_name}: Get"
        );

        // Create, list, replace and delete with dynamic messages.
        let token = Some(world.server.admin_token.as_str());
        let body = body(kind, &world.identity, &world.role);
        let request = json!({"parent": world.root, field: body}).to_string();
        let created = call(channel, token, &method(format!("Create{kind}")), &request)
            .await
            .unwrap_or_else(|status| panic!("{service_name}: {status:?}"));
        let printed = to_json(&created);
        assert_eq!(printed["name"], body["name"], "{service_name}: {printed}");
        for key in ["id", "created_at", "updated_at"] {
            assert!(
                printed.get(key).is_some(),
                "{service_name}: {key} in {printed}"
            );
        }
        for key in ["uid", "createdAt", "createTime", "etag"] {
            assert!(
                printed.get(key).is_none(),
                "{service_name}: {key} in {printed}"
            );
        }
        let id = printed["id"].as_str().unwrap().to_owned();
        let list = method(format!("List{plural}"));
        let listed = call(channel, token, &list, &json!({"id": id}).to_string())
            .await
            .unwrap();
        assert_eq!(
            to_json(&listed)["items"],
            json!([printed]),
            "{service_name}"
        );
        let listed = call(
            channel,
            token,
            &list,
            &json!({"id": world.missing()}).to_string(),
        )
        .await
        .unwrap();
        assert_eq!(
            listed
                .get_field_by_name("items")
                .unwrap()
                .as_list()
                .map(<[_]>::len),
            Some(0),
            "{service_name}: a missing id lists nothing"
        );

        let mut replacement = printed.clone();
        replacement["name"] = json!("replaced");
        let updated = call(
            channel,
            token,
            &method(format!("Update{kind}")),
            &replacement.to_string(),
        )
        .await
        .unwrap_or_else(|status| panic!("{service_name}: {status:?}"));
        assert_eq!(
            updated.get_field_by_name("name").unwrap().as_str(),
            Some("replaced"),
            "{service_name}"
        );
        if has_get {
            let got = call(
                channel,
                token,
                &method(format!("Get{kind}")),
                &json!({"id": id}).to_string(),
            )
            .await
            .unwrap();
            assert_eq!(got, updated, "{service_name}");
        }
        let deleted = call(
            channel,
            token,
            &method(format!("Delete{kind}")),
            &json!({"id": id}).to_string(),
        )
        .await
        .unwrap_or_else(|status| panic!("{service_name}: {status:?}"));
        assert_eq!(deleted.descriptor().full_name(), "google.protobuf.Empty");
    }

    // Groups in more detail: `resourceLimits` is a map; replacing without it
    // clears it.
    let pool = v1alpha::pool_for(channel, "platform.iam.v1.GroupService").await;
    let service = pool
        .get_service_by_name("platform.iam.v1.GroupService")
        .unwrap();
    let method = |name: &str| service.methods().find(|m| m.name() == name).unwrap();
    let token = Some(world.server.admin_token.as_str());
    let created = call(
        channel,
        token,
        &method("CreateGroup"),
        &json!({"parent": world.root, "group": {"name": "limited", "description": "d", "resourceLimits": {"clusters": 3, "idps": 1}}})
            .to_string(),
    )
    .await
    .unwrap();
    let limits = created.get_field_by_name("resource_limits").unwrap();
    assert_eq!(limits.as_map().map(|m| m.len()), Some(2), "{limits:?}");
    let id = created
        .get_field_by_name("id")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let updated = call(
        channel,
        token,
        &method("UpdateGroup"),
        &json!({"id": id, "name": "unlimited"}).to_string(),
    )
    .await
    .unwrap();
    assert_eq!(
        updated
            .get_field_by_name("resource_limits")
            .unwrap()
            .as_map()
            .map(|m| m.len()),
        Some(0)
    );
    assert_eq!(
        updated
            .get_field_by_name("description")
            .map(|v| v.as_str().map(str::to_owned)),
        Some(Some(String::new()))
    );
    let refused = call(
        channel,
        token,
        &method("CreateGroup"),
        &json!({"parent": world.root, "group": {"name": "bad", "resourceLimits": {"gpus": 1}}})
            .to_string(),
    )
    .await
    .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    let details = refused.get_error_details();
    let fields: Vec<&str> = details
        .bad_request()
        .map(|b| {
            b.field_violations
                .iter()
                .map(|v| v.field.as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(fields, vec!["group.resourceLimits.gpus"], "{refused:?}");
    world.server.stop().await;
}

/// A dynamic message as canonical proto JSON (what grpcurl prints).
fn to_json(message: &DynamicMessage) -> Value {
    serde_json::to_value(message).unwrap()
}

mod v1alpha {
    use super::*;
    use tonic_reflection::pb::v1alpha::ServerReflectionRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse;

    async fn reflect(
        channel: &tonic::transport::Channel,
        request: MessageRequest,
    ) -> MessageResponse {
        let mut client = ServerReflectionClient::new(channel.clone());
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(request),
        };
        let mut responses = client
            .server_reflection_info(tonic::codegen::tokio_stream::iter([request]))
            .await
            .unwrap()
            .into_inner();
        responses
            .message()
            .await
            .unwrap()
            .unwrap()
            .message_response
            .unwrap()
    }

    pub async fn list_services(channel: &tonic::transport::Channel) -> Vec<String> {
        match reflect(channel, MessageRequest::ListServices(String::new())).await {
            MessageResponse::ListServicesResponse(list) => {
                list.service.into_iter().map(|s| s.name).collect()
            }
            other => panic!("{other:?}"),
        }
    }

    /// The descriptors of `symbol`'s file and everything it imports, fetched
    /// file by file as real clients do.
    pub async fn pool_for(channel: &tonic::transport::Channel, symbol: &str) -> DescriptorPool {
        let mut files: Vec<prost_types::FileDescriptorProto> = Vec::new();
        let mut request = MessageRequest::FileContainingSymbol(symbol.into());
        loop {
            let response = reflect(channel, request).await;
            let MessageResponse::FileDescriptorResponse(response) = response else {
                panic!("{response:?}")
            };
            for bytes in &response.file_descriptor_proto {
                let file = prost_types::FileDescriptorProto::decode(bytes.as_slice()).unwrap();
                if !files.iter().any(|f| f.name == file.name) {
                    files.push(file);
                }
            }
            let missing = files
                .iter()
                .flat_map(|f| f.dependency.iter())
                .find(|dependency| !files.iter().any(|f| f.name.as_ref() == Some(dependency)));
            match missing {
                Some(name) => request = MessageRequest::FileByFilename(name.clone()),
                None => break,
            }
        }
        let mut pool = DescriptorPool::new();
        pool.add_file_descriptor_protos(files).unwrap();
        pool
    }
}

mod v1 {
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

    pub async fn list_services(channel: &tonic::transport::Channel) -> Vec<String> {
        let mut client = ServerReflectionClient::new(channel.clone());
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(MessageRequest::ListServices(String::new())),
        };
        let mut responses = client
            .server_reflection_info(tonic::codegen::tokio_stream::iter([request]))
            .await
            .unwrap()
            .into_inner();
        match responses.message().await.unwrap().unwrap().message_response {
            Some(MessageResponse::ListServicesResponse(list)) => {
                list.service.into_iter().map(|s| s.name).collect()
            }
            other => panic!("{other:?}"),
        }
    }
}
