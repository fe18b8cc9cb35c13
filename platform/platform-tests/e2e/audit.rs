//! The audit log (`--audit-log`): one JSON line per write, with the caller,
//! the method, the resource and the mask, and for role bindings and roles
//! the item before and after; writes refused to a caller with credentials
//! too. Over REST, and the same through gRPC, on SQLite or PostgreSQL.

use std::io::Write;
use std::sync::{Arc, Mutex};

use platform_api::platform::iam::v2::DeleteGroupRequest;
use platform_api::platform::iam::v2::group_service_client::GroupServiceClient;
use platform_tests::{StatusCode, TestServer};
use protoapi_runtime::audit::AuditLog;
use serde_json::{Value, json};

/// What the audit log wrote, shared with the test.
#[derive(Clone, Default)]
struct Written(Arc<Mutex<Vec<u8>>>);

impl Write for Written {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Written {
    fn lines(&self) -> Vec<Value> {
        let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|line| serde_json::from_str(line).expect("JSON lines"))
            .collect()
    }

    /// The one line of `method` (its short name) about `resource`.
    fn line(&self, method: &str, resource: &str) -> Value {
        let lines = self.lines();
        let mut found = lines.iter().filter(|line| {
            line["method"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/{method}"))
                && line["resource"] == resource
        });
        let line = found
            .next()
            .unwrap_or_else(|| panic!("no {method} of {resource}: {lines:#?}"));
        assert!(
            found.next().is_none(),
            "two {method} of {resource}: {lines:#?}"
        );
        line.clone()
    }
}

/// The repos' delete that runs as an operation.
const RUN_DELETE: &str = "platform.registry.v2.RepoDeletionService/DeleteRepo";

#[tokio::test]
async fn every_write_is_a_line_and_the_access_model_keeps_before_and_after() {
    let written = Written::default();
    let log = AuditLog::new(written.clone());
    let (server, _dir) = TestServer::start_configured(|config| config.audit = Some(log)).await;
    let admin = server.rest();
    let me = server.admin_identity();

    let org = admin
        .create("/iam/v2/groups/", json!({"name": "audited"}))
        .await;
    let team = (admin)
        .create(&format!("/iam/v2/groups/{org}"), json!({"name": "team"}))
        .await;
    let alice = (admin)
        .create(
            &format!("/iam/v2/identities/{org}"),
            json!({"name": "alice"}),
        )
        .await;
    // The built-in viewer (a shared database may hold other viewers).
    let roles = (admin)
        .get(&format!(
            "/iam/v2/roles?name=viewer&uidp.childrenOf={}",
            server.platform_root()
        ))
        .await;
    let viewer = roles.body["items"][0]["uid"].as_str().unwrap().to_owned();
    let binding = (admin)
        .create(
            &format!("/iam/v2/roleBindings/{org}"),
            json!({"identity": alice, "role": viewer}),
        )
        .await;
    let renamed = (admin)
        .patch(
            &format!("/iam/v2/roleBindings/{binding}?updateMask=description"),
            json!({"description": "reads"}),
        )
        .await;
    assert_eq!(renamed.status, StatusCode::OK, "{:?}", renamed.body);
    let as_alice = server.rest_as(Some(&server.token_for(&alice)));
    let refused = as_alice.delete(&format!("/iam/v2/groups/{org}")).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let mut grpc = GroupServiceClient::with_interceptor(
        server.channel().await,
        platform_tests::bearer(&server.token_for(&alice)),
    );
    let status = grpc
        .delete_group(DeleteGroupRequest {
            uid: team.clone(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::PermissionDenied);
    // Refused to a caller without credentials: not a line (the one
    // DeleteRoleBinding line below is the administrator's).
    let anonymous = (server.rest_as(None))
        .delete(&format!("/iam/v2/roleBindings/{binding}"))
        .await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    let deleted = admin
        .delete(&format!("/iam/v2/roleBindings/{binding}"))
        .await;
    assert_eq!(deleted.status, StatusCode::OK);
    // A delete run as a long-running operation is a line when it runs.
    let repo = (admin)
        .create(&format!("/registry/v2/repos/{org}"), json!({"name": "app"}))
        .await;
    let started = admin
        .post(&format!("/registry/v2/repos/{repo}:delete"), json!({}))
        .await;
    assert_eq!(started.status, StatusCode::OK, "{:?}", started.body);
    // Reads are not audited.
    admin.get(&format!("/iam/v2/groups/{org}")).await;

    let created = written.line("CreateGroup", &org);
    assert_eq!(created["caller"], me.as_str());
    assert_eq!(created["code"], "OK");
    assert_eq!(
        created["method"],
        "platform.iam.v2.GroupService/CreateGroup"
    );
    assert!(
        created["time"].as_str().unwrap().ends_with('Z'),
        "{created}"
    );
    // Groups are not the access model: no copies of them.
    assert!(created.get("after").is_none() && created.get("before").is_none());

    let bound = written.line("CreateRoleBinding", &binding);
    assert_eq!(bound["after"]["identity"], alice.as_str(), "{bound}");
    assert_eq!(bound["after"]["role"], viewer.as_str(), "{bound}");
    assert!(bound.get("before").is_none(), "{bound}");

    let updated = written.line("UpdateRoleBinding", &binding);
    assert_eq!(updated["mask"], json!(["description"]), "{updated}");
    assert_eq!(updated["before"]["description"], "", "{updated}");
    assert_eq!(updated["after"]["description"], "reads", "{updated}");
    assert_ne!(updated["before"]["etag"], updated["after"]["etag"]);

    let refused = written.line("DeleteGroup", &org);
    assert_eq!(refused["caller"], alice.as_str(), "{refused}");
    assert_eq!(refused["code"], "PERMISSION_DENIED", "{refused}");
    let refused = written.line("DeleteGroup", &team);
    assert_eq!(refused["code"], "PERMISSION_DENIED", "over gRPC: {refused}");

    let unbound = written.line("DeleteRoleBinding", &binding);
    assert_eq!(unbound["code"], "OK");
    assert_eq!(unbound["before"]["description"], "reads", "{unbound}");
    assert!(unbound.get("after").is_none(), "{unbound}");

    let mut waited = 0;
    while !(written.lines().iter()).any(|line| line["method"] == RUN_DELETE) {
        assert!(waited < 500, "no {RUN_DELETE}: {:#?}", written.lines());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        waited += 1;
    }
    let run = written.line("DeleteRepo", &repo);
    assert_eq!(run["method"], RUN_DELETE);
    assert_eq!(run["caller"], me.as_str());
    assert_eq!(run["code"], "OK", "{run}");

    let methods: Vec<String> = (written.lines().iter())
        .map(|line| line["method"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        methods
            .iter()
            .all(|m| !m.contains("/Get") && !m.contains("/List")),
        "{methods:?}"
    );
    server.stop().await;
}
