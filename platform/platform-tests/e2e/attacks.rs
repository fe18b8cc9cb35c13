//! Authorization attacks, tried as a caller in one organization would try
//! them against another: references into other tenants, escalation, leaks
//! through error details, unbounded inputs. Each case runs over REST, and the
//! reference and escalation cases over gRPC too.

use platform_api::platform::iam::v2::role_binding_service_client::RoleBindingServiceClient;
use platform_api::platform::iam::v2::{CreateRoleBindingRequest, RoleBinding};
use platform_tests::{Member, StatusCode, TestServer};
use serde_json::{Value, json};
use tonic_types::StatusExt;

/// Two organizations, A and B, with callers bound to built-in and custom roles.
struct World {
    server: TestServer,
    /// The built-in roles, by name (they live at the platform's first root).
    builtin: std::collections::HashMap<String, String>,
    a: String,
    a_team: String,
    /// A role defined on A's team group (not usable at A's root).
    a_team_role: String,
    /// A role defined in A with `groups.get` only.
    a_reader_role: String,
    a_owner: Member,
    a_editor: Member,
    a_viewer: Member,
    b: String,
    b_role: String,
    b_identity: String,
    b_owner: Member,
}

async fn world() -> (tempfile::TempDir, World) {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let admin = server.rest();
    let mut builtin = std::collections::HashMap::new();
    for name in ["owner", "editor", "viewer"] {
        builtin.insert(name.to_owned(), server.builtin_role(name).await);
    }

    let a = admin
        .create("/iam/v2/groups/", json!({"name": "org a"}))
        .await;
    let a_team = admin
        .create(&format!("/iam/v2/groups/{a}"), json!({"name": "team"}))
        .await;
    let a_team_role = admin
        .create(
            &format!("/iam/v2/roles/{a_team}"),
            json!({"name": "team reader", "capabilities": ["groups.get"]}),
        )
        .await;
    let a_reader_role = admin
        .create(
            &format!("/iam/v2/roles/{a}"),
            json!({"name": "reader", "capabilities": ["groups.get"]}),
        )
        .await;
    let a_owner = server.member(&a, "a owner", &builtin["owner"], &a).await;
    let a_editor = server.member(&a, "a editor", &builtin["editor"], &a).await;
    let a_viewer = server.member(&a, "a viewer", &builtin["viewer"], &a).await;

    let b = admin
        .create("/iam/v2/groups/", json!({"name": "org b"}))
        .await;
    let b_role = admin
        .create(
            &format!("/iam/v2/roles/{b}"),
            json!({"name": "b role", "capabilities": ["groups.get"]}),
        )
        .await;
    let b_owner = server.member(&b, "b owner", &builtin["owner"], &b).await;
    let b_identity = b_owner.identity.clone();
    let world = World {
        server,
        builtin,
        a,
        a_team,
        a_team_role,
        a_reader_role,
        a_owner,
        a_editor,
        a_viewer,
        b,
        b_role,
        b_identity,
        b_owner,
    };
    (dir, world)
}

/// The field violations of a 400 answer, as (field, description).
fn violations(response: &platform_tests::Response) -> Vec<(String, String)> {
    response
        .detail("BadRequest")
        .map(|detail| {
            detail["fieldViolations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| {
                    (
                        v["field"].as_str().unwrap().to_owned(),
                        v["description"].as_str().unwrap().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn role_binding_references_stay_inside_the_organization() {
    let (_dir, w) = world().await;
    let missing_in_a = format!("{}/0123456789abcdef", w.a);
    let a_identity = w.a_viewer.identity.clone();
    let viewer = w.builtin["viewer"].clone();
    // (case, identity, role, fields that must be reported)
    let cases: Vec<(&str, Value, Value, &[&str])> = vec![
        (
            "role of another organization",
            json!(a_identity),
            json!(w.b_role),
            &["roleBinding.role"],
        ),
        (
            "missing role",
            json!(a_identity),
            json!(missing_in_a),
            &["roleBinding.role"],
        ),
        (
            "a group as the role",
            json!(a_identity),
            json!(w.a_team),
            &["roleBinding.role"],
        ),
        (
            "role defined below the group",
            json!(a_identity),
            json!(w.a_team_role),
            &["roleBinding.role"],
        ),
        (
            "identity of another organization",
            json!(w.b_identity),
            json!(viewer),
            &["roleBinding.identity"],
        ),
        (
            "missing identity",
            json!(missing_in_a),
            json!(viewer),
            &["roleBinding.identity"],
        ),
        (
            "a group as the identity",
            json!(w.a_team),
            json!(viewer),
            &["roleBinding.identity"],
        ),
        (
            "a role as the identity",
            json!(w.a_reader_role),
            json!(viewer),
            &["roleBinding.identity"],
        ),
        (
            "both empty strings",
            json!(""),
            json!(""),
            &["roleBinding.identity", "roleBinding.role"],
        ),
        (
            "both null",
            Value::Null,
            Value::Null,
            &["roleBinding.identity", "roleBinding.role"],
        ),
        (
            "both of another organization",
            json!(w.b_identity),
            json!(w.b_role),
            &["roleBinding.identity", "roleBinding.role"],
        ),
    ];
    for caller in [&w.server.rest(), &w.a_owner.rest] {
        for (case, identity, role, fields) in &cases {
            let mut body = json!({"name": "attempt"});
            if !identity.is_null() {
                body["identity"] = identity.clone();
            }
            if !role.is_null() {
                body["role"] = role.clone();
            }
            let response = caller
                .post(&format!("/iam/v2/roleBindings/{}", w.a), body)
                .await;
            response.assert_error(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", case);
            let reported: Vec<String> = violations(&response).into_iter().map(|(f, _)| f).collect();
            assert_eq!(reported, *fields, "{case}");
            let text = response.body.to_string();
            assert!(
                !text.contains(&w.b),
                "{case}: the answer names organization B: {text}"
            );
        }
        // Empty body: nothing to bind.
        let response = caller
            .post(&format!("/iam/v2/roleBindings/{}", w.a), json!({}))
            .await;
        assert_eq!(
            response.status,
            StatusCode::BAD_REQUEST,
            "{:?}",
            response.body
        );
    }

    // A foreign uid and a missing one read the same: no existence oracle.
    let foreign = w
        .a_owner
        .rest
        .post(
            &format!("/iam/v2/roleBindings/{}", w.a),
            json!({"identity": a_identity, "role": w.b_role}),
        )
        .await;
    let missing = w
        .a_owner
        .rest
        .post(
            &format!("/iam/v2/roleBindings/{}", w.a),
            json!({"identity": a_identity, "role": missing_in_a}),
        )
        .await;
    assert_eq!(violations(&foreign), violations(&missing));

    // What the contract allows: a role of the group or above, a built-in role,
    // an identity of the organization.
    for (at, role) in [
        (&w.a_team, &w.a_reader_role),
        (&w.a, &w.a_reader_role),
        (&w.a_team, &w.a_team_role),
        (&w.a, &viewer),
    ] {
        let response = w
            .a_owner
            .rest
            .post(
                &format!("/iam/v2/roleBindings/{at}"),
                json!({"identity": a_identity, "role": role}),
            )
            .await;
        assert_eq!(
            response.status,
            StatusCode::OK,
            "{role} at {at}: {:?}",
            response.body
        );
    }

    // Nothing was stored by the refused attempts: B's role has no binding, so
    // B deletes it without learning anything about A.
    let deleted = w
        .b_owner
        .rest
        .delete(&format!("/iam/v2/roles/{}", w.b_role))
        .await;
    assert_eq!(deleted.status, StatusCode::OK, "{:?}", deleted.body);
}

#[tokio::test]
async fn role_binding_references_are_checked_over_grpc() {
    let (_dir, w) = world().await;
    let mut client = RoleBindingServiceClient::with_interceptor(
        w.server.channel().await,
        platform_tests::bearer(&w.a_owner.token),
    );
    let attempt = |identity: &str, role: &str| CreateRoleBindingRequest {
        parent: w.a.clone(),
        role_binding: Some(RoleBinding {
            identity: identity.to_owned(),
            role: role.to_owned(),
            ..Default::default()
        }),
    };
    for (case, request, field) in [
        (
            "foreign role",
            attempt(&w.a_viewer.identity, &w.b_role),
            "roleBinding.role",
        ),
        (
            "foreign identity",
            attempt(&w.b_identity, &w.builtin["viewer"]),
            "roleBinding.identity",
        ),
        (
            "group as role",
            attempt(&w.a_viewer.identity, &w.a_team),
            "roleBinding.role",
        ),
    ] {
        let status = client.create_role_binding(request).await.unwrap_err();
        assert_eq!(
            status.code(),
            tonic::Code::InvalidArgument,
            "{case}: {status:?}"
        );
        let bad_request = status.get_details_bad_request().expect("a BadRequest");
        let fields: Vec<&str> = bad_request
            .field_violations
            .iter()
            .map(|v| v.field.as_str())
            .collect();
        assert_eq!(fields, [field], "{case}");
        assert!(
            status.get_details_error_info().is_some(),
            "{case}: ErrorInfo"
        );
    }
    // Escalation over gRPC: the editor cannot grant owner.
    let mut editor = RoleBindingServiceClient::with_interceptor(
        w.server.channel().await,
        platform_tests::bearer(&w.a_editor.token),
    );
    let status = editor
        .create_role_binding(attempt(&w.a_editor.identity, &w.builtin["owner"]))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::PermissionDenied, "{status:?}");
}

#[tokio::test]
async fn no_escalation_through_bindings_or_roles() {
    let (_dir, w) = world().await;
    let a = &w.a;
    let editor = &w.a_editor.rest;

    // An editor binding itself to owner, then deleting: both refused.
    let response = editor
        .post(
            &format!("/iam/v2/roleBindings/{a}"),
            json!({"identity": w.a_editor.identity, "role": w.builtin["owner"]}),
        )
        .await;
    response.assert_reason(StatusCode::FORBIDDEN, "ESCALATION_DENIED", "binding itself");
    let response = editor.delete(&format!("/iam/v2/groups/{}", w.a_team)).await;
    assert_eq!(
        response.status,
        StatusCode::FORBIDDEN,
        "{:?}",
        response.body
    );

    // A role of its own with a capability it lacks: refused on create...
    let response = editor
        .post(
            &format!("/iam/v2/roles/{a}"),
            json!({"name": "sneaky", "capabilities": ["groups.get", "groups.delete"]}),
        )
        .await;
    assert_eq!(
        response.status,
        StatusCode::FORBIDDEN,
        "{:?}",
        response.body
    );
    // ...and on update: adding a held capability is fine, an unheld one is not.
    let role = editor
        .create(
            &format!("/iam/v2/roles/{a}"),
            json!({"name": "mine", "capabilities": ["groups.get"]}),
        )
        .await;
    let response = editor
        .patch(
            &format!("/iam/v2/roles/{role}?updateMask=capabilities"),
            json!({"capabilities": ["groups.get", "groups.delete"]}),
        )
        .await;
    assert_eq!(
        response.status,
        StatusCode::FORBIDDEN,
        "{:?}",
        response.body
    );
    let unchanged = w.a_owner.rest.get(&format!("/iam/v2/roles/{role}")).await;
    assert_eq!(unchanged.body["capabilities"], json!(["groups.get"]));
    let response = editor
        .patch(
            &format!("/iam/v2/roles/{role}?updateMask=capabilities"),
            json!({"capabilities": ["groups.get", "groups.update"]}),
        )
        .await;
    assert_eq!(response.status, StatusCode::OK, "{:?}", response.body);
    // Binding a role whose capabilities the editor holds is allowed.
    let response = editor
        .post(
            &format!("/iam/v2/roleBindings/{a}"),
            json!({"identity": w.a_viewer.identity, "role": role}),
        )
        .await;
    assert_eq!(response.status, StatusCode::OK, "{:?}", response.body);
    // The owner may grant what it holds, including owner.
    let response = w
        .a_owner
        .rest
        .post(
            &format!("/iam/v2/roleBindings/{a}"),
            json!({"identity": w.a_owner.identity, "role": w.builtin["owner"]}),
        )
        .await;
    assert_eq!(response.status, StatusCode::OK, "{:?}", response.body);

    // A role defined in B grants nothing in A, whatever B adds to it.
    let patched = w
        .b_owner
        .rest
        .patch(
            &format!("/iam/v2/roles/{}?updateMask=capabilities", w.b_role),
            json!({"capabilities": ["groups.get", "groups.update", "groups.delete"]}),
        )
        .await;
    assert_eq!(patched.status, StatusCode::OK, "{:?}", patched.body);
    let response = w
        .a_viewer
        .rest
        .delete(&format!("/iam/v2/groups/{}", w.a_team))
        .await;
    assert_eq!(response.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn who_may_assume_an_identity_is_fixed_at_creation() {
    let (_dir, w) = world().await;
    // The owner's identity, made assumable by some OIDC subject.
    let owner_identity = w
        .server
        .rest()
        .create(
            &format!("/iam/v2/identities/{}", w.a),
            json!({"name": "ci owner", "claimMatch": {"issuer": "https://ci.example", "subject": "deploy"}}),
        )
        .await;
    w.server
        .rest()
        .create(
            &format!("/iam/v2/roleBindings/{}", w.a),
            json!({"identity": owner_identity, "role": w.builtin["owner"]}),
        )
        .await;
    // An editor may update identities, but pointing the owner's identity at
    // its own subject would let it assume owner: refused, whole or in part.
    for (mask, body) in [
        (
            "claimMatch",
            json!({"claimMatch": {"issuer": "https://evil.example", "subject": "me"}}),
        ),
        (
            "claimMatch.subject",
            json!({"claimMatch": {"issuer": "https://ci.example", "subject": "me"}}),
        ),
        (
            "*",
            json!({"name": "ci owner", "claimMatch": {"issuer": "https://evil.example", "subject": "me"}}),
        ),
    ] {
        let response = w
            .a_editor
            .rest
            .patch(
                &format!("/iam/v2/identities/{owner_identity}?updateMask={mask}"),
                body,
            )
            .await;
        assert_eq!(
            response.status,
            StatusCode::BAD_REQUEST,
            "{mask}: {:?}",
            response.body
        );
        assert!(
            violations(&response)
                .iter()
                .any(|(field, _)| field.starts_with("identity.claimMatch")),
            "{mask}: {:?}",
            response.body
        );
    }
    let stored = w
        .a_owner
        .rest
        .get(&format!("/iam/v2/identities/{owner_identity}"))
        .await;
    assert_eq!(stored.body["claimMatch"]["subject"], "deploy");
    // Renaming stays possible.
    let response = w
        .a_editor
        .rest
        .patch(
            &format!("/iam/v2/identities/{owner_identity}?updateMask=name"),
            json!({"name": "renamed"}),
        )
        .await;
    assert_eq!(response.status, StatusCode::OK, "{:?}", response.body);
}

#[tokio::test]
async fn blocked_deletes_name_only_what_the_caller_may_see() {
    let (_dir, w) = world().await;
    let admin = w.server.rest();
    // A caller that may delete groups in A but not see its role bindings.
    let deleter_role = admin
        .create(
            &format!("/iam/v2/roles/{}", w.a),
            json!({"name": "deleter", "capabilities": ["groups.get", "groups.delete"]}),
        )
        .await;
    let deleter = w.server.member(&w.a, "deleter", &deleter_role, &w.a).await;
    let hidden = admin
        .create(
            &format!("/iam/v2/roleBindings/{}", w.a_team),
            json!({"identity": w.a_viewer.identity, "role": w.a_reader_role}),
        )
        .await;
    let response = deleter
        .rest
        .delete(&format!("/iam/v2/groups/{}", w.a_team))
        .await;
    assert_eq!(
        response.status,
        StatusCode::BAD_REQUEST,
        "{:?}",
        response.body
    );
    assert_eq!(response.error_status(), "FAILED_PRECONDITION");
    let text = response.body.to_string();
    assert!(
        !text.contains(&hidden),
        "a binding the caller cannot see is named: {text}"
    );
    assert!(text.contains("cannot see"), "{text}");
    // The owner sees what blocks the delete.
    let response = w
        .a_owner
        .rest
        .delete(&format!("/iam/v2/groups/{}", w.a_team))
        .await;
    assert_eq!(response.status, StatusCode::BAD_REQUEST);
    assert!(response.body.to_string().contains(&hidden));
}

#[tokio::test]
async fn public_repos_read_with_any_valid_token() {
    let (_dir, w) = world().await;
    let owner = &w.a_owner.rest;
    let public = owner
        .create(
            &format!("/registry/v2/repos/{}", w.a),
            json!({"name": "open", "public": true}),
        )
        .await;
    let private = owner
        .create(
            &format!("/registry/v2/repos/{}", w.a),
            json!({"name": "closed"}),
        )
        .await;
    let outsider = &w.b_owner.rest;
    let response = outsider.get(&format!("/registry/v2/repos/{public}")).await;
    assert_eq!(response.status, StatusCode::OK, "{:?}", response.body);
    for uid in [private.clone(), format!("{}/0123456789abcdef", w.a)] {
        let response = outsider.get(&format!("/registry/v2/repos/{uid}")).await;
        assert_eq!(
            response.status,
            StatusCode::FORBIDDEN,
            "private and missing look alike"
        );
    }
    let listed = outsider
        .get(&format!("/registry/v2/repos?uidp.descendants_of={}", w.a))
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    let uids: Vec<&str> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uid"].as_str().unwrap())
        .collect();
    assert_eq!(uids, [public.as_str()]);

    // Without a filter: what the caller's grants cover, and public repos
    // wherever they are, in pages that walk to the end.
    let own = outsider
        .create(
            &format!("/registry/v2/repos/{}", w.b),
            json!({"name": "mine"}),
        )
        .await;
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let page = outsider
            .get(&format!("/registry/v2/repos?pageSize=1&pageToken={token}"))
            .await;
        assert_eq!(page.status, StatusCode::OK, "{:?}", page.body);
        for item in page.body["items"].as_array().unwrap() {
            let uid = item["uid"].as_str().unwrap().to_owned();
            assert!(
                uid.starts_with(&w.b) || item["public"] == true,
                "another organization's private repo: {item}"
            );
            seen.push(uid);
        }
        token = page.body["nextPageToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if token.is_empty() {
            break;
        }
    }
    assert!(seen.contains(&public), "{seen:?}");
    assert!(seen.contains(&own), "{seen:?}");
    assert!(!seen.contains(&private), "{seen:?}");
}

#[tokio::test]
async fn bounded_fields_and_empty_updates() {
    let (_dir, w) = world().await;
    let owner = &w.a_owner.rest;
    let a = &w.a;
    let cases = [
        (
            "name too long",
            json!({"name": "x".repeat(64)}),
            "group.name",
        ),
        ("name with a newline", json!({"name": "a\nb"}), "group.name"),
        ("name with a NUL", json!({"name": "a\u{0}b"}), "group.name"),
        (
            "description too long",
            json!({"name": "ok", "description": "d".repeat(1025)}),
            "group.description",
        ),
    ];
    for (case, body, field) in cases {
        let response = owner.post(&format!("/iam/v2/groups/{a}"), body).await;
        assert_eq!(response.status, StatusCode::BAD_REQUEST, "{case}");
        let fields: Vec<String> = violations(&response).into_iter().map(|(f, _)| f).collect();
        assert_eq!(fields, [field], "{case}");
    }
    assert_eq!(
        owner
            .post(
                &format!("/iam/v2/groups/{a}"),
                json!({"name": "x".repeat(63), "description": "d".repeat(1024)})
            )
            .await
            .status,
        StatusCode::OK,
        "the limits themselves are allowed"
    );
    let response = owner
        .post(
            &format!("/registry/v2/repos/{a}"),
            json!({"name": "big", "readme": "r".repeat(65537)}),
        )
        .await;
    assert_eq!(response.status, StatusCode::BAD_REQUEST);
    assert_eq!(violations(&response)[0].0, "repo.readme");

    // The same limits hold on update.
    let group = owner
        .create(&format!("/iam/v2/groups/{a}"), json!({"name": "g"}))
        .await;
    let response = owner
        .patch(
            &format!("/iam/v2/groups/{group}?updateMask=name"),
            json!({"name": "y".repeat(100_000)}),
        )
        .await;
    assert_eq!(response.status, StatusCode::BAD_REQUEST);

    // A PATCH with no mask and nothing to change is refused and changes nothing.
    let before = owner.get(&format!("/iam/v2/groups/{group}")).await.body;
    for body in [
        json!({}),
        json!({"uid": group, "createTime": before["createTime"]}),
    ] {
        let response = owner.patch(&format!("/iam/v2/groups/{group}"), body).await;
        assert_eq!(
            response.status,
            StatusCode::BAD_REQUEST,
            "{:?}",
            response.body
        );
        assert_eq!(violations(&response)[0].0, "updateMask");
    }
    let after = owner.get(&format!("/iam/v2/groups/{group}")).await.body;
    assert_eq!(before["updateTime"], after["updateTime"]);
    assert_eq!(before["etag"], after["etag"]);
    // Sending back what Get returned changes nothing either.
    let response = owner
        .patch(&format!("/iam/v2/groups/{group}"), before.clone())
        .await;
    assert_eq!(response.status, StatusCode::OK, "{:?}", response.body);
    assert_eq!(response.body["updateTime"], before["updateTime"]);
    assert_eq!(response.body["etag"], before["etag"]);
}

#[tokio::test]
async fn list_pages_stay_within_the_byte_budget() {
    let (_dir, w) = world().await;
    let owner = &w.a_owner.rest;
    // Plain 64 KiB readmes, and readmes whose every character JSON writes in
    // six bytes (`\u0001`): either way a response stays under 4 MiB.
    for (count, readme) in [(80, "r".repeat(65536)), (20, "\u{1}".repeat(65536))] {
        let group = owner
            .create(
                &format!("/iam/v2/groups/{}", w.a),
                json!({"name": "big repos"}),
            )
            .await;
        let mut created = Vec::new();
        for i in 0..count {
            created.push(
                owner
                    .create(
                        &format!("/registry/v2/repos/{group}"),
                        json!({"name": format!("repo {i}"), "readme": readme}),
                    )
                    .await,
            );
        }
        let mut seen = Vec::new();
        let mut token = String::new();
        let mut pages = 0;
        loop {
            let path = format!(
                "/registry/v2/repos?uidp.children_of={group}&pageSize=200&pageToken={token}"
            );
            let (size, response) = owner.get_sized(&path).await;
            assert_eq!(response.status, StatusCode::OK, "{:?}", response.body);
            assert!(size < 4 << 20, "a page of {size} bytes");
            assert_eq!(response.body["totalCount"], count);
            pages += 1;
            for item in response.body["items"].as_array().unwrap() {
                seen.push(item["uid"].as_str().unwrap().to_owned());
            }
            token = response.body["nextPageToken"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if token.is_empty() {
                break;
            }
        }
        assert!(pages >= 2, "the budget ended the first page early");
        seen.sort();
        created.sort();
        assert_eq!(seen, created, "every item exactly once");
    }
}

#[tokio::test]
async fn the_list_budget_is_configurable() {
    let dir = tempfile::tempdir().unwrap();
    let config = platform_server::Config {
        list_budget: Some(2_000),
        ..TestServer::config(dir.path())
    };
    let server = TestServer::start_with(config).await;
    let admin = server.rest();
    let root = admin
        .create("/iam/v2/groups/", json!({"name": "budget"}))
        .await;
    for i in 0..10 {
        admin
            .create(
                &format!("/iam/v2/groups/{root}"),
                json!({"name": format!("g{i}"), "description": "d".repeat(900)}),
            )
            .await;
    }
    let page = admin
        .get(&format!(
            "/iam/v2/groups?uidp.children_of={root}&pageSize=200"
        ))
        .await;
    assert_eq!(page.status, StatusCode::OK);
    let items = page.body["items"].as_array().unwrap().len();
    assert!(
        (1..10).contains(&items),
        "{items} items of ~1 KB under a 2,000-byte budget"
    );
    assert!(!page.body["nextPageToken"].as_str().unwrap().is_empty());
    assert_eq!(page.body["totalCount"], 10);
}
