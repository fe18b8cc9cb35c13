//! The web console over HTTP, as a browser without script meets it:
//! sessions (cookie attributes, sign-out, expiry with the API's
//! authentication), CSRF and `Origin` checks, escaping and the policy
//! headers, what a viewer is offered and refused, stale edits and refused
//! deletes in words. The walk in a real browser is
//! `platform/platform-tests/interop/console_walk.py`.

use platform_tests::{Method, StatusCode, TestServer};
use protoapi_runtime::console::testing::Browser;
use serde_json::json;

/// A new group under the platform's root for one test (tests on
/// PostgreSQL share the database, and its root).
async fn organization(server: &TestServer) -> String {
    let root = server.platform_root();
    server
        .rest()
        .create(
            &format!("/iam/v2/groups/{root}"),
            json!({"name": "console test"}),
        )
        .await
}

/// A browser of `server`'s console.
fn browser(server: &TestServer) -> Browser {
    Browser::new(format!("http://{}", server.address))
}

#[tokio::test]
async fn a_session_opens_with_a_token_the_api_accepts_and_closes_at_sign_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut browser = browser(&server);
    let closed = browser.get("/console/groups").await;
    assert_eq!(closed.status, StatusCode::SEE_OTHER);
    assert_eq!(
        closed.location(),
        "/console/signin?next=%2Fconsole%2Fgroups"
    );

    let refused = browser
        .post("/console/signin", &[("token", "not-a-token")])
        .await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert!(refused.headers.get("set-cookie").is_none());
    assert!(refused.html.contains("id=\"error\""));

    let signed_in = browser.sign_in(&server.admin_token).await;
    let cookie = signed_in
        .headers
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/console/"] {
        assert!(cookie.contains(attribute), "{cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
    let home = browser.get("/console/").await;
    assert_eq!(home.status, StatusCode::OK);
    assert!(
        home.html.contains("class=\"roots\"") && home.html.contains("id=\"signout\""),
        "{}",
        home.html
    );
    assert!(
        !home.html.contains(server.admin_token.trim()),
        "the token never reaches a page"
    );

    // The cookie opens console pages only: the API wants its token.
    let api = browser.get("/iam/v2/groups").await;
    assert_eq!(api.status, StatusCode::UNAUTHORIZED);

    let csrf = home.csrf();
    let forged = browser
        .post("/console/signout", &[("csrf", "forged")])
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let out = browser.post("/console/signout", &[("csrf", &csrf)]).await;
    assert_eq!(out.location(), "/console/signin");
    assert!(
        out.headers
            .get("set-cookie")
            .unwrap()
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    let after = browser.get("/console/").await;
    assert_eq!(
        after.status,
        StatusCode::SEE_OTHER,
        "the old cookie opens nothing"
    );
    server.stop().await;
}

#[tokio::test]
async fn the_front_door_leads_to_the_console() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let front = browser(&server).get("/").await;
    assert_eq!(front.status, StatusCode::SEE_OTHER);
    assert_eq!(front.location(), "/console/");
    let other = server.rest().get("/nowhere").await;
    assert_eq!(
        other.status,
        StatusCode::NOT_FOUND,
        "other paths are the API's 404"
    );
    let posted = server.rest().post("/", serde_json::json!({})).await;
    assert_eq!(
        posted.status,
        StatusCode::NOT_FOUND,
        "only a GET is sent on"
    );
    server.stop().await;
}

#[tokio::test]
async fn sign_in_goes_back_only_to_console_pages() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let browser = browser(&server);
    for (next, expected) in [
        ("/console/groups?pageSize=5", "/console/groups?pageSize=5"),
        ("https://evil.example/", "/console/"),
        ("//evil.example/", "/console/"),
        ("/console//evil.example/", "/console/"),
        ("/iam/v2/groups", "/console/"),
        ("/console/caf\u{e9}", "/console/"),
        ("/console/a\r\nSet-Cookie: x=1", "/console/"),
    ] {
        let page = browser
            .post(
                "/console/signin",
                &[("token", &server.admin_token), ("next", next)],
            )
            .await;
        assert_eq!(page.location(), expected, "next={next}");
    }
    let cross_site = browser
        .send(
            Method::POST,
            "/console/signin",
            Some(&[("token", &server.admin_token)]),
            &[("origin", "https://evil.example")],
        )
        .await;
    assert_eq!(
        cross_site.status,
        StatusCode::FORBIDDEN,
        "a sign-in posted from another site"
    );
    server.stop().await;
}

#[tokio::test]
async fn forms_need_their_csrf_token_and_this_origin() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let root = organization(&server).await;
    let mut browser = browser(&server);
    browser.sign_in(&server.admin_token).await;
    let form = browser
        .get(&format!("/console/groups/new?parent={root}"))
        .await;
    let csrf = form.csrf();
    let path = format!("/console/groups/new?parent={root}");
    let missing = browser.post(&path, &[("name", "no-token")]).await;
    assert_eq!(missing.status, StatusCode::FORBIDDEN);
    assert!(
        missing.html.contains("class=\"error csrf\""),
        "{}",
        missing.html
    );
    let elsewhere = browser
        .send(
            Method::POST,
            &path,
            Some(&[("csrf", &csrf), ("name", "elsewhere")]),
            &[("origin", "https://evil.example")],
        )
        .await;
    assert_eq!(elsewhere.status, StatusCode::FORBIDDEN);
    let made = browser
        .post(&path, &[("csrf", &csrf), ("name", "here")])
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.html);
    let names = server
        .rest()
        .get(&format!("/iam/v2/groups?uidp.children_of={root}"))
        .await;
    let names: Vec<&str> = names.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["here"],
        "only the form with its token and origin wrote"
    );
    server.stop().await;
}

#[tokio::test]
async fn pages_escape_names_and_carry_the_policy_headers() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let root = organization(&server).await;
    let hostile = "<script>alert(1)</script>";
    let uid = server
        .rest()
        .create(&format!("/iam/v2/groups/{root}"), json!({"name": hostile}))
        .await;
    let mut browser = browser(&server);
    browser.sign_in(&server.admin_token).await;
    let page = browser.get(&format!("/console/groups/item/{uid}")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.html
            .contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
        "{}",
        page.html
    );
    assert!(!page.html.contains(hostile));
    let policy = page
        .headers
        .get("content-security-policy")
        .unwrap()
        .to_str()
        .unwrap();
    assert!(
        policy.contains("frame-ancestors 'none'") && !policy.contains("unsafe-inline"),
        "{policy}"
    );
    assert!(
        !policy.contains("script-src"),
        "no script at all: default-src 'none' covers it: {policy}"
    );
    assert_eq!(
        page.headers.get("x-content-type-options").unwrap(),
        "nosniff"
    );
    assert_eq!(page.headers.get("cache-control").unwrap(), "no-store");
    server.stop().await;
}

#[tokio::test]
async fn a_viewer_is_offered_no_writes_and_is_refused_them() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let root = organization(&server).await;
    let viewer_role = server.builtin_role("viewer").await;
    let viewer = server
        .member(&root, "viewer-person", &viewer_role, &root)
        .await;
    let mut browser = browser(&server);
    browser.sign_in(&viewer.token).await;
    let item = browser.get(&format!("/console/groups/item/{root}")).await;
    assert_eq!(item.status, StatusCode::OK, "{}", item.html);
    for offered in ["id=\"edit\"", "id=\"delete\"", "class=\"create-link"] {
        assert!(
            !item.html.contains(offered),
            "a viewer is offered {offered}"
        );
    }
    let list = browser.get(&format!("/console/groups?parent={root}")).await;
    assert!(!list.html.contains("id=\"create\""));
    let csrf = item.csrf();
    let refused = browser
        .post(
            &format!("/console/groups/new?parent={root}"),
            &[("csrf", &csrf), ("name", "y")],
        )
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(
        refused.html.contains("class=\"error permission_denied\""),
        "{}",
        refused.html
    );
    let edit = browser
        .post(
            &format!("/console/groups/edit/{root}"),
            &[
                ("csrf", &csrf),
                ("description", "mine"),
                ("orig.description", ""),
            ],
        )
        .await;
    assert_eq!(edit.status, StatusCode::FORBIDDEN);
    let groups = server
        .rest()
        .get(&format!("/iam/v2/groups?uidp.children_of={root}"))
        .await;
    assert_eq!(
        groups.body["items"].as_array().map_or(0, Vec::len),
        0,
        "nothing was written"
    );
    server.stop().await;
}

#[tokio::test]
async fn edits_send_the_changed_fields_with_the_etag_read_and_refusals_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let root = organization(&server).await;
    let admin = server.rest();
    let team = admin
        .create(
            &format!("/iam/v2/groups/{root}"),
            json!({"name": "team", "description": "old"}),
        )
        .await;
    let sub = admin
        .create(&format!("/iam/v2/groups/{team}"), json!({"name": "sub"}))
        .await;
    let mut browser = browser(&server);
    browser.sign_in(&server.admin_token).await;

    let form = browser.get(&format!("/console/groups/edit/{team}")).await;
    let (csrf, etag) = (form.csrf(), form.hidden("etag"));
    let changed = [
        ("csrf", csrf.as_str()),
        ("etag", &etag),
        ("name", "team"),
        ("orig.name", "team"),
        ("description", "new"),
        ("orig.description", "old"),
    ];
    let saved = browser
        .post(&format!("/console/groups/edit/{team}"), &changed)
        .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.html);
    let group = admin.get(&format!("/iam/v2/groups/{team}")).await;
    assert_eq!(
        (
            group.body["name"].as_str(),
            group.body["description"].as_str()
        ),
        (Some("team"), Some("new"))
    );

    // The same form again: its etag is stale now.
    let stale = browser
        .post(
            &format!("/console/groups/edit/{team}"),
            &[
                ("csrf", csrf.as_str()),
                ("etag", &etag),
                ("description", "newer"),
                ("orig.description", "old"),
            ],
        )
        .await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    assert!(
        stale.html.contains("class=\"error aborted\"") && stale.html.contains("changed since"),
        "{}",
        stale.html
    );
    assert_eq!(
        admin.get(&format!("/iam/v2/groups/{team}")).await.body["description"],
        "new"
    );

    // A violation appears beside its field.
    let form = browser.get(&format!("/console/groups/edit/{team}")).await;
    let long = "x".repeat(2000);
    let bad = [
        ("csrf", csrf.as_str()),
        ("etag", &form.hidden("etag")),
        ("description", &long),
        ("orig.description", "new"),
    ];
    let refused = browser
        .post(&format!("/console/groups/edit/{team}"), &bad)
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(
        refused
            .html
            .contains("class=\"violation\" data-field=\"description\""),
        "{}",
        refused.html
    );

    // A group with children is not deleted, and the page says why.
    let delete = browser
        .post(
            &format!("/console/groups/delete/{team}"),
            &[("csrf", &csrf)],
        )
        .await;
    assert_eq!(delete.status, StatusCode::BAD_REQUEST);
    assert!(
        delete.html.contains("class=\"error failed_precondition\"")
            && delete.html.contains("<ul class=\"preconditions\"><li>"),
        "{}",
        delete.html
    );
    assert!(
        delete.html.contains(&format!(
            "<li>A group ({sub}) still depends on it: delete it first.</li>"
        )),
        "in words: {}",
        delete.html
    );
    assert_eq!(
        admin.get(&format!("/iam/v2/groups/{team}")).await.status,
        StatusCode::OK
    );
    server.stop().await;
}

#[tokio::test]
async fn role_bindings_choose_their_role_and_identity_from_the_collections() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let root = organization(&server).await;
    let admin = server.rest();
    let team = admin
        .create(&format!("/iam/v2/groups/{root}"), json!({"name": "team"}))
        .await;
    let walker = admin
        .create(
            &format!("/iam/v2/identities/{root}"),
            json!({"name": "walker"}),
        )
        .await;
    let viewer = server.builtin_role("viewer").await;
    let mut browser = browser(&server);
    browser.sign_in(&server.admin_token).await;
    let form = browser
        .get(&format!("/console/roleBindings/new?parent={team}"))
        .await;
    assert!(
        form.html
            .contains(&format!("<option value=\"{viewer}\">viewer (")),
        "{}",
        form.html
    );
    assert!(
        form.html
            .contains(&format!("<option value=\"{walker}\">walker ("))
    );
    let made = browser
        .post(
            &format!("/console/roleBindings/new?parent={team}"),
            &[
                ("csrf", &form.csrf()),
                ("role", &viewer),
                ("identity", &walker),
            ],
        )
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.html);
    let bindings = admin
        .get(&format!("/iam/v2/roleBindings?uidp.children_of={team}"))
        .await;
    let binding = &bindings.body["items"][0];
    assert_eq!(
        (binding["role"].as_str(), binding["identity"].as_str()),
        (Some(viewer.as_str()), Some(walker.as_str()))
    );
    let created = format!("{}?done=created", binding["uid"].as_str().unwrap());
    assert!(made.location().ends_with(&created), "{}", made.location());
    // The page it leads to says so.
    let page = browser.get(made.location()).await;
    assert!(
        page.html
            .contains("<p id=\"done\" class=\"done\" role=\"status\">Created.</p>")
    );
    let forged = browser
        .get(&made.location().replace("created", "%3Cb%3Epwned"))
        .await;
    assert!(!forged.html.contains("id=\"done\"") && !forged.html.contains("pwned"));
    server.stop().await;
}

#[tokio::test]
async fn a_member_bound_below_the_top_finds_its_groups_at_home() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let org = organization(&server).await;
    let admin = server.rest();
    let team = admin
        .create(
            &format!("/iam/v2/groups/{org}"),
            json!({"name": "the team"}),
        )
        .await;
    admin
        .create(
            &format!("/iam/v2/groups/{team}"),
            json!({"name": "its squad"}),
        )
        .await;
    let viewer = server.builtin_role("viewer").await;
    let member = server.member(&org, "team member", &viewer, &team).await;
    let mut browser = browser(&server);
    browser.sign_in(&member.token).await;
    let home = browser.get("/console/").await;
    assert!(
        home.html.contains(&format!(
            "href=\"/console/groups/item/{team}\">the team</a>"
        )),
        "{}",
        home.html
    );
    assert!(
        !home.html.contains("its squad"),
        "its squad is under the team: {}",
        home.html
    );
    assert!(
        !home.html.contains("console test"),
        "the organization is not the member's to see"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_key_or_parent_that_names_nothing_is_refused_before_any_call() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut browser = browser(&server);
    browser.sign_in(&server.admin_token).await;
    // Almost 64 KB (the longest URI a client sends) of uid-shaped
    // segments: once a breadcrumb and a call per prefix.
    let long = format!("{}{}", "a".repeat(40), "/0123456789abcdef".repeat(3_700));
    for (path, status) in [
        (
            format!("/console/roleBindings?parent={long}"),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("/console/roleBindings/new?parent={long}"),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("/console/groups?parent={long}"),
            StatusCode::BAD_REQUEST,
        ),
        (
            format!("/console/groups/item/{long}"),
            StatusCode::NOT_FOUND,
        ),
        (
            format!("/console/groups/edit/{long}"),
            StatusCode::NOT_FOUND,
        ),
        (
            format!("/console/groups/delete/{long}"),
            StatusCode::NOT_FOUND,
        ),
    ] {
        let page = browser.get(&path).await;
        assert_eq!(page.status, status, "{}: {}", &path[..40], page.html);
        assert!(
            page.html.len() < 16 << 10,
            "{}: a page of {} bytes",
            &path[..40],
            page.html.len()
        );
    }
    server.stop().await;
}

#[tokio::test]
async fn a_local_identity_is_created_without_the_optional_claim() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let root = organization(&server).await;
    let mut browser = browser(&server);
    browser.sign_in(&server.admin_token).await;
    let path = format!("/console/identities/new?parent={root}");
    let form = browser.get(&path).await;
    assert!(
        form.html
            .contains("<input id=\"f-name\" name=\"name\" value=\"\" required>"),
        "{}",
        form.html
    );
    // Required inside the claim, which is optional: the browser must not
    // insist on them.
    for field in ["claimMatch.issuer", "claimMatch.subject"] {
        let input = format!("<input id=\"f-{field}\" name=\"{field}\" value=\"\">");
        assert!(form.html.contains(&input), "{field}: {}", form.html);
    }
    // What a browser posts: every input, the claim's left empty.
    let made = browser
        .post(
            &path,
            &[
                ("csrf", &form.csrf()),
                ("name", "local"),
                ("claimMatch.issuer", ""),
                ("claimMatch.subject", ""),
            ],
        )
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.html);
    server.stop().await;
}

/// The API reference at `/docs`, without a token: every operation of the
/// OpenAPI document is on it (by its operationId, method and path), under
/// a policy that allows no script; its stylesheet is served beside it.
#[tokio::test]
async fn the_api_reference_names_every_operation() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let anonymous = browser(&server);
    let page = anonymous.get("/docs").await;
    assert_eq!(page.status, StatusCode::OK);
    let header = |name: &str| page.headers.get(name).unwrap().to_str().unwrap().to_owned();
    assert!(header("content-type").starts_with("text/html"));
    let policy = header("content-security-policy");
    assert!(
        policy.contains("default-src 'none'") && !policy.contains("script"),
        "{policy}"
    );
    let openapi: serde_json::Value = serde_json::from_str(platform_api::OPENAPI_JSON).unwrap();
    let mut operations = 0;
    for (path, item) in openapi["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let id = operation["operationId"].as_str().unwrap();
            assert!(page.html.contains(&format!("id=\"{id}\"")), "{id}");
            let path = path.replace('<', "&#60;").replace('>', "&#62;");
            assert!(page.html.contains(&path), "{path}");
            assert!(page.html.contains(&method.to_uppercase()), "{method}");
            operations += 1;
        }
    }
    assert!(operations > 80, "{operations} operations");
    assert!(page.html.contains("id=\"schema-platform.iam.v2.Group\""));
    assert!(!page.html.contains("<script"));
    let css = anonymous.get("/docs/reference.css").await;
    assert_eq!(css.status, StatusCode::OK);
    server.stop().await;
}

/// Forms and item pages name fields in words and show each field's proto
/// comment as its help; collections are named in words too.
#[tokio::test]
async fn pages_speak_the_contracts_words() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let root = organization(&server).await;
    let mut browser = browser(&server);
    browser.sign_in(&server.admin_token).await;
    let form = browser
        .get(&format!("/console/groups/new?parent={root}"))
        .await;
    for words in [
        ">Name <abbr",
        "A human-readable name.",
        "Resource limits › clusters",
        "Maximum number of clusters.",
    ] {
        assert!(form.html.contains(words), "{words} in {}", form.html);
    }
    assert!(!form.html.contains(">resourceLimits.clusters<"));
    let item = browser.get(&format!("/console/groups/item/{root}")).await;
    for words in ["<dt>Created</dt>", "Role bindings"] {
        assert!(item.html.contains(words), "{words} in {}", item.html);
    }
    server.stop().await;
}

/// A role's capabilities are picked from the closed set the annotations
/// allow, a box each, and what is ticked is what the role grants.
#[tokio::test]
async fn capabilities_are_picked_from_the_closed_set() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let root = organization(&server).await;
    let mut browser = browser(&server);
    browser.sign_in(&server.admin_token).await;
    let path = format!("/console/roles/new?parent={root}");
    let form = browser.get(&path).await;
    for capability in ["groups.create", "roleBindings.delete", "documents.list"] {
        let box_ = format!("type=\"checkbox\" name=\"capabilities\" value=\"{capability}\"");
        assert!(form.html.contains(&box_), "{box_} in {}", form.html);
    }
    assert!(!form.html.contains("<textarea id=\"f-capabilities\""));
    let made = browser
        .submit(
            &path,
            &[
                ("name", "picker"),
                ("capabilities", "groups.get"),
                ("capabilities", "groups.list"),
            ],
        )
        .await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.html);
    let roles = server
        .rest()
        .get(&format!(
            "/iam/v2/roles?uidp.children_of={root}&name=picker"
        ))
        .await;
    assert_eq!(
        roles.body["items"][0]["capabilities"],
        serde_json::json!(["groups.get", "groups.list"]),
        "{:?}",
        roles.body
    );
    server.stop().await;
}
