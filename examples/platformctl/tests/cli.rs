//! `platformctl` against a running server that trusts a test issuer.

use std::process::Command;

use e2e::{Issuer, StatusCode, TestServer};
use serde_json::{Value, json};

const ISSUER: &str = "https://issuer.test";

fn platformctl(server: &str, config: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_platformctl"))
        .args(["--server", server, "--config-dir"])
        .arg(config)
        .args(args)
        .output()
        .unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (
        output.status.success(),
        text(output.stdout),
        text(output.stderr),
    )
}

/// `echo <host> | docker-credential-platform get` with `env`, as Docker runs it.
fn credential_helper(host: &str, env: &[(&str, &str)]) -> Value {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_docker-credential-platform"))
        .arg("get")
        .env_remove("PLATFORMCTL_CONFIG_DIR")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{host}").unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{env:?}: {stderr}");
    serde_json::from_slice(&output.stdout).expect("the helper prints JSON")
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test(flavor = "multi_thread")]
async fn login_token_and_list_groups() {
    let dir = tempfile::tempdir().unwrap();
    let issuer = Issuer::new("key-1");
    let server = TestServer::start_trusting(dir.path(), ISSUER, &issuer).await;
    let base = format!("http://{}", server.address);

    // An assumable identity with `viewer` on a team.
    let admin = server.rest();
    let root = admin
        .create("/iam/v2/groups/", json!({"name": "cli"}))
        .await;
    let viewer_role =
        json!({"name": "viewer", "capabilities": ["groups.get", "groups.list", "repos.get"]});
    let viewer = admin
        .create(&format!("/iam/v2/roles/{root}"), viewer_role)
        .await;
    let team = admin
        .post(&format!("/iam/v2/groups/{root}"), json!({"name": "team"}))
        .await
        .body["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let identity = admin
        .post(
            &format!("/iam/v2/identities/{root}"),
            json!({"name": "cli", "claimMatch": {"issuer": ISSUER, "subject": "alice"}}),
        )
        .await
        .body["uid"]
        .as_str()
        .unwrap()
        .to_owned();
    let binding = admin
        .post(
            &format!("/iam/v2/roleBindings/{team}"),
            json!({"name": "b", "identity": identity, "role": viewer}),
        )
        .await;
    assert_eq!(binding.status, StatusCode::OK);
    let token_file = dir.path().join("identity.jwt");
    let claims = json!({"iss": ISSUER, "sub": "alice", "aud": base, "exp": now() + 600});
    std::fs::write(&token_file, issuer.token(claims)).unwrap();
    let config_dir = dir.path().join("config");

    let server_url = base.clone();
    let config_path = config_dir.clone();
    let token_path = token_file.clone();
    let identity_arg = identity.clone();
    let (ok, _, stderr) = tokio::task::spawn_blocking(move || {
        platformctl(
            &server_url,
            &config_path,
            &[
                "auth",
                "login",
                "--identity",
                &identity_arg,
                "--identity-token",
                token_path.to_str().unwrap(),
            ],
        )
    })
    .await
    .unwrap();
    assert!(ok, "login: {stderr}");
    let cached: Value =
        serde_json::from_slice(&std::fs::read(config_dir.join("credentials.json")).unwrap())
            .unwrap();
    assert!(cached["expires_at"].as_u64().unwrap() > now() + 3000);

    let run = |args: &'static [&'static str]| {
        let (base, config_dir) = (base.clone(), config_dir.clone());
        tokio::task::spawn_blocking(move || platformctl(&base, &config_dir, args))
    };
    let (ok, token, stderr) = run(&["auth", "token"]).await.unwrap();
    assert!(ok, "{stderr}");
    assert_eq!(
        token.trim(),
        cached["token"].as_str().unwrap(),
        "a valid cached token is reused"
    );
    let whoami = server
        .rest_as(Some(token.trim()))
        .get(&format!("/iam/v2/groups/{team}"))
        .await;
    assert_eq!(
        whoami.status,
        StatusCode::OK,
        "the token works against the API"
    );

    let (ok, listing, stderr) = run(&["groups", "list"]).await.unwrap();
    assert!(ok, "{stderr}");
    let rows: Vec<Vec<&str>> = listing
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["UID", "NAME", "UPDATED"], "{listing}");
    assert_eq!(rows.len(), 2, "only what the identity may see: {listing}");
    assert_eq!(rows[1][..2], [team.as_str(), "team"], "{listing}");

    // The Docker credential helper hands out a token that reads a private repo,
    // from the login cache or from an exchange of the identity token.
    let repo = admin
        .create(
            &format!("/registry/v2/repos/{team}"),
            json!({"name": "private"}),
        )
        .await;
    let repo_path = format!("/registry/v2/repos/{repo}");
    assert_eq!(
        server.rest_as(None).get(&repo_path).await.status,
        StatusCode::UNAUTHORIZED
    );
    let host = server.address.to_string();
    let from_cache = [("PLATFORMCTL_CONFIG_DIR", config_dir.to_str().unwrap())];
    let from_exchange = [
        ("PLATFORM_IDENTITY", identity.as_str()),
        ("PLATFORM_IDENTITY_TOKEN_FILE", token_file.to_str().unwrap()),
    ];
    for env in [&from_cache[..], &from_exchange[..]] {
        let answer = credential_helper(&host, env);
        assert_eq!(answer["ServerURL"], host.as_str());
        let secret = answer["Secret"].as_str().expect("a secret");
        let read = server.rest_as(Some(secret)).get(&repo_path).await;
        assert_eq!(read.status, StatusCode::OK, "{env:?}: {:?}", read.body);
    }

    // An expired cached token is exchanged again.
    let mut stale = cached.clone();
    stale["expires_at"] = json!(now() - 10);
    stale["token"] = json!("expired");
    std::fs::write(config_dir.join("credentials.json"), stale.to_string()).unwrap();
    let (ok, fresh, stderr) = run(&["auth", "token"]).await.unwrap();
    assert!(ok, "{stderr}");
    assert_ne!(fresh.trim(), "expired");
    assert_eq!(
        server
            .rest_as(Some(fresh.trim()))
            .get(&format!("/iam/v2/groups/{team}"))
            .await
            .status,
        StatusCode::OK
    );

    // API errors are reported, not hidden.
    let (ok, _, stderr) = run(&["groups", "list", "--children-of", "nope"])
        .await
        .unwrap();
    assert!(!ok);
    assert!(stderr.contains("INVALID_ARGUMENT"), "{stderr}");
    server.stop().await;
}
