//! v1 over REST beside v2, on the same port and the same storage: v1 names
//! (`id`, `created_at`, `updated_at`, no etag), lists that are whole
//! (`{"items": [...]}` windowed by `offset` and `limit`) and answer an empty
//! list for what is missing or invisible, full replacement by `PUT`, and the
//! same tokens and grants as v2. Every v1 collection is covered.

use std::str::FromStr;

use platform_api::platform::vulnerabilities::v2::{Advisory, AdvisoryStore, Severity};
use platform_tests::{Method, Response, Rest, StatusCode, TestServer, is_child_uid};
use protoapi_runtime::Caller;
use serde_json::{Value, json};

/// One collection, in both versions.
#[derive(Clone)]
struct Legacy {
    /// The v1 path, e.g. `/iam/v1/groups`.
    v1: &'static str,
    /// The v2 path of the same resources.
    v2: &'static str,
    /// The resource type named by NOT_FOUND's ResourceInfo.
    resource_type: &'static str,
    /// Whether v1 has a Get (`GET /<domain>/v1/<collection>/{id}`).
    v1_get: bool,
    /// Whether v2 has Create and Update (advisories are read-only in v2).
    v2_create: bool,
    /// Whether Get and List need no token (documents, as `body` is published).
    anonymous: bool,
    /// A valid body, spelled the same in both versions.
    body: Value,
    /// The fields other than `name` and `description` a replacement keeps.
    kept: &'static [&'static str],
}

impl Legacy {
    fn v1_list(&self, query: &str) -> String {
        format!("{}?{query}", self.v1)
    }

    /// The body a `PUT` of `created` sends: everything but `description`
    /// (which must be cleared), with the name changed.
    fn replacement(&self, name: &str) -> Value {
        let mut body = self.body.clone();
        let object = body.as_object_mut().unwrap();
        object.remove("description");
        object.insert("name".into(), json!(name));
        body
    }
}

/// Every v1 collection. Role bindings bind `identity` to `role`.
fn collections(identity: &str, role: &str) -> Vec<Legacy> {
    vec![
        Legacy {
            v1: "/iam/v1/groups",
            v2: "/iam/v2/groups",
            resource_type: "iam.platform/Group",
            v1_get: false,
            v2_create: true,
            anonymous: false,
            body: json!({
                "name": "team",
                "description": "the team",
                "resourceLimits": {"clusters": 2, "idps": 1, "repositories": 3},
            }),
            kept: &["resourceLimits"],
        },
        Legacy {
            v1: "/iam/v1/roles",
            v2: "/iam/v2/roles",
            resource_type: "iam.platform/Role",
            v1_get: false,
            v2_create: true,
            anonymous: false,
            body: json!({
                "name": "reader",
                "description": "reads groups",
                "capabilities": ["groups.get", "groups.list"],
            }),
            kept: &["capabilities"],
        },
        Legacy {
            v1: "/iam/v1/identities",
            v2: "/iam/v2/identities",
            resource_type: "iam.platform/Identity",
            v1_get: false,
            v2_create: true,
            anonymous: false,
            body: json!({
                "name": "ci",
                "description": "the pipeline",
                "claimMatch": {"issuer": "https://issuer.example", "subject": "repo:x"},
            }),
            kept: &["claimMatch"],
        },
        Legacy {
            v1: "/iam/v1/rolebindings",
            v2: "/iam/v2/roleBindings",
            resource_type: "iam.platform/RoleBinding",
            v1_get: false,
            v2_create: true,
            anonymous: false,
            body: json!({
                "name": "ci reads",
                "description": "read access",
                "identity": identity,
                "role": role,
            }),
            kept: &["identity", "role"],
        },
        Legacy {
            v1: "/registry/v1/repos",
            v2: "/registry/v2/repos",
            resource_type: "registry.platform/Repo",
            v1_get: false,
            v2_create: true,
            anonymous: false,
            body: json!({
                "name": "images",
                "description": "container images",
                "public": true,
                "readme": "# Images",
                "aliases": ["img", "pics"],
            }),
            kept: &["public", "readme", "aliases"],
        },
        Legacy {
            v1: "/vulnerabilities/v1/advisories",
            v2: "/vulnerabilities/v2/advisories",
            resource_type: "vulnerabilities.platform/Advisory",
            v1_get: true,
            v2_create: false,
            anonymous: false,
            body: json!({
                "name": "advisory",
                "description": "a bad one",
                "advisoryId": "GHSA-1234",
                "aliases": ["CVE-2026-0001"],
                "artifactName": "serde",
                "severity": {"type": "CVSS_V3", "score": 7.5},
            }),
            kept: &["advisoryId", "aliases", "artifactName", "severity"],
        },
        Legacy {
            v1: "/libraries/v1/artifacts",
            v2: "/libraries/v2/artifacts",
            resource_type: "libraries.platform/Artifact",
            v1_get: true,
            v2_create: true,
            anonymous: false,
            body: json!({
                "name": "serde",
                "description": "serialization",
                "ecosystem": "PYTHON",
                "latestVersion": "1.0.0",
                "versionCount": "12",
            }),
            kept: &["ecosystem", "latestVersion", "versionCount"],
        },
        Legacy {
            v1: "/advisory/v1/documents",
            v2: "/advisory/v2/documents",
            resource_type: "advisory.platform/Document",
            v1_get: true,
            v2_create: true,
            anonymous: true,
            body: json!({
                "name": "ADV-1",
                "description": "fixed in 1.1",
                "title": "Fixed",
                "published": "2026-01-02T03:04:05Z",
                "content": "text",
            }),
            kept: &["title", "published", "content"],
        },
    ]
}

/// A server with a root organization of its own (other tests may share the
/// database), an identity in it and the built-in `viewer` role.
struct World {
    server: TestServer,
    root: String,
    identity: String,
    role: String,
    _dir: tempfile::TempDir,
}

impl World {
    async fn new(name: &str) -> World {
        let dir = tempfile::tempdir().unwrap();
        let server = TestServer::start(dir.path()).await;
        let admin = server.rest();
        let root = admin
            .create("/iam/v2/groups/", json!({ "name": name }))
            .await;
        let identity = admin
            .create(
                &format!("/iam/v2/identities/{root}"),
                json!({"name": "bound"}),
            )
            .await;
        let role = server.builtin_role("viewer").await;
        World {
            server,
            root,
            identity,
            role,
            _dir: dir,
        }
    }

    fn collections(&self) -> Vec<Legacy> {
        collections(&self.identity, &self.role)
    }

    /// Creates `body` under `parent` through v2 (advisories, read-only in
    /// v2, straight into storage); returns the uid.
    async fn create_v2(&self, collection: &Legacy, parent: &str, body: &Value) -> String {
        if collection.v2_create {
            self.server
                .rest()
                .create(&format!("{}/{parent}", collection.v2), body.clone())
                .await
        } else {
            seed_advisory(&self.server, parent, body).await
        }
    }

    /// Creates `body` under `parent` through v1 as the administrator.
    async fn create_v1(&self, collection: &Legacy, parent: &str, body: &Value) -> Value {
        let created = self
            .server
            .rest()
            .post(&format!("{}/{parent}", collection.v1), body.clone())
            .await;
        assert_eq!(
            created.status,
            StatusCode::OK,
            "v1 create at {}: {:?}",
            collection.v1,
            created.body
        );
        created.body
    }
}

/// Stores an advisory straight into storage, as v2 would hold it.
async fn seed_advisory(server: &TestServer, parent: &str, body: &Value) -> String {
    let store = match std::env::var("E2E_DATABASE_URL") {
        Ok(url) => platform_server::store::open_postgres(&url).await.unwrap(),
        Err(_) => platform_server::store::open_sqlite(&server.data_dir)
            .await
            .unwrap(),
    };
    let text = |key: &str| body[key].as_str().unwrap_or_default().to_owned();
    let advisory = Advisory {
        name: text("name"),
        description: text("description"),
        advisory_id: text("advisoryId"),
        aliases: body["aliases"]
            .as_array()
            .map(|aliases| {
                aliases
                    .iter()
                    .map(|a| a.as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default(),
        artifact_name: text("artifactName"),
        severity: Some(Severity {
            r#type: 1, // CVSS_V3
            score: body["severity"]["score"].as_f64().unwrap(),
        }),
        ..Default::default()
    };
    let advisory = protoapi_runtime::standard::prepare_create(
        &Caller::System,
        parent,
        Some(advisory),
        "advisory",
    )
    .unwrap();
    store.insert_advisory(&advisory).await.unwrap();
    store.close().await;
    advisory.uid
}

/// `text` percent-encoded for a query string.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// An RFC 3339 timestamp as microseconds since the epoch.
fn micros(value: &Value, what: &str) -> i64 {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("{what}: a timestamp string, got {value}"));
    assert!(text.ends_with('Z'), "{what}: UTC, got {text}");
    let timestamp = prost_types::Timestamp::from_str(text)
        .unwrap_or_else(|e| panic!("{what}: not RFC 3339: {text}: {e}"));
    timestamp.seconds * 1_000_000 + i64::from(timestamp.nanos) / 1_000
}

/// Asserts v1 spellings: `id`, `created_at`, `updated_at`; nothing of v2's.
fn assert_v1_names(item: &Value, what: &str) {
    for key in ["id", "created_at", "updated_at"] {
        assert!(item.get(key).is_some(), "{what}: `{key}` in {item}");
    }
    for key in [
        "uid",
        "createTime",
        "updateTime",
        "create_time",
        "update_time",
        "createdAt",
        "updatedAt",
        "etag",
    ] {
        assert!(item.get(key).is_none(), "{what}: no `{key}` in {item}");
    }
}

/// Asserts v2 spellings: `uid`, `createTime`, `updateTime`, `etag`.
fn assert_v2_names(item: &Value, what: &str) {
    for key in ["uid", "createTime", "updateTime", "etag"] {
        assert!(item.get(key).is_some(), "{what}: `{key}` in {item}");
    }
    for key in ["id", "created_at", "updated_at"] {
        assert!(item.get(key).is_none(), "{what}: no `{key}` in {item}");
    }
}

/// Whether a string field reads as cleared (absent or empty).
fn cleared(value: &Value) -> bool {
    value.is_null() || value == ""
}

/// Asserts a v1 list answer: 200, `{"items": [...]}` and nothing else.
fn items<'a>(response: &'a Response, what: &str) -> &'a Vec<Value> {
    assert_eq!(
        response.status,
        StatusCode::OK,
        "{what}: {:?}",
        response.body
    );
    let object = response
        .body
        .as_object()
        .unwrap_or_else(|| panic!("{what}: an object, got {:?}", response.body));
    assert_eq!(
        object.keys().collect::<Vec<_>>(),
        vec!["items"],
        "{what}: only `items` (no totalCount, no nextPageToken): {:?}",
        response.body
    );
    response.body["items"].as_array().unwrap()
}

/// The ids of a v1 list answer.
fn ids(response: &Response, what: &str) -> Vec<String> {
    items(response, what)
        .iter()
        .map(|item| item["id"].as_str().expect("items have an id").to_owned())
        .collect()
}

/// Asserts a v1 list answer is exactly `{"items": []}`.
fn assert_empty(response: &Response, what: &str) {
    assert_eq!(
        (response.status, &response.body),
        (StatusCode::OK, &json!({"items": []})),
        "{what}"
    );
}

/// Asserts INVALID_ARGUMENT with a BadRequest, naming `field` if given.
fn assert_bad_request(response: &Response, field: Option<&str>, what: &str) {
    response.assert_error(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", what);
    let bad = response
        .detail("BadRequest")
        .unwrap_or_else(|| panic!("{what}: a BadRequest in {:?}", response.body));
    assert!(response.detail("ErrorInfo").is_some(), "{what}: ErrorInfo");
    if let Some(field) = field {
        let fields: Vec<&str> = bad["fieldViolations"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v["field"].as_str())
            .collect();
        assert!(
            fields.contains(&field),
            "{what}: a violation of `{field}`, got {fields:?}"
        );
    }
}

fn assert_status(response: &Response, status: StatusCode, canonical: &str, what: &str) {
    response.assert_error(status, canonical, what);
    assert!(response.detail("ErrorInfo").is_some(), "{what}: ErrorInfo");
}

/// The v2 Get of `uid`, which must succeed.
async fn v2_get(rest: &Rest, collection: &Legacy, uid: &str) -> Value {
    let got = rest.get(&format!("{}/{uid}", collection.v2)).await;
    assert_eq!(
        got.status,
        StatusCode::OK,
        "{} get {uid}: {:?}",
        collection.v2,
        got.body
    );
    got.body
}

/// The one item a v1 list by `id` finds.
async fn v1_by_id(rest: &Rest, collection: &Legacy, id: &str) -> Value {
    let what = format!("{} ?id={id}", collection.v1);
    let listed = rest.get(&collection.v1_list(&format!("id={id}"))).await;
    let found = items(&listed, &what);
    assert_eq!(found.len(), 1, "{what}: {found:?}");
    found[0].clone()
}

/// Asserts that a v1 item and a v2 item are the same resource.
fn assert_same(collection: &Legacy, v1: &Value, v2: &Value, fields: &Value) {
    let what = collection.v1;
    assert_v1_names(v1, what);
    assert_v2_names(v2, what);
    assert_eq!(v1["id"], v2["uid"], "{what}: id is uid");
    assert_eq!(
        micros(&v1["created_at"], what),
        micros(&v2["createTime"], what),
        "{what}: created_at is createTime ({} vs {})",
        v1["created_at"],
        v2["createTime"]
    );
    assert_eq!(
        micros(&v1["updated_at"], what),
        micros(&v2["updateTime"], what),
        "{what}: updated_at is updateTime ({} vs {})",
        v1["updated_at"],
        v2["updateTime"]
    );
    for (key, value) in fields.as_object().unwrap() {
        assert_eq!(&v1[key], value, "{what}: v1 `{key}` in {v1}");
        assert_eq!(&v2[key], value, "{what}: v2 `{key}` in {v2}");
    }
}

#[tokio::test]
async fn legacy_v2_writes_read_through_v1_and_v1_writes_through_v2() {
    let world = World::new("legacy both ways").await;
    let admin = world.server.rest();

    // A root organization created through v1, read through v2.
    let root = world
        .create_v1(
            &world.collections()[0],
            "",
            &json!({"name": "legacy root", "resourceLimits": {}}),
        )
        .await;
    let root_id = root["id"].as_str().unwrap();
    assert!(is_child_uid(root_id, None), "{root_id}");
    let root_v2 = v2_get(&admin, &world.collections()[0], root_id).await;
    assert_same(
        &world.collections()[0],
        &root,
        &root_v2,
        &json!({"name": "legacy root"}),
    );

    for collection in world.collections() {
        let what = collection.v1;

        // Created through v2 (or stored as v2 holds it), listed by v1.
        let uid = world
            .create_v2(&collection, &world.root, &collection.body)
            .await;
        let v1 = v1_by_id(&admin, &collection, &uid).await;
        let v2 = v2_get(&admin, &collection, &uid).await;
        assert_same(&collection, &v1, &v2, &collection.body);
        let got = admin.get(&format!("{}/{uid}", collection.v1)).await;
        if collection.v1_get {
            assert_eq!(got.status, StatusCode::OK, "{what}: {:?}", got.body);
            assert_eq!(got.body, v1, "{what}: v1 Get is the listed item");
        } else {
            // v1 reads these through a list filtered by `id` only.
            assert!(
                matches!(
                    got.status,
                    StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
                ),
                "{what}: no v1 Get: {} {:?}",
                got.status,
                got.body
            );
        }

        // Created through v1 (OUTPUT_ONLY fields sent are ignored), read by
        // v2 Get with v2 names.
        let mut body = collection.body.clone();
        let chosen = format!("{}/0000000000000001", world.root);
        body["id"] = json!(chosen);
        body["created_at"] = json!("2001-01-01T00:00:00Z");
        body["updated_at"] = json!("2001-01-01T00:00:00Z");
        let created = world.create_v1(&collection, &world.root, &body).await;
        let id = created["id"].as_str().unwrap().to_owned();
        assert!(is_child_uid(&id, Some(&world.root)), "{what}: {id}");
        assert_ne!(id, chosen, "{what}: the server picks the id");
        assert!(
            micros(&created["created_at"], what) > micros(&json!("2020-01-01T00:00:00Z"), what),
            "{what}: the server sets created_at: {created}"
        );
        let v2 = v2_get(&admin, &collection, &id).await;
        assert_same(&collection, &created, &v2, &collection.body);
        assert_eq!(
            v1_by_id(&admin, &collection, &id).await,
            created,
            "{what}: the list shows what create answered"
        );

        // Replaced through v1 (PUT), read by v2.
        let replaced = admin
            .call(
                Method::PUT,
                &format!("{}/{id}", collection.v1),
                Some(&collection.replacement("replaced")),
            )
            .await;
        assert_eq!(
            replaced.status,
            StatusCode::OK,
            "{what}: {:?}",
            replaced.body
        );
        assert_eq!(replaced.body["id"], id.as_str(), "{what}");
        assert_eq!(replaced.body["name"], "replaced", "{what}");
        assert!(
            cleared(&replaced.body["description"]),
            "{what}: PUT without description clears it: {}",
            replaced.body
        );
        assert_eq!(
            micros(&replaced.body["created_at"], what),
            micros(&created["created_at"], what),
            "{what}: created_at kept"
        );
        assert!(
            micros(&replaced.body["updated_at"], what) > micros(&created["updated_at"], what),
            "{what}: updated_at advances"
        );
        let v2 = v2_get(&admin, &collection, &id).await;
        assert_same(
            &collection,
            &replaced.body,
            &v2,
            &collection.replacement("replaced"),
        );
        assert!(cleared(&v2["description"]), "{what}: {v2}");

        // Deleted through v1: gone from both versions.
        let deleted = admin.delete(&format!("{}/{id}", collection.v1)).await;
        assert_eq!(
            (deleted.status, &deleted.body),
            (StatusCode::OK, &json!({})),
            "{what}"
        );
        assert_empty(
            &admin.get(&collection.v1_list(&format!("id={id}"))).await,
            what,
        );
        let gone = admin.get(&format!("{}/{id}", collection.v2)).await;
        assert_eq!(
            gone.status,
            StatusCode::NOT_FOUND,
            "{what}: {:?}",
            gone.body
        );
    }
    world.server.stop().await;
}

#[tokio::test]
async fn legacy_put_replaces_and_v2_patch_merges() {
    let world = World::new("legacy put").await;
    let admin = world.server.rest();
    for collection in world.collections() {
        let what = collection.v1;
        let created = world
            .create_v1(&collection, &world.root, &collection.body)
            .await;
        let id = created["id"].as_str().unwrap().to_owned();

        // OUTPUT_ONLY fields sent in a PUT are ignored: they keep their values.
        let mut body = collection.body.clone();
        body["description"] = json!("changed");
        body["created_at"] = json!("2001-01-01T00:00:00Z");
        body["updated_at"] = json!("2001-01-01T00:00:00Z");
        let put = admin
            .call(Method::PUT, &format!("{}/{id}", collection.v1), Some(&body))
            .await;
        assert_eq!(put.status, StatusCode::OK, "{what}: {:?}", put.body);
        assert_eq!(put.body["id"], id.as_str(), "{what}: id kept");
        assert_eq!(put.body["description"], "changed", "{what}");
        assert_eq!(put.body["created_at"], created["created_at"], "{what}");
        assert!(
            micros(&put.body["updated_at"], what) > micros(&created["updated_at"], what),
            "{what}: updated_at is the server's"
        );

        // A PUT without description clears it; every other field stays as sent.
        let put = admin
            .call(
                Method::PUT,
                &format!("{}/{id}", collection.v1),
                Some(&collection.replacement("again")),
            )
            .await;
        assert_eq!(put.status, StatusCode::OK, "{what}: {:?}", put.body);
        assert!(cleared(&put.body["description"]), "{what}: {}", put.body);
        for key in collection.kept {
            assert_eq!(put.body[key], collection.body[key], "{what}: {key}");
        }

        // A v2 PATCH with a mask changes only what it names (advisories are
        // read-only in v2).
        let patched = admin
            .patch(
                &format!("{}/{id}?updateMask=description", collection.v2),
                json!({"description": "patched", "name": "not applied"}),
            )
            .await;
        let v1 = v1_by_id(&admin, &collection, &id).await;
        if collection.v2_create {
            assert_eq!(patched.status, StatusCode::OK, "{what}: {:?}", patched.body);
            assert_eq!(patched.body["description"], "patched", "{what}");
            assert_eq!(patched.body["name"], "again", "{what}: name left alone");
            for key in collection.kept {
                assert_eq!(patched.body[key], collection.body[key], "{what}: {key}");
            }
            assert_same(
                &collection,
                &v1,
                &patched.body,
                &json!({"description": "patched"}),
            );
        } else {
            assert_eq!(
                patched.status,
                StatusCode::METHOD_NOT_ALLOWED,
                "{what}: {:?}",
                patched.body
            );
        }

        // A PUT of the v1 item as listed changes nothing but updated_at.
        let mut listed = v1.clone();
        let put = admin
            .call(
                Method::PUT,
                &format!("{}/{id}", collection.v1),
                Some(&listed),
            )
            .await;
        assert_eq!(put.status, StatusCode::OK, "{what}: {:?}", put.body);
        listed["updated_at"] = put.body["updated_at"].clone();
        assert_eq!(put.body, listed, "{what}: a listed item can be sent back");

        // PUT and DELETE of what does not exist, or of a malformed id.
        let missing = format!("{}/00000000000000ff", world.root);
        let put = admin
            .call(
                Method::PUT,
                &format!("{}/{missing}", collection.v1),
                Some(&collection.body),
            )
            .await;
        assert_status(&put, StatusCode::NOT_FOUND, "NOT_FOUND", what);
        let delete = admin.delete(&format!("{}/{missing}", collection.v1)).await;
        assert_status(&delete, StatusCode::NOT_FOUND, "NOT_FOUND", what);
        let put = admin
            .call(
                Method::PUT,
                &format!("{}/NOT-A-UID", collection.v1),
                Some(&collection.body),
            )
            .await;
        assert_bad_request(&put, Some("id"), what);
        let delete = admin.delete(&format!("{}/NOT-A-UID", collection.v1)).await;
        assert_bad_request(&delete, Some("id"), what);
    }

    // Groups: `resourceLimits` is a map of integers, `{}` allowed (and
    // clearing), unknown keys refused by name.
    let groups = &world.collections()[0];
    let created = world
        .create_v1(
            groups,
            &world.root,
            &json!({"name": "limits", "resourceLimits": {"clusters": 4}}),
        )
        .await;
    assert_eq!(created["resourceLimits"], json!({"clusters": 4}));
    let id = created["id"].as_str().unwrap();
    let v2 = v2_get(&admin, groups, id).await;
    assert_eq!(v2["resourceLimits"]["clusters"], 4, "{v2}");
    let put = admin
        .call(
            Method::PUT,
            &format!("/iam/v1/groups/{id}"),
            Some(&json!({"name": "limits", "resourceLimits": {}})),
        )
        .await;
    assert_eq!(put.status, StatusCode::OK, "{:?}", put.body);
    assert!(
        put.body["resourceLimits"].is_null() || put.body["resourceLimits"] == json!({}),
        "{}",
        put.body
    );
    let v2 = v2_get(&admin, groups, id).await;
    assert!(
        v2["resourceLimits"]["clusters"].is_null() || v2["resourceLimits"]["clusters"] == 0,
        "cleared limits: {v2}"
    );
    let unknown = admin
        .post(
            &format!("/iam/v1/groups/{}", world.root),
            json!({"name": "bad limits", "resourceLimits": {"clusters": 1, "gpus": 2}}),
        )
        .await;
    assert_bad_request(&unknown, Some("group.resourceLimits.gpus"), "create");
    let unknown = admin
        .call(
            Method::PUT,
            &format!("/iam/v1/groups/{id}"),
            Some(&json!({"name": "limits", "resourceLimits": {"gpus": 2}})),
        )
        .await;
    assert_eq!(
        unknown.status,
        StatusCode::BAD_REQUEST,
        "{:?}",
        unknown.body
    );
    let violation = &unknown.detail("BadRequest").unwrap()["fieldViolations"][0]["field"];
    assert!(
        violation
            .as_str()
            .is_some_and(|f| f.ends_with("resourceLimits.gpus")),
        "{violation}"
    );
    assert_eq!(
        v2_get(&admin, groups, id).await["name"],
        "limits",
        "a refused PUT changes nothing"
    );
    // A value of the wrong type is named by its key, as v2 names it.
    let wrong = admin
        .post(
            &format!("/iam/v1/groups/{}", world.root),
            json!({"name": "bad limits", "resourceLimits": {"clusters": "many"}}),
        )
        .await;
    assert_bad_request(
        &wrong,
        Some("group.resourceLimits.clusters"),
        "a limit that is not an integer",
    );
    world.server.stop().await;
}

#[tokio::test]
async fn legacy_put_replaces_what_its_path_names() {
    let world = World::new("legacy put path").await;
    let admin = world.server.rest();
    let mut problems = Vec::new();
    for collection in world.collections() {
        let what = collection.v1;
        let target = world
            .create_v1(&collection, &world.root, &collection.body)
            .await;
        let target_id = target["id"].as_str().unwrap().to_owned();
        let other = world
            .create_v1(&collection, &world.root, &collection.body)
            .await;
        let other_id = other["id"].as_str().unwrap().to_owned();

        // `id` is OUTPUT_ONLY and bound by the path: one in the body never
        // redirects the PUT to another resource (refusing the mismatch is
        // fine too).
        let mut body = collection.replacement("redirected");
        body["id"] = json!(other_id);
        let path = format!("{}/{target_id}", collection.v1);
        let put = admin.call(Method::PUT, &path, Some(&body)).await;
        let target_after = v1_by_id(&admin, &collection, &target_id).await;
        let other_after = v1_by_id(&admin, &collection, &other_id).await;
        let replaced_target = put.status == StatusCode::OK
            && put.body["id"] == target_id.as_str()
            && target_after["name"] == "redirected";
        let refused = put.status == StatusCode::BAD_REQUEST && target_after == target;
        if !(replaced_target || refused) || other_after != other {
            problems.push(format!(
                "{what}: PUT {path} with body id {other_id} answered {} with id {}; the item \
                 in the path is now named {}, the one in the body {}",
                put.status, put.body["id"], target_after["name"], other_after["name"]
            ));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    world.server.stop().await;
}

#[tokio::test]
async fn legacy_missing_and_invisible_are_empty_lists() {
    let world = World::new("legacy one").await;
    let server = &world.server;
    let admin = server.rest();

    // A caller of organization one, holding every capability there.
    let one = tenant(server, &world.root).await;
    let as_one = server.rest_as(Some(&one));

    // Organization two, with one of everything (repos private).
    let two = admin
        .create("/iam/v2/groups/", json!({"name": "legacy two"}))
        .await;
    let two_identity = admin
        .create(&format!("/iam/v2/identities/{two}"), json!({"name": "x"}))
        .await;
    for collection in collections(&two_identity, &world.role) {
        let what = collection.v1;
        let mut body = collection.body.clone();
        if collection.v1 == "/registry/v1/repos" {
            body["public"] = json!(false);
        }
        let theirs = world.create_v2(&collection, &two, &body).await;

        // Missing: an empty v1 list, a v2 404 naming the resource.
        let missing = format!("{}/00000000000000ff", world.root);
        for caller in [&admin, &as_one] {
            assert_empty(
                &caller
                    .get(&collection.v1_list(&format!("id={missing}")))
                    .await,
                what,
            );
            let v2 = caller.get(&format!("{}/{missing}", collection.v2)).await;
            assert_status(&v2, StatusCode::NOT_FOUND, "NOT_FOUND", what);
            let info = v2
                .detail("ResourceInfo")
                .unwrap_or_else(|| panic!("{what}: ResourceInfo"));
            assert_eq!(info["resourceType"], collection.resource_type, "{what}");
            assert_eq!(info["resourceName"], missing.as_str(), "{what}");
            if collection.v1_get {
                let v1 = caller.get(&format!("{}/{missing}", collection.v1)).await;
                assert_status(&v1, StatusCode::NOT_FOUND, "NOT_FOUND", what);
                assert_eq!(
                    v1.detail("ResourceInfo").map(|i| &i["resourceName"]),
                    Some(&json!(missing)),
                    "{what}"
                );
            }
            // The children of a group that does not exist: none.
            assert_empty(
                &caller
                    .get(&collection.v1_list(&format!("uidp.children_of={missing}")))
                    .await,
                what,
            );
        }

        // Another organization's items, to a caller of the first: v1 shows
        // none (v2 refuses), unless they are public (documents).
        let queries = [
            format!("uidp.children_of={two}"),
            format!("uidp.descendants_of={two}"),
            format!("id={theirs}"),
        ];
        for query in &queries {
            let v1 = as_one.get(&collection.v1_list(query)).await;
            if collection.anonymous {
                assert_eq!(ids(&v1, what), vec![theirs.clone()], "{what}?{query}");
            } else {
                assert_empty(&v1, &format!("{what}?{query}"));
            }
        }
        let v2 = as_one
            .get(&format!("{}?uidp.children_of={two}", collection.v2))
            .await;
        match (collection.anonymous, collection.v1) {
            (true, _) => assert_eq!(v2.status, StatusCode::OK, "{what}"),
            // Public repos are listable by anyone: v2 answers the public ones (none).
            (false, "/registry/v1/repos") => {
                assert_eq!(v2.status, StatusCode::OK, "{what}: {:?}", v2.body);
                assert_eq!(v2.body["items"], json!([]), "{what}");
            }
            (false, _) => assert_status(&v2, StatusCode::FORBIDDEN, "PERMISSION_DENIED", what),
        }
        if collection.v1_get && !collection.anonymous {
            let v1 = as_one.get(&format!("{}/{theirs}", collection.v1)).await;
            assert_status(&v1, StatusCode::FORBIDDEN, "PERMISSION_DENIED", what);
        }

        // An unfiltered v1 list by the caller of one shows nothing of two.
        // Not for collections with public items: an unfiltered list holds
        // every public item, and a shared database may hold more of them
        // than one answer may carry.
        if !collection.anonymous && collection.v1 != "/registry/v1/repos" {
            let all = ids(&as_one.get(collection.v1).await, what);
            assert!(!all.contains(&theirs), "{what}: {all:?}");
        }

        // Bad input is still refused, with Google error details.
        let bad = [
            ("id=NOT-A-UID", Some("id")),
            ("offset=-1", Some("offset")),
            ("limit=-1", Some("limit")),
            ("offset=abc", Some("offset")),
            ("uidp.children_of=xyz", None),
            ("uidp.descendants_of=xyz", None),
            // v2's paging and filters are not v1's.
            ("pageSize=10", None),
            ("uidp.in_root=true", None),
            (
                "uidp.ancestors_of=0000000000000000000000000000000000000000",
                None,
            ),
        ];
        for (query, field) in bad {
            let response = as_one.get(&collection.v1_list(query)).await;
            assert_bad_request(&response, field, &format!("{what}?{query}"));
        }
        let both = format!(
            "uidp.children_of={}&uidp.descendants_of={}",
            world.root, world.root
        );
        assert_bad_request(
            &as_one.get(&collection.v1_list(&both)).await,
            None,
            &format!("{what}?{both}"),
        );
        // v2's field names are unknown fields in a v1 body.
        for (key, value) in [
            ("uid", json!(missing)),
            ("createTime", json!("2026-01-01T00:00:00Z")),
            ("etag", json!("x")),
        ] {
            let mut body = collection.body.clone();
            body[key] = value;
            let response = as_one
                .post(&format!("{}/{}", collection.v1, world.root), body)
                .await;
            assert_bad_request(&response, None, &format!("{what}: `{key}` in a v1 body"));
            let fields = &response.detail("BadRequest").unwrap()["fieldViolations"];
            assert!(
                fields[0]["field"]
                    .as_str()
                    .is_some_and(|f| f.ends_with(&format!(".{key}"))),
                "{what}: {fields}"
            );
        }
    }
    world.server.stop().await;
}

/// A token for a new identity bound, on `root`, to a new role holding every
/// capability.
async fn tenant(server: &TestServer, root: &str) -> String {
    server
        .member_with(root, "caller", platform_api::CAPABILITIES)
        .await
        .token
}

#[tokio::test]
async fn legacy_offset_and_limit_window_a_full_list() {
    let world = World::new("legacy windows").await;
    let admin = world.server.rest();
    let groups = &world.collections()[0];
    let parent = admin
        .create(
            &format!("/iam/v2/groups/{}", world.root),
            json!({"name": "many"}),
        )
        .await;
    let mut created = Vec::new();
    for i in 0..250 {
        let body = json!({"name": format!("g{i:03}")});
        let id = if i % 2 == 0 {
            world.create_v1(groups, &parent, &body).await["id"]
                .as_str()
                .unwrap()
                .to_owned()
        } else {
            admin
                .create(&format!("/iam/v2/groups/{parent}"), body)
                .await
        };
        created.push(id);
    }
    created.sort();

    // The whole list in one answer, in uid order.
    let all = ids(
        &admin
            .get(&format!("/iam/v1/groups?uidp.children_of={parent}"))
            .await,
        "all",
    );
    assert_eq!(all, created, "the full list, in uid order");
    let unlimited = ids(
        &admin
            .get(&format!("/iam/v1/groups?uidp.children_of={parent}&limit=0"))
            .await,
        "limit=0",
    );
    assert_eq!(unlimited, created, "limit=0 is no limit");

    // Windows of 100: 100, 100, 50, together every uid once.
    let mut windows = Vec::new();
    for (offset, expected) in [(0, 100), (100, 100), (200, 50)] {
        let window = ids(
            &admin
                .get(&format!(
                    "/iam/v1/groups?uidp.children_of={parent}&offset={offset}&limit=100"
                ))
                .await,
            &format!("offset={offset}"),
        );
        assert_eq!(window.len(), expected, "offset={offset}&limit=100");
        windows.extend(window);
    }
    assert_eq!(
        windows, created,
        "the windows cover every uid once, in order"
    );
    assert_empty(
        &admin
            .get(&format!(
                "/iam/v1/groups?uidp.children_of={parent}&offset=250&limit=100"
            ))
            .await,
        "offset=250",
    );
    let tail = ids(
        &admin
            .get(&format!(
                "/iam/v1/groups?uidp.children_of={parent}&offset=245"
            ))
            .await,
        "offset=245",
    );
    assert_eq!(tail, created[245..], "offset without limit: the rest");

    // `descendants_of` includes the parent's own subtree, `name` is exact.
    let below_root = ids(
        &admin
            .get(&format!(
                "/iam/v1/groups?uidp.descendants_of={}",
                world.root
            ))
            .await,
        "descendants",
    );
    assert_eq!(below_root.len(), 251, "the parent and its 250 children");
    let named = ids(
        &admin
            .get(&format!(
                "/iam/v1/groups?uidp.children_of={parent}&name=g007"
            ))
            .await,
        "name",
    );
    assert_eq!(named.len(), 1, "{named:?}");
    let got = v2_get(&admin, groups, &named[0]).await;
    assert_eq!(got["name"], "g007");

    // Every other collection windows the same way.
    for collection in world.collections().iter().skip(1) {
        let what = collection.v1;
        let group = admin
            .create(
                &format!("/iam/v2/groups/{}", world.root),
                json!({"name": "three"}),
            )
            .await;
        let mut three = Vec::new();
        for _ in 0..3 {
            three.push(world.create_v2(collection, &group, &collection.body).await);
        }
        three.sort();
        let list = |query: &str| {
            let path = collection.v1_list(&format!("uidp.children_of={group}&{query}"));
            let admin = admin.clone();
            async move { admin.get(&path).await }
        };
        assert_eq!(ids(&list("").await, what), three, "{what}");
        assert_eq!(
            ids(&list("offset=1&limit=1").await, what),
            three[1..2],
            "{what}"
        );
        assert_eq!(ids(&list("offset=1").await, what), three[1..], "{what}");
        assert_eq!(ids(&list("limit=2").await, what), three[..2], "{what}");
        assert_empty(&list("offset=3").await, what);
        let name = encode(collection.body["name"].as_str().unwrap());
        let by_name = ids(&list(&format!("name={name}")).await, what);
        assert_eq!(by_name, three, "{what}: all three share the name");
        assert_empty(&list("name=nobody").await, what);
    }
    world.server.stop().await;
}

#[tokio::test]
async fn legacy_same_tokens_and_grants() {
    let world = World::new("legacy auth").await;
    let server = &world.server;
    let admin = server.rest();
    let anonymous = server.rest_as(None);
    let garbage = server.rest_as(Some("not-a-token"));
    let owner = server.rest_as(Some(&tenant(server, &world.root).await));
    // A caller with a token but no grant anywhere.
    let stranger_identity = admin
        .create(
            &format!("/iam/v2/identities/{}", world.root),
            json!({"name": "stranger"}),
        )
        .await;
    let stranger = server.rest_as(Some(&server.token_for(&stranger_identity)));

    for collection in world.collections() {
        let what = collection.v1;
        let existing = world
            .create_v1(&collection, &world.root, &collection.body)
            .await;
        let existing = existing["id"].as_str().unwrap().to_owned();
        let create_path = format!("{}/{}", collection.v1, world.root);
        let item_path = format!("{}/{existing}", collection.v1);
        let children = collection.v1_list(&format!("uidp.children_of={}", world.root));

        // Without a token (or with a bad one): 401, on every write.
        for (caller, who) in [(&anonymous, "no token"), (&garbage, "bad token")] {
            let what = format!("{what} ({who})");
            let responses = [
                caller.post(&create_path, collection.body.clone()).await,
                caller
                    .call(Method::PUT, &item_path, Some(&collection.body))
                    .await,
                caller.delete(&item_path).await,
            ];
            for response in &responses {
                assert_status(response, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED", &what);
            }
        }
        // Reads: 401 without a token, except where anyone may read.
        let listed = anonymous.get(&children).await;
        if collection.anonymous {
            assert!(ids(&listed, what).contains(&existing), "{what}");
        } else if collection.v1 == "/registry/v1/repos" {
            // Public repos are readable by anyone; this one is public.
            assert!(ids(&listed, what).contains(&existing), "{what}");
        } else {
            assert_status(&listed, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED", what);
        }
        assert_status(
            &garbage.get(&children).await,
            StatusCode::UNAUTHORIZED,
            "UNAUTHENTICATED",
            &format!("{what}: a bad token is refused even where none is needed"),
        );
        if collection.v1_get {
            let got = anonymous.get(&item_path).await;
            if collection.anonymous {
                assert_eq!(got.status, StatusCode::OK, "{what}: {:?}", got.body);
            } else {
                assert_status(&got, StatusCode::UNAUTHORIZED, "UNAUTHENTICATED", what);
            }
        }

        // A token without grants: 403 on writes, nothing to list.
        let responses = [
            stranger.post(&create_path, collection.body.clone()).await,
            stranger
                .call(Method::PUT, &item_path, Some(&collection.body))
                .await,
            stranger.delete(&item_path).await,
        ];
        for response in &responses {
            assert_status(
                response,
                StatusCode::FORBIDDEN,
                "PERMISSION_DENIED",
                &format!("{what} (no grants)"),
            );
        }
        let listed = stranger.get(&children).await;
        if collection.anonymous || collection.v1 == "/registry/v1/repos" {
            assert!(ids(&listed, what).contains(&existing), "{what}: public");
        } else {
            assert_empty(&listed, &format!("{what} (no grants)"));
        }

        // A caller holding the capabilities on the organization: the whole
        // lifecycle through v1, seen through v2.
        let created = owner.post(&create_path, collection.body.clone()).await;
        assert_eq!(created.status, StatusCode::OK, "{what}: {:?}", created.body);
        let id = created.body["id"].as_str().unwrap().to_owned();
        assert_eq!(
            owner.get(&format!("{}/{id}", collection.v2)).await.status,
            StatusCode::OK,
            "{what}"
        );
        assert_eq!(
            ids(
                &owner.get(&collection.v1_list(&format!("id={id}"))).await,
                what
            ),
            vec![id.clone()],
            "{what}"
        );
        let put = owner
            .call(
                Method::PUT,
                &format!("{}/{id}", collection.v1),
                Some(&collection.replacement("mine")),
            )
            .await;
        assert_eq!(put.status, StatusCode::OK, "{what}: {:?}", put.body);
        let deleted = owner.delete(&format!("{}/{id}", collection.v1)).await;
        assert_eq!(
            (deleted.status, &deleted.body),
            (StatusCode::OK, &json!({})),
            "{what}"
        );
        // Not a root organization, though: that takes the platform administrator.
        if collection.v1 == "/iam/v1/groups" {
            let root = owner.post("/iam/v1/groups/", json!({"name": "mine"})).await;
            assert_status(&root, StatusCode::FORBIDDEN, "PERMISSION_DENIED", what);
        }
    }

    // Grants are per capability, as in v2: a viewer of groups lists groups
    // through v1 but may not create one, and sees no roles.
    let viewer = server
        .member_with(&world.root, "caller", &["groups.get", "groups.list"])
        .await
        .rest;
    let team = admin
        .create(
            &format!("/iam/v2/groups/{}", world.root),
            json!({"name": "viewed"}),
        )
        .await;
    let listed = viewer
        .get(&format!("/iam/v1/groups?uidp.children_of={}", world.root))
        .await;
    assert!(ids(&listed, "viewer").contains(&team), "{:?}", listed.body);
    let refused = viewer
        .post(
            &format!("/iam/v1/groups/{}", world.root),
            json!({"name": "x"}),
        )
        .await;
    assert_status(
        &refused,
        StatusCode::FORBIDDEN,
        "PERMISSION_DENIED",
        "viewer create",
    );
    let refused = viewer
        .call(
            Method::PUT,
            &format!("/iam/v1/groups/{team}"),
            Some(&json!({"name": "renamed"})),
        )
        .await;
    assert_status(
        &refused,
        StatusCode::FORBIDDEN,
        "PERMISSION_DENIED",
        "viewer put",
    );
    assert_empty(
        &viewer
            .get(&format!("/iam/v1/roles?uidp.children_of={}", world.root))
            .await,
        "viewer lists roles",
    );
    world.server.stop().await;
}
