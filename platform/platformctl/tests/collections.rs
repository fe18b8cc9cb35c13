//! `platformctl` on every collection, run as a binary against a running
//! server: tables and JSON, `--all` over many pages, update masks from
//! `--set`, etags, exit codes, gRPC, and completion scripts.

use std::process::Command;

use platform_tests::TestServer;
use serde_json::Value;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }
}

/// Runs `platformctl --server <server> --token <token> args…` off the runtime's threads.
async fn platformctl(server: &TestServer, token: &str, args: &[&str]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_platformctl"));
    command
        .args([
            "--server",
            &format!("http://{}", server.address),
            "--token",
            token,
        ])
        .args(args)
        .env_remove("PLATFORMCTL_SERVER")
        .env_remove("PLATFORMCTL_TOKEN");
    let output = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_collection_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let admin = server.admin_token.clone();
    let run = |args: Vec<String>| {
        let (server, admin) = (&server, admin.clone());
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            platformctl(server, &admin, &args).await
        }
    };
    let args = |text: &str| {
        text.split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };

    let root = run(args("groups create --set name=cli -o json")).await;
    assert_eq!(root.code, 0, "{}", root.stderr);
    let root = root.json()["uid"].as_str().unwrap().to_owned();

    // Seven children, then every page of two: four pages, with progress.
    for i in 0..7 {
        let created = run(args(&format!(
            "groups create --parent {root} --set name=team-{i}"
        )))
        .await;
        assert_eq!(created.code, 0, "{}", created.stderr);
        let name = format!("team-{i}");
        let shown = created
            .stdout
            .lines()
            .any(|line| line.split_whitespace().eq(["name", name.as_str()]));
        assert!(shown, "one field per line: {}", created.stdout);
    }
    let all = run(args(&format!(
        "groups list --children-of {root} --page-size 2 --all -o json"
    )))
    .await;
    assert_eq!(all.code, 0, "{}", all.stderr);
    assert_eq!(all.json()["items"].as_array().unwrap().len(), 7);
    assert!(all.stderr.contains("page 4: 7 of 7"), "{}", all.stderr);

    let table = run(args(&format!(
        "groups list --children-of {root} --page-size 3"
    )))
    .await;
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "a header and one page: {}", table.stdout);
    assert!(
        table
            .stderr
            .starts_with("3 of 7 shown; more with --all, or --page-token "),
        "a page with more after it says so: {}",
        table.stderr
    );
    let token = table.stderr.trim().rsplit(' ').next().unwrap();
    let rest = run(args(&format!(
        "groups list --children-of {root} --page-size 5 --page-token {token} -o json"
    )))
    .await;
    assert_eq!(rest.code, 0, "{}", rest.stderr);
    assert_eq!(rest.json()["items"].as_array().unwrap().len(), 4);
    assert_eq!(rest.stderr, "", "the last page says nothing more");
    assert!(lines[0].starts_with("UID "), "{}", table.stdout);
    let name_column = lines[0].find("NAME").unwrap();
    assert!(
        lines[1..]
            .iter()
            .all(|l| l[name_column..].starts_with("team-")),
        "aligned: {}",
        table.stdout
    );

    // A declared filter (`--match`), and an AIP-160 filter on a field the
    // collection does not declare filterable.
    let named = run(args(&format!(
        "groups list --children-of {root} --match name=team-3 -o json"
    )))
    .await;
    assert_eq!(
        named.json()["items"].as_array().unwrap().len(),
        1,
        "{}",
        named.stdout
    );
    // The same answer as YAML reads back as the same values.
    let yaml = run(args(&format!(
        "groups list --children-of {root} --match name=team-3 -o yaml"
    )))
    .await;
    let read: Value = serde_yaml_ng::from_str(&yaml.stdout).unwrap();
    assert_eq!(read, named.json(), "{}", yaml.stdout);
    let unknown = run(args("repos list --filter colour=red")).await;
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(unknown.stderr.contains("colour"), "{}", unknown.stderr);

    // Update: the `--set` fields are the mask; other fields keep their values.
    let team = run(args(&format!(
        "groups list --children-of {root} --filter name=team-0 -o json"
    )))
    .await;
    let team = team.json()["items"][0].clone();
    let uid = team["uid"].as_str().unwrap();
    let etag = team["etag"].as_str().unwrap();
    let updated = run(args(&format!(
        "groups update {uid} --set description=renamed --etag {etag} -o json"
    )))
    .await;
    assert_eq!(updated.code, 0, "{}", updated.stderr);
    assert_eq!(updated.json()["description"], "renamed");
    assert_eq!(updated.json()["name"], "team-0");
    let stale = run(args(&format!(
        "groups update {uid} --set description=again --etag {etag}"
    )))
    .await;
    assert_eq!(
        stale.code, 5,
        "a stale etag is a conflict: {}",
        stale.stderr
    );
    assert!(stale.stderr.contains("ABORTED"), "{}", stale.stderr);

    // Invalid input names the field; a missing resource is 3.
    let invalid = run(args(&format!(
        "groups create --parent {root} --set description=x"
    )))
    .await;
    assert_eq!(invalid.code, 2, "{}", invalid.stderr);
    assert!(invalid.stderr.contains("group.name"), "{}", invalid.stderr);
    // A misspelt field is named with the one meant.
    let misspelt = run(args(&format!("groups update {uid} --set descripton=x"))).await;
    assert_eq!(misspelt.code, 2, "{}", misspelt.stderr);
    assert!(
        misspelt.stderr.contains("did you mean `description`?"),
        "{}",
        misspelt.stderr
    );
    let deleted = run(args(&format!("groups delete {uid}"))).await;
    assert_eq!(deleted.code, 0, "{}", deleted.stderr);
    let missing = run(args(&format!("groups get {uid}"))).await;
    assert_eq!(missing.code, 3, "{}", missing.stderr);
    assert!(missing.stderr.contains("NOT_FOUND"), "{}", missing.stderr);

    // Every collection lists, over REST and gRPC.
    for collection in [
        "groups",
        "roles",
        "identities",
        "role-bindings",
        "repos",
        "artifacts",
        "documents",
        "advisories",
    ] {
        for transport in ["", "--grpc"] {
            let listed = run(args(&format!(
                "{collection} list --children-of {root} {transport} -o json"
            )))
            .await;
            assert_eq!(
                listed.code, 0,
                "{collection} {transport}: {}",
                listed.stderr
            );
            assert!(listed.json()["items"].is_array(), "{collection}");
        }
    }
    // Create, update and delete elsewhere than groups, with JSON values.
    let repo = run(args(&format!(
        "repos create --parent {root} --set name=images --set public=true --set aliases=[\"img\"] -o json"
    )))
    .await;
    assert_eq!(repo.code, 0, "{}", repo.stderr);
    assert_eq!(repo.json()["public"], true);
    assert_eq!(repo.json()["aliases"], serde_json::json!(["img"]));
    let repo = repo.json()["uid"].as_str().unwrap().to_owned();
    let readme = run(args(&format!(
        "--grpc repos update {repo} --set readme=hello -o json"
    )))
    .await;
    assert_eq!(readme.json()["readme"], "hello", "{}", readme.stderr);
    assert_eq!(run(args(&format!("repos delete {repo}"))).await.code, 0);
    let read_only = run(args(&format!(
        "advisories create --parent {root} --set name=x"
    )))
    .await;
    assert_eq!(read_only.code, 2, "{}", read_only.stderr);

    // A group with children is not deleted: 7, and the children are named.
    let blocked = run(args(&format!("groups delete {root}"))).await;
    assert_eq!(blocked.code, 7, "{}", blocked.stderr);
    assert!(
        blocked.stderr.contains("FAILED_PRECONDITION")
            && blocked
                .stderr
                .contains(&format!("\n  DEPENDENT_RESOURCE {root}/"))
            && blocked.stderr.contains(" depends on this resource"),
        "{}",
        blocked.stderr
    );

    // Authentication and reachability have codes of their own.
    let denied = platformctl(&server, "not-a-token", &["groups", "list"]).await;
    assert_eq!(denied.code, 4, "{}", denied.stderr);
    let usage = run(args("groups frobnicate")).await;
    assert_eq!(usage.code, 2, "{}", usage.stderr);
    server.stop().await;
}

#[tokio::test]
async fn an_unreachable_server_is_unavailable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let output = Command::new(env!("CARGO_BIN_EXE_platformctl"))
        .args([
            "--server",
            &format!("http://{address}"),
            "--token",
            "t",
            "groups",
            "list",
        ])
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn completion_scripts_name_every_collection() {
    for shell in ["bash", "zsh", "fish"] {
        let output = Command::new(env!("CARGO_BIN_EXE_platformctl"))
            .args(["completion", shell])
            .output()
            .unwrap();
        assert!(output.status.success(), "{shell}");
        let script = String::from_utf8(output.stdout).unwrap();
        for word in ["platformctl", "role-bindings", "advisories", "children-of"] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
}

/// `create --help` and `update --help` list the fields `--set` takes, from
/// the field behaviours: output-only fields never, immutable ones on create
/// only, required ones marked on create.
#[test]
fn help_lists_the_fields_set_takes() {
    let help = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_platformctl"))
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    let create = help(&["groups", "create", "--help"]);
    let fields = create
        .split("Fields for --set:")
        .nth(1)
        .expect("a field list");
    for field in ["name (required)", "description", "resourceLimits.clusters"] {
        assert!(fields.contains(field), "{field} in {create}");
    }
    for never in ["uid", "createTime", "verified", "etag"] {
        assert!(!fields.contains(never), "{never} in {create}");
    }
    let update = help(&["role-bindings", "update", "--help"]);
    let fields = update
        .split("Fields for --set:")
        .nth(1)
        .expect("a field list");
    assert!(!fields.contains("(required)"), "{update}");
}

/// Descriptions, readmes and names are any tenant's text: the terminal
/// gets their control characters and bidirectional overrides escaped, and
/// JSON output stays the same JSON.
#[tokio::test(flavor = "multi_thread")]
async fn server_text_reaches_the_terminal_escaped() {
    const HOSTILE: &str = "\x1b]0;pwned\x07 \x1b[2J \u{9b}31m \u{202e}gpj.exe";
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let admin = server.rest();
    let root = admin
        .create(
            "/iam/v2/groups/",
            serde_json::json!({"name": "escapes", "description": HOSTILE}),
        )
        .await;
    let repo = admin
        .create(
            &format!("/registry/v2/repos/{root}"),
            serde_json::json!({"name": "\u{202e}images", "description": HOSTILE, "readme": HOSTILE}),
        )
        .await;
    let escaped = "\\u{1b}]0;pwned\\u{7} \\u{1b}[2J \\u{9b}31m \\u{202e}gpj.exe";
    let is_raw = |c: char| c != '\n' && platformctl::text::is_unsafe(c);

    for args in [
        vec!["groups", "get", &root],
        vec!["repos", "get", &repo],
        vec!["repos", "list", "--children-of", &root],
    ] {
        let run = platformctl(&server, &server.admin_token, &args).await;
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        assert!(
            !run.stdout.chars().any(is_raw),
            "{args:?}: {:?}",
            run.stdout
        );
        let shown = if args[1] == "list" {
            "\\u{202e}images"
        } else {
            escaped
        };
        assert!(run.stdout.contains(shown), "{args:?}: {}", run.stdout);
    }
    let run = platformctl(
        &server,
        &server.admin_token,
        &["repos", "get", &repo, "-o", "json"],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stdout.chars().any(is_raw), "{:?}", run.stdout);
    assert!(
        run.stdout.contains("\\u001b]0;pwned\\u0007"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("\\u009b31m \\u202egpj.exe"),
        "{}",
        run.stdout
    );
    assert_eq!(run.json()["readme"], HOSTILE, "the same JSON value");
    assert_eq!(run.json()["name"], "\u{202e}images");
    server.stop().await;
}
