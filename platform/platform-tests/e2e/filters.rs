//! Declared list filters end to end: `uidp.ancestors_of`, `uidp.in_root`,
//! `uidp.ids` and `name` narrow a list to what the caller may see, count the
//! filtered items, bind page tokens to their values and are refused where a
//! collection does not declare them; over REST and gRPC.
//!
//! Every test works inside root organizations of its own: a shared
//! PostgreSQL database holds other tests' items too.

use platform_api::platform::iam::v2::ListGroupsRequest;
use platform_api::platform::iam::v2::group_service_client::GroupServiceClient;
use platform_api::protoapi::v1::UidpFilter;
use platform_tests::{Response, Rest, StatusCode, TestServer};
use serde_json::{Value, json};
use tonic_types::StatusExt;

/// A tree of groups and a caller bound below its root:
///
/// ```text
/// root "filters"
/// ├── a "alpha"                 <- `member` holds viewer here
/// │   └── b "beta"
/// │       ├── c "gamma"
/// │       └── d "alpha"
/// └── e "alphabet"
/// other "other org"             (a second root organization)
/// ```
struct World {
    server: TestServer,
    root: String,
    a: String,
    b: String,
    c: String,
    d: String,
    e: String,
    other: String,
    /// An identity's token granting `groups.get`/`groups.list` on `a`.
    member: String,
    /// An identity's token granting groups and repos capabilities on `root`.
    owner: String,
    _dir: tempfile::TempDir,
}

async fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let admin = server.rest();
    let group = |parent: String, name: &'static str| {
        let admin = admin.clone();
        async move {
            admin
                .create(&format!("/iam/v2/groups/{parent}"), json!({ "name": name }))
                .await
        }
    };
    let root = group(String::new(), "filters").await;
    let a = group(root.clone(), "alpha").await;
    let b = group(a.clone(), "beta").await;
    let c = group(b.clone(), "gamma").await;
    let d = group(b.clone(), "alpha").await;
    let e = group(root.clone(), "alphabet").await;
    let other = group(String::new(), "other org").await;

    let capabilities = |collections: &[&str]| -> Vec<String> {
        collections
            .iter()
            .flat_map(|c| {
                ["create", "get", "list", "update", "delete"].map(|op| format!("{c}.{op}"))
            })
            .collect()
    };
    let mut tokens = Vec::new();
    for (name, at, capabilities) in [
        (
            "member",
            &a,
            vec!["groups.get".to_owned(), "groups.list".to_owned()],
        ),
        ("owner", &root, capabilities(&["groups", "repos"])),
    ] {
        let role = admin
            .create(
                &format!("/iam/v2/roles/{root}"),
                json!({ "name": name, "capabilities": capabilities }),
            )
            .await;
        tokens.push(server.member(&root, name, &role, at).await.token);
    }
    let owner = tokens.pop().unwrap();
    let member = tokens.pop().unwrap();
    World {
        server,
        root,
        a,
        b,
        c,
        d,
        e,
        other,
        member,
        owner,
        _dir: dir,
    }
}

/// A successful list's uids (sorted) and its `totalCount`.
async fn listed(rest: &Rest, path: &str) -> (Vec<String>, u64) {
    let response = rest.get(path).await;
    assert_eq!(
        response.status,
        StatusCode::OK,
        "{path}: {:?}",
        response.body
    );
    (uids(&response), total_count(&response))
}

fn uids(response: &Response) -> Vec<String> {
    let mut uids: Vec<String> = response.body["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| item["uid"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default();
    uids.sort();
    uids
}

fn total_count(response: &Response) -> u64 {
    match &response.body["totalCount"] {
        Value::Null => 0,
        count => count.as_u64().expect("totalCount is a number"),
    }
}

fn sorted(uids: &[&String]) -> Vec<String> {
    let mut uids: Vec<String> = uids.iter().map(|uid| (*uid).clone()).collect();
    uids.sort();
    uids
}

/// The fields of a 400 INVALID_ARGUMENT's BadRequest violations.
fn violations(response: &Response) -> Vec<String> {
    assert_eq!(
        (response.status, response.error_status()),
        (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT"),
        "{:?}",
        response.body
    );
    response.detail("BadRequest").expect("a BadRequest detail")["fieldViolations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|violation| violation["field"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn ancestors_of_returns_the_ancestors_the_caller_may_read() {
    let w = world().await;
    let admin = w.server.rest();
    let member = w.server.rest_as(Some(&w.member));

    let path = format!("/iam/v2/groups?uidp.ancestors_of={}", w.c);
    let expected = sorted(&[&w.root, &w.a, &w.b]);
    assert_eq!(listed(&admin, &path).await, (expected, 3));
    // Bound at `a`: the root above it is not the member's to read.
    let expected = sorted(&[&w.a, &w.b]);
    assert_eq!(listed(&member, &path).await, (expected, 2));
    // The camelCase spelling is the same filter.
    let path = format!("/iam/v2/groups?uidp.ancestorsOf={}", w.c);
    assert_eq!(listed(&member, &path).await.1, 2);

    // Proper ancestors only: a root has none, a child of the root has one.
    let path = format!("/iam/v2/groups?uidp.ancestors_of={}", w.root);
    assert_eq!(listed(&admin, &path).await, (vec![], 0));
    let path = format!("/iam/v2/groups?uidp.ancestors_of={}", w.e);
    assert_eq!(listed(&admin, &path).await, (vec![w.root.clone()], 1));
    // Combined with other filters: every condition holds.
    let path = format!("/iam/v2/groups?uidp.ancestors_of={}&name=alpha", w.d);
    assert_eq!(listed(&admin, &path).await, (vec![w.a.clone()], 1));
    let path = format!(
        "/iam/v2/groups?uidp.ancestors_of={}&uidp.ids={}&uidp.ids={}",
        w.c, w.root, w.e
    );
    assert_eq!(listed(&admin, &path).await, (vec![w.root.clone()], 1));
    let path = format!(
        "/iam/v2/groups?uidp.ancestors_of={}&uidp.descendants_of={}",
        w.c, w.root
    );
    assert_eq!(
        listed(&admin, &path).await,
        (sorted(&[&w.a, &w.b]), 2),
        "with a hierarchy filter"
    );

    let malformed = admin.get("/iam/v2/groups?uidp.ancestors_of=nope").await;
    assert_eq!(violations(&malformed), ["uidp.ancestorsOf"]);
    w.server.stop().await;
}

#[tokio::test]
async fn in_root_returns_root_level_groups_only() {
    let w = world().await;
    let admin = w.server.rest();

    // The tenant's owner sees one root: its own.
    let owner = w.server.rest_as(Some(&w.owner));
    let path = "/iam/v2/groups?uidp.in_root=true";
    assert_eq!(listed(&owner, path).await, (vec![w.root.clone()], 1));
    assert_eq!(
        listed(&owner, "/iam/v2/groups?uidp.inRoot=true").await.1,
        1,
        "camelCase"
    );
    // A caller bound below the root sees no root.
    let member = w.server.rest_as(Some(&w.member));
    assert_eq!(listed(&member, path).await, (vec![], 0));

    // The administrator sees every root (other tests' too), nothing below one.
    let response = admin
        .get("/iam/v2/groups?uidp.in_root=true&pageSize=200")
        .await;
    assert_eq!(response.status, StatusCode::OK, "{:?}", response.body);
    let roots = uids(&response);
    assert!(roots.iter().all(|uid| !uid.contains('/')), "{roots:?}");
    assert!(total_count(&response) >= 2);
    let path = format!(
        "/iam/v2/groups?uidp.in_root=true&uidp.ids={}&uidp.ids={}&uidp.ids={}",
        w.root, w.a, w.other
    );
    assert_eq!(
        listed(&admin, &path).await,
        (sorted(&[&w.root, &w.other]), 2)
    );
    let path = format!(
        "/iam/v2/groups?uidp.in_root=true&uidp.children_of={}",
        w.root
    );
    assert_eq!(listed(&admin, &path).await, (vec![], 0));
    // `false` asks nothing.
    let path = format!(
        "/iam/v2/groups?uidp.in_root=false&uidp.children_of={}",
        w.root
    );
    assert_eq!(listed(&admin, &path).await, (sorted(&[&w.a, &w.e]), 2));
    w.server.stop().await;
}

#[tokio::test]
async fn ids_return_exactly_those_the_caller_may_see() {
    let w = world().await;
    let admin = w.server.rest();
    let member = w.server.rest_as(Some(&w.member));

    let path = format!("/iam/v2/groups?uidp.ids={}&uidp.ids={}", w.a, w.c);
    assert_eq!(listed(&admin, &path).await, (sorted(&[&w.a, &w.c]), 2));
    assert_eq!(listed(&member, &path).await, (sorted(&[&w.a, &w.c]), 2));
    // The root and another organization's group are not the member's: they
    // are simply absent, as is a well-formed uid of nothing.
    let nothing = format!("{}/0000000000000000", w.a);
    let path = format!(
        "/iam/v2/groups?uidp.ids={}&uidp.ids={}&uidp.ids={}&uidp.ids={}",
        w.root, w.other, w.b, nothing
    );
    assert_eq!(listed(&member, &path).await, (vec![w.b.clone()], 1));
    assert_eq!(
        listed(&admin, &path).await,
        (sorted(&[&w.root, &w.other, &w.b]), 3)
    );
    // A repeated uid is one item.
    let path = format!("/iam/v2/groups?uidp.ids={}&uidp.ids={}", w.d, w.d);
    assert_eq!(listed(&admin, &path).await, (vec![w.d.clone()], 1));
    // With a hierarchy filter: the uids inside it.
    let path = format!(
        "/iam/v2/groups?uidp.children_of={}&uidp.ids={}&uidp.ids={}",
        w.b, w.c, w.a
    );
    assert_eq!(listed(&admin, &path).await, (vec![w.c.clone()], 1));

    // A malformed uid is named by its position.
    let path = format!("/iam/v2/groups?uidp.ids=not-a-uid&uidp.ids={}", w.a);
    assert_eq!(violations(&admin.get(&path).await), ["uidp.ids[0]"]);
    let path = format!("/iam/v2/groups?uidp.ids={}&uidp.ids={}x", w.a, w.b);
    assert_eq!(violations(&admin.get(&path).await), ["uidp.ids[1]"]);
    w.server.stop().await;
}

#[tokio::test]
async fn name_matches_exactly() {
    let w = world().await;
    let admin = w.server.rest();
    let member = w.server.rest_as(Some(&w.member));

    let under_root =
        |name: &str| format!("/iam/v2/groups?uidp.descendants_of={}&name={name}", w.root);
    // Not `alphabet`: names match whole, not as prefixes.
    assert_eq!(
        listed(&admin, &under_root("alpha")).await,
        (sorted(&[&w.a, &w.d]), 2)
    );
    assert_eq!(
        listed(&admin, &under_root("alphabet")).await,
        (vec![w.e.clone()], 1)
    );
    assert_eq!(listed(&admin, &under_root("alph")).await, (vec![], 0));
    assert_eq!(listed(&admin, &under_root("ALPHA")).await, (vec![], 0));
    assert_eq!(
        listed(&admin, &under_root("alpha%25")).await,
        (vec![], 0),
        "no LIKE"
    );
    // Without a hierarchy filter: within the caller's grants.
    assert_eq!(
        listed(&member, "/iam/v2/groups?name=alpha").await,
        (sorted(&[&w.a, &w.d]), 2)
    );
    assert_eq!(
        listed(&member, "/iam/v2/groups?name=alphabet").await,
        (vec![], 0)
    );
    let owner = w.server.rest_as(Some(&w.owner));
    assert_eq!(
        listed(&owner, "/iam/v2/groups?name=alphabet").await,
        (vec![w.e.clone()], 1)
    );
    // Other collections declare it too.
    let roles = format!("/iam/v2/roles?uidp.children_of={}&name=member", w.root);
    let (found, count) = listed(&admin, &roles).await;
    assert_eq!((found.len(), count), (1, 1), "{found:?}");
    w.server.stop().await;
}

/// Public repos are listed beside the caller's own; filters narrow both.
#[tokio::test]
async fn filters_narrow_public_items_too() {
    let w = world().await;
    let owner = w.server.rest_as(Some(&w.owner));
    // Unique names: other tests' public repos share the database.
    let name = format!("shared {}", &w.root[..12]);
    let encoded = name.replace(' ', "%20");
    let own = owner
        .create(
            &format!("/registry/v2/repos/{}", w.a),
            json!({ "name": name }),
        )
        .await;
    let public = w
        .server
        .rest()
        .create(
            &format!("/registry/v2/repos/{}", w.other),
            json!({ "name": name, "public": true }),
        )
        .await;
    w.server
        .rest()
        .create(
            &format!("/registry/v2/repos/{}", w.other),
            json!({ "name": format!("{name} 2"), "public": true }),
        )
        .await;

    let path = format!("/registry/v2/repos?name={encoded}");
    assert_eq!(listed(&owner, &path).await, (sorted(&[&own, &public]), 2));
    let anonymous = w.server.rest_as(None);
    assert_eq!(listed(&anonymous, &path).await, (vec![public.clone()], 1));
    let path = format!("/registry/v2/repos?uidp.ids={own}&uidp.ids={public}");
    assert_eq!(listed(&owner, &path).await, (sorted(&[&own, &public]), 2));
    assert_eq!(listed(&anonymous, &path).await, (vec![public.clone()], 1));
    let path = format!("/registry/v2/repos?uidp.ids={own}&name={encoded}%202");
    assert_eq!(listed(&owner, &path).await, (vec![], 0));
    w.server.stop().await;
}

#[tokio::test]
async fn total_count_and_paging_follow_the_filters() {
    let w = world().await;
    let admin = w.server.rest();
    let mut many = Vec::new();
    for i in 0..5 {
        let name = if i % 2 == 0 { "page" } else { "other" };
        many.push(
            admin
                .create(&format!("/iam/v2/groups/{}", w.e), json!({ "name": name }))
                .await,
        );
    }
    let filtered = format!("/iam/v2/groups?uidp.children_of={}&name=page", w.e);
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let response = admin
            .get(&format!("{filtered}&pageSize=1&pageToken={token}"))
            .await;
        assert_eq!(response.status, StatusCode::OK, "{:?}", response.body);
        assert_eq!(
            total_count(&response),
            3,
            "totalCount counts the filtered items"
        );
        seen.extend(uids(&response));
        token = response.body["nextPageToken"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(seen, sorted(&[&many[0], &many[2], &many[4]]));

    // A token is bound to the filter values it was issued for.
    let first = admin.get(&format!("{filtered}&pageSize=1")).await;
    let token = first.body["nextPageToken"].as_str().unwrap().to_owned();
    let with = |query: &str| {
        format!(
            "/iam/v2/groups?uidp.children_of={}&pageSize=1&pageToken={token}{query}",
            w.e
        )
    };
    assert_eq!(admin.get(&with("&name=page")).await.status, StatusCode::OK);
    for query in [
        "&name=other",
        "",
        &format!("&name=page&uidp.ids={}", many[2]),
        "&name=page&uidp.in_root=true",
    ] {
        let refused = admin.get(&with(query)).await;
        assert_eq!(
            (refused.status, refused.error_status()),
            (StatusCode::BAD_REQUEST, "INVALID_ARGUMENT"),
            "{query}: {:?}",
            refused.body
        );
    }
    let ids = |list: &[&String]| {
        list.iter()
            .map(|uid| format!("&uidp.ids={uid}"))
            .collect::<String>()
    };
    let by_ids = format!("/iam/v2/groups?pageSize=1{}", ids(&[&many[0], &many[1]]));
    let first = admin.get(&by_ids).await;
    assert_eq!(total_count(&first), 2);
    let token = first.body["nextPageToken"].as_str().unwrap();
    let other_ids = format!(
        "/iam/v2/groups?pageSize=1{}&pageToken={token}",
        ids(&[&many[0], &many[3]])
    );
    assert_eq!(
        admin.get(&other_ids).await.status,
        StatusCode::BAD_REQUEST,
        "other uids"
    );
    let ancestors = format!("/iam/v2/groups?pageSize=1&uidp.ancestors_of={}", many[0]);
    let first = admin.get(&ancestors).await;
    assert_eq!(total_count(&first), 2, "root and e");
    let token = first.body["nextPageToken"].as_str().unwrap();
    // `c` has other ancestors than `many[0]` (a sibling would share them).
    let moved = format!(
        "/iam/v2/groups?pageSize=1&uidp.ancestors_of={}&pageToken={token}",
        w.c
    );
    let same = format!("{ancestors}&pageToken={token}");
    let (rest_of_walk, _) = listed(&admin, &same).await;
    assert_eq!(rest_of_walk.len(), 1);
    assert_eq!(
        admin.get(&moved).await.status,
        StatusCode::BAD_REQUEST,
        "ancestors of another uid"
    );
    w.server.stop().await;
}

#[tokio::test]
async fn undeclared_filters_are_refused() {
    let w = world().await;
    let admin = w.server.rest();
    let refused = |path: String| {
        let admin = admin.clone();
        async move { violations(&admin.get(&path).await) }
    };
    assert_eq!(
        refused(format!("/registry/v2/repos?uidp.ancestors_of={}", w.c)).await,
        ["uidp.ancestorsOf"]
    );
    assert_eq!(
        refused("/registry/v2/repos?uidp.in_root=true".to_owned()).await,
        ["uidp.inRoot"]
    );
    assert_eq!(
        refused(format!("/iam/v2/roles?uidp.ancestors_of={}", w.c)).await,
        ["uidp.ancestorsOf"]
    );
    assert_eq!(
        refused(format!("/iam/v2/identities?uidp.ancestors_of={}", w.c)).await,
        ["uidp.ancestorsOf"]
    );
    // Declared ones are answered on the same collections.
    let path = format!("/registry/v2/repos?uidp.ids={}&name=x", w.c);
    assert_eq!(listed(&admin, &path).await, (vec![], 0));
    let path = "/iam/v2/identities?uidp.in_root=true&name=member";
    assert_eq!(listed(&admin, path).await, (vec![], 0));
    w.server.stop().await;
}

#[tokio::test]
async fn ids_and_name_over_grpc() {
    let w = world().await;
    let channel = w.server.channel().await;
    let mut admin = GroupServiceClient::with_interceptor(
        channel.clone(),
        platform_tests::bearer(&w.server.admin_token),
    );
    let mut member =
        GroupServiceClient::with_interceptor(channel, platform_tests::bearer(&w.member));
    let request = |uidp: UidpFilter, name: &str| ListGroupsRequest {
        uidp: Some(uidp),
        name: name.into(),
        ..Default::default()
    };
    let ids = |ids: &[&String]| UidpFilter {
        ids: ids.iter().map(|uid| (*uid).clone()).collect(),
        ..Default::default()
    };
    let under_root = || UidpFilter {
        descendants_of: w.root.clone(),
        ..Default::default()
    };
    let uids = |response: platform_api::platform::iam::v2::ListGroupsResponse| {
        let mut uids: Vec<String> = response.items.into_iter().map(|g| g.uid).collect();
        uids.sort();
        (uids, response.total_count)
    };

    let listed = admin
        .list_groups(request(ids(&[&w.a, &w.c, &w.other]), ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(uids(listed), (sorted(&[&w.a, &w.c, &w.other]), 3));
    let listed = member
        .list_groups(request(ids(&[&w.a, &w.c, &w.other, &w.root]), ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(uids(listed), (sorted(&[&w.a, &w.c]), 2));
    let listed = admin
        .list_groups(request(under_root(), "alpha"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(uids(listed), (sorted(&[&w.a, &w.d]), 2));
    let listed = admin
        .list_groups(request(ids(&[&w.a, &w.e]), "alphabet"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(uids(listed), (vec![w.e.clone()], 1));
    let listed = admin
        .list_groups(request(
            UidpFilter {
                ancestors_of: w.c.clone(),
                ..Default::default()
            },
            "",
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(uids(listed), (sorted(&[&w.root, &w.a, &w.b]), 3));

    // A malformed uid: the same violation as over REST.
    let status = admin
        .list_groups(request(
            UidpFilter {
                ids: vec!["not-a-uid".into()],
                ..Default::default()
            },
            "",
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    let details = status.get_error_details();
    let fields: Vec<&str> = details
        .bad_request()
        .expect("a BadRequest detail")
        .field_violations
        .iter()
        .map(|violation| violation.field.as_str())
        .collect();
    assert_eq!(fields, ["uidp.ids[0]"]);

    // Page tokens are bound to the filter values on gRPC too.
    let first = admin
        .list_groups(ListGroupsRequest {
            page_size: 1,
            ..request(under_root(), "alpha")
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.total_count, 2);
    let refused = admin
        .list_groups(ListGroupsRequest {
            page_size: 1,
            page_token: first.next_page_token,
            ..request(under_root(), "beta")
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    w.server.stop().await;
}

/// AIP-160 filters look into lists and nested fields: the roles that grant
/// a capability (`capabilities:groups.create`), the identities an issuer
/// signs in (`claimMatch.issuer = "…"`), over REST and alike on both
/// engines.
#[tokio::test]
async fn filters_look_into_capabilities_and_claims() {
    let w = world().await;
    let admin = w.server.rest();
    let filtered = |collection: &str, filter: &str| {
        let filter: String = form_urlencoded::byte_serialize(filter.as_bytes()).collect();
        format!(
            "/iam/v2/{collection}?uidp.children_of={}&filter={filter}",
            w.root
        )
    };
    // `world` made "member" (groups.get, groups.list) and "owner" (groups.*,
    // repos.*) under the root.
    let count = |listed: (Vec<String>, u64)| listed.1;
    for (filter, expected) in [
        ("capabilities:groups.list", 2),
        ("capabilities:groups.create", 1),
        ("capabilities:\"repos.*\"", 1),
        ("capabilities:*", 2),
        ("NOT capabilities:repos.delete", 1),
        ("capabilities:groups.list AND name = member", 1),
        ("capabilities:advisories.get", 0),
    ] {
        let listed = listed(&admin, &filtered("roles", filter)).await;
        assert_eq!(count(listed), expected, "{filter}");
    }
    for (name, issuer) in [
        ("ci", "https://ci.example"),
        ("laptop", "https://sso.example"),
        ("desk", "https://sso.example"),
    ] {
        let claim = json!({ "issuer": issuer, "subject": name });
        admin
            .create(
                &format!("/iam/v2/identities/{}", w.root),
                json!({ "name": name, "claimMatch": claim }),
            )
            .await;
    }
    for (filter, expected) in [
        ("claimMatch.issuer = \"https://sso.example\"", 2),
        ("claim_match.issuer = \"https://ci.*\"", 1),
        ("claimMatch.subject = laptop OR claimMatch.subject = ci", 2),
        ("claimMatch.issuer:*", 3),
    ] {
        let listed = listed(&admin, &filtered("identities", filter)).await;
        assert_eq!(count(listed), expected, "{filter}");
    }
    // A list's other comparisons are refused, naming the filter.
    let refused = admin
        .get(&filtered("roles", "capabilities = groups.list"))
        .await;
    assert_eq!(violations(&refused), ["filter"]);
    w.server.stop().await;
}
