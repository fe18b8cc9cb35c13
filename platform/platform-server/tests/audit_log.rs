//! `--audit-log FILE`: the server binary appends a JSON line per write to
//! the file, created readable by its owner only, and nothing for reads.

mod common;

use std::process::Command;

use common::Server;

#[test]
fn the_audit_log_flag_appends_a_line_per_write_to_an_owner_only_file() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut command = Command::new(env!("CARGO_BIN_EXE_platform-server"));
    command.arg("--audit-log").arg(&log);
    let server = Server::spawn(command, &dir.path().join("data"));
    let answer = common::send(
        &server.address,
        "POST",
        "/iam/v2/groups/",
        &server.token,
        r#"{"name":"audited"}"#,
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let read = common::get(&server.address, "/iam/v2/groups", &server.token);
    assert!(read.starts_with("HTTP/1.1 200"), "{read}");

    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(
        lines[0]["method"],
        "platform.iam.v2.GroupService/CreateGroup"
    );
    assert_eq!(lines[0]["code"], "OK");
    assert!(
        answer.contains(lines[0]["resource"].as_str().unwrap()),
        "{text}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&log).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
