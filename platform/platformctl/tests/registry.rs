//! Images pushed and pulled by a real registry client, `skopeo`, with the
//! credentials `docker-credential-platform` hands it after `platformctl auth
//! configure-docker`, against a real server (SQLite, or PostgreSQL with
//! `E2E_DATABASE_URL`). The image is an OCI layout built here: two
//! platforms' manifests under an index. Without `skopeo` on the `PATH` the
//! test says so and passes without running (CI installs it).

use std::path::{Path, PathBuf};
use std::process::Command;

use platform_tests::TestServer;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    format!(
        "sha256:{}",
        hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// Writes `bytes` as a blob of the layout at `dir`; its descriptor.
fn blob(dir: &Path, media_type: &str, bytes: &[u8]) -> Value {
    let digest = digest(bytes);
    let path = dir
        .join("blobs/sha256")
        .join(digest.trim_start_matches("sha256:"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
    json!({"mediaType": media_type, "digest": digest, "size": bytes.len()})
}

/// An OCI layout at `dir` whose tag `v1` is an index of an amd64 and an
/// arm64 image sharing a layer; the index's digest.
fn layout(dir: &Path) -> String {
    let shared = blob(
        dir,
        "application/vnd.oci.image.layer.v1.tar",
        &vec![7u8; 300_000],
    );
    let mut manifests = Vec::new();
    for architecture in ["amd64", "arm64"] {
        let config = json!({"architecture": architecture, "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}});
        let config = blob(
            dir,
            "application/vnd.oci.image.config.v1+json",
            config.to_string().as_bytes(),
        );
        let own = blob(
            dir,
            "application/vnd.oci.image.layer.v1.tar",
            architecture.repeat(1000).as_bytes(),
        );
        let manifest = json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": config,
            "layers": [shared, own],
        });
        let mut descriptor = blob(
            dir,
            "application/vnd.oci.image.manifest.v1+json",
            manifest.to_string().as_bytes(),
        );
        descriptor["platform"] = json!({"architecture": architecture, "os": "linux"});
        manifests.push(descriptor);
    }
    let index = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": manifests});
    let mut top = blob(
        dir,
        "application/vnd.oci.image.index.v1+json",
        index.to_string().as_bytes(),
    );
    top["annotations"] = json!({"org.opencontainers.image.ref.name": "v1"});
    std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    std::fs::write(
        dir.join("index.json"),
        json!({"schemaVersion": 2, "manifests": [top]}).to_string(),
    )
    .unwrap();
    top["digest"].as_str().unwrap().to_owned()
}

/// The digest the layout at `dir` names for tag `v1`.
fn tagged(dir: &Path) -> String {
    let index: Value =
        serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap();
    index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == "v1")
        .map(|m| m["digest"].as_str().unwrap().to_owned())
        .unwrap()
}

/// Whether `skopeo` runs here.
fn skopeo_found() -> bool {
    Command::new("skopeo")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs skopeo with `args` in an environment of its own: `home` (a fresh
/// blob cache), the credential helper on the `PATH`, `config` as
/// platformctl's config dir. Whether it succeeded, and its stderr.
fn skopeo(home: &Path, config: &Path, args: &[&str]) -> (bool, String) {
    let helpers = PathBuf::from(env!("CARGO_BIN_EXE_docker-credential-platform"));
    let path = format!(
        "{}:{}",
        helpers.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("skopeo")
        .args(args)
        .env("HOME", home)
        .env("PATH", path)
        .env("PLATFORMCTL_CONFIG_DIR", config)
        .env_remove("PLATFORMCTL_SERVER")
        .env_remove("REGISTRY_AUTH_FILE")
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `platformctl` with `args`, `stdin` fed; its stdout.
fn platformctl(server: &str, config: &Path, args: &[&str], stdin: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_platformctl"))
        .args(["--server", server, "--config-dir"])
        .arg(config)
        .args(args)
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
    assert!(
        output.status.success(),
        "platformctl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn skopeo_pushes_and_pulls_with_the_credential_helper() {
    if !skopeo_found() {
        eprintln!(
            "note: skopeo is not on the PATH; this test did not run (apt-get install skopeo)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data")).await;
    let admin = server.rest();
    let org = admin
        .create("/iam/v2/groups/", json!({"name": "images"}))
        .await;
    let private = admin
        .create(
            &format!("/registry/v2/repos/{org}"),
            json!({"name": "skopeo"}),
        )
        .await;
    let public = admin
        .create(
            &format!("/registry/v2/repos/{org}"),
            json!({"name": "base", "public": true}),
        )
        .await;
    let viewer_role = server.builtin_role("viewer").await;
    let viewer = server.member(&org, "viewer", &viewer_role, &org).await;

    // Set up as a user would: log in, then let skopeo use the helper.
    let base = format!("http://{}", server.address);
    let config = dir.path().join("config");
    platformctl(
        &base,
        &config,
        &["auth", "login", "--with-token"],
        &server.admin_token,
    );
    let docker_config = platformctl(&base, &config, &["auth", "configure-docker"], "");
    let docker_config: Value = serde_json::from_str(&docker_config).unwrap();
    let host = server.address.to_string();
    assert_eq!(
        docker_config["credHelpers"][&host], "platform",
        "{docker_config}"
    );
    let auth = dir.path().join("auth.json");
    std::fs::write(&auth, docker_config.to_string()).unwrap();
    let no_auth = dir.path().join("none.json");
    std::fs::write(&no_auth, "{}").unwrap();
    let (home, auth, no_auth) = (
        dir.path().join("home"),
        auth.display().to_string(),
        no_auth.display().to_string(),
    );
    std::fs::create_dir(&home).unwrap();

    let source = dir.path().join("layout");
    let pushed = layout(&source);
    let push = |repo: &str, authfile: &str, extra: &[&str]| {
        let target = format!("docker://{host}/{repo}:v1");
        let source = format!("oci:{}:v1", source.display());
        let mut args = vec![
            "copy",
            "--all",
            "--preserve-digests",
            "--dest-tls-verify=false",
            "--authfile",
            authfile,
        ];
        args.extend_from_slice(extra);
        args.extend([source.as_str(), target.as_str()]);
        skopeo(&home, &config, &args)
    };
    let pull = |repo: &str, into: &Path, authfile: &str, extra: &[&str]| {
        let source = format!("docker://{host}/{repo}:v1");
        let target = format!("oci:{}:v1", into.display());
        let mut args = vec![
            "copy",
            "--all",
            "--preserve-digests",
            "--src-tls-verify=false",
            "--authfile",
            authfile,
        ];
        args.extend_from_slice(extra);
        args.extend([source.as_str(), target.as_str()]);
        skopeo(&home, &config, &args)
    };

    for repo in [&private, &public] {
        let (ok, stderr) = push(repo, &auth, &[]);
        assert!(ok, "push to {repo}: {stderr}");
    }
    // The index and its two manifests are images of the API, the index tagged.
    let listed = platformctl(
        &base,
        &config,
        &["-o", "json", "images", "list", "--children-of", &private],
        "",
    );
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let items = listed["items"].as_array().unwrap();
    assert_eq!(items.len(), 3, "{listed}");
    let with_tag: Vec<&Value> = items
        .iter()
        .filter(|image| image["tags"] == json!(["v1"]))
        .collect();
    assert_eq!(with_tag.len(), 1, "{listed}");
    assert_eq!(with_tag[0]["digest"], pushed.as_str());
    assert_eq!(
        with_tag[0]["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    let back = dir.path().join("pulled");
    let (ok, stderr) = pull(&private, &back, &auth, &[]);
    assert!(ok, "pull: {stderr}");
    assert_eq!(
        tagged(&back),
        pushed,
        "the index pulled back is the one pushed"
    );
    for (digest, _) in walk(&source) {
        assert!(
            walk(&back).iter().any(|(d, _)| *d == digest),
            "{digest} pulled back"
        );
    }
    for (digest, bytes) in walk(&back) {
        assert_eq!(
            self::digest(&bytes),
            digest,
            "every blob pulled is its digest"
        );
    }

    let (ok, _) = pull(&public, &dir.path().join("anonymous"), &no_auth, &[]);
    assert!(ok, "a public repository pulls without credentials");
    let (ok, stderr) = pull(&private, &dir.path().join("refused"), &no_auth, &[]);
    assert!(
        !ok && stderr.contains("denied"),
        "a private one does not: {stderr}"
    );
    let viewer_creds = format!("token:{}", viewer.token);
    let (ok, stderr) = push(&private, &no_auth, &["--dest-creds", &viewer_creds]);
    assert!(
        !ok && stderr.contains("denied"),
        "a viewer does not push: {stderr}"
    );
    let (ok, _) = pull(
        &private,
        &dir.path().join("viewer"),
        &no_auth,
        &["--src-creds", &viewer_creds],
    );
    assert!(ok, "a viewer pulls");
    let (ok, stderr) = pull(
        &public,
        &dir.path().join("bad"),
        &no_auth,
        &["--src-creds", "token:not-a-token"],
    );
    assert!(
        !ok && stderr.contains("unauthorized"),
        "a bad token, even on a public repository: {stderr}"
    );
    server.stop().await;
}

/// Every blob of the layout at `dir`: its digest (from its name) and bytes.
fn walk(dir: &Path) -> Vec<(String, Vec<u8>)> {
    std::fs::read_dir(dir.join("blobs/sha256"))
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            (
                format!("sha256:{name}"),
                std::fs::read(entry.path()).unwrap(),
            )
        })
        .collect()
}
