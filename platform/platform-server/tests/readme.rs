//! The README's shell examples, pasted into bash in order against a fresh
//! server: every ```sh block but the set-up commands (the first) and those
//! a `<!-- not run: why -->` line introduces. `localhost:8080` and the
//! metrics address are this server's; `cargo run -p X --` runs the binary
//! X built beside this one (`cargo test --workspace` builds them all).
//! Each `curl` must answer what its line's comment says (`# 403`), or a
//! success.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Server;

const README: &str = include_str!("../../../README.md");

/// Marks a block the test does not run.
const NOT_RUN: &str = "<!-- not run:";

/// The blocks to run, in order.
fn runnable_blocks(readme: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut lines = readme.lines();
    let mut previous = "";
    let mut first = true;
    while let Some(line) = lines.next() {
        if line.trim() != "```sh" {
            if !line.trim().is_empty() {
                previous = line;
            }
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        if !std::mem::take(&mut first) && !previous.starts_with(NOT_RUN) {
            blocks.push(block.join("\n"));
        }
        previous = "";
    }
    blocks
}

/// What each `curl` of `script` must answer, in order: the status its
/// line's comment names, else `None` (a success).
fn expected_statuses(script: &str) -> Vec<Option<u16>> {
    let joined = script.replace("\\\n", " ");
    let mut expected = Vec::new();
    for line in joined.lines() {
        let (code, comment) = line.split_once(" # ").unwrap_or((line, ""));
        let status = comment.trim().get(..3).and_then(|s| s.parse().ok());
        let calls = code
            .split(|c: char| c.is_whitespace() || c == '(')
            .filter(|word| *word == "curl")
            .count();
        expected.extend(std::iter::repeat_n(status, calls));
    }
    expected
}

/// Functions the examples run with: `cargo run -p X -- …` runs binary X
/// from `bin`; `curl` reports each answer's status on stderr.
fn prelude(bin: &Path) -> String {
    format!(
        r#"set -euo pipefail
cargo() {{
  local package=
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    if [ "$1" = -p ]; then package=$2; shift; fi
    shift
  done
  shift
  "{bin}/$package" "$@"
}}
curl() {{ command curl -w '%{{stderr}}README-STATUS %{{http_code}}\n' "$@"; }}
"#,
        bin = bin.display()
    )
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn the_readmes_shell_examples_run_against_a_fresh_server() {
    let server_binary = PathBuf::from(env!("CARGO_BIN_EXE_platform-server"));
    let bin = server_binary.parent().unwrap();
    if !bin.join("platformctl").exists() {
        panic!(
            "platformctl is not built beside platform-server: run `cargo test --workspace` \
             (or `cargo build -p platformctl` first)"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let metrics = format!("127.0.0.1:{}", free_port());
    let mut command = Command::new(&server_binary);
    command.args(["--metrics-listen", &metrics]);
    let server = Server::spawn(command, &data);

    let mut script = runnable_blocks(README).join("\n");
    assert!(script.contains("mint-token"), "{script}");
    let grpcurl = Command::new("grpcurl").arg("-version").output().is_ok();
    if !grpcurl {
        eprintln!("grpcurl is not installed: its lines are not run");
        script = (script.lines())
            .filter(|line| !line.starts_with("grpcurl "))
            .collect::<Vec<_>>()
            .join("\n");
    }
    let script = script
        .replace("localhost:8080", &server.address)
        .replace("127.0.0.1:9464", &metrics);
    let output = Command::new("bash")
        .arg("-c")
        .arg(prelude(bin) + &script)
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("PLATFORM_LISTEN", &server.address)
        .env("PLATFORMCTL_SERVER", format!("http://{}", server.address))
        .env("PLATFORMCTL_CONFIG_DIR", dir.path().join("platformctl"))
        .env_remove("PLATFORMCTL_TOKEN")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let shown = format!("script:\n{script}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(output.status.success(), "{shown}");
    let statuses: Vec<u16> = stderr
        .lines()
        .filter_map(|line| line.strip_prefix("README-STATUS "))
        .map(|status| status.parse().unwrap())
        .collect();
    let expected = expected_statuses(&script);
    assert_eq!(statuses.len(), expected.len(), "{shown}");
    for (index, (status, expected)) in statuses.iter().zip(&expected).enumerate() {
        match expected {
            Some(expected) => assert_eq!(status, expected, "curl #{index}: {shown}"),
            None => assert!(
                (200..300).contains(status),
                "curl #{index}: {status} {shown}"
            ),
        }
    }
    // What the walk made and read is there: acme, alice's binding, metrics.
    assert!(stdout.contains("\"name\":\"acme\""), "{shown}");
    assert!(stdout.contains("identity:"), "{shown}");
    assert!(stdout.contains("platform_http_requests_total{"), "{shown}");
    if grpcurl {
        assert!(stdout.contains("grpc.health.v1.Health"), "{shown}");
    }
    drop(server);
}

#[test]
fn blocks_after_a_not_run_line_are_left_out_and_statuses_read_from_comments() {
    let readme =
        "```sh\nsetup\n```\n\n<!-- not run: why -->\n```sh\nskipped\n```\ntext\n```sh\nrun\n```\n";
    assert_eq!(runnable_blocks(readme), ["run"]);
    let script = "A=$(curl -s x)\ncurl -s y   # 403: no\ncurl -i \\\n  z   # 200, or 409\nls # 404";
    assert_eq!(expected_statuses(script), [None, Some(403), Some(200)]);
}
