//! `platformctl` against a running server that trusts a test issuer.

use std::process::Command;

use platform_tests::{Issuer, StatusCode, TestServer};
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

/// `echo <host> | docker-credential-platform get` with `env` (and nothing
/// of the caller's environment that configures it), as Docker runs it:
/// whether it succeeded, its stdout and its stderr.
fn run_credential_helper(host: &str, env: &[(&str, &str)]) -> (bool, String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_docker-credential-platform"))
        .arg("get")
        .env_remove("PLATFORMCTL_CONFIG_DIR")
        .env_remove("PLATFORMCTL_SERVER")
        .env_remove("PLATFORMCTL_REGISTRIES")
        .env_remove("PLATFORM_IDENTITY")
        .env_remove("PLATFORM_IDENTITY_TOKEN_FILE")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{host}").unwrap();
    // A bound on answering at all: a helper waiting on a host that never
    // answers (a `Bystander`) fails the test instead of hanging it.
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("the helper did not answer for {host} with {env:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let output = child.wait_with_output().unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (
        output.status.success(),
        text(output.stdout),
        text(output.stderr),
    )
}

/// The helper's answer for `host`, which must be credentials.
fn credential_helper(host: &str, env: &[(&str, &str)]) -> Value {
    let (ok, stdout, stderr) = run_credential_helper(host, env);
    assert!(ok, "{host} {env:?}: {stderr}");
    serde_json::from_str(&stdout).expect("the helper prints JSON")
}

/// Asserts the helper has no credentials for `host` with `env`: Docker's
/// "credentials not found" answer.
fn refused(host: &str, env: &[(&str, &str)]) {
    let (ok, stdout, stderr) = run_credential_helper(host, env);
    assert!(!ok, "{host} {env:?}: {stdout}");
    assert_eq!(
        stdout.trim(),
        "credentials not found in native keychain",
        "{host} {env:?}: {stderr}"
    );
}

/// A listener standing for a host the helper must not contact; it records
/// connections without answering them.
struct Bystander(std::net::TcpListener);

impl Bystander {
    fn new() -> Bystander {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Bystander(listener)
    }

    fn host(&self) -> String {
        self.0.local_addr().unwrap().to_string()
    }

    /// Asserts no connection was made to it so far (a connection a process
    /// made before exiting waits in the accept queue).
    fn assert_untouched(&self, what: &str) {
        match self.0.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Ok((_, from)) => panic!("{what}: a connection from {from}"),
            Err(e) => panic!("{what}: {e}"),
        }
    }
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
        ("PLATFORMCTL_SERVER", base.as_str()),
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

/// A server trusting `ISSUER`, an identity there that may read one private
/// repo, and an identity token of that identity's subject in a file.
struct World {
    server: TestServer,
    base: String,
    identity: String,
    repo_path: String,
    token_file: std::path::PathBuf,
}

async fn world(dir: &std::path::Path) -> World {
    let issuer = Issuer::new("key-1");
    let server = TestServer::start_trusting(dir, ISSUER, &issuer).await;
    let base = format!("http://{}", server.address);
    let admin = server.rest();
    let root = admin
        .create("/iam/v2/groups/", json!({"name": "cli"}))
        .await;
    let reader = json!({"name": "reader", "capabilities": ["repos.get"]});
    let reader = admin.create(&format!("/iam/v2/roles/{root}"), reader).await;
    let claim_match = json!({"issuer": ISSUER, "subject": "alice"});
    let identity = admin
        .create(
            &format!("/iam/v2/identities/{root}"),
            json!({"name": "cli", "claimMatch": claim_match}),
        )
        .await;
    admin
        .create(
            &format!("/iam/v2/roleBindings/{root}"),
            json!({"name": "b", "identity": identity, "role": reader}),
        )
        .await;
    let repo = admin
        .create(
            &format!("/registry/v2/repos/{root}"),
            json!({"name": "private"}),
        )
        .await;
    let token_file = dir.join("identity.jwt");
    let claims = json!({"iss": ISSUER, "sub": "alice", "aud": base, "exp": now() + 600});
    std::fs::write(&token_file, issuer.token(claims)).unwrap();
    World {
        server,
        base,
        identity,
        repo_path: format!("/registry/v2/repos/{repo}"),
        token_file,
    }
}

impl World {
    /// `platformctl auth login` with the identity token, caching in `config`.
    async fn login(&self, config: &std::path::Path) {
        let (base, config) = (self.base.clone(), config.to_owned());
        let (identity, file) = (self.identity.clone(), self.token_file.clone());
        let (ok, _, stderr) = tokio::task::spawn_blocking(move || {
            let file = file.to_str().unwrap();
            let args = [
                "auth",
                "login",
                "--identity",
                &identity,
                "--identity-token",
                file,
            ];
            platformctl(&base, &config, &args)
        })
        .await
        .unwrap();
        assert!(ok, "login: {stderr}");
    }

    /// Asserts the helper's answer for `host` is a token that reads the repo.
    async fn assert_token_for(&self, host: &str, env: &[(&str, &str)]) {
        let answer = credential_helper(host, env);
        assert_eq!(answer["ServerURL"], host, "{env:?}");
        let secret = answer["Secret"].as_str().expect("a secret");
        let read = self.server.rest_as(Some(secret)).get(&self.repo_path).await;
        assert_eq!(
            read.status,
            StatusCode::OK,
            "{host} {env:?}: {:?}",
            read.body
        );
    }
}

/// Docker asks the helper about any host an image names: it answers only
/// for the registries configured for the configured API, and contacts
/// nothing (not the host, not the API) for any other.
#[tokio::test(flavor = "multi_thread")]
async fn the_credential_helper_answers_only_for_configured_registries() {
    let dir = tempfile::tempdir().unwrap();
    let world = world(dir.path()).await;
    let bystander = Bystander::new();
    let evil = bystander.host();
    let (empty, config) = (dir.path().join("empty"), dir.path().join("config"));
    world.login(&config).await;
    let (empty, config) = (empty.to_str().unwrap(), config.to_str().unwrap());
    let (identity, token_file) = (world.identity.as_str(), world.token_file.to_str().unwrap());
    let base = world.base.as_str();
    let api_host = world.server.address.to_string();
    let registries = "registry.test,mirror.test:5000";

    // Identity-token mode (CI) and login-cache mode, unconfigured and configured.
    let exchange = |dir| {
        vec![
            ("PLATFORMCTL_CONFIG_DIR", dir),
            ("PLATFORM_IDENTITY", identity),
            ("PLATFORM_IDENTITY_TOKEN_FILE", token_file),
        ]
    };
    let unconfigured = exchange(empty);
    let mut configured = exchange(empty);
    configured.extend([
        ("PLATFORMCTL_SERVER", base),
        ("PLATFORMCTL_REGISTRIES", registries),
    ]);
    let cached = vec![("PLATFORMCTL_CONFIG_DIR", config)];
    let mut cached_registries = cached.clone();
    cached_registries.push(("PLATFORMCTL_REGISTRIES", registries));

    refused(&evil, &unconfigured);
    refused(&api_host, &unconfigured);
    let look_alikes = [
        evil.clone(),
        format!("registry.test@{evil}"),
        format!("https://registry.test@{evil}/"),
        format!("{evil}/registry.test"),
        format!("{api_host}@{evil}"),
        "registry.test.evil.test".to_owned(),
        "evil-registry.test".to_owned(),
        "registry.test:5000".to_owned(),
        "http://registry.test".to_owned(),
        "mirror.test".to_owned(),
        "registry.test%2eevil.test".to_owned(),
    ];
    for env in [&configured, &cached, &cached_registries] {
        for host in &look_alikes {
            refused(host, env);
        }
    }
    bystander.assert_untouched("no request for a host not configured");

    for host in [
        "registry.test",
        "REGISTRY.Test:443",
        "https://registry.test/v2/",
        "mirror.test:5000",
    ] {
        world.assert_token_for(host, &configured).await;
        world.assert_token_for(host, &cached_registries).await;
    }
    world.assert_token_for(&api_host, &configured).await;
    world.assert_token_for(&api_host, &cached).await;

    // Set up once: `configure-docker` records the API and the registries.
    let (base_arg, config_arg) = (base.to_owned(), config.to_owned());
    let (ok, stdout, stderr) = tokio::task::spawn_blocking(move || {
        let args = [
            "auth",
            "configure-docker",
            "--registry",
            "Registry.Test:443",
        ];
        platformctl(&base_arg, std::path::Path::new(&config_arg), &args)
    })
    .await
    .unwrap();
    assert!(ok, "{stderr}");
    let docker_config: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        docker_config,
        json!({"credHelpers": {api_host.clone(): "platform", "registry.test": "platform"}})
    );
    world.assert_token_for("registry.test", &cached).await;
    world
        .assert_token_for("registry.test", &exchange(config))
        .await;
    let (base_arg, config_arg) = (base.to_owned(), config.to_owned());
    let (ok, _, stderr) = tokio::task::spawn_blocking(move || {
        let args = [
            "auth",
            "configure-docker",
            "--registry",
            "registry.test@evil.test",
        ];
        platformctl(&base_arg, std::path::Path::new(&config_arg), &args)
    })
    .await
    .unwrap();
    assert!(!ok && stderr.contains("not a registry host"), "{stderr}");
    for host in &look_alikes {
        refused(host, &cached);
        refused(host, &exchange(config));
    }
    bystander.assert_untouched("no request for a host not configured");
    world.server.stop().await;
}

#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[cfg(unix)]
fn loosen(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A credentials file (and directory) others could read before is the
/// owner's only once the login or a refresh writes it.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn credentials_are_the_owners_only_whatever_was_there() {
    let dir = tempfile::tempdir().unwrap();
    let world = world(dir.path()).await;
    let config = dir.path().join("config");
    let file = config.join("credentials.json");
    std::fs::create_dir(&config).unwrap();
    loosen(&config, 0o755);
    std::fs::write(&file, "{}").unwrap();
    loosen(&file, 0o644);

    world.login(&config).await;
    assert_eq!(mode(&file), 0o600, "after login");
    assert_eq!(mode(&config), 0o700, "after login");

    let mut stale: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    stale["expires_at"] = json!(now() - 10);
    std::fs::write(&file, stale.to_string()).unwrap();
    loosen(&file, 0o644);
    loosen(&config, 0o755);
    let (base, config_dir) = (world.base.clone(), config.clone());
    let (ok, _, stderr) =
        tokio::task::spawn_blocking(move || platformctl(&base, &config_dir, &["auth", "token"]))
            .await
            .unwrap();
    assert!(ok, "{stderr}");
    let refreshed: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert!(
        refreshed["expires_at"].as_u64().unwrap() > now(),
        "refreshed"
    );
    assert_eq!(mode(&file), 0o600, "after a refresh");
    assert_eq!(mode(&config), 0o700, "after a refresh");
    world.server.stop().await;
}

/// `platformctl` with `stdin` on its standard input.
fn platformctl_fed(
    server: &str,
    config: &std::path::Path,
    args: &[&str],
    stdin: &str,
) -> (bool, String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_platformctl"))
        .args(["--server", server, "--config-dir"])
        .arg(config)
        .args(args)
        .env_remove("PLATFORMCTL_TOKEN")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (
        output.status.success(),
        text(output.stdout),
        text(output.stderr),
    )
}

/// The local path a new administrator takes: no identity token, no browser,
/// the `admin.token` the server wrote, cached with `auth login --with-token`.
#[tokio::test(flavor = "multi_thread")]
async fn the_administrator_logs_in_with_the_admin_token() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let base = format!("http://{}", server.address);
    let config = dir.path().join("config");
    let admin_token = server.admin_token.clone();
    let (base2, config2) = (base.clone(), config.clone());
    let run = move |args: &'static [&'static str], stdin: String| {
        let (base, config) = (base2.clone(), config2.clone());
        tokio::task::spawn_blocking(move || platformctl_fed(&base, &config, args, &stdin))
    };

    let (ok, _, stderr) = run(&["groups", "list"], String::new()).await.unwrap();
    assert!(!ok);
    assert!(
        stderr.contains("auth login --with-token < <token file>") && stderr.contains("admin.token"),
        "the way in is named: {stderr}"
    );

    let (payload, signature) = admin_token.rsplit_once('.').unwrap();
    let forged = format!("{payload}.{}", "A".repeat(signature.len()));
    for (refused, why) in [
        ("not a token\n".to_owned(), "not a JWT with an expiry"),
        (forged, "invalid signature"),
    ] {
        let (ok, _, stderr) = run(&["auth", "login", "--with-token"], refused)
            .await
            .unwrap();
        assert!(!ok, "refused");
        assert!(stderr.contains(why), "{stderr}");
        assert!(!config.join("credentials.json").exists(), "nothing cached");
    }

    let (ok, _, stderr) = run(
        &["auth", "login", "--with-token"],
        format!("{admin_token}\n"),
    )
    .await
    .unwrap();
    assert!(ok, "{stderr}");
    let subject = protoapi_runtime::client::jwt_subject(&admin_token).unwrap();
    assert!(
        ["59", "60"].iter().any(|minutes| stderr.contains(&format!(
            "logged in as {subject}; the token expires in {minutes} min"
        ))),
        "{stderr}"
    );
    let (ok, listed, stderr) = run(&["groups", "list", "-o", "json"], String::new())
        .await
        .unwrap();
    assert!(ok, "{stderr}");
    let listed: Value = serde_json::from_str(&listed).unwrap();
    assert!(
        !listed["items"].as_array().unwrap().is_empty(),
        "the administrator sees the root group: {listed}"
    );
    let (ok, printed, _) = run(&["auth", "token"], String::new()).await.unwrap();
    assert!(ok);
    assert_eq!(printed.trim(), admin_token, "the cached token");
    let (ok, printed, _) = run(&["--token", "given-token", "auth", "token"], String::new())
        .await
        .unwrap();
    assert!(ok);
    assert_eq!(printed.trim(), "given-token", "`--token` comes first");
}
