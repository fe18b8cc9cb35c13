//! The server binary's access log as an operator reads it on stderr (text,
//! not a terminal): one line per request, naming the route template, the
//! status, the caller and the request id answered as `x-request-id`, never
//! the token or the raw path; and the log filter (`RUST_LOG`) decides
//! whether access lines are written at all.

mod common;

use std::process::Command;
use std::time::Instant;

use common::{BOUND, Server};

fn start(data_dir: &std::path::Path, filter: &str) -> Server {
    let mut command = Command::new(env!("CARGO_BIN_EXE_platform-server"));
    command.env("RUST_LOG", filter);
    Server::spawn(command, data_dir)
}

/// `GET path` with the server's token: the answer's head.
fn get(server: &Server, path: &str) -> String {
    let answer = common::get(&server.address, path, &server.token);
    answer.split_once("\r\n\r\n").unwrap().0.to_owned()
}

fn header<'a>(head: &'a str, name: &str) -> &'a str {
    head.lines()
        .find_map(|line| line.strip_prefix(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no {name} in {head}"))
}

fn access_lines(server: &Server) -> Vec<String> {
    let log = server.log.lock().unwrap();
    log.iter()
        .filter(|line| line.contains(" access: "))
        .cloned()
        .collect()
}

#[test]
fn each_request_is_one_line_naming_its_route_status_caller_and_id() {
    let data = tempfile::tempdir().unwrap();
    let server = start(data.path(), "info");
    let head = get(&server, "/nowhere/secret-path?q=secret-query");
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
    let request_id = header(&head, "x-request-id");
    let started = Instant::now();
    let line = loop {
        let found = access_lines(&server)
            .into_iter()
            .find(|line| line.contains(&format!(" request_id={request_id} ")));
        if let Some(line) = found {
            break line;
        }
        assert!(started.elapsed() < BOUND, "no access line for {request_id}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (time, rest) = line.split_once("Z ").unwrap();
    assert_eq!(time.len(), "2026-11-30T16:34:25.000123".len(), "{line}");
    let rest = rest
        .strip_prefix(
            " INFO access: request route=unmatched method=GET status=404 code=NOT_FOUND latency_ms=",
        )
        .unwrap_or_else(|| panic!("{line}"));
    let (latency, rest) = rest.split_once(' ').unwrap();
    assert!(latency.parse::<f64>().unwrap() >= 0.0, "{line}");
    let (caller, rest) = rest.split_once(' ').unwrap();
    let caller = caller.strip_prefix("caller=").unwrap();
    assert!(
        caller
            .split('/')
            .all(|part| part.len() >= 16 && part.bytes().all(|b| b.is_ascii_hexdigit())),
        "the administrator's uid: {line}"
    );
    let trace = rest
        .strip_prefix(&format!("request_id={request_id} trace_id="))
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        trace.len() == 32 && trace.bytes().all(|b| b.is_ascii_hexdigit()),
        "{line}"
    );
    let everything = server.log.lock().unwrap().join("\n");
    for secret in ["secret-path", "secret-query", server.token.as_str()] {
        assert!(!everything.contains(secret), "{secret} logged");
    }
}

#[test]
fn the_log_filter_decides_whether_access_lines_are_written() {
    let data = tempfile::tempdir().unwrap();
    let mut server = start(data.path(), "info,access=off");
    let head = get(&server, "/nowhere");
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(server.child.wait().unwrap().success());
    // Every line is written by the time the process has exited; give the
    // reader threads a moment to take in the last ones.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let log = server.log.lock().unwrap().join("\n");
    assert!(log.contains("listening"), "{log}");
    assert!(access_lines(&server).is_empty(), "{log}");
}
