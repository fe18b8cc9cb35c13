//! Access policies mixed in on members (`google.iam.v1.IAMPolicy`'s
//! `GetIamPolicy`, `SetIamPolicy`, `TestIamPermissions` as a service of its
//! own, `mixins` in the annotations), answered by the generated code from
//! the club's own grants: served over a real socket on SQLite with the
//! grants deciding access, and called with the generated client over REST
//! (`POST /v1/members/{resource=**}:getIamPolicy`, ...) and gRPC
//! (`/google.iam.v1.IAMPolicy/GetIamPolicy`, ...). Nothing is written by
//! hand.

use std::sync::Arc;

use club::club::v1::client::{MemberService, RoleService};
use club::club::v1::{CreateMemberRequest, CreateRoleRequest, Grant, Member, Role};
use club::google::iam::v1::client::IAMPolicy;
use club::google::iam::v1::{
    Binding, GetIamPolicyRequest, Policy, SetIamPolicyRequest, TestIamPermissionsRequest,
};
use protoapi_runtime::Code;
use protoapi_runtime::auth::{
    ApiTokens, Authentication, Authorizer, TokenExchange, TrustedIssuers, authenticate,
};
use protoapi_runtime::client::{Connection, StaticToken};
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::sql::{self, StoredAccess};
use protoapi_runtime::standard::ApiContext;

const API: &str = "https://club.example";
/// The administrator's uid.
const ADMIN: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// The club served on SQLite on a free port, access decided by its grants.
async fn serve(dir: &std::path::Path) -> (String, ApiTokens) {
    let url = format!("sqlite://{}?mode=rwc", dir.join("club.db").display());
    let store = club::SqlStore::open(&url, sql::SqlOptions::new(club::tables()))
        .await
        .unwrap();
    let access = StoredAccess::<Grant, Role>::new(store.clone());
    let tokens = ApiTokens::new(&[7; 32], API);
    let authentication = Authentication::for_api(&club::API, tokens.clone(), ADMIN);
    let context = ApiContext::new(PageTokens::random(), Authorizer::new(Arc::new(access)));
    let store = Arc::new(store);
    // No issuer is trusted here: members sign in with API tokens.
    let exchange = TokenExchange::new(tokens.clone(), TrustedIssuers::load(&[]).unwrap());
    let router = club::Services::new(context)
        .store(Arc::clone(&store))
        .token_exchange(store, exchange)
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(authentication),
            authenticate,
        ))
        .build()
        .unwrap();
    let base = protoapi_runtime::testing::served::on_free_port(router).await;
    (base, tokens)
}

fn connect(base: &str, grpc: bool, token: &str) -> Connection {
    let connection = match grpc {
        true => Connection::grpc(base),
        false => Connection::rest(base),
    };
    connection.unwrap().with_tokens(StaticToken::new(token))
}

async fn enrol(members: &MemberService, parent: &str, name: &str) -> String {
    let member = Member {
        display_name: name.into(),
        ..Default::default()
    };
    let request = CreateMemberRequest {
        parent: parent.into(),
        member: Some(member),
    };
    members.create(request).await.unwrap().uid
}

async fn policies_over(base: &str, tokens: &ApiTokens, grpc: bool) {
    let admin = connect(base, grpc, &tokens.issue(ADMIN));
    let members = MemberService::new(admin.clone());
    let founder = enrol(&members, "", "founder").await;
    let alice = enrol(&members, &founder, "alice").await;
    let bob = enrol(&members, &alice, "bob").await;
    let role = |title: &str, capabilities: &[&str]| CreateRoleRequest {
        parent: founder.clone(),
        role: Some(Role {
            title: title.into(),
            capabilities: capabilities.iter().map(|c| c.to_string()).collect(),
            ..Default::default()
        }),
    };
    let policies = IAMPolicy::new(admin.clone());
    let roles = RoleService::new(admin);
    let keeper = roles
        .create(role(
            "keeper",
            &[
                "members.get",
                "grants.list",
                "grants.create",
                "grants.delete",
            ],
        ))
        .await
        .unwrap()
        .uid;
    let reader = roles
        .create(role("reader", &["members.get"]))
        .await
        .unwrap()
        .uid;
    let remover = roles
        .create(role("remover", &["members.delete"]))
        .await
        .unwrap()
        .uid;
    let grant = |role: &str, member: &str| Binding {
        role: format!("roles/{role}"),
        members: vec![format!("member:{member}")],
        condition: None,
    };

    // The founder's policy, set by the administrator, makes Alice its keeper.
    let set = policies
        .set_iam_policy(SetIamPolicyRequest {
            resource: founder.clone(),
            policy: Some(Policy {
                bindings: vec![grant(&keeper, &alice)],
                ..Default::default()
            }),
            update_mask: None,
        })
        .await
        .unwrap();
    assert_eq!(set.bindings, [grant(&keeper, &alice)]);

    // Alice keeps it: she grants Bob the reader role on herself ...
    let as_alice = IAMPolicy::new(connect(base, grpc, &tokens.issue(&alice)));
    let read = as_alice
        .get_iam_policy(GetIamPolicyRequest {
            resource: alice.clone(),
            options: None,
        })
        .await
        .unwrap();
    assert!(read.bindings.is_empty());
    let set = as_alice
        .set_iam_policy(SetIamPolicyRequest {
            resource: alice.clone(),
            policy: Some(Policy {
                bindings: vec![grant(&reader, &bob)],
                etag: read.etag.clone(),
                ..Default::default()
            }),
            update_mask: None,
        })
        .await
        .unwrap();
    assert_eq!(set.bindings, [grant(&reader, &bob)]);
    // ... and Bob may now read there, and only read.
    let as_bob = IAMPolicy::new(connect(base, grpc, &tokens.issue(&bob)));
    let tested = as_bob
        .test_iam_permissions(TestIamPermissionsRequest {
            resource: alice.clone(),
            permissions: vec!["members.delete".into(), "members.get".into()],
        })
        .await
        .unwrap();
    assert_eq!(tested.permissions, ["members.get"]);

    // Alice cannot grant what she does not hold, nor reuse a stale etag.
    let escalation = as_alice
        .set_iam_policy(SetIamPolicyRequest {
            resource: alice.clone(),
            policy: Some(Policy {
                bindings: vec![grant(&reader, &bob), grant(&remover, &bob)],
                ..Default::default()
            }),
            update_mask: None,
        })
        .await
        .unwrap_err();
    assert_eq!(escalation.code(), Code::PermissionDenied, "{escalation:?}");
    let stale = as_alice
        .set_iam_policy(SetIamPolicyRequest {
            resource: alice.clone(),
            policy: Some(Policy {
                etag: read.etag,
                ..Default::default()
            }),
            update_mask: None,
        })
        .await
        .unwrap_err();
    assert_eq!(stale.code(), Code::Aborted, "{stale:?}");
    // Bob may not read the policy he is in, nor change it.
    let denied = as_bob
        .get_iam_policy(GetIamPolicyRequest {
            resource: alice.clone(),
            options: None,
        })
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    let unchanged = as_alice
        .get_iam_policy(GetIamPolicyRequest {
            resource: alice,
            options: None,
        })
        .await
        .unwrap();
    assert_eq!(unchanged.bindings, [grant(&reader, &bob)]);
}

#[tokio::test]
async fn policies_are_the_clubs_grants() {
    let dir = tempfile::tempdir().unwrap();
    let (base, tokens) = serve(dir.path()).await;
    for grpc in [false, true] {
        policies_over(&base, &tokens, grpc).await;
    }
}

/// Two policies set at once from the same read: one is put in place, the
/// other is refused ABORTED, never both half applied.
#[tokio::test]
async fn policies_set_at_once_from_one_read_do_not_mix() {
    let dir = tempfile::tempdir().unwrap();
    let (base, tokens) = serve(dir.path()).await;
    let admin = connect(&base, false, &tokens.issue(ADMIN));
    let members = MemberService::new(admin.clone());
    let founder = enrol(&members, "", "founder").await;
    let reader = RoleService::new(admin.clone())
        .create(CreateRoleRequest {
            parent: founder.clone(),
            role: Some(Role {
                title: "reader".into(),
                capabilities: vec!["members.get".into()],
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .uid;
    let policies = IAMPolicy::new(admin);
    for round in 0..5 {
        // Neither is in place yet: each set changes the policy.
        let alice = enrol(&members, &founder, "alice").await;
        let bob = enrol(&members, &founder, "bob").await;
        let read = policies
            .get_iam_policy(GetIamPolicyRequest {
                resource: founder.clone(),
                options: None,
            })
            .await
            .unwrap();
        let set = |member: &str| {
            policies.set_iam_policy(SetIamPolicyRequest {
                resource: founder.clone(),
                policy: Some(Policy {
                    bindings: vec![Binding {
                        role: format!("roles/{reader}"),
                        members: vec![format!("member:{member}")],
                        condition: None,
                    }],
                    etag: read.etag.clone(),
                    ..Default::default()
                }),
                update_mask: None,
            })
        };
        let (first, second) = tokio::join!(set(&alice), set(&bob));
        let (set, refused) = match (first, second) {
            (Ok(set), Err(refused)) | (Err(refused), Ok(set)) => (set, refused),
            other => panic!("round {round}: exactly one applies: {other:?}"),
        };
        assert_eq!(refused.code(), Code::Aborted, "{refused:?}");
        let now = policies
            .get_iam_policy(GetIamPolicyRequest {
                resource: founder.clone(),
                options: None,
            })
            .await
            .unwrap();
        assert_eq!(now.bindings, set.bindings, "round {round}");
    }
}
