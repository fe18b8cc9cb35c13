//! IAM v2 groups over REST, as a curl user drives them.

use platform_tests::{Method, StatusCode, TestServer, is_child_uid};
use serde_json::json;

#[tokio::test]
async fn group_lifecycle_over_rest_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();

    let root = rest
        .post(
            "/iam/v2/groups/",
            json!({"name": "acme", "description": "root"}),
        )
        .await;
    assert_eq!(root.status, StatusCode::OK, "{:?}", root.body);
    let root_uid = root.body["uid"].as_str().unwrap().to_owned();
    assert!(is_child_uid(&root_uid, None), "root uid {root_uid}");
    assert_eq!(root.body["name"], "acme");
    assert!(root.body["createTime"].as_str().unwrap().ends_with('Z'));

    let child = rest
        .post(
            &format!("/iam/v2/groups/{root_uid}"),
            json!({"name": "team", "description": "old"}),
        )
        .await;
    assert_eq!(child.status, StatusCode::OK, "{:?}", child.body);
    let child_uid = child.body["uid"].as_str().unwrap().to_owned();
    assert!(
        is_child_uid(&child_uid, Some(&root_uid)),
        "child uid {child_uid}"
    );

    let got = rest.get(&format!("/iam/v2/groups/{child_uid}")).await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.body, child.body);

    let listed = rest
        .get(&format!("/iam/v2/groups?uidp.children_of={root_uid}"))
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{:?}", listed.body);
    assert_eq!(listed.body["items"], json!([child.body]));
    assert_eq!(listed.body["totalCount"], 1);

    let patched = rest
        .patch(
            &format!("/iam/v2/groups/{child_uid}?updateMask=description"),
            json!({"description": "new", "name": "not applied"}),
        )
        .await;
    assert_eq!(patched.status, StatusCode::OK, "{:?}", patched.body);
    assert_eq!(patched.body["description"], "new");
    assert_eq!(patched.body["name"], "team", "only masked fields change");
    assert_eq!(patched.body["createTime"], child.body["createTime"]);
    let before = child.body["updateTime"].as_str().unwrap();
    let after = patched.body["updateTime"].as_str().unwrap();
    assert!(after > before, "updateTime advances: {before} -> {after}");

    // Data survives a restart.
    server.stop().await;
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let got = rest.get(&format!("/iam/v2/groups/{child_uid}")).await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.body, patched.body);

    let blocked = rest.delete(&format!("/iam/v2/groups/{root_uid}")).await;
    assert_eq!(blocked.status, StatusCode::BAD_REQUEST);
    assert_eq!(blocked.error_status(), "FAILED_PRECONDITION");
    let violation = &blocked.detail("PreconditionFailure").unwrap()["violations"][0];
    assert_eq!(violation["subject"], child_uid.as_str());

    let deleted = rest.delete(&format!("/iam/v2/groups/{child_uid}")).await;
    assert_eq!(deleted.status, StatusCode::OK);
    assert_eq!(deleted.body, json!({}));

    let missing = rest.get(&format!("/iam/v2/groups/{child_uid}")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.body["error"]["code"], 404);
    assert_eq!(missing.error_status(), "NOT_FOUND");
    let info = missing
        .detail("ResourceInfo")
        .expect("a ResourceInfo detail");
    assert_eq!(info["resourceType"], "iam.platform/Group");
    assert_eq!(info["resourceName"], child_uid.as_str());
    let error_info = missing.detail("ErrorInfo").expect("an ErrorInfo detail");
    assert_eq!(error_info["domain"], "iam.platform");
    assert_eq!(error_info["reason"], "RESOURCE_NOT_FOUND");
    server.stop().await;
}

#[tokio::test]
async fn rest_errors_are_precise() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let root = rest.post("/iam/v2/groups/", json!({"name": "acme"})).await;
    let root_uid = root.body["uid"].as_str().unwrap().to_owned();

    // Missing parent on create: 404 naming the parent.
    let ghost = format!("{root_uid}/0123456789abcdef");
    let orphan = rest
        .post(&format!("/iam/v2/groups/{ghost}"), json!({"name": "x"}))
        .await;
    assert_eq!(orphan.status, StatusCode::NOT_FOUND, "{:?}", orphan.body);
    assert_eq!(
        orphan.detail("ResourceInfo").unwrap()["resourceName"],
        ghost.as_str()
    );

    // A misspelt query parameter or body field is named with the one meant.
    let misspelt = rest.get("/iam/v2/groups?pagesize=1").await;
    assert_eq!(misspelt.status, StatusCode::BAD_REQUEST);
    let violation = &misspelt.detail("BadRequest").unwrap()["fieldViolations"][0];
    assert_eq!(violation["field"], "pagesize");
    assert_eq!(
        violation["description"],
        "unknown query parameter; did you mean `pageSize`?"
    );
    let misspelt = rest
        .post("/iam/v2/groups/", json!({"name": "x", "descripton": "y"}))
        .await;
    assert_eq!(misspelt.status, StatusCode::BAD_REQUEST);
    let violation = &misspelt.detail("BadRequest").unwrap()["fieldViolations"][0];
    assert_eq!(violation["field"], "group.descripton");
    assert_eq!(
        violation["description"],
        "unknown field; did you mean `description`?"
    );

    let cases = [
        (
            Method::GET,
            "/iam/v2/groups/not-a-uid".to_owned(),
            None,
            "uid",
        ),
        (
            Method::POST,
            "/iam/v2/groups/".to_owned(),
            Some(json!({"description": "no name"})),
            "group.name",
        ),
        (
            Method::POST,
            "/iam/v2/groups/".to_owned(),
            Some(json!({"name": "x", "colour": "red"})),
            "group.colour",
        ),
        (
            Method::POST,
            "/iam/v2/groups/".to_owned(),
            Some(json!({"name": "x", "resourceLimits": {"clusters": "many"}})),
            "group.resourceLimits.clusters",
        ),
        (
            Method::GET,
            "/iam/v2/groups?uidp.children_of=ABC".to_owned(),
            None,
            "uidp.childrenOf",
        ),
        (
            Method::GET,
            "/iam/v2/groups?pageSize=-1".to_owned(),
            None,
            "pageSize",
        ),
        (
            Method::GET,
            "/iam/v2/groups?colour=red".to_owned(),
            None,
            "colour",
        ),
        (
            Method::GET,
            "/iam/v2/groups?orderBy=colour".to_owned(),
            None,
            "orderBy",
        ),
        (
            Method::PATCH,
            format!("/iam/v2/groups/{root_uid}?updateMask=uid"),
            Some(json!({"name": "y"})),
            "updateMask.uid",
        ),
        (
            Method::PATCH,
            format!("/iam/v2/groups/{root_uid}?updateMask=colour"),
            Some(json!({"name": "y"})),
            "updateMask.colour",
        ),
    ];
    for (method, path, body, field) in cases {
        let response = rest.call(method.clone(), &path, body.as_ref()).await;
        assert_eq!(
            response.status,
            StatusCode::BAD_REQUEST,
            "{method} {path}: {:?}",
            response.body
        );
        assert_eq!(
            response.error_status(),
            "INVALID_ARGUMENT",
            "{method} {path}"
        );
        let violations =
            &response.detail("BadRequest").expect("a BadRequest detail")["fieldViolations"];
        assert_eq!(
            violations[0]["field"], field,
            "{method} {path}: {violations}"
        );
        assert!(
            response.detail("ErrorInfo").is_some(),
            "{method} {path}: ErrorInfo"
        );
    }

    let bad_json = rest
        .raw(
            Method::POST,
            "/iam/v2/groups/",
            "application/json",
            b"{\"name\":".to_vec(),
        )
        .await;
    assert_eq!(bad_json.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        bad_json.detail("BadRequest").unwrap()["fieldViolations"][0]["field"],
        "group"
    );

    let too_big = rest
        .raw(
            Method::POST,
            "/iam/v2/groups/",
            "application/json",
            vec![b' '; (1 << 20) + 1],
        )
        .await;
    assert_eq!(too_big.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(too_big.error_status(), "RESOURCE_EXHAUSTED");

    let no_route = rest.get("/iam/v2/nothing").await;
    assert_eq!(no_route.status, StatusCode::NOT_FOUND);
    assert_eq!(no_route.error_status(), "NOT_FOUND");
    server.stop().await;
}

#[tokio::test]
async fn page_tokens_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let root_uid = rest
        .create("/iam/v2/groups/", json!({"name": "acme"}))
        .await;
    for name in ["a", "b", "c"] {
        rest.post(
            &format!("/iam/v2/groups/{root_uid}"),
            json!({ "name": name }),
        )
        .await;
    }
    let query = format!("/iam/v2/groups?uidp.children_of={root_uid}&orderBy=name&pageSize=2");
    let first = rest.get(&query).await.body;
    let token = first["nextPageToken"].as_str().unwrap().to_owned();
    server.stop().await;

    let server = TestServer::start(dir.path()).await;
    let second = server
        .rest()
        .get(&format!("{query}&pageToken={token}"))
        .await;
    assert_eq!(second.status, StatusCode::OK, "{:?}", second.body);
    let names: Vec<&str> = second.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["c"]);
    assert_eq!(second.body["nextPageToken"], "");
    server.stop().await;
}

#[tokio::test]
async fn concurrent_updates_with_disjoint_masks_both_apply() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let root = rest
        .post("/iam/v2/groups/", json!({"name": "acme"}))
        .await
        .body;
    let uid = root["uid"].as_str().unwrap().to_owned();
    for round in 0..20 {
        let path = format!("/iam/v2/groups/{uid}");
        let description_path = format!("{path}?updateMask=description");
        let limits_path = format!("{path}?updateMask=resourceLimits.clusters");
        let description = rest.patch(
            &description_path,
            json!({"description": format!("d{round}")}),
        );
        let limits = rest.patch(&limits_path, json!({"resourceLimits": {"clusters": round}}));
        let (a, b) = tokio::join!(description, limits);
        assert_eq!((a.status, b.status), (StatusCode::OK, StatusCode::OK));
        let stored = rest.get(&path).await.body;
        assert_eq!(stored["description"], format!("d{round}"), "round {round}");
        assert_eq!(stored["resourceLimits"]["clusters"], round, "round {round}");
    }
    server.stop().await;
}

#[tokio::test]
async fn etags_guard_updates_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let rest = server.rest();
    let group = rest
        .post("/iam/v2/groups/", json!({"name": "acme"}))
        .await
        .body;
    let path = format!("/iam/v2/groups/{}", group["uid"].as_str().unwrap());
    let etag = group["etag"].as_str().unwrap().to_owned();

    // Read-modify-write with the current etag succeeds and changes the etag.
    let mut changed = group.clone();
    changed["description"] = json!("v2");
    let updated = rest.patch(&path, changed.clone()).await;
    assert_eq!(updated.status, StatusCode::OK, "{:?}", updated.body);
    assert_ne!(updated.body["etag"], etag.as_str());

    // The same etag is now stale: ABORTED, and nothing changes.
    changed["description"] = json!("v3");
    let stale = rest.patch(&path, changed).await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    assert_eq!(stale.error_status(), "ABORTED");
    let stale_delete = rest.delete(&format!("{path}?etag={etag}")).await;
    assert_eq!(stale_delete.status, StatusCode::CONFLICT);
    assert_eq!(rest.get(&path).await.body, updated.body);

    let fresh = updated.body["etag"].as_str().unwrap();
    assert_eq!(
        rest.delete(&format!("{path}?etag={fresh}")).await.status,
        StatusCode::OK
    );
    server.stop().await;
}
