//! `terraform-provider-platform` driven by a real Terraform CLI against a
//! real server (SQLite, or PostgreSQL with `E2E_DATABASE_URL`), through a
//! CLI configuration whose `dev_overrides` point at the binary built here:
//! no registry is contacted.
//!
//! The CLI is `$TERRAFORM` (CI sets it to Terraform 1.0.3 from
//! `.ci/terraform.sh`), else `terraform` on the `PATH`; without either the
//! test says so and passes without running.

use std::path::PathBuf;
use std::process::Command;

use platform_tests::{StatusCode, TestServer};
use serde_json::json;

const SOURCE: &str = "example.com/platform/platform";

/// A Terraform working directory wired to the provider built here and to
/// `server`, as its administrator.
struct Workspace {
    terraform: PathBuf,
    dir: tempfile::TempDir,
    endpoint: String,
    token: String,
}

/// What one Terraform command did.
struct Run {
    code: i32,
    output: String,
}

impl Workspace {
    fn new(terraform: PathBuf, server: &TestServer) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let plugins = dir.path().join("plugins");
        std::fs::create_dir(&plugins).unwrap();
        std::os::unix::fs::symlink(
            env!("CARGO_BIN_EXE_terraform-provider-platform"),
            plugins.join("terraform-provider-platform"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("cli.tfrc"),
            format!(
                "provider_installation {{\n  dev_overrides {{ \"{SOURCE}\" = \"{}\" }}\n  direct {{}}\n}}\n",
                plugins.display()
            ),
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("config")).unwrap();
        Workspace {
            terraform,
            dir,
            endpoint: format!("http://{}", server.address),
            token: server.admin_token.trim().to_owned(),
        }
    }

    /// Writes the configuration: the provider block, then `resources`.
    fn configure(&self, resources: &str) {
        let config = format!(
            "terraform {{\n  required_providers {{\n    platform = {{ source = \"{SOURCE}\" }}\n  }}\n}}\n\n\
             provider \"platform\" {{\n  endpoint = \"{}\"\n}}\n\n{resources}",
            self.endpoint
        );
        std::fs::write(self.config_dir().join("main.tf"), config).unwrap();
    }

    /// Writes (or, with `None`, removes) a second configuration file.
    fn also(&self, content: Option<&str>) {
        let path = self.config_dir().join("also.tf");
        match content {
            Some(content) => std::fs::write(path, content).unwrap(),
            None => std::fs::remove_file(path).unwrap(),
        }
    }

    fn config_dir(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    fn run(&self, args: &[&str]) -> Run {
        let output = Command::new(&self.terraform)
            .args(args)
            .arg("-no-color")
            .current_dir(self.config_dir())
            .env("TF_CLI_CONFIG_FILE", self.dir.path().join("cli.tfrc"))
            .env("TF_IN_AUTOMATION", "1")
            .env("CHECKPOINT_DISABLE", "1")
            .env("PLATFORM_TOKEN", &self.token)
            .env_remove("PLATFORM_ENDPOINT")
            .output()
            .unwrap();
        let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
        Run {
            code: output.status.code().unwrap_or(-1),
            output: text(output.stdout) + &text(output.stderr),
        }
    }

    /// Runs a command that must succeed; its output.
    fn ok(&self, args: &[&str]) -> String {
        let run = self.run(args);
        assert_eq!(run.code, 0, "terraform {args:?}:\n{}", run.output);
        run.output
    }

    /// `terraform plan -detailed-exitcode`: whether it found changes, and
    /// what it printed.
    fn plan(&self) -> (bool, String) {
        let run = self.run(&["plan", "-detailed-exitcode"]);
        assert!(run.code == 0 || run.code == 2, "plan:\n{}", run.output);
        (run.code == 2, run.output)
    }

    fn assert_no_changes(&self, after: &str) {
        let (changes, output) = self.plan();
        assert!(!changes, "after {after}, the plan found changes:\n{output}");
    }

    /// The `id` of `address` in the state.
    fn id(&self, address: &str) -> String {
        let shown = self.ok(&["state", "show", address]);
        shown
            .lines()
            .find_map(|line| line.trim().strip_prefix("id "))
            .and_then(|rest| rest.split('"').nth(1))
            .unwrap_or_else(|| panic!("no id for {address} in:\n{shown}"))
            .to_owned()
    }

    fn state(&self) -> Vec<String> {
        self.ok(&["state", "list"])
            .lines()
            .map(str::to_owned)
            .filter(|line| !line.is_empty())
            .collect()
    }
}

/// The Terraform CLI to test with, if there is one.
fn terraform() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("TERRAFORM") {
        return Some(PathBuf::from(path));
    }
    let found = Command::new("terraform").arg("version").output();
    found
        .is_ok_and(|output| output.status.success())
        .then(|| PathBuf::from("terraform"))
}

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
        eprintln!("skipped: no Terraform CLI (set TERRAFORM, e.g. to `bash .ci/terraform.sh`'s)");
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start(data.path()).await;
    let rest = server.rest();
    let workspace = Workspace::new(terraform, &server);

    // Apply: an organization, a nested group, two roles, an identity, a
    // binding and a repo; a second plan has nothing to do.
    workspace.configure(&(ORGANIZATION.to_owned() + &binding("reader")));
    let applied = blocking(|| workspace.ok(&["apply", "-auto-approve"]));
    assert!(applied.contains("7 added"), "{applied}");
    assert!(applied.contains("organization = \"acme\""), "{applied}");
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
