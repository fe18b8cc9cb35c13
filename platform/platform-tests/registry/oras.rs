//! An artifact pushed by another real client, the oras Python SDK (PyPI
//! `oras`), with a `subject`: oras lists the tag, and the referrers API
//! finds the artifact under its subject. Without the SDK the test says so
//! and passes without running (CI installs it).

use std::process::Command;

use http::StatusCode;
use serde_json::Value;

use crate::common::world;

fn oras_found() -> bool {
    Command::new("python3")
        .args(["-c", "import oras.provider"])
        .output()
        .is_ok_and(|output| output.status.success())
}

#[tokio::test(flavor = "multi_thread")]
async fn oras_pushes_an_artifact_that_the_referrers_api_finds() {
    if !oras_found() {
        eprintln!(
            "note: the oras Python SDK is not installed; this test did not run (pip install oras)"
        );
        return;
    }
    let world = world().await;
    let (repo, oci) = (&world.private, &world.admin);
    let image = oci.push_image(repo, "v1", b"{}", &[b"layer"]).await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sbom.json");
    std::fs::write(&file, br#"{"packages": []}"#).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/registry/oras_push.py");
    let (address, token, size) = (
        world.server.address.to_string(),
        world.server.admin_token.trim().to_owned(),
        image.manifest.len().to_string(),
    );
    let (repo_name, subject) = (repo.clone(), image.digest.clone());
    let output = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg(script)
            .args([&address, &repo_name, &token, &subject, &size])
            .arg(&file)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        output.status.success(),
        "oras: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let pushed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        pushed["tags"],
        serde_json::json!(["sbom", "v1"]),
        "oras lists the tags"
    );
    let artifact = pushed["digest"].as_str().unwrap();

    let referrers = oci
        .get(&format!("/v2/{repo}/referrers/{}", image.digest))
        .await;
    assert_eq!(referrers.status, StatusCode::OK);
    let found = referrers.json()["manifests"].clone();
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    assert_eq!(found[0]["digest"], artifact);
    assert_eq!(found[0]["artifactType"], "application/vnd.example.sbom");
    assert_eq!(found[0]["annotations"]["org.example.tool"], "oras-py");
    world.server.stop().await;
}
