//! Pull: manifests and blobs by tag and by digest, `HEAD`, ranges, and the
//! errors of what is not there.

use bytes::Bytes;
use http::{Method, StatusCode};

use crate::common::{OCI_MANIFEST, world};

#[tokio::test(flavor = "multi_thread")]
async fn pull_manifests_and_blobs_by_tag_and_by_digest() {
    let world = world().await;
    let (repo, oci) = (&world.private, &world.admin);
    let layer: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let image = oci
        .push_image(repo, "v1", b"{\"os\":\"linux\"}", &[&layer])
        .await;

    for reference in ["v1", image.digest.as_str()] {
        let got = oci.get(&format!("/v2/{repo}/manifests/{reference}")).await;
        assert_eq!(got.status, StatusCode::OK, "{reference}");
        assert_eq!(
            got.body,
            Bytes::from(image.manifest.clone()),
            "{reference}: the bytes pushed"
        );
        assert_eq!(got.header("content-type"), OCI_MANIFEST);
        assert_eq!(got.header("docker-content-digest"), image.digest);
        let head = oci
            .send(
                Method::HEAD,
                &format!("/v2/{repo}/manifests/{reference}"),
                &[],
                Bytes::new(),
            )
            .await;
        assert_eq!(head.status, StatusCode::OK);
        assert!(head.body.is_empty());
        assert_eq!(
            head.header("content-length"),
            image.manifest.len().to_string()
        );
        assert_eq!(head.header("docker-content-digest"), image.digest);
    }

    let blob = format!("/v2/{repo}/blobs/{}", image.layers[0]);
    let got = oci.get(&blob).await;
    assert_eq!(
        (got.status, got.body.as_ref()),
        (StatusCode::OK, layer.as_slice())
    );
    assert_eq!(got.header("docker-content-digest"), image.layers[0]);
    let head = oci.send(Method::HEAD, &blob, &[], Bytes::new()).await;
    assert_eq!(
        (head.status, head.header("content-length")),
        (StatusCode::OK, "100000")
    );
    assert!(head.body.is_empty());

    let range = oci
        .send(
            Method::GET,
            &blob,
            &[("range", "bytes=10-19")],
            Bytes::new(),
        )
        .await;
    assert_eq!(range.status, StatusCode::PARTIAL_CONTENT);
    assert_eq!(range.body.as_ref(), &layer[10..20]);
    assert_eq!(range.header("content-range"), "bytes 10-19/100000");
    let tail = oci
        .send(Method::GET, &blob, &[("range", "bytes=-5")], Bytes::new())
        .await;
    assert_eq!(tail.body.as_ref(), &layer[99_995..]);
    let outside = oci
        .send(
            Method::GET,
            &blob,
            &[("range", "bytes=100000-")],
            Bytes::new(),
        )
        .await;
    assert_eq!(outside.status, StatusCode::RANGE_NOT_SATISFIABLE);
    assert_eq!(outside.header("content-range"), "bytes */100000");
    world.server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn what_is_not_there_answers_the_specs_errors() {
    let world = world().await;
    let (repo, oci) = (&world.private, &world.admin);
    let image = oci.push_image(repo, "v1", b"{}", &[b"layer"]).await;
    let nothing = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    oci.get(&format!("/v2/{repo}/manifests/v2"))
        .await
        .assert_error(
            StatusCode::NOT_FOUND,
            "MANIFEST_UNKNOWN",
            "a tag never pushed",
        );
    oci.get(&format!("/v2/{repo}/manifests/{nothing}"))
        .await
        .assert_error(
            StatusCode::NOT_FOUND,
            "MANIFEST_UNKNOWN",
            "a digest never pushed",
        );
    oci.get(&format!("/v2/{repo}/blobs/{nothing}"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "BLOB_UNKNOWN", "a blob never pushed");
    oci.get(&format!("/v2/{repo}/blobs/sha256:abc"))
        .await
        .assert_error(
            StatusCode::BAD_REQUEST,
            "DIGEST_INVALID",
            "a malformed digest",
        );
    oci.get("/v2/Not_A_Name/manifests/v1").await.assert_error(
        StatusCode::BAD_REQUEST,
        "NAME_INVALID",
        "a malformed name",
    );
    // A blob is read through a repository that holds it, not through any.
    let other = &world.public;
    oci.get(&format!("/v2/{other}/blobs/{}", image.layers[0]))
        .await
        .assert_error(
            StatusCode::NOT_FOUND,
            "BLOB_UNKNOWN",
            "another repository's blob",
        );
    oci.get(&format!("/v2/{other}/manifests/{}", image.digest))
        .await
        .assert_error(
            StatusCode::NOT_FOUND,
            "MANIFEST_UNKNOWN",
            "another repository's manifest",
        );
    world.server.stop().await;
}
