//! The registry's manifests as the API's read-only `images` collection, a
//! repo's images its children: tags, digest, size and time, kept up to date
//! as manifests are pushed, tags move and manifests are deleted.

use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::{OCI_MANIFEST, World, world};

/// The repo's images, as `(digest, tags)`, by digest.
async fn images(world: &World, repo: &str) -> Vec<(String, Value)> {
    let listed = world
        .server
        .rest()
        .get(&format!(
            "/registry/v2/images?uidp.children_of={repo}&orderBy=digest"
        ))
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|image| {
            (
                image["digest"].as_str().unwrap().to_owned(),
                image["tags"].clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn images_follow_pushes_tags_and_deletes() {
    let world = world().await;
    let (repo, oci) = (&world.private, &world.admin);
    let first = oci
        .push_image(repo, "v1", b"{\"n\":1}", &[b"layer one"])
        .await;
    oci.put_manifest(repo, "v2", OCI_MANIFEST, &first.manifest)
        .await;
    let uid = format!("{repo}/{}", &first.digest["sha256:".len()..][..16]);
    let image = world
        .server
        .rest()
        .get(&format!("/registry/v2/images/{uid}"))
        .await;
    assert_eq!(image.status, StatusCode::OK, "{:?}", image.body);
    assert_eq!(image.body["digest"], first.digest.as_str());
    assert_eq!(image.body["tags"], json!(["v1", "v2"]));
    assert_eq!(image.body["mediaType"], OCI_MANIFEST);
    let size = first.manifest.len() + b"{\"n\":1}".len() + b"layer one".len();
    assert_eq!(
        image.body["sizeBytes"],
        size.to_string(),
        "the manifest and its blobs"
    );
    assert!(image.body["createTime"].is_string() && image.body["etag"].is_string());

    // A tag moved to another manifest leaves the first one.
    let second = oci
        .push_image(repo, "v2", b"{\"n\":2}", &[b"layer two"])
        .await;
    let mut expected = vec![
        (first.digest.clone(), json!(["v1"])),
        (second.digest.clone(), json!(["v2"])),
    ];
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(images(&world, repo).await, expected);

    let delete =
        |path: String| async move { oci.send(Method::DELETE, &path, &[], Bytes::new()).await };
    assert_eq!(
        delete(format!("/v2/{repo}/manifests/v1")).await.status,
        StatusCode::ACCEPTED
    );
    let untagged = images(&world, repo).await;
    assert!(
        untagged.contains(&(first.digest.clone(), json!([]))),
        "{untagged:?}"
    );
    assert_eq!(
        delete(format!("/v2/{repo}/manifests/{}", second.digest))
            .await
            .status,
        StatusCode::ACCEPTED
    );
    assert_eq!(
        images(&world, repo).await,
        [(first.digest.clone(), json!([]))]
    );

    // Read only: images are written through the registry alone.
    let create = world
        .server
        .rest()
        .post(&format!("/registry/v2/images/{repo}"), json!({}))
        .await;
    assert!(create.status.is_client_error(), "{:?}", create.status);
    // A reader of the organization's images reads them; a reader of another
    // organization's does not. (Roles of its own: the built-in roles of a
    // database bootstrapped before images existed do not name them.)
    let reader = world
        .server
        .member_with(&world.org, "reader", &["images.get", "images.list"])
        .await;
    assert_eq!(
        reader
            .rest
            .get(&format!("/registry/v2/images/{uid}"))
            .await
            .status,
        StatusCode::OK
    );
    let stranger = world
        .server
        .rest()
        .create("/iam/v2/groups/", json!({"name": "elsewhere"}))
        .await;
    let outsider = world
        .server
        .member_with(&stranger, "outsider", &["images.get", "images.list"])
        .await;
    let refused = outsider
        .rest
        .get(&format!("/registry/v2/images/{uid}"))
        .await;
    assert!(
        matches!(
            refused.status,
            StatusCode::NOT_FOUND | StatusCode::FORBIDDEN
        ),
        "{:?}",
        refused.status
    );
    world.server.stop().await;
}

/// The changes the images have yet to hear about, as the registry records
/// them.
async fn pending(pool: &sqlx::AnyPool) -> i64 {
    use sqlx::Row as _;
    sqlx::query("SELECT COUNT(*) FROM registry_changes")
        .fetch_one(pool)
        .await
        .unwrap()
        .try_get(0)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_the_images_missed_is_told_when_a_server_starts() {
    let world = crate::common::world_apart(true).await;
    let repo = world.private.clone();
    let pushed = world
        .admin
        .push_image(&repo, "v1", b"{\"n\":3}", &[b"layer three"])
        .await;
    let store = world.store().await;
    assert_eq!(pending(store.pool()).await, 0, "every change was told");

    // A server that tagged the manifest again and stopped before the image
    // heard of it: the tag and the change are recorded, the image says
    // nothing of the tag.
    let hex = pushed.digest.trim_start_matches("sha256:");
    let uid = format!("{repo}/{}", &hex[..16]);
    sqlx::query("INSERT INTO registry_tags (repo, tag, digest, updated) VALUES ($1, $2, $3, $4)")
        .bind(repo.clone())
        .bind("v2")
        .bind(pushed.digest.clone())
        .bind(1_i64)
        .execute(store.pool())
        .await
        .unwrap();
    sqlx::query("INSERT INTO registry_changes (repo, digest, seq) VALUES ($1, $2, $3)")
        .bind(repo.clone())
        .bind(pushed.digest.clone())
        .bind(1_i64)
        .execute(store.pool())
        .await
        .unwrap();
    let path = format!("/registry/v2/images/{uid}");
    assert_eq!(
        world.server.rest().get(&path).await.body["tags"],
        json!(["v1"])
    );

    let world = world.restart().await;
    let rest = world.server.rest();
    let tags = crate::common::eventually(
        || async { rest.get(&path).await.body["tags"].clone() },
        |tags| *tags == json!(["v1", "v2"]),
    )
    .await;
    assert_eq!(
        tags,
        json!(["v1", "v2"]),
        "the restarted server told the image"
    );
    assert_eq!(pending(store.pool()).await, 0, "the change was told");
    store.close().await;
    world.server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_an_image_deletes_its_manifest_from_the_registry() {
    let world = world().await;
    let (repo, oci) = (&world.private, &world.admin);
    let kept = oci
        .push_image(repo, "kept", b"{\"n\":4}", &[b"layer four"])
        .await;
    let gone = oci
        .push_image(repo, "gone", b"{\"n\":5}", &[b"layer five"])
        .await;
    // A second tag on it: the image is updated, its manifest stays.
    let retagged = oci
        .put_manifest(repo, "also", OCI_MANIFEST, &gone.manifest)
        .await;
    assert_eq!(retagged.status, StatusCode::CREATED);
    let pulled = oci
        .get(&format!("/v2/{repo}/manifests/{}", gone.digest))
        .await;
    assert_eq!(
        pulled.status,
        StatusCode::OK,
        "a new tag keeps the manifest"
    );

    let uid = |digest: &str| format!("{repo}/{}", &digest.trim_start_matches("sha256:")[..16]);
    let rest = world.server.rest();
    let image = rest
        .get(&format!("/registry/v2/images/{}", uid(&gone.digest)))
        .await;
    assert_eq!(image.body["tags"], json!(["also", "gone"]));
    let deleted = rest
        .delete(&format!("/registry/v2/images/{}", uid(&gone.digest)))
        .await;
    assert_eq!(deleted.status, StatusCode::OK, "{:?}", deleted.body);

    for reference in [gone.digest.as_str(), "gone", "also"] {
        oci.get(&format!("/v2/{repo}/manifests/{reference}"))
            .await
            .assert_error(StatusCode::NOT_FOUND, "MANIFEST_UNKNOWN", reference);
    }
    let tags = oci.get(&format!("/v2/{repo}/tags/list")).await;
    assert_eq!(tags.json()["tags"], json!(["kept"]));
    let still = oci.get(&format!("/v2/{repo}/manifests/kept")).await;
    assert_eq!(still.body.as_ref(), kept.manifest.as_slice());
    assert_eq!(images(&world, repo).await.len(), 1);

    // A viewer of the organization may not delete images.
    let viewer = world
        .server
        .member(
            &world.org,
            "image viewer",
            &world.server.builtin_role("viewer").await,
            &world.org,
        )
        .await;
    let refused = viewer
        .rest
        .delete(&format!("/registry/v2/images/{}", uid(&kept.digest)))
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{:?}", refused.body);
    let still = oci.get(&format!("/v2/{repo}/manifests/kept")).await;
    assert_eq!(still.status, StatusCode::OK);
}
