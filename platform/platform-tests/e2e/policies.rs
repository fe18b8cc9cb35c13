//! IAM policies on groups (`GroupService.GetIamPolicy`, `SetIamPolicy`,
//! `TestIamPermissions`): the role bindings stored under a group, read and
//! replaced under the rules of creating and deleting role bindings, over
//! REST and gRPC.

use hyper::StatusCode;
use platform_api::google::iam::v1::{
    Binding, GetIamPolicyRequest, Policy, SetIamPolicyRequest, TestIamPermissionsRequest,
};
use platform_api::platform::iam::v2::group_service_client::GroupServiceClient;
use platform_tests::{Rest, TestServer};
use serde_json::{Value, json};

/// The policy of `group` as `caller` reads it over REST.
async fn policy(caller: &Rest, group: &str) -> Value {
    let read = caller
        .get(&format!("/iam/v2/groups/{group}:getIamPolicy"))
        .await;
    assert_eq!(read.status, StatusCode::OK, "{:?}", read.body);
    read.body
}

/// The identities bound under `group`, by role uid, as its role bindings
/// list them.
async fn bound(admin: &Rest, group: &str) -> Vec<(String, String)> {
    let listed = admin
        .get(&format!("/iam/v2/roleBindings?uidp.children_of={group}"))
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    let mut pairs: Vec<(String, String)> = listed.body["items"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|b| {
            (
                b["role"].as_str().unwrap().to_owned(),
                b["identity"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    pairs.sort();
    pairs
}

#[tokio::test]
async fn a_policy_is_the_groups_bindings_read_and_replaced_under_their_rules() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let admin = server.rest();
    let org = admin
        .create("/iam/v2/groups/", json!({"name": "org"}))
        .await;
    let team = admin
        .create(&format!("/iam/v2/groups/{org}"), json!({"name": "team"}))
        .await;
    let other = admin
        .create("/iam/v2/groups/", json!({"name": "other"}))
        .await;
    let manager = server
        .member_with(
            &org,
            "manager",
            &[
                "groups.get",
                "roleBindings.list",
                "roleBindings.create",
                "roleBindings.delete",
            ],
        )
        .await;
    let stranger = server
        .member_with(
            &other,
            "stranger",
            &["roleBindings.list", "roleBindings.create"],
        )
        .await;
    let viewer = admin
        .create(
            &format!("/iam/v2/roles/{org}"),
            json!({"name": "viewer", "capabilities": ["groups.get"]}),
        )
        .await;
    let deleter = admin
        .create(
            &format!("/iam/v2/roles/{org}"),
            json!({"name": "deleter", "capabilities": ["groups.delete"]}),
        )
        .await;
    let alice = admin
        .create(
            &format!("/iam/v2/identities/{org}"),
            json!({"name": "alice"}),
        )
        .await;
    let outsider = admin
        .create(
            &format!("/iam/v2/identities/{other}"),
            json!({"name": "bob"}),
        )
        .await;

    // The organization's policy shows the manager's own binding.
    let read = policy(&manager.rest, &org).await;
    let manager_role = admin
        .get(&format!("/iam/v2/roleBindings/{}", manager.binding))
        .await;
    let manager_role = manager_role.body["role"].as_str().unwrap();
    assert_eq!(
        read["bindings"],
        json!([{"role": format!("roles/{manager_role}"), "members": [format!("identity:{}", manager.identity)]}]),
        "{read:?}"
    );
    assert_eq!(read["version"], 1);

    // The team has none yet; setting one creates its binding.
    let empty = policy(&manager.rest, &team).await;
    assert_eq!(empty["bindings"], json!([]), "{empty:?}");
    let set = format!("/iam/v2/groups/{team}:setIamPolicy");
    let wanted =
        json!([{"role": format!("roles/{viewer}"), "members": [format!("identity:{alice}")]}]);
    let answer = manager
        .rest
        .post(
            &set,
            json!({"policy": {"bindings": wanted, "etag": empty["etag"]}}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{:?}", answer.body);
    assert_eq!(answer.body["bindings"], wanted);
    assert_ne!(answer.body["etag"], empty["etag"]);
    assert_eq!(
        bound(&admin, &team).await,
        [(viewer.clone(), alice.clone())]
    );
    // Alice now holds the role's capability there, and only that.
    let alice_token = server.token_for(&alice);
    let alice_rest = server.rest_as(Some(&alice_token));
    let tested = alice_rest
        .post(
            &format!("/iam/v2/groups/{team}:testIamPermissions"),
            json!({"permissions": ["groups.delete", "groups.get", "groups.get"]}),
        )
        .await;
    assert_eq!(tested.status, StatusCode::OK, "{:?}", tested.body);
    assert_eq!(tested.body["permissions"], json!(["groups.get"]));

    // A stale etag is refused, and nothing changes.
    let stale = manager
        .rest
        .post(
            &set,
            json!({"policy": {"bindings": [], "etag": empty["etag"]}}),
        )
        .await;
    assert_eq!(stale.status, StatusCode::CONFLICT, "{:?}", stale.body);
    assert_eq!(
        stale.detail("ErrorInfo").unwrap()["reason"],
        "ETAG_MISMATCH"
    );
    assert_eq!(
        bound(&admin, &team).await,
        [(viewer.clone(), alice.clone())]
    );

    // Granting what the manager does not hold is an escalation: refused,
    // and the grants made before it in the same policy are undone.
    let escalating = json!([
        {"role": format!("roles/{viewer}"), "members": [format!("identity:{}", manager.identity)]},
        {"role": format!("roles/{deleter}"), "members": [format!("identity:{alice}")]},
    ]);
    let refused = manager
        .rest
        .post(&set, json!({"policy": {"bindings": escalating}}))
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{:?}", refused.body);
    assert_eq!(
        refused.detail("ErrorInfo").unwrap()["reason"],
        "ESCALATION_DENIED"
    );
    assert_eq!(
        bound(&admin, &team).await,
        [(viewer.clone(), alice.clone())]
    );

    // Bad names and members out of reach name the policy's fields.
    let malformed = manager
        .rest
        .post(
            &set,
            json!({"policy": {"bindings": [{"role": viewer, "members": ["alice"]}]}}),
        )
        .await;
    assert_eq!(
        malformed.status,
        StatusCode::BAD_REQUEST,
        "{:?}",
        malformed.body
    );
    let fields: Vec<&str> = malformed.detail("BadRequest").unwrap()["fieldViolations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["policy.bindings[0].role"]);
    let unreachable = json!([{"role": format!("roles/{viewer}"), "members": [format!("identity:{alice}"), format!("identity:{outsider}")]}]);
    let refused = manager
        .rest
        .post(&set, json!({"policy": {"bindings": unreachable}}))
        .await;
    assert_eq!(
        refused.status,
        StatusCode::BAD_REQUEST,
        "{:?}",
        refused.body
    );
    let violation = &refused.detail("BadRequest").unwrap()["fieldViolations"][0];
    assert_eq!(
        violation["field"], "policy.bindings[0].members[1]",
        "{violation:?}"
    );
    let conditional = json!([{"role": format!("roles/{viewer}"), "members": [format!("identity:{alice}")], "condition": {"expression": "true"}}]);
    let refused = manager
        .rest
        .post(&set, json!({"policy": {"bindings": conditional}}))
        .await;
    assert_eq!(
        refused.status,
        StatusCode::BAD_REQUEST,
        "{:?}",
        refused.body
    );
    assert_eq!(
        bound(&admin, &team).await,
        [(viewer.clone(), alice.clone())]
    );

    // Another organization's caller neither reads nor sets it, and learns
    // nothing of whether it exists.
    for path in [
        format!("/iam/v2/groups/{team}:getIamPolicy"),
        format!("/iam/v2/groups/{org}/ffffffffffffffff:getIamPolicy"),
    ] {
        let denied = stranger.rest.get(&path).await;
        assert_eq!(denied.status, StatusCode::FORBIDDEN, "{:?}", denied.body);
    }
    let denied = stranger
        .rest
        .post(&set, json!({"policy": {"bindings": []}}))
        .await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN, "{:?}", denied.body);
    let tested = stranger
        .rest
        .post(
            &format!("/iam/v2/groups/{team}:testIamPermissions"),
            json!({"permissions": ["roleBindings.list"]}),
        )
        .await;
    assert_eq!(tested.body["permissions"], json!([]), "{:?}", tested.body);
    let anonymous = server
        .rest_as(None)
        .post(
            &format!("/iam/v2/groups/{team}:testIamPermissions"),
            json!({"permissions": ["groups.get"]}),
        )
        .await;
    assert_eq!(
        anonymous.status,
        StatusCode::UNAUTHORIZED,
        "{:?}",
        anonymous.body
    );
    let malformed = manager
        .rest
        .post(
            "/iam/v2/groups/not-a-uid:testIamPermissions",
            json!({"permissions": ["groups.get"]}),
        )
        .await;
    assert_eq!(
        malformed.status,
        StatusCode::BAD_REQUEST,
        "{:?}",
        malformed.body
    );
    // A missing group is NOT_FOUND to whoever may read policies there.
    let missing = manager
        .rest
        .get(&format!(
            "/iam/v2/groups/{org}/ffffffffffffffff:getIamPolicy"
        ))
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{:?}", missing.body);

    // Dropping a binding takes what deleting one takes, checked before any
    // write: nothing is added for a caller who may only add.
    let adder = server
        .member_with(
            &org,
            "adder",
            &["groups.get", "roleBindings.list", "roleBindings.create"],
        )
        .await;
    let swapped = json!([{"role": format!("roles/{viewer}"), "members": [format!("identity:{}", adder.identity)]}]);
    let refused = adder
        .rest
        .post(&set, json!({"policy": {"bindings": swapped}}))
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{:?}", refused.body);
    assert_eq!(
        bound(&admin, &team).await,
        [(viewer.clone(), alice.clone())]
    );

    // An empty policy drops every binding.
    let cleared = manager.rest.post(&set, json!({"policy": {}})).await;
    assert_eq!(cleared.status, StatusCode::OK, "{:?}", cleared.body);
    assert_eq!(bound(&admin, &team).await, []);

    // The manager may drop its own binding with others: its own goes last,
    // so the others are still its to drop.
    let mut members: Vec<String> = Vec::new();
    for name in ["carol", "dave", "erin", "frank", "grace"] {
        let identity = admin
            .create(&format!("/iam/v2/identities/{org}"), json!({"name": name}))
            .await;
        members.push(format!("identity:{identity}"));
    }
    let mut bindings = read["bindings"].clone();
    bindings
        .as_array_mut()
        .unwrap()
        .push(json!({"role": format!("roles/{viewer}"), "members": members}));
    let org_policy = format!("/iam/v2/groups/{org}:setIamPolicy");
    let grown = admin
        .post(&org_policy, json!({"policy": {"bindings": bindings}}))
        .await;
    assert_eq!(grown.status, StatusCode::OK, "{:?}", grown.body);
    let cleared = manager.rest.post(&org_policy, json!({"policy": {}})).await;
    assert_eq!(cleared.status, StatusCode::OK, "{:?}", cleared.body);
    assert_eq!(cleared.body["bindings"], json!([]));
    let now = manager
        .rest
        .get(&format!("/iam/v2/groups/{org}:getIamPolicy"))
        .await;
    assert_eq!(now.status, StatusCode::FORBIDDEN, "{:?}", now.body);
}

#[tokio::test]
async fn policies_over_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let admin = server.rest();
    let org = admin
        .create("/iam/v2/groups/", json!({"name": "org"}))
        .await;
    let viewer = admin
        .create(
            &format!("/iam/v2/roles/{org}"),
            json!({"name": "viewer", "capabilities": ["groups.get"]}),
        )
        .await;
    let alice = admin
        .create(
            &format!("/iam/v2/identities/{org}"),
            json!({"name": "alice"}),
        )
        .await;
    let mut client = GroupServiceClient::with_interceptor(
        server.channel().await,
        platform_tests::bearer(&server.admin_token),
    );

    let read = client
        .get_iam_policy(GetIamPolicyRequest {
            resource: org.clone(),
            options: None,
        })
        .await
        .unwrap()
        .into_inner();
    let binding = Binding {
        role: format!("roles/{viewer}"),
        members: vec![format!("identity:{alice}")],
        condition: None,
    };
    let set = client
        .set_iam_policy(SetIamPolicyRequest {
            resource: org.clone(),
            policy: Some(Policy {
                bindings: vec![binding.clone()],
                etag: read.etag.clone(),
                ..Default::default()
            }),
            update_mask: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(set.bindings, [binding]);
    let stale = client
        .set_iam_policy(SetIamPolicyRequest {
            resource: org.clone(),
            policy: Some(Policy {
                etag: read.etag,
                ..Default::default()
            }),
            update_mask: None,
        })
        .await
        .unwrap_err();
    assert_eq!(stale.code(), tonic::Code::Aborted, "{stale:?}");
    let tested = client
        .test_iam_permissions(TestIamPermissionsRequest {
            resource: org,
            permissions: vec!["groups.get".into(), "anything.else".into()],
        })
        .await
        .unwrap()
        .into_inner();
    // The administrator holds every capability.
    assert_eq!(tested.permissions, ["groups.get", "anything.else"]);
}
