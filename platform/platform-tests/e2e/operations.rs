//! A repository deleted by a long-running operation
//! (`RepoDeletionService.DeleteRepo`, AIP-151) beside the unchanged
//! `RepoService.DeleteRepo`: started by whoever may delete the repository,
//! read by whoever may read it, cancelled or forgotten only by whoever may
//! delete it, invisible to other organizations, in lists too.

use hyper::StatusCode;
use platform_tests::TestServer;
use serde_json::json;

#[tokio::test]
async fn a_repo_is_deleted_in_the_background_under_the_access_rules() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let admin = server.rest();
    let org = admin
        .create("/iam/v2/groups/", json!({"name": "org"}))
        .await;
    let other = admin
        .create("/iam/v2/groups/", json!({"name": "other"}))
        .await;
    let repo = admin
        .create(&format!("/registry/v2/repos/{org}"), json!({"name": "web"}))
        .await;
    let reader = server.member_with(&org, "reader", &["repos.get"]).await;
    let deleter = server
        .member_with(&org, "deleter", &["repos.get", "repos.delete"])
        .await;
    let stranger = server
        .member_with(&other, "stranger", &["repos.get", "repos.delete"])
        .await;

    // Starting it takes what the delete takes, where the repository is.
    let start = format!("/registry/v2/repos/{repo}:delete");
    for refused in [&reader, &stranger] {
        let response = refused.rest.post(&start, json!({})).await;
        assert_eq!(
            response.status,
            StatusCode::FORBIDDEN,
            "{:?}",
            response.body
        );
    }
    // Nothing was started for them (the database may hold other tests' operations).
    let listed = admin.get("/registry/v2/operations?pageSize=1000").await;
    let on_repo = listed.body["operations"].as_array().unwrap().iter();
    assert!(
        !on_repo
            .clone()
            .any(|o| o["metadata"]["target"] == repo.as_str()),
        "{:?}",
        listed.body
    );
    let started = deleter.rest.post(&start, json!({})).await;
    assert_eq!(started.status, StatusCode::OK, "{:?}", started.body);
    let name = started.body["name"].as_str().unwrap().to_owned();
    assert!(name.starts_with("operations/operation-"), "{name}");
    assert_eq!(started.body["metadata"]["target"], repo.as_str());

    let done = reader
        .rest
        .post(&format!("/registry/v2/{name}:wait"), json!({}))
        .await;
    assert_eq!(done.status, StatusCode::OK, "{:?}", done.body);
    assert_eq!(done.body["done"], true);
    assert_eq!(
        done.body["response"]["@type"],
        "type.googleapis.com/google.protobuf.Empty"
    );
    let gone = admin.get(&format!("/registry/v2/repos/{repo}")).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);

    // Another organization neither reads it nor lists it.
    let read = stranger.rest.get(&format!("/registry/v2/{name}")).await;
    assert_eq!(read.status, StatusCode::FORBIDDEN, "{:?}", read.body);
    let listed = stranger.rest.get("/registry/v2/operations").await;
    assert_eq!(listed.body["operations"], json!([]), "{:?}", listed.body);
    let listed = reader.rest.get("/registry/v2/operations").await;
    let names: Vec<&str> = listed.body["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [name.as_str()]);

    // Forgetting it takes the delete's capability.
    let forget = format!("/registry/v2/{name}");
    let refused = reader.rest.delete(&forget).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{:?}", refused.body);
    assert_eq!(deleter.rest.delete(&forget).await.status, StatusCode::OK);
    assert_eq!(reader.rest.get(&forget).await.status, StatusCode::NOT_FOUND);
}

/// The operations served beside the API are not the API: an unknown route
/// still answers in the Platform API's error domain.
#[tokio::test]
async fn the_error_domain_outside_the_services_stays_the_platforms() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let response = server.rest().get("/iam/v2/nothing").await;
    assert_eq!(response.status, StatusCode::NOT_FOUND);
    let info = response.detail("ErrorInfo").unwrap();
    assert_eq!(
        (&info["reason"], &info["domain"]),
        (&json!("ROUTE_NOT_FOUND"), &json!("platform"))
    );
}
