//! Bounded identifiers and the shared scope, tried as an attacker would:
//! uids longer than any hierarchy allows in every field that carries one,
//! over REST and gRPC, with and without a token; hierarchies deeper than
//! declared; and tenants' staff rewriting what every organization shares.

use platform_tests::{Method, Rest, StatusCode, TestServer};
use prost_reflect::MethodDescriptor;
use serde_json::{Value, json};
use tonic::Code;

/// A well-formed UIDP `levels` levels below its root: every character
/// passes the per-character checks, only its depth is wrong.
fn deep_uid(levels: usize) -> String {
    let mut uid = "a".repeat(40);
    for level in 0..levels {
        uid.push_str(&format!("/{level:016x}"));
    }
    uid
}

/// One level deeper than the Platform API allows (313 characters), and
/// one that would cost quadratic memory if expanded (about 16 KiB).
fn too_deep() -> [String; 2] {
    [deep_uid(17), deep_uid(1_000)]
}

fn method(service: &str, name: &str) -> MethodDescriptor {
    platform_api::DESCRIPTOR_POOL
        .get_service_by_name(service)
        .and_then(|service| service.methods().find(|m| m.name() == name))
        .unwrap_or_else(|| panic!("no method {service}.{name}"))
}

/// The field of the first BadRequest violation of a REST error.
fn violated_field(response: &platform_tests::Response) -> String {
    response
        .detail("BadRequest")
        .and_then(|detail| detail["fieldViolations"][0]["field"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// A REST request carrying `uid` and the field it must be refused in.
struct RestCase {
    method: Method,
    path: String,
    body: Option<Value>,
    field: &'static str,
}

fn rest_cases(uid: &str, root: &str, viewer: &str, admin: &str) -> Vec<RestCase> {
    let case = |method: Method, path: String, body: Option<Value>, field| RestCase {
        method,
        path,
        body,
        field,
    };
    vec![
        case(Method::GET, format!("/iam/v2/groups/{uid}"), None, "uid"),
        case(
            Method::PATCH,
            format!("/iam/v2/groups/{uid}?updateMask=description"),
            Some(json!({"description": "x"})),
            "uid",
        ),
        case(Method::DELETE, format!("/iam/v2/groups/{uid}"), None, "uid"),
        case(
            Method::POST,
            format!("/iam/v2/groups/{uid}"),
            Some(json!({"name": "x"})),
            "parent",
        ),
        case(
            Method::GET,
            format!("/registry/v2/repos/{uid}"),
            None,
            "uid",
        ),
        case(Method::GET, format!("/iam/v1/groups?id={uid}"), None, "id"),
        case(
            Method::GET,
            format!("/iam/v2/groups?uidp.descendants_of={uid}"),
            None,
            "uidp.descendantsOf",
        ),
        case(
            Method::GET,
            format!("/iam/v2/groups?uidp.children_of={uid}"),
            None,
            "uidp.childrenOf",
        ),
        case(
            Method::GET,
            format!("/iam/v2/groups?uidp.ancestors_of={uid}"),
            None,
            "uidp.ancestorsOf",
        ),
        case(
            Method::GET,
            format!("/iam/v2/groups?uidp.ids={root}&uidp.ids={uid}"),
            None,
            "uidp.ids[1]",
        ),
        case(
            Method::GET,
            format!("/registry/v2/repos?uidp.ancestors_of={uid}"),
            None,
            "uidp.ancestorsOf",
        ),
        case(
            Method::POST,
            format!("/iam/v2/roleBindings/{root}"),
            Some(json!({"identity": uid, "role": viewer})),
            "roleBinding.identity",
        ),
        case(
            Method::POST,
            format!("/iam/v2/roleBindings/{root}"),
            Some(json!({"identity": admin, "role": uid})),
            "roleBinding.role",
        ),
    ]
}

/// Creates a root organization as the administrator.
async fn organization(server: &TestServer, name: &str) -> String {
    server
        .rest()
        .create("/iam/v2/groups/", json!({"name": name}))
        .await
}

#[tokio::test]
async fn uids_longer_than_any_hierarchy_are_refused_over_rest() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let root = organization(&server, "acme").await;
    let viewer = server.builtin_role("viewer").await;
    let admin = server.admin_identity();
    let anonymous = server.rest_as(None);
    for uid in too_deep() {
        for case in rest_cases(&uid, &root, &viewer, &admin) {
            let response = server
                .rest()
                .call(case.method.clone(), &case.path, case.body.as_ref())
                .await;
            let what = format!("{} {} ({} chars)", case.method, case.field, uid.len());
            response.assert_error(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", &what);
            assert_eq!(
                violated_field(&response),
                case.field,
                "{what}: {:?}",
                response.body
            );
            // Without a token, the same answer.
            let response = anonymous
                .call(case.method.clone(), &case.path, case.body.as_ref())
                .await;
            assert_eq!(
                response.status,
                StatusCode::BAD_REQUEST,
                "anonymous {what}: {:?}",
                response.body
            );
            assert_eq!(violated_field(&response), case.field, "anonymous {what}");
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn uids_longer_than_any_hierarchy_are_refused_over_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let root = organization(&server, "acme").await;
    let viewer = server.builtin_role("viewer").await;
    let channel = server.channel().await;
    let groups = "platform.iam.v2.GroupService";
    // About 700 KiB: within the 1 MiB message limit.
    let huge = deep_uid(40_000);
    for uid in too_deep().into_iter().chain([huge]) {
        let cases: Vec<(MethodDescriptor, Value, &str)> = vec![
            (method(groups, "GetGroup"), json!({"uid": uid}), "uid"),
            (
                method(groups, "UpdateGroup"),
                json!({"uid": uid, "group": {"description": "x"}, "updateMask": "description"}),
                "uid",
            ),
            (method(groups, "DeleteGroup"), json!({"uid": uid}), "uid"),
            (
                method(groups, "CreateGroup"),
                json!({"parent": uid, "group": {"name": "x"}}),
                "parent",
            ),
            (
                method(groups, "ListGroups"),
                json!({"uidp": {"ancestorsOf": uid}}),
                "uidp.ancestorsOf",
            ),
            (
                method(groups, "ListGroups"),
                json!({"uidp": {"descendantsOf": uid}}),
                "uidp.descendantsOf",
            ),
            (
                method(groups, "ListGroups"),
                json!({"uidp": {"ids": [uid]}}),
                "uidp.ids[0]",
            ),
            (
                method(groups, "ListGroups"),
                json!({"uidp": {"ids": vec![uid.clone(); 100]}}),
                "uidp.ids[0]",
            ),
            (
                method("platform.iam.v1.GroupService", "ListGroups"),
                json!({"id": uid}),
                "id",
            ),
            (
                method("platform.iam.v2.RoleBindingService", "CreateRoleBinding"),
                json!({"parent": root, "roleBinding": {"identity": uid, "role": viewer}}),
                "roleBinding.identity",
            ),
        ];
        // Within the 1 MiB message limit.
        let sized = cases
            .into_iter()
            .filter(|(_, request, _)| request.to_string().len() < 1 << 20);
        for (method, request, field) in sized {
            let what = format!("{} {field} ({} chars)", method.name(), uid.len());
            let tokens = [Some(server.admin_token.as_str()), None];
            for token in tokens {
                let status = platform_tests::call(&channel, token, &method, &request.to_string())
                    .await
                    .expect_err(&what);
                assert_eq!(
                    status.code(),
                    Code::InvalidArgument,
                    "{what} (token: {}): {status:?}",
                    token.is_some()
                );
                let details = tonic_types::StatusExt::get_error_details(&status);
                let violations = details
                    .bad_request()
                    .expect("a BadRequest")
                    .field_violations
                    .clone();
                assert_eq!(violations[0].field, field, "{what}");
            }
        }
    }
    server.stop().await;
}

/// Creates `levels` nested groups under `root` and returns the deepest.
async fn chain(admin: &Rest, root: &str, levels: usize) -> String {
    let mut parent = root.to_owned();
    for level in 0..levels {
        parent = admin
            .create(
                &format!("/iam/v2/groups/{parent}"),
                json!({"name": format!("level {}", level + 1)}),
            )
            .await;
    }
    parent
}

#[tokio::test]
async fn hierarchies_end_at_the_declared_depth() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let admin = server.rest();
    let root = organization(&server, "deep").await;
    let deepest = chain(&admin, &root, 16).await;
    assert_eq!(
        deepest.len(),
        40 + 16 * 17,
        "16 levels below the root are allowed"
    );

    for collection in ["groups", "repos"] {
        let domain = if collection == "repos" {
            "registry"
        } else {
            "iam"
        };
        let response = admin
            .post(
                &format!("/{domain}/v2/{collection}/{deepest}"),
                json!({"name": "one too deep"}),
            )
            .await;
        assert_eq!(
            response.status,
            StatusCode::BAD_REQUEST,
            "{collection}: {:?}",
            response.body
        );
        assert_eq!(violated_field(&response), "parent", "{collection}");
    }

    let channel = server.channel().await;
    let status = platform_tests::call(
        &channel,
        Some(&server.admin_token),
        &method("platform.iam.v2.GroupService", "CreateGroup"),
        &json!({"parent": deepest, "group": {"name": "one too deep"}}).to_string(),
    )
    .await
    .expect_err("too deep");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");

    // Nothing was created below the deepest level.
    let below = admin
        .get(&format!("/iam/v2/groups?uidp.children_of={deepest}"))
        .await;
    assert_eq!(below.body["totalCount"], 0, "{:?}", below.body);
    server.stop().await;
}

#[tokio::test]
async fn the_shared_scope_is_written_by_the_administrator_only() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let platform_root = server.platform_root();
    let viewer = server.builtin_role("viewer").await;
    let owner = server.builtin_role("owner").await;
    let admin_identity = server.admin_identity();
    let before = server
        .rest()
        .get(&format!("/iam/v2/roles/{viewer}"))
        .await
        .body;
    let channel = server.channel().await;

    for role in ["owner", "editor"] {
        // A member of the platform's staff: bound to `role` at the first
        // root organization, but not the platform administrator.
        let builtin = server.builtin_role(role).await;
        let name = format!("staff {role}");
        let staff = server
            .member(&platform_root, &name, &builtin, &platform_root)
            .await;
        let (token, rest) = (staff.token, staff.rest);
        let attempts = [
            (
                Method::PATCH,
                format!("/iam/v2/roles/{viewer}?updateMask=capabilities"),
                Some(json!({"capabilities": ["groups.get", "groups.update", "roles.update"]})),
            ),
            (
                Method::PATCH,
                format!("/iam/v2/roles/{owner}?updateMask=capabilities"),
                Some(json!({"capabilities": []})),
            ),
            (
                Method::POST,
                format!("/iam/v2/roles/{platform_root}"),
                Some(json!({"name": "shared", "capabilities": ["groups.get"]})),
            ),
            (Method::DELETE, format!("/iam/v2/roles/{viewer}"), None),
            (
                Method::PUT,
                format!("/iam/v1/roles/{viewer}"),
                Some(json!({"name": "viewer", "capabilities": ["groups.get", "groups.delete"]})),
            ),
            (
                Method::PATCH,
                format!("/iam/v2/identities/{admin_identity}?updateMask=claimMatch"),
                Some(json!({"claimMatch": {"issuer": "https://evil.example", "subject": "me"}})),
            ),
            (
                Method::POST,
                format!("/iam/v2/identities/{platform_root}"),
                Some(json!({"name": "everyone's"})),
            ),
            (
                Method::DELETE,
                format!("/iam/v2/identities/{admin_identity}"),
                None,
            ),
        ];
        for (method, path, body) in attempts {
            let response = rest.call(method.clone(), &path, body.as_ref()).await;
            let what = format!("{role}: {method} {path}");
            // An editor may not delete anywhere, shared or not.
            let reason = match (role, method) {
                ("editor", Method::DELETE) => "PERMISSION_DENIED",
                _ => "SHARED_SCOPE_READ_ONLY",
            };
            response.assert_reason(StatusCode::FORBIDDEN, reason, &what);
        }
        let status = platform_tests::call(
            &channel,
            Some(&token),
            &method("platform.iam.v2.RoleService", "UpdateRole"),
            &json!({"uid": viewer, "role": {"capabilities": ["groups.delete"]}, "updateMask": "capabilities"})
                .to_string(),
        )
        .await
        .expect_err("a shared role is read-only");
        assert_eq!(status.code(), Code::PermissionDenied, "{role}: {status:?}");
        // What is the organization's own stays theirs to change.
        rest.create(
            &format!("/iam/v2/groups/{platform_root}"),
            json!({"name": format!("{role}'s team")}),
        )
        .await;
    }
    let after = server
        .rest()
        .get(&format!("/iam/v2/roles/{viewer}"))
        .await
        .body;
    assert_eq!(before, after, "the built-in role is unchanged");

    // The administrator still maintains it.
    let response = server
        .rest()
        .patch(
            &format!("/iam/v2/roles/{viewer}?updateMask=description"),
            json!({"description": "Reads and lists everything."}),
        )
        .await;
    assert_eq!(response.status, StatusCode::OK, "{:?}", response.body);
    server.stop().await;
}

/// Requests listing the same mistake many times get one small answer: a
/// mask or `order_by` longer than the resource has fields is refused as a
/// whole, and no answer carries more than 100 violations.
#[tokio::test]
async fn repeated_mistakes_get_a_bounded_answer() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let root = organization(&server, "acme").await;
    let channel = server.channel().await;
    let groups = "platform.iam.v2.GroupService";
    let many = vec!["colour"; 100_000];
    let cases = [
        (
            method(groups, "UpdateGroup"),
            json!({"uid": root, "group": {"description": "x"}, "updateMask": many.join(",")}),
            "updateMask",
        ),
        (
            method(groups, "ListGroups"),
            json!({"orderBy": many.join(",")}),
            "orderBy",
        ),
    ];
    for (method, request, field) in cases {
        let status = platform_tests::call(
            &channel,
            Some(&server.admin_token),
            &method,
            &request.to_string(),
        )
        .await
        .expect_err(field);
        assert_eq!(
            status.code(),
            Code::InvalidArgument,
            "{field}: {}",
            status.message()
        );
        let details = tonic_types::StatusExt::get_error_details(&status);
        let violations = &details
            .bad_request()
            .expect("a BadRequest")
            .field_violations;
        assert_eq!(violations.len(), 1, "{field}: {violations:?}");
        assert_eq!(violations[0].field, field);
    }

    // A body naming thousands of unknown fields: every one is counted, at
    // most 100 are listed.
    let body: serde_json::Map<String, Value> = (0..5_000)
        .map(|n| (format!("colour{n}"), json!(1)))
        .collect();
    let response = server
        .rest()
        .post(&format!("/iam/v2/groups/{root}"), Value::Object(body))
        .await;
    assert_eq!(
        response.status,
        StatusCode::BAD_REQUEST,
        "{:?}",
        response.body["error"]["message"]
    );
    let listed = response.detail("BadRequest").expect("a BadRequest")["fieldViolations"]
        .as_array()
        .unwrap()
        .len();
    assert!((1..=100).contains(&listed), "{listed} violations listed");
    server.stop().await;
}
