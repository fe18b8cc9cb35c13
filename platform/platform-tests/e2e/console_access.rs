//! Who holds what, as the console shows it: a group's members and their
//! roles by name (bound there or inherited), an identity's and a role's
//! own bindings, the header's signed-in identity and the organizations it
//! reaches, and only ever what the signed-in caller may see.

use platform_tests::{Member, TestServer};
use protoapi_runtime::console::testing::Browser;
use serde_json::json;

/// An organization under the platform's root, a team in it, the identity
/// `walker` bound `viewer` on the organization, and the signed-in admin.
struct World {
    server: TestServer,
    org: String,
    team: String,
    walker: String,
    viewer: String,
    binding: String,
    browser: Browser,
}

impl World {
    async fn new(dir: &std::path::Path, org_name: &str) -> World {
        let server = TestServer::start(dir).await;
        let admin = server.rest();
        let root = server.platform_root();
        let org = admin
            .create(&format!("/iam/v2/groups/{root}"), json!({"name": org_name}))
            .await;
        let team = admin
            .create(
                &format!("/iam/v2/groups/{org}"),
                json!({"name": "the team"}),
            )
            .await;
        let walker = admin
            .create(
                &format!("/iam/v2/identities/{org}"),
                json!({"name": "walker"}),
            )
            .await;
        let viewer = server.builtin_role("viewer").await;
        let binding = admin
            .create(
                &format!("/iam/v2/roleBindings/{org}"),
                json!({"identity": walker, "role": viewer}),
            )
            .await;
        let mut browser = Browser::new(format!("http://{}", server.address));
        browser.sign_in(&server.admin_token).await;
        World {
            server,
            org,
            team,
            walker,
            viewer,
            binding,
            browser,
        }
    }
}

/// The HTML of the element whose opening tag contains `start`, up to the
/// first `end` after it.
fn section<'a>(html: &'a str, start: &str, end: &str) -> &'a str {
    let from = html
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in {html}"));
    let to = html[from..].find(end).map_or(html.len(), |i| from + i);
    &html[from..to]
}

#[tokio::test]
async fn a_groups_page_shows_each_member_with_its_roles_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let world = World::new(dir.path(), "access org").await;
    let editor = world.server.builtin_role("editor").await;
    let team_binding = world
        .server
        .rest()
        .create(
            &format!("/iam/v2/roleBindings/{}", world.team),
            json!({"identity": world.walker, "role": editor}),
        )
        .await;
    let page = world
        .browser
        .get(&format!("/console/groups/item/{}", world.team))
        .await;
    let access = section(&page.html, "<section id=\"access\">", "</section>");
    let row = section(access, "<tr class=\"holder\">", "</tr>");
    let walker = format!(
        "<a class=\"member\" href=\"/console/identities/item/{}\">walker</a>",
        world.walker
    );
    assert!(row.contains(&walker), "{access}");
    // Bound on the team itself, then inherited from the organization.
    let editor_link = format!("<a class=\"role\" href=\"/console/roles/item/{editor}\">editor</a>");
    let viewer_link = format!(
        "<a class=\"role\" href=\"/console/roles/item/{}\">viewer</a> <span class=\"inherited\">inherited from <a href=\"/console/groups/item/{}\">access org</a></span>",
        world.viewer, world.org
    );
    assert!(row.contains(&editor_link), "{row}");
    assert!(row.contains(&viewer_link), "{row}");
    assert!(row.contains(&format!("/console/roleBindings/item/{team_binding}")));
    assert!(row.contains(&format!("/console/roleBindings/item/{}", world.binding)));
    // walker is one member, on one row; the administrator holds `owner`
    // from the platform's root (where others may hold roles too, on a
    // database other servers share).
    assert_eq!(access.matches(&walker).count(), 1, "{access}");
    let root = world.server.platform_root();
    assert!(
        access.contains(&format!(
            "<span class=\"inherited\">inherited from <a href=\"/console/groups/item/{root}\">root organization</a></span>"
        )),
        "{access}"
    );
    assert!(access.contains(&format!(
        "id=\"grant\" class=\"button\" href=\"/console/roleBindings/new?parent={}\"",
        world.team.replace('/', "%2F")
    )));
    // The bindings' list names identities and roles too.
    let list = world
        .browser
        .get(&format!("/console/roleBindings?parent={}", world.team))
        .await;
    let table = section(&list.html, "<table id=\"items\">", "</table>");
    assert!(table.contains("<th>Identity</th><th>Role</th>"), "{table}");
    assert!(
        table.contains(">walker</a></td><td><a href=\"/console/roles/item/"),
        "{table}"
    );
    world.server.stop().await;
}

#[tokio::test]
async fn an_identity_and_a_role_list_their_own_bindings() {
    let dir = tempfile::tempdir().unwrap();
    let world = World::new(dir.path(), "bound org").await;
    let page = world
        .browser
        .get(&format!("/console/identities/item/{}", world.walker))
        .await;
    let own = section(
        &page.html,
        "data-collection=\"roleBindings\" data-field=\"identity\"",
        "</section>",
    );
    assert!(
        own.contains("<h2>Role bindings with this identity</h2>"),
        "{own}"
    );
    assert!(own.contains(&format!("/console/roleBindings/item/{}", world.binding)));
    assert!(own.contains(&format!(
        "<a href=\"/console/groups/item/{}\">bound org</a>",
        world.org
    )));
    assert!(own.contains(&format!(
        "<a href=\"/console/roles/item/{}\">viewer</a>",
        world.viewer
    )));
    // A role of the organization's own lists who holds it.
    let admin = world.server.rest();
    let auditor = admin
        .create(
            &format!("/iam/v2/roles/{}", world.org),
            json!({"name": "auditor", "capabilities": ["groups.get"]}),
        )
        .await;
    admin
        .create(
            &format!("/iam/v2/roleBindings/{}", world.team),
            json!({"identity": world.walker, "role": auditor}),
        )
        .await;
    let role = world
        .browser
        .get(&format!("/console/roles/item/{auditor}"))
        .await;
    let holders = section(
        &role.html,
        "data-collection=\"roleBindings\" data-field=\"role\"",
        "</section>",
    );
    let walker = format!(
        "<a href=\"/console/identities/item/{}\">walker</a>",
        world.walker
    );
    assert!(holders.contains(&walker), "{holders}");
    world.server.stop().await;
}

/// The built-in `viewer` role is every organization's, and only the
/// administrator reads it (and every binding of it); a member of another
/// organization is refused it without a word of the first one, and finds
/// its own binding on its identity's page.
#[tokio::test]
async fn a_shared_roles_bindings_stay_with_their_organizations() {
    let dir = tempfile::tempdir().unwrap();
    let world = World::new(dir.path(), "first org").await;
    let admin = world.server.rest();
    let root = world.server.platform_root();
    let other = admin
        .create(
            &format!("/iam/v2/groups/{root}"),
            json!({"name": "second org"}),
        )
        .await;
    let Member {
        token,
        binding,
        identity,
        ..
    } = world
        .server
        .member(&other, "outsider", &world.viewer, &other)
        .await;
    // The administrator sees the bindings of both organizations.
    for (member, bound) in [(&world.walker, &world.binding), (&identity, &binding)] {
        let page = world
            .browser
            .get(&format!("/console/identities/item/{member}"))
            .await;
        assert!(
            page.html
                .contains(&format!("/console/roleBindings/item/{bound}"))
        );
    }
    let all = world
        .browser
        .get(&format!("/console/roles/item/{}", world.viewer))
        .await;
    assert!(all.html.contains("<h2>Role bindings with this role</h2>"));
    let mut outsider = Browser::new(format!("http://{}", world.server.address));
    outsider.sign_in(&token).await;
    let role = outsider
        .get(&format!("/console/roles/item/{}", world.viewer))
        .await;
    assert!(role.html.contains("PERMISSION_DENIED"), "{}", role.html);
    let own = outsider
        .get(&format!("/console/identities/item/{identity}"))
        .await;
    let bound = section(
        &own.html,
        "data-collection=\"roleBindings\" data-field=\"identity\"",
        "</section>",
    );
    assert!(
        bound.contains(&format!("/console/roleBindings/item/{binding}")),
        "{bound}"
    );
    for page in [&role.html, &own.html] {
        assert!(!page.contains("walker") && !page.contains(&world.binding));
        assert!(!page.contains("first org"), "{page}");
    }
    world.server.stop().await;
}

#[tokio::test]
async fn the_header_names_who_is_signed_in_and_the_groups_they_reach() {
    let dir = tempfile::tempdir().unwrap();
    let world = World::new(dir.path(), "header org").await;
    let member = world
        .server
        .member(&world.org, "team member", &world.viewer, &world.team)
        .await;
    let mut browser = Browser::new(format!("http://{}", world.server.address));
    browser.sign_in(&member.token).await;
    let page = browser
        .get(&format!("/console/groups/item/{}", world.team))
        .await;
    let header = section(&page.html, "<header>", "</header>");
    // The member may not read its own identity (it lives in the
    // organization, the binding is on the team): named by its UIDP.
    assert!(
        header.contains(&format!(
            "Signed in as <span id=\"who-name\">{}</span></p>",
            member.identity
        )),
        "{header}"
    );
    assert!(
        header.contains(&format!(
            "<a class=\"reach-link\" href=\"/console/groups/item/{}\">the team</a>",
            world.team
        )),
        "{header}"
    );
    assert!(
        !header.contains("header org"),
        "not the member's to see: {header}"
    );
    let admin = world.browser.get("/console/").await;
    let header = section(&admin.html, "<header>", "</header>");
    assert!(
        header.contains("\">platform administrator</a> <span class=\"tag\">administrator</span>"),
        "{header}"
    );
    // Every root organization is the administrator's: the header names a
    // few (a database shared with other servers holds many) and leads to
    // the home page for all of them.
    let root = world.server.platform_root();
    let named = header.matches("class=\"reach-link\"").count();
    assert!((1..=8).contains(&named), "{header}");
    let root_link = format!("class=\"reach-link\" href=\"/console/groups/item/{root}\"");
    let more = "<a id=\"reach-more\" href=\"/console/\">all…</a>";
    assert!(
        header.contains(&root_link) || header.contains(more),
        "{header}"
    );
    if header.contains(more) {
        assert_eq!(named, 8, "{header}");
    }
    world.server.stop().await;
}

#[tokio::test]
async fn display_names_come_from_the_annotation_files() {
    let dir = tempfile::tempdir().unwrap();
    let world = World::new(dir.path(), "named org").await;
    let repos = world
        .browser
        .get(&format!("/console/repos?parent={}", world.org))
        .await;
    assert!(
        repos
            .html
            .contains("<h1 id=\"title\">Repositories in named org</h1>"),
        "{}",
        repos.html
    );
    let form = world
        .browser
        .get(&format!("/console/identities/new?parent={}", world.org))
        .await;
    assert!(
        form.html.contains("Sign-in claim › issuer"),
        "{}",
        form.html
    );
    let item = world
        .browser
        .get(&format!("/console/groups/item/{}", world.org))
        .await;
    for words in ["<dt>UID</dt>", "<dt>Created</dt>", "<dt>Last changed</dt>"] {
        assert!(item.html.contains(words), "{words} in {}", item.html);
    }
    // Times in UTC to the second, not RFC 3339.
    let start = "<dd data-field=\"createTime\">";
    let created = &section(&item.html, start, "</dd>")[start.len()..];
    assert_eq!(created.len(), "2026-01-31 12:00:05 UTC".len(), "{created}");
    assert!(
        created.ends_with(" UTC") && created.as_bytes()[10] == b' ',
        "{created}"
    );
    world.server.stop().await;
}
