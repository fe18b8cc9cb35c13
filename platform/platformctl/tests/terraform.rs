//! `terraform-provider-platform` driven by a real Terraform CLI against a
//! real server (SQLite, or PostgreSQL with `E2E_DATABASE_URL`), through a
//! CLI configuration whose `dev_overrides` point at the binary built here:
//! no registry is contacted.
//!
//! The CLI is `$TERRAFORM` (CI sets it to Terraform 1.0.3 from
//! `.ci/terraform.sh`), else `terraform` on the `PATH`; without either the
//! test says so and passes without running (`protoapi_runtime::terraform::testing`).

use platform_tests::{StatusCode, TestServer};
use protoapi_runtime::terraform::testing::{Workspace, terraform};
use serde_json::json;

const ORGANIZATION: &str = r#"
resource "platform_group" "org" {
  name = "acme"
}

data "platform_group" "org" {
  id = platform_group.org.id
}

output "organization" {
  value = data.platform_group.org.name
}

data "platform_roles" "readers" {
  descendants_of = platform_group.org.id
  name           = "reader"
  depends_on     = [platform_role.reader]
}

# A collection the API only reads (advisories): data sources only.
data "platform_advisories" "found" {
  descendants_of = platform_group.org.id
}

output "advisories" {
  value = length(data.platform_advisories.found.items)
}

output "reader_roles" {
  value = [for role in data.platform_roles.readers.items : role.name]
}

resource "platform_group" "team" {
  parent_id       = platform_group.org.id
  name            = "team"
  description     = "the team"
  resource_limits = { repositories = 5 }
}

resource "platform_role" "reader" {
  parent_id    = platform_group.org.id
  name         = "reader"
  capabilities = ["groups.get", "groups.list"]
}

resource "platform_role" "writer" {
  parent_id    = platform_group.org.id
  name         = "writer"
  capabilities = ["groups.update"]
}

resource "platform_identity" "ci" {
  parent_id = platform_group.team.id
  name      = "ci"
}

resource "platform_repo" "app" {
  parent_id = platform_group.team.id
  name      = "app"
  public    = true
}
"#;

fn binding(role: &str) -> String {
    format!(
        "\nresource \"platform_role_binding\" \"ci\" {{\n  parent_id = platform_group.team.id\n  \
         identity  = platform_identity.ci.id\n  role      = platform_role.{role}.id\n}}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terraform_manages_an_organization_end_to_end() {
    let Some(terraform) = terraform() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(data.path()).await;
    let rest = server.rest();
    let endpoint = format!("http://{}", server.address);
    let workspace = Workspace::new(
        terraform,
        env!("CARGO_BIN_EXE_terraform-provider-platform").as_ref(),
        "platform",
        &endpoint,
        &[("PLATFORM_TOKEN", server.admin_token.trim())],
    );

    // Apply: an organization, a nested group, two roles, an identity, a
    // binding and a repo, read back through a data source and a list data
    // source; a second plan has nothing to do.
    workspace.configure(&(ORGANIZATION.to_owned() + &binding("reader")));
    let applied = blocking(|| workspace.ok(&["apply", "-auto-approve"]));
    assert!(applied.contains("7 added"), "{applied}");
    assert!(applied.contains("organization = \"acme\""), "{applied}");
    assert!(
        applied.contains("reader_roles = [\n  \"reader\",\n]"),
        "{applied}"
    );
    assert!(applied.contains("advisories = 0"), "{applied}");
    blocking(|| workspace.assert_no_changes("apply"));
    let team = blocking(|| workspace.id("platform_group.team"));
    let got = rest.get(&format!("/iam/v2/groups/{team}")).await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.body["description"], "the team");
    assert_eq!(got.body["resourceLimits"]["repositories"], 5);

    // A change made out of band shows as exactly that attribute; apply
    // puts it back.
    let changed = rest
        .patch(
            &format!("/iam/v2/groups/{team}?updateMask=description"),
            json!({"description": "changed"}),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    let (changes, plan) = blocking(|| workspace.plan());
    assert!(changes, "{plan}");
    assert!(
        plan.contains(r#"~ description     = "changed" -> "the team""#),
        "{plan}"
    );
    assert!(
        plan.contains("0 to add, 1 to change, 0 to destroy"),
        "{plan}"
    );
    for quiet in ["create_time", "resource_limits", "verified", "uid "] {
        assert!(!plan.contains(quiet), "{quiet} in:\n{plan}");
    }
    blocking(|| workspace.ok(&["apply", "-auto-approve"]));
    let got = rest.get(&format!("/iam/v2/groups/{team}")).await;
    assert_eq!(got.body["description"], "the team");
    blocking(|| workspace.assert_no_changes("restoring the description"));

    // What the contract declares is checked at plan time, naming the
    // attribute; what only the server knows fails the apply, naming it too.
    workspace.also(Some(
        "resource \"platform_role\" \"bad\" {\n  parent_id = platform_group.org.id\n  \
         name = \"bad\"\n  capabilities = [\"groups.fly\"]\n}\n",
    ));
    let refused = blocking(|| workspace.run(&["plan"]));
    assert_eq!(refused.code, 1, "{}", refused.output);
    assert!(
        refused.output.contains("Invalid `capabilities`"),
        "{}",
        refused.output
    );
    assert!(
        refused.output.contains("`groups.fly` is not one of"),
        "{}",
        refused.output
    );
    assert!(
        refused.output.contains(r#"capabilities = ["groups.fly"]"#),
        "{}",
        refused.output
    );
    workspace.also(Some(
        "resource \"platform_role_binding\" \"bad\" {\n  parent_id = platform_group.team.id\n  \
         identity = platform_identity.ci.id\n  role = \"${platform_group.org.id}/0123456789abcdef\"\n}\n",
    ));
    let refused = blocking(|| workspace.run(&["apply", "-auto-approve"]));
    assert_eq!(refused.code, 1, "{}", refused.output);
    assert!(
        refused
            .output
            .contains("Error creating platform_role_binding"),
        "{}",
        refused.output
    );
    assert!(
        refused.output.contains("with platform_role_binding.bad"),
        "{}",
        refused.output
    );
    assert!(
        refused.output.contains("role = \"${platform_group.org.id}"),
        "{}",
        refused.output
    );
    workspace.also(None);
    blocking(|| workspace.assert_no_changes("refused configurations"));

    // An immutable attribute: a new binding replaces the old one.
    let old_binding = blocking(|| workspace.id("platform_role_binding.ci"));
    workspace.configure(&(ORGANIZATION.to_owned() + &binding("writer")));
    let (_, plan) = blocking(|| workspace.plan());
    assert!(
        plan.contains("platform_role_binding.ci must be replaced"),
        "{plan}"
    );
    assert!(plan.contains("# forces replacement"), "{plan}");
    assert!(
        plan.contains("1 to add, 0 to change, 1 to destroy"),
        "{plan}"
    );
    blocking(|| workspace.ok(&["apply", "-auto-approve"]));
    let gone = rest
        .get(&format!("/iam/v2/roleBindings/{old_binding}"))
        .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);

    // Import by uid: the state is rebuilt and matches the configuration.
    let new_binding = blocking(|| workspace.id("platform_role_binding.ci"));
    blocking(|| {
        workspace.ok(&[
            "state",
            "rm",
            "platform_group.team",
            "platform_role_binding.ci",
        ])
    });
    blocking(|| workspace.ok(&["import", "platform_group.team", &team]));
    blocking(|| workspace.ok(&["import", "platform_role_binding.ci", &new_binding]));
    blocking(|| workspace.assert_no_changes("import"));
    // By name, when exactly one item the caller can see has it.
    blocking(|| workspace.ok(&["state", "rm", "platform_repo.app"]));
    blocking(|| workspace.ok(&["import", "platform_repo.app", "app"]));
    blocking(|| workspace.assert_no_changes("import by name"));

    // A delete refused by a dependent made out of band names it, and
    // nothing is lost.
    let outsider = rest
        .create(
            &format!("/iam/v2/groups/{team}"),
            json!({"name": "outsider"}),
        )
        .await;
    let refused = blocking(|| workspace.run(&["destroy", "-auto-approve"]));
    assert_ne!(refused.code, 0, "{}", refused.output);
    assert!(refused.output.contains(&outsider), "{}", refused.output);
    assert!(
        refused.output.contains("still has dependent"),
        "{}",
        refused.output
    );
    let left = blocking(|| workspace.state());
    assert!(left.contains(&"platform_group.team".to_owned()), "{left:?}");
    assert!(left.contains(&"platform_group.org".to_owned()), "{left:?}");
    assert_eq!(
        rest.get(&format!("/iam/v2/groups/{team}")).await.status,
        StatusCode::OK
    );

    // Without it, destroy removes everything; a second destroy is a no-op.
    assert_eq!(
        rest.delete(&format!("/iam/v2/groups/{outsider}"))
            .await
            .status,
        StatusCode::OK
    );
    blocking(|| workspace.ok(&["destroy", "-auto-approve"]));
    assert!(blocking(|| workspace.state()).is_empty());
    assert_eq!(
        rest.get(&format!("/iam/v2/groups/{team}")).await.status,
        StatusCode::NOT_FOUND
    );
    let again = blocking(|| workspace.ok(&["destroy", "-auto-approve"]));
    assert!(again.contains("0 destroyed"), "{again}");
    server.stop().await;
}

/// Runs a Terraform step while the runtime's other thread serves the API.
fn blocking<T>(step: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(step)
}

/// A job's identity signs the provider in: its identity token, given as a
/// value, exchanged at the token service for the identity's API tokens
/// (the token sources `platformctl` uses); no API token anywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_identity_token_signs_the_provider_in() {
    const ISSUER: &str = "https://issuer.test";
    let Some(terraform) = terraform() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let issuer = platform_tests::Issuer::new("key-1");
    let server = TestServer::start_trusting(dir.path(), ISSUER, &issuer).await;
    let endpoint = format!("http://{}", server.address);
    let admin = server.rest();
    let org = admin
        .create("/iam/v2/groups/", json!({"name": "jobs"}))
        .await;
    let editor = json!({"name": "editor", "capabilities": ["groups.create", "groups.get",
        "groups.update", "groups.delete", "groups.list"]});
    let editor = admin.create(&format!("/iam/v2/roles/{org}"), editor).await;
    let claim = json!({"issuer": ISSUER, "subject": "ci"});
    let job = admin
        .create(
            &format!("/iam/v2/identities/{org}"),
            json!({"name": "ci", "claimMatch": claim}),
        )
        .await;
    let binding = json!({"identity": job, "role": editor});
    admin
        .create(&format!("/iam/v2/roleBindings/{org}"), binding)
        .await;
    let expiry = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600;
    let claims = json!({"iss": ISSUER, "sub": "ci", "aud": endpoint, "exp": expiry});
    let identity_token = issuer.token(claims);

    let workspace = Workspace::new(
        terraform,
        env!("CARGO_BIN_EXE_terraform-provider-platform").as_ref(),
        "platform",
        &endpoint,
        &[
            ("PLATFORM_IDENTITY", &job),
            ("PLATFORM_IDENTITY_TOKEN", &identity_token),
            (
                "PLATFORMCTL_CONFIG_DIR",
                dir.path().join("no-login").to_str().unwrap(),
            ),
        ],
    );
    workspace.configure(&format!(
        "resource \"platform_group\" \"build\" {{\n  parent_id = \"{org}\"\n  name = \"build\"\n}}\n"
    ));
    let applied = tokio::task::block_in_place(|| workspace.ok(&["apply", "-auto-approve"]));
    assert!(applied.contains("1 added"), "{applied}");
    let build = tokio::task::block_in_place(|| workspace.id("platform_group.build"));
    assert_eq!(
        admin.get(&format!("/iam/v2/groups/{build}")).await.status,
        StatusCode::OK
    );
    tokio::task::block_in_place(|| workspace.ok(&["destroy", "-auto-approve"]));

    // Outside the role's reach the identity is refused, and says so.
    workspace
        .configure("resource \"platform_group\" \"org\" {\n  name = \"another organization\"\n}\n");
    let refused = tokio::task::block_in_place(|| workspace.run(&["apply", "-auto-approve"]));
    assert_ne!(refused.code, 0, "{}", refused.output);
    assert!(
        refused.output.contains("PermissionDenied"),
        "{}",
        refused.output
    );
    server.stop().await;
}

/// Over HTTPS the provider trusts the CA file it is given (here from
/// `PLATFORM_CA_FILE`), and nothing signed by another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_calls_over_tls_with_the_ca_file_it_is_given() {
    use platform_tests::tls::{TestCa, TlsServer};
    let Some(terraform) = terraform() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new("provider test CA");
    let ca_file = ca.write(dir.path());
    let server = TlsServer::start(dir.path(), &ca, |_| {}).await;
    let group = "resource \"platform_group\" \"org\" {\n  name = \"over tls\"\n}\n";
    let token = server.admin_token.trim();
    let provider = env!("CARGO_BIN_EXE_terraform-provider-platform");

    let stranger = TestCa::new("another CA");
    std::fs::create_dir(dir.path().join("stranger")).unwrap();
    let stranger_file = stranger.write(&dir.path().join("stranger"));
    let untrusting = Workspace::new(
        terraform.clone(),
        provider.as_ref(),
        "platform",
        &server.url,
        &[
            ("PLATFORM_TOKEN", token),
            ("PLATFORM_CA_FILE", stranger_file.to_str().unwrap()),
        ],
    );
    untrusting.configure(group);
    let refused = tokio::task::block_in_place(|| untrusting.run(&["apply", "-auto-approve"]));
    assert_ne!(refused.code, 0, "{}", refused.output);
    assert!(
        refused.output.to_lowercase().contains("certificate"),
        "{}",
        refused.output
    );

    let trusting = Workspace::new(
        terraform,
        provider.as_ref(),
        "platform",
        &server.url,
        &[
            ("PLATFORM_TOKEN", token),
            ("PLATFORM_CA_FILE", ca_file.to_str().unwrap()),
        ],
    );
    trusting.configure(group);
    let applied = tokio::task::block_in_place(|| trusting.ok(&["apply", "-auto-approve"]));
    assert!(applied.contains("1 added"), "{applied}");
    tokio::task::block_in_place(|| trusting.ok(&["destroy", "-auto-approve"]));
    server.stop().await;
}
