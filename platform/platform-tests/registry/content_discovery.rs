//! Content discovery: the tags list with `n`/`last` paging, and the
//! referrers API with its `artifactType` filter.

use http::StatusCode;

use crate::common::{OCI_INDEX, OCI_MANIFEST, image_manifest, world};

#[tokio::test(flavor = "multi_thread")]
async fn tags_list_in_lexical_order_and_in_pages() {
    let world = world().await;
    let (repo, oci) = (&world.private, &world.admin);
    let image = oci.push_image(repo, "latest", b"{}", &[b"layer"]).await;
    for tag in ["v2", "V1", "v10", "a_b"] {
        let put = oci
            .put_manifest(repo, tag, OCI_MANIFEST, &image.manifest)
            .await;
        assert_eq!(put.status, StatusCode::CREATED);
    }
    let all = oci.get(&format!("/v2/{repo}/tags/list")).await;
    assert_eq!(all.json()["name"], repo.as_str());
    assert_eq!(
        all.json()["tags"],
        serde_json::json!(["V1", "a_b", "latest", "v10", "v2"]),
        "byte order"
    );
    assert_eq!(all.header("link"), "");

    let mut path = format!("/v2/{repo}/tags/list?n=2");
    let mut pages = Vec::new();
    loop {
        let page = oci.get(&path).await;
        assert_eq!(page.status, StatusCode::OK);
        pages.push(page.json()["tags"].clone());
        let link = page.header("link").to_owned();
        if link.is_empty() {
            break;
        }
        assert!(link.ends_with(">; rel=\"next\""), "{link}");
        path = link
            .trim_start_matches('<')
            .split('>')
            .next()
            .unwrap()
            .to_owned();
    }
    assert_eq!(
        pages,
        [
            serde_json::json!(["V1", "a_b"]),
            serde_json::json!(["latest", "v10"]),
            serde_json::json!(["v2"])
        ]
    );
    let after = oci.get(&format!("/v2/{repo}/tags/list?last=v10")).await;
    assert_eq!(after.json()["tags"], serde_json::json!(["v2"]));
    let none = oci.get(&format!("/v2/{repo}/tags/list?n=0")).await;
    assert_eq!(none.json()["tags"], serde_json::json!([]));
    world.server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn referrers_list_the_artifacts_of_a_subject() {
    let world = world().await;
    let (repo, oci) = (&world.private, &world.admin);
    let image = oci.push_image(repo, "v1", b"{}", &[b"layer"]).await;
    let empty = oci.push_blob(repo, b"{}").await;
    let signature = oci.push_blob(repo, b"a signature").await;
    let subject = Some((
        image.digest.as_str(),
        image.manifest.len(),
        "application/vnd.example.signature",
    ));
    let signed = image_manifest((&empty, 2), [(signature.as_str(), 11)].into_iter(), subject);
    let put = oci
        .put_manifest(repo, &crate::common::digest(&signed), OCI_MANIFEST, &signed)
        .await;
    assert_eq!(put.status, StatusCode::CREATED, "{:?}", put.body);
    assert_eq!(
        put.header("oci-subject"),
        image.digest,
        "the subject is named back"
    );
    let subject = Some((
        image.digest.as_str(),
        image.manifest.len(),
        "application/vnd.example.sbom",
    ));
    let sbom = image_manifest((&empty, 2), std::iter::empty(), subject);
    assert_eq!(
        oci.put_manifest(repo, "sbom", OCI_MANIFEST, &sbom)
            .await
            .status,
        StatusCode::CREATED
    );

    let referrers = oci
        .get(&format!("/v2/{repo}/referrers/{}", image.digest))
        .await;
    assert_eq!(
        (referrers.status, referrers.header("content-type")),
        (StatusCode::OK, OCI_INDEX)
    );
    let index = referrers.json();
    let mut found: Vec<(String, String)> = index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["artifactType"].as_str().unwrap().to_owned(),
                d["digest"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            (
                "application/vnd.example.sbom".to_owned(),
                crate::common::digest(&sbom)
            ),
            (
                "application/vnd.example.signature".to_owned(),
                crate::common::digest(&signed)
            ),
        ]
    );
    let descriptor = &index["manifests"][0];
    assert_eq!(descriptor["mediaType"], OCI_MANIFEST);
    assert!(
        descriptor["annotations"]["org.example.kind"].is_string(),
        "{descriptor}"
    );

    let filtered = oci
        .get(&format!(
            "/v2/{repo}/referrers/{}?artifactType=application/vnd.example.sbom",
            image.digest
        ))
        .await;
    assert_eq!(filtered.header("oci-filters-applied"), "artifactType");
    assert_eq!(filtered.json()["manifests"].as_array().unwrap().len(), 1);
    let lonely = oci
        .get(&format!(
            "/v2/{repo}/referrers/{}",
            crate::common::digest(b"nothing")
        ))
        .await;
    assert_eq!(
        (lonely.status, lonely.json()["manifests"].clone()),
        (StatusCode::OK, serde_json::json!([]))
    );
    world.server.stop().await;
}
