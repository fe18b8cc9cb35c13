//! Content management: deleting tags, manifests and blobs, and garbage
//! collection of the blobs no manifest refers to any more.

use std::time::Duration;

use bytes::Bytes;
use http::{Method, StatusCode};

use crate::common::world;

#[tokio::test(flavor = "multi_thread")]
async fn delete_tags_manifests_and_blobs() {
    let world = world().await;
    let (repo, oci) = (&world.private, &world.admin);
    let image = oci.push_image(repo, "v1", b"{}", &[b"layer"]).await;
    oci.put_manifest(repo, "v2", crate::common::OCI_MANIFEST, &image.manifest)
        .await;
    let delete =
        |path: String| async move { oci.send(Method::DELETE, &path, &[], Bytes::new()).await };

    assert_eq!(
        delete(format!("/v2/{repo}/manifests/v2")).await.status,
        StatusCode::ACCEPTED,
        "a tag"
    );
    oci.get(&format!("/v2/{repo}/manifests/v2"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "MANIFEST_UNKNOWN", "the tag deleted");
    assert_eq!(
        oci.get(&format!("/v2/{repo}/manifests/v1")).await.status,
        StatusCode::OK,
        "the other tag stays"
    );

    assert_eq!(
        delete(format!("/v2/{repo}/manifests/{}", image.digest))
            .await
            .status,
        StatusCode::ACCEPTED
    );
    oci.get(&format!("/v2/{repo}/manifests/{}", image.digest))
        .await
        .assert_error(StatusCode::NOT_FOUND, "MANIFEST_UNKNOWN", "deleted");
    oci.get(&format!("/v2/{repo}/manifests/v1"))
        .await
        .assert_error(
            StatusCode::NOT_FOUND,
            "MANIFEST_UNKNOWN",
            "its tags go with it",
        );
    assert_eq!(
        oci.get(&format!("/v2/{repo}/tags/list")).await.json()["tags"],
        serde_json::json!([])
    );
    delete(format!("/v2/{repo}/manifests/{}", image.digest))
        .await
        .assert_error(StatusCode::NOT_FOUND, "MANIFEST_UNKNOWN", "deleted twice");

    assert_eq!(
        delete(format!("/v2/{repo}/blobs/{}", image.layers[0]))
            .await
            .status,
        StatusCode::ACCEPTED
    );
    oci.get(&format!("/v2/{repo}/blobs/{}", image.layers[0]))
        .await
        .assert_error(StatusCode::NOT_FOUND, "BLOB_UNKNOWN", "deleted");
    world.server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn garbage_collection_removes_unshared_blobs_and_keeps_shared_ones() {
    let world = crate::common::world_apart(true).await;
    let (repo, oci) = (&world.private, &world.admin);
    let gone = oci
        .push_image(
            repo,
            "gone",
            b"{\"n\":1}",
            &[b"shared layer", b"unshared layer"],
        )
        .await;
    let kept = oci
        .push_image(repo, "kept", b"{\"n\":2}", &[b"shared layer"])
        .await;
    let deleted = oci
        .send(
            Method::DELETE,
            &format!("/v2/{repo}/manifests/{}", gone.digest),
            &[],
            Bytes::new(),
        )
        .await;
    assert_eq!(deleted.status, StatusCode::ACCEPTED);
    let unfinished = oci
        .send(
            Method::POST,
            &format!("/v2/{repo}/blobs/uploads/"),
            &[],
            Bytes::new(),
        )
        .await;
    assert_eq!(unfinished.status, StatusCode::ACCEPTED);

    let store = world.store().await;
    let storage = platform_server::registry::storage(&store, &world.server.data_dir, None).unwrap();
    let young = storage
        .collect_garbage(Duration::from_secs(3600))
        .await
        .unwrap();
    assert_eq!(
        (young.links, young.blobs),
        (0, 0),
        "nothing younger than the grace period: {young:?}"
    );
    let collected = storage.collect_garbage(Duration::ZERO).await.unwrap();
    assert_eq!(
        (collected.links, collected.blobs),
        (2, 2),
        "the unshared layer and the config: {collected:?}"
    );
    store.close().await;

    let on_disk = |digest: &str| {
        let hex = digest.trim_start_matches("sha256:");
        world
            .server
            .data_dir
            .join("registry/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .exists()
    };
    for digest in [&gone.config, &gone.layers[1]] {
        assert!(!on_disk(digest), "{digest} is collected");
        oci.get(&format!("/v2/{repo}/blobs/{digest}"))
            .await
            .assert_error(StatusCode::NOT_FOUND, "BLOB_UNKNOWN", "collected");
    }
    for digest in [&kept.config, &kept.layers[0]] {
        assert!(on_disk(digest), "{digest} is kept");
        assert_eq!(
            oci.get(&format!("/v2/{repo}/blobs/{digest}")).await.status,
            StatusCode::OK
        );
    }
    assert_eq!(
        oci.get(&format!("/v2/{repo}/manifests/kept")).await.status,
        StatusCode::OK
    );
    world.server.stop().await;
}

/// What the registry keeps of a repo, counted in its tables.
async fn kept_of(pool: &sqlx::AnyPool, repo: &str) -> i64 {
    use sqlx::Row as _;
    sqlx::query(
        "SELECT (SELECT COUNT(*) FROM registry_blobs WHERE repo = $1) \
         + (SELECT COUNT(*) FROM registry_manifests WHERE repo = $1)",
    )
    .bind(repo.to_owned())
    .fetch_one(pool)
    .await
    .unwrap()
    .try_get(0)
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn what_the_registry_keeps_of_a_deleted_repo_goes_with_it() {
    let world = crate::common::world_apart(true).await;
    let (org, rest) = (world.org.clone(), world.server.rest());
    let repo = rest
        .create(
            &format!("/registry/v2/repos/{org}"),
            serde_json::json!({"name": "short-lived"}),
        )
        .await;
    world
        .admin
        .push_blob(&repo, b"a layer of a repo about to go")
        .await;
    let store = world.store().await;
    assert_eq!(kept_of(store.pool(), &repo).await, 1);
    let deleted = rest.delete(&format!("/registry/v2/repos/{repo}")).await;
    assert_eq!(deleted.status, StatusCode::OK, "{:?}", deleted.body);
    assert_eq!(
        kept_of(store.pool(), &repo).await,
        0,
        "forgotten in the delete's transaction"
    );

    // A push that ended after its repo's delete: the registry holds a blob
    // of a repo that is not there any more.
    let gone = format!("{org}/0123456789abcdef");
    sqlx::query("INSERT INTO registry_blobs (repo, digest, size, created) VALUES ($1, $2, 1, 1)")
        .bind(gone.clone())
        .bind(crate::common::digest(b"x"))
        .execute(store.pool())
        .await
        .unwrap();
    let world = world.restart().await;
    let kept = crate::common::eventually(|| kept_of(store.pool(), &gone), |kept| *kept == 0).await;
    assert_eq!(kept, 0, "a server forgets it when it starts");
    store.close().await;
    world.server.stop().await;
}
