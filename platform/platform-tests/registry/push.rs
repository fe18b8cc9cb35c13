//! Push: monolithic uploads, sessions finished by `PUT`, chunks in order
//! (and resumed after a connection cut), status, cancel, cross-repository
//! mounts, and manifests checked against what the repository holds.

use std::time::Duration;

use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::json;
use tokio::io::AsyncWriteExt as _;

use crate::common::{OCI_INDEX, OCI_MANIFEST, Oci, digest, image_manifest, world};

#[tokio::test(flavor = "multi_thread")]
async fn push_blobs_whole_or_through_a_session() {
    let world = world().await;
    let (repo, oci) = (&world.private, &world.admin);
    let monolithic = oci.push_blob(repo, b"one piece").await;
    assert_eq!(
        oci.get(&format!("/v2/{repo}/blobs/{monolithic}"))
            .await
            .body
            .as_ref(),
        b"one piece"
    );

    let started = oci
        .send(
            Method::POST,
            &format!("/v2/{repo}/blobs/uploads/"),
            &[],
            Bytes::new(),
        )
        .await;
    assert_eq!(started.status, StatusCode::ACCEPTED);
    let location = started.header("location").to_owned();
    assert!(
        location.starts_with(&format!("/v2/{repo}/blobs/uploads/")),
        "{location}"
    );
    let content = b"put at the end";
    let finished = oci
        .send(
            Method::PUT,
            &format!("{location}?digest={}", digest(content)),
            &[],
            content.to_vec(),
        )
        .await;
    assert_eq!(finished.status, StatusCode::CREATED, "{:?}", finished.body);
    assert_eq!(
        finished.header("location"),
        format!("/v2/{repo}/blobs/{}", digest(content))
    );
    assert_eq!(finished.header("docker-content-digest"), digest(content));

    // Bytes that are not the digest named are not stored under it.
    let claimed = digest(b"something else");
    let wrong = oci
        .send(
            Method::POST,
            &format!("/v2/{repo}/blobs/uploads/?digest={claimed}"),
            &[],
            b"these bytes".to_vec(),
        )
        .await;
    wrong.assert_error(
        StatusCode::BAD_REQUEST,
        "DIGEST_INVALID",
        "bytes of another digest",
    );
    oci.get(&format!("/v2/{repo}/blobs/{claimed}"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "BLOB_UNKNOWN", "not stored");
    world.server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn push_chunks_in_order_resume_after_a_cut_and_cancel() {
    let world = world().await;
    let (repo, oci) = (&world.private, &world.admin);
    let content: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 256) as u8).collect();
    let started = oci
        .send(
            Method::POST,
            &format!("/v2/{repo}/blobs/uploads/"),
            &[],
            Bytes::new(),
        )
        .await;
    let location = started.header("location").to_owned();

    let first = oci
        .send(
            Method::PATCH,
            &location,
            &[
                ("content-range", "0-99999"),
                ("content-type", "application/octet-stream"),
            ],
            content[..100_000].to_vec(),
        )
        .await;
    assert_eq!(
        (first.status, first.header("range")),
        (StatusCode::ACCEPTED, "0-99999")
    );
    let out_of_order = oci
        .send(
            Method::PATCH,
            &location,
            &[("content-range", "200000-299999")],
            content[200_000..].to_vec(),
        )
        .await;
    out_of_order.assert_error(
        StatusCode::RANGE_NOT_SATISFIABLE,
        "BLOB_UPLOAD_INVALID",
        "a chunk past the end",
    );
    assert_eq!(out_of_order.header("range"), "0-99999");

    // The connection breaks off in the middle of the next chunk: what
    // arrived is kept, and the client resumes from the end the status names.
    cut_short(
        &world.server.address.to_string(),
        oci,
        &location,
        &content[100_000..200_000],
    )
    .await;
    let received = wait_for_progress(oci, &location, 100_000).await;
    assert!(received > 100_000 && received <= 200_000, "{received}");
    let resumed = oci
        .send(
            Method::PATCH,
            &location,
            &[(
                "content-range",
                &format!("{received}-{}", content.len() - 1),
            )],
            content[received..].to_vec(),
        )
        .await;
    assert_eq!(resumed.status, StatusCode::ACCEPTED, "{:?}", resumed.body);
    let status = oci.get(&location).await;
    assert_eq!(
        (status.status, status.header("range")),
        (StatusCode::NO_CONTENT, "0-299999")
    );
    let finished = oci
        .send(
            Method::PUT,
            &format!("{location}?digest={}", digest(&content)),
            &[],
            Bytes::new(),
        )
        .await;
    assert_eq!(finished.status, StatusCode::CREATED, "{:?}", finished.body);
    assert_eq!(
        oci.get(&format!("/v2/{repo}/blobs/{}", digest(&content)))
            .await
            .body
            .as_ref(),
        content.as_slice()
    );
    oci.get(&location).await.assert_error(
        StatusCode::NOT_FOUND,
        "BLOB_UPLOAD_UNKNOWN",
        "a finished upload",
    );

    let cancelled = oci
        .send(
            Method::POST,
            &format!("/v2/{repo}/blobs/uploads/"),
            &[],
            Bytes::new(),
        )
        .await;
    let location = cancelled.header("location").to_owned();
    assert_eq!(
        oci.send(Method::DELETE, &location, &[], Bytes::new())
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    oci.get(&location).await.assert_error(
        StatusCode::NOT_FOUND,
        "BLOB_UPLOAD_UNKNOWN",
        "a cancelled upload",
    );
    // An upload is its repository's: another one does not know it.
    let elsewhere = oci
        .send(
            Method::POST,
            &format!("/v2/{repo}/blobs/uploads/"),
            &[],
            Bytes::new(),
        )
        .await;
    let id = elsewhere
        .header("location")
        .rsplit('/')
        .next()
        .unwrap()
        .to_owned();
    oci.get(&format!("/v2/{}/blobs/uploads/{id}", world.public))
        .await
        .assert_error(
            StatusCode::NOT_FOUND,
            "BLOB_UPLOAD_UNKNOWN",
            "another repository's upload",
        );
    world.server.stop().await;
}

/// Sends a PATCH of `chunk` declaring twice its length, then closes the
/// connection.
async fn cut_short(address: &str, oci: &Oci, location: &str, chunk: &[u8]) {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "PATCH {location} HTTP/1.1\r\nhost: {address}\r\nauthorization: {}\r\ncontent-type: application/octet-stream\r\ncontent-length: {}\r\n\r\n",
        oci.authorization.as_deref().unwrap(),
        chunk.len() * 2
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(chunk).await.unwrap();
    stream.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(stream);
}

/// The upload's length once it has grown past `from` and stopped growing.
async fn wait_for_progress(oci: &Oci, location: &str, from: usize) -> usize {
    let mut last = 0;
    for _ in 0..100 {
        let range = oci.get(location).await.header("range").to_owned();
        let len = range.rsplit('-').next().unwrap().parse::<usize>().unwrap() + 1;
        if len > from && len == last {
            return len;
        }
        last = len;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the upload stayed at {last} bytes");
}

#[tokio::test(flavor = "multi_thread")]
async fn blobs_mount_from_repositories_the_caller_may_pull() {
    let world = world().await;
    let oci = &world.admin;
    let shared = oci.push_blob(&world.private, b"shared layer").await;
    let mounted = oci
        .send(
            Method::POST,
            &format!(
                "/v2/{}/blobs/uploads/?mount={shared}&from={}",
                world.public, world.private
            ),
            &[],
            Bytes::new(),
        )
        .await;
    assert_eq!(mounted.status, StatusCode::CREATED, "{:?}", mounted.body);
    assert_eq!(
        oci.get(&format!("/v2/{}/blobs/{shared}", world.public))
            .await
            .body
            .as_ref(),
        b"shared layer"
    );
    // A blob the source does not hold starts an upload instead.
    let unknown = digest(b"never pushed");
    let fallback = oci
        .send(
            Method::POST,
            &format!(
                "/v2/{}/blobs/uploads/?mount={unknown}&from={}",
                world.public, world.private
            ),
            &[],
            Bytes::new(),
        )
        .await;
    assert_eq!(fallback.status, StatusCode::ACCEPTED);
    world.server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn manifests_are_checked_against_what_the_repository_holds() {
    let world = world().await;
    let (repo, oci) = (&world.private, &world.admin);
    let config = oci.push_blob(repo, b"{}").await;
    let missing = digest(b"a layer never pushed");
    let manifest = image_manifest((&config, 2), [(missing.as_str(), 20)].into_iter(), None);
    oci.put_manifest(repo, "v1", OCI_MANIFEST, &manifest)
        .await
        .assert_error(
            StatusCode::BAD_REQUEST,
            "MANIFEST_BLOB_UNKNOWN",
            "a layer the repository lacks",
        );
    let manifest = image_manifest((&config, 2), std::iter::empty(), None);
    oci.put_manifest(repo, &digest(b"other"), OCI_MANIFEST, &manifest)
        .await
        .assert_error(
            StatusCode::BAD_REQUEST,
            "DIGEST_INVALID",
            "put at another digest",
        );
    oci.put_manifest(repo, "v1", OCI_MANIFEST, b"{not json")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "MANIFEST_INVALID", "not JSON");
    oci.put_manifest(repo, "v1", OCI_INDEX, &manifest)
        .await
        .assert_error(
            StatusCode::BAD_REQUEST,
            "MANIFEST_INVALID",
            "a Content-Type other than its mediaType",
        );
    let put = oci
        .put_manifest(repo, &digest(&manifest), OCI_MANIFEST, &manifest)
        .await;
    assert_eq!(put.status, StatusCode::CREATED, "{:?}", put.body);
    assert_eq!(
        put.header("location"),
        format!("/v2/{repo}/manifests/{}", digest(&manifest))
    );

    // An index (multi-platform) needs its manifests; Docker's list too.
    let entry = |digest: &str, size: usize, media_type: &str| json!({"mediaType": media_type, "digest": digest, "size": size, "platform": {"architecture": "amd64", "os": "linux"}});
    let absent = digest(b"no such manifest");
    let index = serde_json::to_vec(&json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [entry(&absent, 10, OCI_MANIFEST)]})).unwrap();
    oci.put_manifest(repo, "multi", OCI_INDEX, &index)
        .await
        .assert_error(
            StatusCode::BAD_REQUEST,
            "MANIFEST_BLOB_UNKNOWN",
            "an index of a manifest not pushed",
        );
    let index = serde_json::to_vec(&json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [entry(&digest(&manifest), manifest.len(), OCI_MANIFEST)]})).unwrap();
    assert_eq!(
        oci.put_manifest(repo, "multi", OCI_INDEX, &index)
            .await
            .status,
        StatusCode::CREATED
    );
    let got = oci.get(&format!("/v2/{repo}/manifests/multi")).await;
    assert_eq!(
        (got.header("content-type"), got.body.as_ref()),
        (OCI_INDEX, index.as_slice())
    );

    let docker = "application/vnd.docker.distribution.manifest.v2+json";
    let schema2 = serde_json::to_vec(&json!({
        "schemaVersion": 2, "mediaType": docker,
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": config, "size": 2},
        "layers": [],
    }))
    .unwrap();
    assert_eq!(
        oci.put_manifest(repo, "docker", docker, &schema2)
            .await
            .status,
        StatusCode::CREATED
    );
    let list_type = "application/vnd.docker.distribution.manifest.list.v2+json";
    let list = serde_json::to_vec(&json!({"schemaVersion": 2, "mediaType": list_type, "manifests": [entry(&digest(&schema2), schema2.len(), docker)]})).unwrap();
    assert_eq!(
        oci.put_manifest(repo, "docker-list", list_type, &list)
            .await
            .status,
        StatusCode::CREATED
    );
    assert_eq!(
        oci.get(&format!("/v2/{repo}/manifests/docker-list"))
            .await
            .header("content-type"),
        list_type
    );
    world.server.stop().await;
}

/// A layer may take longer to arrive than the body timeout allows other
/// requests: uploads have the stream timeout.
#[tokio::test(flavor = "multi_thread")]
async fn uploads_may_take_longer_than_the_body_timeout() {
    let world = crate::common::world_configured(false, |config| {
        config.timeouts.body = Duration::from_millis(300);
    })
    .await;
    let (repo, oci) = (&world.private, &world.admin);
    let content = vec![3u8; 200_000];
    let address = world.server.address.to_string();
    let path = format!("/v2/{repo}/blobs/uploads/?digest={}", digest(&content));
    let slow = slowly(&address, oci, &path, &content).await;
    assert!(slow.starts_with("HTTP/1.1 201"), "{slow}");
    let api = slowly(
        &address,
        oci,
        &format!("/iam/v2/groups/{}", world.org),
        br#"{"name": "slow"}"#,
    )
    .await;
    assert!(
        api.starts_with("HTTP/1.1 408"),
        "other requests keep the body timeout: {api}"
    );
    world.server.stop().await;
}

/// POSTs `body` in two halves a second apart; the answer's head.
async fn slowly(address: &str, oci: &Oci, path: &str, body: &[u8]) -> String {
    use tokio::io::AsyncReadExt as _;
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: {address}\r\nauthorization: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        oci.authorization.as_deref().unwrap(),
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (first, rest) = body.split_at(body.len() / 2);
    stream.write_all(first).await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    stream.write_all(rest).await.ok();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.ok();
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// `--registry-max-blob-bytes`: an upload that would grow past it is
/// refused (and forgotten), whole or in chunks.
#[tokio::test(flavor = "multi_thread")]
async fn uploads_stop_at_the_configured_size() {
    let world = crate::common::world_configured(false, |config| {
        config.registry_limits.max_blob_bytes = 1024;
    })
    .await;
    let (repo, oci) = (&world.private, &world.admin);
    oci.push_blob(repo, &[7; 1024]).await;
    let big = vec![8; 1025];
    let refused = oci
        .send(
            Method::POST,
            &format!("/v2/{repo}/blobs/uploads/?digest={}", digest(&big)),
            &[],
            big.clone(),
        )
        .await;
    refused.assert_error(StatusCode::PAYLOAD_TOO_LARGE, "SIZE_INVALID", "one piece");
    let started = oci
        .send(
            Method::POST,
            &format!("/v2/{repo}/blobs/uploads/"),
            &[],
            Bytes::new(),
        )
        .await;
    let location = started.header("location").to_owned();
    let first = oci
        .send(Method::PATCH, &location, &[], big[..1000].to_vec())
        .await;
    assert_eq!(first.status, StatusCode::ACCEPTED);
    oci.send(Method::PATCH, &location, &[], big[1000..].to_vec())
        .await
        .assert_error(StatusCode::PAYLOAD_TOO_LARGE, "SIZE_INVALID", "in chunks");
    oci.get(&location).await.assert_error(
        StatusCode::NOT_FOUND,
        "BLOB_UPLOAD_UNKNOWN",
        "forgotten",
    );
}
