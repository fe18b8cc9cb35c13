//! `platform-server mint-token` signs tokens for stored identities only:
//! a token for an identity that does not exist would be refused by every
//! route anyway, and minting one hides the typo.

mod common;

use std::process::Command;

use common::Server;

/// `mint-token` for the server at `address` (the tokens' audience).
fn mint(data_dir: &std::path::Path, address: &str, identity: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_platform-server"))
        .args([
            "mint-token",
            "--identity",
            identity,
            "--listen",
            address,
            "--data-dir",
        ])
        .arg(data_dir)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap()
}

#[test]
fn tokens_are_minted_for_stored_identities_only() {
    let data = tempfile::tempdir().unwrap();
    let server = Server::spawn(
        Command::new(env!("CARGO_BIN_EXE_platform-server")),
        data.path(),
    );
    let admin = protoapi_runtime::client::jwt_subject(server.token.trim()).unwrap();

    let minted = mint(data.path(), &server.address, &admin);
    assert!(minted.status.success(), "{minted:?}");
    let token = String::from_utf8(minted.stdout).unwrap();
    assert_eq!(
        protoapi_runtime::client::jwt_subject(token.trim()).as_deref(),
        Some(admin.as_str())
    );

    let answer = common::get(&server.address, "/iam/v2/groups", token.trim());
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "the minted token is accepted: {answer}"
    );
    assert!(
        server
            .log
            .lock()
            .unwrap()
            .iter()
            .any(|line| line.contains("listening"))
    );

    let (root, _) = admin.split_once('/').unwrap();
    let unknown = format!("{root}/{}", "0123456789abcdef");
    let refused = mint(data.path(), &server.address, &unknown);
    assert!(!refused.status.success());
    assert!(refused.stdout.is_empty(), "no token printed");
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(
        stderr.contains(&format!("no identity `{unknown}`")),
        "{stderr}"
    );
}
