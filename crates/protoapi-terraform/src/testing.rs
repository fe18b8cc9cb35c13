//! Acceptance tests of a provider with a real Terraform CLI (feature
//! `testing`): a working directory whose CLI configuration points Terraform
//! at the provider binary under test (`dev_overrides`, so no registry is
//! contacted), and the commands' outcomes.
//!
//! The CLI is `$TERRAFORM`, else `terraform` on the `PATH` ([`terraform`]).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Terraform CLI to test with, if there is one: `$TERRAFORM`, else
/// `terraform` when the `PATH` has one. Without one it says on stderr that
/// the test is skipped, and how to run it.
pub fn terraform() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("TERRAFORM") {
        return Some(PathBuf::from(path));
    }
    let found = Command::new("terraform").arg("version").output();
    let found = found
        .is_ok_and(|output| output.status.success())
        .then(|| PathBuf::from("terraform"));
    if found.is_none() {
        eprintln!("skipped: no Terraform CLI (set TERRAFORM, e.g. to `bash .ci/terraform.sh`'s)");
    }
    found
}

/// A Terraform working directory for one provider.
pub struct Workspace {
    terraform: PathBuf,
    dir: tempfile::TempDir,
    prefix: String,
    source: String,
    endpoint: String,
    env: Vec<(String, String)>,
}

/// What one Terraform command did.
pub struct Run {
    pub code: i32,
    /// Standard output, then standard error.
    pub output: String,
}

impl Workspace {
    /// A working directory where provider `prefix` (source
    /// `example.com/{prefix}/{prefix}`) is the binary `provider` and calls
    /// the API at `endpoint`; Terraform runs with the variables `env`.
    pub fn new(
        terraform: PathBuf,
        provider: &Path,
        prefix: &str,
        endpoint: &str,
        env: &[(&str, &str)],
    ) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let plugins = dir.path().join("plugins");
        std::fs::create_dir(&plugins).unwrap();
        std::os::unix::fs::symlink(
            provider,
            plugins.join(format!("terraform-provider-{prefix}")),
        )
        .unwrap();
        let source = format!("example.com/{prefix}/{prefix}");
        std::fs::write(
            dir.path().join("cli.tfrc"),
            format!(
                "provider_installation {{\n  dev_overrides {{ \"{source}\" = \"{}\" }}\n  \
                 direct {{}}\n}}\n",
                plugins.display()
            ),
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("config")).unwrap();
        Workspace {
            terraform,
            dir,
            prefix: prefix.to_owned(),
            source,
            endpoint: endpoint.to_owned(),
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    /// Writes the configuration: the provider block, then `resources`.
    pub fn configure(&self, resources: &str) {
        let prefix = &self.prefix;
        let config = format!(
            "terraform {{\n  required_providers {{\n    {prefix} = {{ source = \"{}\" }}\n  }}\n}}\n\n\
             provider \"{prefix}\" {{\n  endpoint = \"{}\"\n}}\n\n{resources}",
            self.source, self.endpoint
        );
        std::fs::write(self.config_dir().join("main.tf"), config).unwrap();
    }

    /// Writes (or, with `None`, removes) a second configuration file.
    pub fn also(&self, content: Option<&str>) {
        let path = self.config_dir().join("also.tf");
        match content {
            Some(content) => std::fs::write(path, content).unwrap(),
            None => std::fs::remove_file(path).unwrap(),
        }
    }

    fn config_dir(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    /// Runs `terraform ARGS -no-color` in the configuration's directory.
    pub fn run(&self, args: &[&str]) -> Run {
        let output = Command::new(&self.terraform)
            .args(args)
            .arg("-no-color")
            .current_dir(self.config_dir())
            .env("TF_CLI_CONFIG_FILE", self.dir.path().join("cli.tfrc"))
            .env("TF_IN_AUTOMATION", "1")
            .env("CHECKPOINT_DISABLE", "1")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
        Run {
            code: output.status.code().unwrap_or(-1),
            output: text(output.stdout) + &text(output.stderr),
        }
    }

    /// Runs a command that must succeed; its output.
    pub fn ok(&self, args: &[&str]) -> String {
        let run = self.run(args);
        assert_eq!(run.code, 0, "terraform {args:?}:\n{}", run.output);
        run.output
    }

    /// `terraform plan -detailed-exitcode`: whether it found changes, and
    /// what it printed.
    pub fn plan(&self) -> (bool, String) {
        let run = self.run(&["plan", "-detailed-exitcode"]);
        assert!(run.code == 0 || run.code == 2, "plan:\n{}", run.output);
        (run.code == 2, run.output)
    }

    /// Asserts a plan finds nothing to change, `after` what.
    pub fn assert_no_changes(&self, after: &str) {
        let (changes, output) = self.plan();
        assert!(!changes, "after {after}, the plan found changes:\n{output}");
    }

    /// The `id` of `address` in the state.
    pub fn id(&self, address: &str) -> String {
        let shown = self.ok(&["state", "show", address]);
        shown
            .lines()
            .find_map(|line| line.trim().strip_prefix("id "))
            .and_then(|rest| rest.split('"').nth(1))
            .unwrap_or_else(|| panic!("no id for {address} in:\n{shown}"))
            .to_owned()
    }

    /// The addresses in the state.
    pub fn state(&self) -> Vec<String> {
        self.ok(&["state", "list"])
            .lines()
            .filter(|line| !line.is_empty())
            .map(str::to_owned)
            .collect()
    }
}
