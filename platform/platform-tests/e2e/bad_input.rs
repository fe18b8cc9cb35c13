//! The bad-input table: every case is sent over REST and, where the request
//! can be expressed in protobuf, over gRPC; each must fail with the exact
//! canonical code and the exact field violations, never a 500 or a dropped
//! connection.

use platform_api::platform::iam::v2::group_service_client::GroupServiceClient;
use platform_api::platform::iam::v2::{
    CreateGroupRequest, DeleteGroupRequest, GetGroupRequest, Group, ListGroupsRequest,
    ResourceLimits, UpdateGroupRequest,
};
use platform_api::protoapi::v1::UidpFilter;
use platform_tests::{Method, Rest, StatusCode, TestServer};
use protoapi_runtime::Code;
use protoapi_runtime::paging::PageTokens;
use serde_json::{Value, json};
use tonic::transport::Channel;
use tonic_types::StatusExt;

/// What a case must fail with.
#[derive(Debug)]
enum Expect {
    /// INVALID_ARGUMENT with exactly these field violations.
    Invalid(Vec<&'static str>),
    /// Another code (its details are checked by the lifecycle tests).
    Code(Code),
}

enum Grpc {
    Create(CreateGroupRequest),
    Get(GetGroupRequest),
    List(ListGroupsRequest),
    Update(UpdateGroupRequest),
    Delete(DeleteGroupRequest),
}

struct Case {
    name: &'static str,
    method: Method,
    path: String,
    content_type: &'static str,
    body: Vec<u8>,
    grpc: Option<Grpc>,
    expect: Expect,
}

fn case(
    name: &'static str,
    method: Method,
    path: impl Into<String>,
    body: Option<Value>,
    expect: Expect,
) -> Case {
    Case {
        name,
        method,
        path: path.into(),
        content_type: "application/json",
        body: body
            .map(|b| serde_json::to_vec(&b).unwrap())
            .unwrap_or_default(),
        grpc: None,
        expect,
    }
}

impl Case {
    fn grpc(mut self, request: Grpc) -> Self {
        self.grpc = Some(request);
        self
    }

    fn raw(mut self, content_type: &'static str, body: Vec<u8>) -> Self {
        self.content_type = content_type;
        self.body = body;
        self
    }
}

fn invalid(fields: &[&'static str]) -> Expect {
    Expect::Invalid(fields.to_vec())
}

fn group(name: &str) -> Option<Group> {
    Some(Group {
        name: name.into(),
        ..Default::default()
    })
}

fn mask(paths: &[&str]) -> Option<prost_types::FieldMask> {
    Some(prost_types::FieldMask {
        paths: paths.iter().map(|p| (*p).to_owned()).collect(),
    })
}

fn children_of(uid: &str) -> Option<UidpFilter> {
    Some(UidpFilter {
        children_of: uid.into(),
        ..Default::default()
    })
}

#[tokio::test]
async fn bad_input_table_over_rest_and_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let root_uid = rest
        .create("/iam/v2/groups/", json!({"name": "acme"}))
        .await;
    let child = rest
        .post(
            &format!("/iam/v2/groups/{root_uid}"),
            json!({"name": "team"}),
        )
        .await
        .body;
    let child_uid = child["uid"].as_str().unwrap().to_owned();
    rest.post(
        &format!("/iam/v2/groups/{root_uid}"),
        json!({"name": "team 2"}),
    )
    .await;
    let ghost = format!("{root_uid}/0123456789abcdef");
    let identity = rest
        .create(
            &format!("/iam/v2/identities/{root_uid}"),
            json!({"name": "bound"}),
        )
        .await;
    let role = rest
        .create(
            &format!("/iam/v2/roles/{root_uid}"),
            json!({"name": "granted", "capabilities": ["groups.get"]}),
        )
        .await;
    let binding_body = json!({"name": "b", "identity": identity, "role": role});
    let role_binding = rest
        .create(
            &format!("/iam/v2/roleBindings/{root_uid}"),
            binding_body.clone(),
        )
        .await;

    // A genuine token for `children_of=root`, page size 1.
    let page = rest
        .get(&format!(
            "/iam/v2/groups?uidp.children_of={root_uid}&pageSize=1"
        ))
        .await
        .body;
    let token = page["nextPageToken"].as_str().unwrap().to_owned();
    assert!(!token.is_empty());
    let mut tampered = token.clone().into_bytes();
    let middle = tampered.len() / 2;
    tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    let truncated = token[..token.len() - 3].to_owned();
    let binding = protoapi_runtime::paging::QueryBinding::new(
        "iam.platform/Group",
        &protoapi_runtime::store::Hierarchy::ChildrenOf(root_uid.clone()),
        &protoapi_runtime::store::Matching::default(),
        &[protoapi_runtime::store::OrderBy {
            field: "uid".into(),
            descending: false,
        }],
        false,
    );
    let foreign = PageTokens::new([42; 32]).issue(
        &binding,
        vec![protoapi_runtime::resource::SortValue::Text(
            child_uid.clone(),
        )],
    );

    let groups = "/iam/v2/groups";
    let list = |query: &str| format!("{groups}?{query}");
    let at = |uid: &str| format!("{groups}/{uid}");
    let list_request = |f: fn(&mut ListGroupsRequest)| {
        let mut request = ListGroupsRequest {
            uidp: children_of(&root_uid),
            ..Default::default()
        };
        f(&mut request);
        Grpc::List(request)
    };
    let with_token = |token: &str| {
        Grpc::List(ListGroupsRequest {
            uidp: children_of(&root_uid),
            page_token: token.into(),
            ..Default::default()
        })
    };
    let update = |uid: &str, group: Option<Group>, paths: &[&str]| {
        Grpc::Update(UpdateGroupRequest {
            uid: uid.into(),
            group,
            update_mask: mask(paths),
        })
    };
    let stale = Some(Group {
        etag: "stale".into(),
        description: "x".into(),
        ..Default::default()
    });

    let cases = vec![
        // Bodies.
        case(
            "malformed JSON",
            Method::POST,
            format!("{groups}/"),
            None,
            invalid(&["group"]),
        )
        .raw("application/json", b"{\"name\": ".to_vec()),
        case(
            "body is an array",
            Method::POST,
            format!("{groups}/"),
            Some(json!([1])),
            invalid(&["group"]),
        ),
        case(
            "body is a string",
            Method::POST,
            format!("{groups}/"),
            Some(json!("acme")),
            invalid(&["group"]),
        ),
        case(
            "unknown body field",
            Method::POST,
            format!("{groups}/"),
            Some(json!({"name": "a", "colour": "red"})),
            invalid(&["group.colour"]),
        ),
        case(
            "two unknown body fields",
            Method::POST,
            format!("{groups}/"),
            Some(json!({"name": "a", "x": 1, "y": 2})),
            invalid(&["group.x", "group.y"]),
        ),
        case(
            "wrong type for a string",
            Method::POST,
            format!("{groups}/"),
            Some(json!({"name": 5})),
            invalid(&["group.name"]),
        ),
        case(
            "wrong type for a nested int",
            Method::POST,
            format!("{groups}/"),
            Some(json!({"name": "a", "resourceLimits": {"clusters": "many"}})),
            invalid(&["group.resourceLimits.clusters"]),
        ),
        case(
            "int out of range",
            Method::POST,
            format!("{groups}/"),
            Some(json!({"name": "a", "resourceLimits": {"idps": 4294967296u64}})),
            invalid(&["group.resourceLimits.idps"]),
        ),
        case(
            "wrong type for a message",
            Method::POST,
            format!("{groups}/"),
            Some(json!({"name": "a", "resourceLimits": 3})),
            invalid(&["group.resourceLimits"]),
        ),
        case(
            "bad timestamp in body",
            Method::POST,
            format!("{groups}/"),
            Some(json!({"name": "a", "createTime": "yesterday"})),
            invalid(&["group.createTime"]),
        ),
        case(
            "missing required name",
            Method::POST,
            format!("{groups}/"),
            Some(json!({"description": "d"})),
            invalid(&["group.name"]),
        )
        .grpc(Grpc::Create(CreateGroupRequest {
            parent: String::new(),
            group: None,
        })),
        case(
            "wrong content type",
            Method::POST,
            format!("{groups}/"),
            None,
            Expect::Code(Code::InvalidArgument),
        )
        .raw("text/plain", b"name=acme".to_vec()),
        case(
            "oversized body",
            Method::POST,
            format!("{groups}/"),
            None,
            Expect::Code(Code::ResourceExhausted),
        )
        .raw("application/json", vec![b' '; (1 << 20) + 1]),
        // UIDPs in paths and filters.
        case(
            "malformed parent",
            Method::POST,
            at("xyz"),
            Some(json!({"name": "a"})),
            invalid(&["parent"]),
        )
        .grpc(Grpc::Create(CreateGroupRequest {
            parent: "xyz".into(),
            group: group("a"),
        })),
        case(
            "parent with a short segment",
            Method::POST,
            at(&format!("{root_uid}/abc")),
            Some(json!({"name": "a"})),
            invalid(&["parent"]),
        )
        .grpc(Grpc::Create(CreateGroupRequest {
            parent: format!("{root_uid}/abc"),
            group: group("a"),
        })),
        case(
            "missing parent",
            Method::POST,
            at(&ghost),
            Some(json!({"name": "a"})),
            Expect::Code(Code::NotFound),
        )
        .grpc(Grpc::Create(CreateGroupRequest {
            parent: ghost.clone(),
            group: group("a"),
        })),
        case(
            "malformed uid",
            Method::GET,
            at("not-a-uid"),
            None,
            invalid(&["uid"]),
        )
        .grpc(Grpc::Get(GetGroupRequest {
            uid: "not-a-uid".into(),
        })),
        case(
            "uppercase uid",
            Method::GET,
            at(&root_uid.to_uppercase()),
            None,
            invalid(&["uid"]),
        )
        .grpc(Grpc::Get(GetGroupRequest {
            uid: root_uid.to_uppercase(),
        })),
        case(
            "uid with a trailing slash",
            Method::GET,
            at(&format!("{root_uid}/")),
            None,
            invalid(&["uid"]),
        )
        .grpc(Grpc::Get(GetGroupRequest {
            uid: format!("{root_uid}/"),
        })),
        case(
            "empty uid",
            Method::GET,
            format!("{groups}/"),
            None,
            invalid(&["uid"]),
        )
        .grpc(Grpc::Get(GetGroupRequest { uid: String::new() })),
        case(
            "missing group",
            Method::GET,
            at(&ghost),
            None,
            Expect::Code(Code::NotFound),
        )
        .grpc(Grpc::Get(GetGroupRequest { uid: ghost.clone() })),
        case(
            "malformed children_of",
            Method::GET,
            list("uidp.children_of=ABC"),
            None,
            invalid(&["uidp.childrenOf"]),
        )
        .grpc(Grpc::List(ListGroupsRequest {
            uidp: children_of("ABC"),
            ..Default::default()
        })),
        case(
            "malformed descendantsOf",
            Method::GET,
            list("uidp.descendantsOf=1234"),
            None,
            invalid(&["uidp.descendantsOf"]),
        )
        .grpc(Grpc::List(ListGroupsRequest {
            uidp: Some(UidpFilter {
                descendants_of: "1234".into(),
                ..Default::default()
            }),
            ..Default::default()
        })),
        case(
            "both hierarchy filters",
            Method::GET,
            list(&format!(
                "uidp.children_of={root_uid}&uidp.descendants_of={root_uid}"
            )),
            None,
            invalid(&["uidp"]),
        )
        .grpc(Grpc::List(ListGroupsRequest {
            uidp: Some(UidpFilter {
                children_of: root_uid.clone(),
                descendants_of: root_uid.clone(),
                ..Default::default()
            }),
            ..Default::default()
        })),
        // Paging.
        case(
            "negative page_size",
            Method::GET,
            list("page_size=-1"),
            None,
            invalid(&["pageSize"]),
        )
        .grpc(list_request(|r| r.page_size = -1)),
        case(
            "negative pageSize",
            Method::GET,
            list("pageSize=-5"),
            None,
            invalid(&["pageSize"]),
        ),
        case(
            "non-numeric page_size",
            Method::GET,
            list("page_size=ten"),
            None,
            invalid(&["pageSize"]),
        ),
        case(
            "page_size beyond int32",
            Method::GET,
            list("page_size=99999999999"),
            None,
            invalid(&["pageSize"]),
        ),
        case(
            "negative skip",
            Method::GET,
            list("skip=-1"),
            None,
            invalid(&["skip"]),
        )
        .grpc(list_request(|r| r.skip = -1)),
        case(
            "non-numeric skip",
            Method::GET,
            list("skip=x"),
            None,
            invalid(&["skip"]),
        ),
        case(
            "several paging problems at once",
            Method::GET,
            list("page_size=-1&skip=-1&order_by=colour"),
            None,
            invalid(&["pageSize", "skip", "orderBy"]),
        )
        .grpc(Grpc::List(ListGroupsRequest {
            page_size: -1,
            skip: -1,
            order_by: "colour".into(),
            ..Default::default()
        })),
        case(
            "unknown order_by field",
            Method::GET,
            list("order_by=colour"),
            None,
            invalid(&["orderBy"]),
        )
        .grpc(list_request(|r| r.order_by = "colour".into())),
        case(
            "bad order_by direction",
            Method::GET,
            list("orderBy=name%20upward"),
            None,
            invalid(&["orderBy"]),
        )
        .grpc(list_request(|r| r.order_by = "name upward".into())),
        case(
            "order_by names a field twice",
            Method::GET,
            list("order_by=name,name%20desc"),
            None,
            invalid(&["orderBy"]),
        ),
        case(
            "order_by on an output-only non-sortable field",
            Method::GET,
            list("order_by=verified"),
            None,
            invalid(&["orderBy"]),
        ),
        case(
            "tampered page token",
            Method::GET,
            list(&format!(
                "uidp.children_of={root_uid}&page_token={tampered}"
            )),
            None,
            invalid(&["pageToken"]),
        )
        .grpc(with_token(&tampered)),
        case(
            "truncated page token",
            Method::GET,
            list(&format!(
                "uidp.children_of={root_uid}&page_token={truncated}"
            )),
            None,
            invalid(&["pageToken"]),
        )
        .grpc(with_token(&truncated)),
        case(
            "garbage page token",
            Method::GET,
            list(&format!("uidp.children_of={root_uid}&pageToken=%21%21%21")),
            None,
            invalid(&["pageToken"]),
        )
        .grpc(with_token("!!!")),
        case(
            "page token signed by another server",
            Method::GET,
            list(&format!("uidp.children_of={root_uid}&page_token={foreign}")),
            None,
            invalid(&["pageToken"]),
        )
        .grpc(with_token(&foreign)),
        case(
            "page token reused with another filter",
            Method::GET,
            list(&format!(
                "uidp.descendants_of={root_uid}&page_token={token}"
            )),
            None,
            invalid(&["pageToken"]),
        )
        .grpc(Grpc::List(ListGroupsRequest {
            uidp: Some(UidpFilter {
                descendants_of: root_uid.clone(),
                ..Default::default()
            }),
            page_token: token.clone(),
            ..Default::default()
        })),
        case(
            "page token reused with another order",
            Method::GET,
            list(&format!(
                "uidp.children_of={root_uid}&order_by=name&page_token={token}"
            )),
            None,
            invalid(&["pageToken"]),
        )
        .grpc(Grpc::List(ListGroupsRequest {
            uidp: children_of(&root_uid),
            order_by: "name".into(),
            page_token: token.clone(),
            ..Default::default()
        })),
        case(
            "unknown query parameter",
            Method::GET,
            list("colour=red"),
            None,
            invalid(&["colour"]),
        ),
        case(
            "query parameter below a scalar",
            Method::GET,
            list("skip.x=1"),
            None,
            invalid(&["skip.x"]),
        ),
        // Update masks.
        case(
            "unknown mask path",
            Method::PATCH,
            format!("{}?updateMask=colour", at(&child_uid)),
            Some(json!({"name": "b"})),
            invalid(&["updateMask.colour"]),
        )
        .grpc(update(&child_uid, group("b"), &["colour"])),
        case(
            "output-only mask path",
            Method::PATCH,
            format!("{}?update_mask=uid", at(&child_uid)),
            Some(json!({"name": "b"})),
            invalid(&["updateMask.uid"]),
        )
        .grpc(update(&child_uid, group("b"), &["uid"])),
        case(
            "output-only camelCase mask path",
            Method::PATCH,
            format!("{}?updateMask=updateTime", at(&child_uid)),
            Some(json!({})),
            invalid(&["updateMask.updateTime"]),
        )
        .grpc(update(&child_uid, group("b"), &["update_time"])),
        case(
            "every mask problem reported",
            Method::PATCH,
            format!("{}?updateMask=verified,colour,name", at(&child_uid)),
            Some(json!({"name": "b"})),
            invalid(&["updateMask.verified", "updateMask.colour"]),
        )
        .grpc(update(
            &child_uid,
            group("b"),
            &["verified", "colour", "name"],
        )),
        case(
            "unknown nested mask path",
            Method::PATCH,
            format!("{}?updateMask=resourceLimits.gpus", at(&child_uid)),
            Some(json!({})),
            invalid(&["updateMask.resourceLimits.gpus"]),
        )
        .grpc(update(
            &child_uid,
            Some(Group {
                resource_limits: Some(ResourceLimits::default()),
                ..Default::default()
            }),
            &["resource_limits.gpus"],
        )),
        case(
            "star with other paths",
            Method::PATCH,
            format!("{}?updateMask=*,name", at(&child_uid)),
            Some(json!({"name": "b"})),
            invalid(&["updateMask.*"]),
        )
        .grpc(update(&child_uid, group("b"), &["*", "name"])),
        case(
            "clearing a required field",
            Method::PATCH,
            format!("{}?updateMask=name", at(&child_uid)),
            Some(json!({})),
            invalid(&["group.name"]),
        )
        .grpc(update(&child_uid, group(""), &["name"])),
        case(
            "update with a malformed uid",
            Method::PATCH,
            at("nope"),
            Some(json!({"name": "b"})),
            invalid(&["uid"]),
        )
        .grpc(update("nope", group("b"), &[])),
        case(
            "update of a missing group",
            Method::PATCH,
            at(&ghost),
            Some(json!({"name": "b"})),
            Expect::Code(Code::NotFound),
        )
        .grpc(update(&ghost, group("b"), &[])),
        case(
            "update with a stale etag",
            Method::PATCH,
            at(&child_uid),
            Some(json!({"etag": "stale", "description": "x"})),
            Expect::Code(Code::Aborted),
        )
        .grpc(update(&child_uid, stale.clone(), &[])),
        case(
            "changing an immutable field",
            Method::PATCH,
            format!("/iam/v2/roleBindings/{role_binding}?updateMask=role"),
            Some(json!({"role": format!("{root_uid}/3333333333333333")})),
            invalid(&["roleBinding.role"]),
        ),
        case(
            "mask problems answered before the stored item is read",
            Method::PATCH,
            format!("/iam/v2/roleBindings/{role_binding}?updateMask=role,colour"),
            Some(json!({"role": format!("{root_uid}/3333333333333333")})),
            invalid(&["updateMask.colour"]),
        ),
        case(
            "a bad mask on a missing uid is the same 400",
            Method::PATCH,
            format!("{}?updateMask=createTime,colour", at(&ghost)),
            Some(json!({"name": "b"})),
            invalid(&["updateMask.createTime", "updateMask.colour"]),
        )
        .grpc(update(&ghost, group("b"), &["create_time", "colour"])),
        case(
            "a malformed UIDP in a body field",
            Method::POST,
            format!("/iam/v2/roleBindings/{root_uid}"),
            Some(
                json!({"name": "b", "identity": "nope", "role": format!("{root_uid}/2222222222222222")}),
            ),
            invalid(&["roleBinding.identity"]),
        ),
        // Deletes.
        case(
            "delete with a malformed uid",
            Method::DELETE,
            at("nope"),
            None,
            invalid(&["uid"]),
        )
        .grpc(Grpc::Delete(DeleteGroupRequest {
            uid: "nope".into(),
            etag: String::new(),
        })),
        case(
            "delete of a missing group",
            Method::DELETE,
            at(&ghost),
            None,
            Expect::Code(Code::NotFound),
        )
        .grpc(Grpc::Delete(DeleteGroupRequest {
            uid: ghost.clone(),
            etag: String::new(),
        })),
        case(
            "delete of a group with children",
            Method::DELETE,
            at(&root_uid),
            None,
            Expect::Code(Code::FailedPrecondition),
        )
        .grpc(Grpc::Delete(DeleteGroupRequest {
            uid: root_uid.clone(),
            etag: String::new(),
        })),
        case(
            "delete with a stale etag",
            Method::DELETE,
            format!("{}?etag=stale", at(&child_uid)),
            None,
            Expect::Code(Code::Aborted),
        )
        .grpc(Grpc::Delete(DeleteGroupRequest {
            uid: child_uid.clone(),
            etag: "stale".into(),
        })),
        // Routing.
        case(
            "unknown route",
            Method::GET,
            "/iam/v2/nothing",
            None,
            Expect::Code(Code::NotFound),
        ),
    ];
    assert!(cases.len() >= 40, "{} cases", cases.len());

    let mut grpc = GroupServiceClient::with_interceptor(
        server.channel().await,
        platform_tests::bearer(&server.admin_token),
    );
    let mut grpc_cases = 0;
    for case in &cases {
        check_rest(&rest, case).await;
        if let Some(request) = &case.grpc {
            check_grpc(&mut grpc, case, request).await;
            grpc_cases += 1;
        }
    }
    assert!(grpc_cases >= 30, "{grpc_cases} gRPC cases");

    let same = rest
        .patch(
            &format!("/iam/v2/roleBindings/{role_binding}?updateMask=role,name"),
            binding_body,
        )
        .await;
    assert_eq!(
        same.status,
        StatusCode::OK,
        "an immutable field may be named with its current value: {:?}",
        same.body
    );

    // Nothing above changed anything.
    let after = rest.get(&format!("/iam/v2/groups/{child_uid}")).await.body;
    assert_eq!(after, child);
    server.stop().await;
}

async fn check_rest(rest: &Rest, case: &Case) {
    let response = rest
        .raw(
            case.method.clone(),
            &case.path,
            case.content_type,
            case.body.clone(),
        )
        .await;
    let name = case.name;
    assert_ne!(
        response.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{name}: {:?}",
        response.body
    );
    assert!(
        response.detail("ErrorInfo").is_some(),
        "{name}: ErrorInfo in {:?}",
        response.body
    );
    match &case.expect {
        Expect::Invalid(fields) => {
            response.assert_error(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", name);
            let violations = response
                .detail("BadRequest")
                .unwrap_or_else(|| panic!("{name}: no BadRequest"));
            let got: Vec<&str> = violations["fieldViolations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["field"].as_str().unwrap())
                .collect();
            assert_eq!(&got, fields, "{name} (REST): {violations}");
        }
        Expect::Code(code) => {
            assert_eq!(
                response.error_status(),
                code.name(),
                "{name}: {:?}",
                response.body
            );
            let expected_status = match (code, name) {
                (Code::ResourceExhausted, _) => StatusCode::PAYLOAD_TOO_LARGE,
                (_, "wrong content type") => StatusCode::UNSUPPORTED_MEDIA_TYPE,
                _ => code.http_status(),
            };
            assert_eq!(response.status, expected_status, "{name}");
        }
    }
}

async fn check_grpc<I: tonic::service::Interceptor>(
    client: &mut GroupServiceClient<tonic::service::interceptor::InterceptedService<Channel, I>>,
    case: &Case,
    request: &Grpc,
) {
    let status = match request {
        Grpc::Create(r) => client.create_group(r.clone()).await.err(),
        Grpc::Get(r) => client.get_group(r.clone()).await.err(),
        Grpc::List(r) => client.list_groups(r.clone()).await.err(),
        Grpc::Update(r) => client.update_group(r.clone()).await.err(),
        Grpc::Delete(r) => client.delete_group(r.clone()).await.err(),
    };
    let name = case.name;
    let status = status.unwrap_or_else(|| panic!("{name} (gRPC): succeeded"));
    let details = status.get_error_details();
    assert!(details.error_info().is_some(), "{name} (gRPC): ErrorInfo");
    match &case.expect {
        Expect::Invalid(fields) => {
            assert_eq!(
                status.code(),
                tonic::Code::InvalidArgument,
                "{name} (gRPC): {status:?}"
            );
            let got: Vec<&str> = details
                .bad_request()
                .unwrap_or_else(|| panic!("{name} (gRPC): no BadRequest"))
                .field_violations
                .iter()
                .map(|v| v.field.as_str())
                .collect();
            assert_eq!(&got, fields, "{name} (gRPC)");
        }
        Expect::Code(code) => {
            let error = protoapi_runtime::Error::from_status(&status).unwrap();
            assert_eq!(error.code(), *code, "{name} (gRPC): {status:?}");
        }
    }
}

/// `(field, description)` of each violation.
type Violations = Vec<(String, String)>;

/// A bad update mask is the request's own problem: answered before storage
/// is called, so a missing uid reads exactly like an existing one (400, not
/// 404), and REST and gRPC name the same paths, in lowerCamelCase, with the
/// same descriptions, whichever spelling the client sent.
#[tokio::test]
async fn bad_masks_read_alike_for_missing_uids_and_both_transports() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let root = rest
        .create("/iam/v2/groups/", json!({"name": "masks"}))
        .await;
    let ghost = format!("{root}/0123456789abcdef");
    let before = rest.get(&format!("/iam/v2/groups/{root}")).await.body;
    let mut grpc = GroupServiceClient::with_interceptor(
        server.channel().await,
        platform_tests::bearer(&server.admin_token),
    );

    let output_only = |field: &str| {
        (
            format!("updateMask.{field}"),
            "the field is output only".to_owned(),
        )
    };
    let unknown = |field: &str| {
        (
            format!("updateMask.{field}"),
            "no such field in the resource".to_owned(),
        )
    };
    // (REST query, gRPC mask paths, expected violations)
    let cases: Vec<(&str, Vec<&str>, Violations)> = vec![
        (
            "updateMask=createTime",
            vec!["create_time"],
            vec![output_only("createTime")],
        ),
        (
            "update_mask=create_time",
            vec!["createTime"],
            vec![output_only("createTime")],
        ),
        (
            "updateMask=colourName",
            vec!["colour_name"],
            vec![unknown("colourName")],
        ),
        (
            "updateMask=updateTime,resourceLimits.gpus,description",
            vec!["update_time", "resource_limits.gpus", "description"],
            vec![output_only("updateTime"), unknown("resourceLimits.gpus")],
        ),
    ];
    for (query, paths, expected) in &cases {
        for uid in [&root, &ghost] {
            let response = rest
                .patch(
                    &format!("/iam/v2/groups/{uid}?{query}"),
                    json!({"description": "changed"}),
                )
                .await;
            assert_eq!(
                response.status,
                StatusCode::BAD_REQUEST,
                "{query} on {uid}: {:?}",
                response.body
            );
            assert_eq!(response.error_status(), "INVALID_ARGUMENT", "{query}");
            let got: Violations = response
                .detail("BadRequest")
                .unwrap_or_else(|| panic!("{query}: no BadRequest in {:?}", response.body))["fieldViolations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| (v["field"].as_str().unwrap().to_owned(), v["description"].as_str().unwrap().to_owned()))
                .collect();
            assert_eq!(&got, expected, "{query} on {uid} (REST)");

            let status = grpc
                .update_group(UpdateGroupRequest {
                    uid: uid.clone(),
                    group: Some(Group {
                        description: "changed".into(),
                        ..Default::default()
                    }),
                    update_mask: mask(paths),
                })
                .await
                .unwrap_err();
            assert_eq!(
                status.code(),
                tonic::Code::InvalidArgument,
                "{paths:?} on {uid}: {status:?}"
            );
            let got: Violations = status
                .get_error_details()
                .bad_request()
                .unwrap_or_else(|| panic!("{paths:?}: no BadRequest"))
                .field_violations
                .iter()
                .map(|v| (v.field.clone(), v.description.clone()))
                .collect();
            assert_eq!(&got, expected, "{paths:?} on {uid} (gRPC)");
        }
    }

    // A valid mask on the missing uid is storage's answer: 404.
    let missing = rest
        .patch(
            &format!("/iam/v2/groups/{ghost}?updateMask=description"),
            json!({"description": "changed"}),
        )
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{:?}", missing.body);
    // Nothing changed, not even the update time or the etag.
    let after = rest.get(&format!("/iam/v2/groups/{root}")).await.body;
    assert_eq!(after, before);
    server.stop().await;
}
