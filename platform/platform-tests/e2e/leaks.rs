//! What the server must not give away (CONTRACT §7, §9): whether an
//! identity exists (the token exchange answers every refusal alike), a token
//! to a cache, the capabilities of a role the caller may not read (escalation
//! refusals), its files to other users of the machine, and the platform
//! administrator to whoever names a binding like the administrator's.

use std::path::Path;

use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use platform_api::platform::iam::v2::role_binding_service_client::RoleBindingServiceClient;
use platform_api::platform::iam::v2::{
    CreateRoleBindingRequest, Group, GroupStore, Identity, IdentityStore, Role, RoleBinding,
    RoleBindingStore, RoleStore,
};
use platform_api::platform::sts::v1::ExchangeTokenRequest;
use platform_api::platform::sts::v1::token_service_client::TokenServiceClient;
use platform_tests::{Issuer, PgDatabase, StatusCode, TestServer};
use protoapi_runtime::Caller;
use protoapi_runtime::resource::Resource;
use serde_json::{Value, json};
use tonic_types::StatusExt;

const ISSUER: &str = "https://issuer.test";
const SUBJECT: &str = "repo:acme/app:ref:refs/heads/main";

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A GET with `token` as the bearer token: status, headers and JSON body.
async fn get(server: &TestServer, path: &str, token: &str) -> (StatusCode, http::HeaderMap, Value) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<bytes::Bytes>>();
    let request = http::Request::get(format!("http://{}{path}", server.address))
        .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
        .body(Full::default())
        .unwrap();
    let response = client.request(request).await.expect("the server answers");
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).expect("a JSON body");
    (parts.status, parts.headers, body)
}

/// A refusal as a caller sees it: status, ErrorInfo reason and message.
#[derive(Debug, PartialEq, Eq)]
struct Refusal {
    status: String,
    reason: String,
    message: String,
}

#[tokio::test]
async fn token_exchange_refusals_do_not_tell_whether_an_identity_exists() {
    let dir = tempfile::tempdir().unwrap();
    let issuer = Issuer::new("key-1");
    let server = TestServer::start_trusting(dir.path(), ISSUER, &issuer).await;
    let base = format!("http://{}", server.address);
    let admin = server.rest();
    let root = admin
        .create("/iam/v2/groups/", json!({"name": "sts leaks"}))
        .await;
    let identity = admin
        .create(
            &format!("/iam/v2/identities/{root}"),
            json!({"name": "ci", "claimMatch": {"issuer": ISSUER, "subject": SUBJECT}}),
        )
        .await;
    let unknown = format!("{root}/0000000000000000");
    let claims = |edit: &dyn Fn(&mut Value)| {
        let mut claims =
            json!({"iss": ISSUER, "sub": SUBJECT, "aud": base, "iat": now(), "exp": now() + 600});
        edit(&mut claims);
        claims
    };
    let valid = issuer.token(claims(&|_| {}));
    let stranger = Issuer::new("key-1");
    let cases = [
        ("unknown identity", valid.clone(), unknown.clone()),
        (
            "claimMatch mismatch",
            issuer.token(claims(&|c| c["sub"] = json!("repo:evil/app"))),
            identity.clone(),
        ),
        (
            "untrusted issuer",
            stranger.token(claims(&|c| c["iss"] = json!("https://evil.test"))),
            identity.clone(),
        ),
        (
            "untrusted issuer, unknown identity",
            stranger.token(claims(&|c| c["iss"] = json!("https://evil.test"))),
            unknown.clone(),
        ),
        (
            "signed by another key",
            stranger.token(claims(&|_| {})),
            identity.clone(),
        ),
        (
            "expired",
            issuer.token(claims(&|c| c["exp"] = json!(now() - 600))),
            identity.clone(),
        ),
    ];

    let mut channel = TokenServiceClient::new(server.channel().await);
    let mut rest_refusals = Vec::new();
    let mut grpc_refusals = Vec::new();
    for (case, token, identity) in &cases {
        let path = format!("/sts/exchange?aud={base}&identity={identity}");
        let (status, headers, body) = get(&server, &path, token).await;
        assert!(body.get("token").is_none(), "{case}: {body}");
        assert_eq!(
            headers.get(http::header::CACHE_CONTROL).unwrap(),
            "no-store",
            "{case}"
        );
        let reason = body["error"]["details"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo")
            .expect("an ErrorInfo")["reason"]
            .as_str()
            .unwrap()
            .to_owned();
        rest_refusals.push((
            *case,
            status,
            Refusal {
                status: body["error"]["status"].as_str().unwrap().to_owned(),
                reason,
                message: body["error"]["message"].as_str().unwrap().to_owned(),
            },
        ));

        let mut request = tonic::Request::new(ExchangeTokenRequest {
            aud: base.clone(),
            identity: identity.clone(),
        });
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
        let status = channel.exchange_token(request).await.unwrap_err();
        grpc_refusals.push((
            *case,
            Refusal {
                status: format!("{:?}", status.code()),
                reason: status
                    .get_error_details()
                    .error_info()
                    .unwrap()
                    .reason
                    .clone(),
                message: status.message().to_owned(),
            },
        ));
    }
    let (_, first_status, first) = &rest_refusals[0];
    for (case, status, refusal) in &rest_refusals {
        assert_eq!(
            (status, refusal),
            (first_status, first),
            "REST: {case} is answered like {}",
            cases[0].0
        );
    }
    assert_eq!(*first_status, StatusCode::UNAUTHORIZED);
    let (_, first) = &grpc_refusals[0];
    for (case, refusal) in &grpc_refusals {
        assert_eq!(
            refusal, first,
            "gRPC: {case} is answered like {}",
            cases[0].0
        );
    }
    assert_eq!(first.status, "Unauthenticated");
    assert_eq!(
        (first.reason.as_str(), first.message.as_str()),
        (
            rest_refusals[0].2.reason.as_str(),
            rest_refusals[0].2.message.as_str()
        ),
        "both transports answer alike"
    );

    // The answer carrying a token is not for caches.
    let path = format!("/sts/exchange?aud={base}&identity={identity}");
    let (status, headers, body) = get(&server, &path, &valid).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["token"].as_str().is_some_and(|t| !t.is_empty()));
    assert_eq!(
        headers.get(http::header::CACHE_CONTROL).unwrap(),
        "no-store"
    );
    server.stop().await;
}

#[tokio::test]
async fn an_escalation_refusal_names_no_capability_of_an_unreadable_role() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let admin = server.rest();
    let org = admin
        .create("/iam/v2/groups/", json!({"name": "escalation leaks"}))
        .await;
    let team = admin
        .create(&format!("/iam/v2/groups/{org}"), json!({"name": "team"}))
        .await;
    let secret_capabilities = ["artifacts.delete", "documents.update", "repos.delete"];
    let secret = admin
        .create(
            &format!("/iam/v2/roles/{org}"),
            json!({"name": "secret", "capabilities": secret_capabilities}),
        )
        .await;
    // The caller may create bindings on the team, and nothing else.
    let binder_role = admin
        .create(
            &format!("/iam/v2/roles/{org}"),
            json!({"name": "binder", "capabilities": ["roleBindings.create"]}),
        )
        .await;
    let binder = server.member(&org, "binder", &binder_role, &team).await;
    let (caller, token, rest) = (binder.identity, binder.token, binder.rest);
    let unreadable = rest.get(&format!("/iam/v2/roles/{secret}")).await;
    assert_eq!(
        unreadable.status,
        StatusCode::FORBIDDEN,
        "the caller may not read the role"
    );

    let leaked = |text: &str| -> Vec<&str> {
        secret_capabilities
            .iter()
            .copied()
            .filter(|capability| text.contains(capability))
            .collect()
    };
    let response = rest
        .post(
            &format!("/iam/v2/roleBindings/{team}"),
            json!({"identity": caller, "role": secret}),
        )
        .await;
    response.assert_reason(StatusCode::FORBIDDEN, "ESCALATION_DENIED", "REST");
    let body = response.body.to_string();
    assert_eq!(leaked(&body), Vec::<&str>::new(), "REST: {body}");

    let mut client = RoleBindingServiceClient::with_interceptor(
        server.channel().await,
        platform_tests::bearer(&token),
    );
    let status = client
        .create_role_binding(CreateRoleBindingRequest {
            parent: team.clone(),
            role_binding: Some(RoleBinding {
                identity: caller.clone(),
                role: secret.clone(),
                ..Default::default()
            }),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::PermissionDenied, "{status:?}");
    let details = status.get_error_details();
    assert_eq!(details.error_info().unwrap().reason, "ESCALATION_DENIED");
    let text = format!(
        "{} {details:?} {}",
        status.message(),
        String::from_utf8_lossy(status.details())
    );
    assert_eq!(leaked(&text), Vec::<&str>::new(), "gRPC: {text}");
    server.stop().await;
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// The files a server keeps in its data directory while it runs.
fn data_files() -> Vec<&'static str> {
    let mut files = vec![
        platform_server::bootstrap::ADMIN_TOKEN_FILE,
        "api-token.key",
        "page-token.key",
    ];
    if std::env::var("E2E_DATABASE_URL").is_err() {
        files.extend(["platform.db", "platform.db-wal", "platform.db-shm"]);
    }
    files
}

#[cfg(unix)]
#[tokio::test]
async fn the_data_directory_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let server = TestServer::start(&data_dir).await;
    assert_eq!(mode(&data_dir), 0o700, "{}", data_dir.display());
    for file in data_files() {
        assert_eq!(
            mode(&data_dir.join(file)),
            0o600,
            "{file} after the first start"
        );
    }
    let server_admin = server.admin_identity();
    server.stop().await;

    // What an earlier release left readable by others is restricted at the
    // next start.
    let loose = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let admin = server_admin;
    let root = admin.rsplit_once('/').unwrap().0;
    std::fs::write(
        data_dir.join("bootstrap.json"),
        json!({"root": root, "admin": admin}).to_string(),
    )
    .unwrap();
    loose(&data_dir, 0o755);
    let mut files = data_files();
    files.push("bootstrap.json");
    for file in &files {
        if data_dir.join(file).exists() {
            loose(&data_dir.join(file), 0o644);
        }
    }
    let server = TestServer::start(&data_dir).await;
    assert_eq!(server.admin_identity(), admin);
    assert_eq!(mode(&data_dir), 0o700);
    for file in &files {
        assert_eq!(mode(&data_dir.join(file)), 0o600, "{file} after a restart");
    }
    server.stop().await;
}

/// The tables of the collections, which the release before versioned
/// migrations kept (and nothing else).
const COLLECTIONS: [&str; 8] = [
    "groups",
    "roles",
    "identities",
    "role_bindings",
    "repos",
    "advisories",
    "artifacts",
    "documents",
];

/// A new item under `parent`, created `age_secs` ago.
fn item<R: Resource>(parent: &str, age_secs: i64, edit: impl FnOnce(&mut R)) -> R {
    let mut resource = R::default();
    edit(&mut resource);
    let mut resource =
        protoapi_runtime::standard::prepare_create(&Caller::System, parent, Some(resource), "item")
            .unwrap();
    let created = prost_types::Timestamp {
        seconds: i64::try_from(now()).unwrap() - age_secs,
        nanos: 0,
    };
    resource.set_create_time(created);
    resource.set_update_time(created);
    resource.set_etag(protoapi_runtime::standard::etag(&resource));
    resource
}

/// A database as the release before the bootstrap record left it: its
/// bootstrap, named only by `bootstrap.json` in its data directory, and a
/// tenant whose owner named a binding of its own (older than the
/// administrator's) `platform administrator is owner`. Returns the
/// administrator and the tenant owner.
async fn earlier_release_database(
    store: &platform_server::store::SqlStore,
    data_dir: &Path,
) -> (String, String, String) {
    let name = "platform administrator is owner";
    let tenant: Group = item("", 7200, |g: &mut Group| g.name = "tenant".into());
    let tenant_owner_role: Role = item(&tenant.uid, 7200, |r: &mut Role| {
        r.name = "owner".into();
        r.capabilities = vec!["groups.get".into(), "roleBindings.create".into()];
    });
    let tenant_owner: Identity = item(&tenant.uid, 7200, |i: &mut Identity| {
        i.name = "platform administrator".into();
    });
    let squatter: RoleBinding = item(&tenant.uid, 7200, |b: &mut RoleBinding| {
        b.name = name.into();
        b.identity = tenant_owner.uid.clone();
        b.role = tenant_owner_role.uid.clone();
    });
    let root: Group = item("", 3600, |g: &mut Group| {
        g.name = "root organization".into()
    });
    let owner: Role = item(&root.uid, 3600, |r: &mut Role| {
        r.name = "owner".into();
        r.capabilities = platform_api::CAPABILITIES
            .iter()
            .map(|c| (*c).into())
            .collect();
    });
    let admin: Identity = item(&root.uid, 3600, |i: &mut Identity| {
        i.name = "platform administrator".into();
    });
    let binding: RoleBinding = item(&root.uid, 3600, |b: &mut RoleBinding| {
        b.name = name.into();
        b.identity = admin.uid.clone();
        b.role = owner.uid.clone();
    });
    store.insert_group(&tenant).await.unwrap();
    store.insert_role(&tenant_owner_role).await.unwrap();
    store.insert_identity(&tenant_owner).await.unwrap();
    store.insert_role_binding(&squatter).await.unwrap();
    store.insert_group(&root).await.unwrap();
    store.insert_role(&owner).await.unwrap();
    store.insert_identity(&admin).await.unwrap();
    store.insert_role_binding(&binding).await.unwrap();

    // That release kept nothing but the collections.
    let sql = match store.dialect() {
        platform_server::store::Dialect::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        }
        platform_server::store::Dialect::Postgres => {
            "SELECT CAST(tablename AS TEXT) FROM pg_catalog.pg_tables \
             WHERE schemaname = current_schema()"
        }
    };
    let tables: Vec<String> = sqlx::query_scalar(sql)
        .fetch_all(store.pool())
        .await
        .unwrap();
    for table in tables {
        let collection = table.strip_suffix("_counts").unwrap_or(&table);
        if !COLLECTIONS.contains(&collection) {
            sqlx::query(sqlx::AssertSqlSafe(format!("DROP TABLE {table}")))
                .execute(store.pool())
                .await
                .unwrap();
        }
    }
    std::fs::create_dir_all(data_dir).unwrap();
    std::fs::write(
        data_dir.join("bootstrap.json"),
        serde_json::to_vec(&json!({"root": root.uid, "admin": admin.uid})).unwrap(),
    )
    .unwrap();
    (root.uid, admin.uid, tenant_owner.uid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_upgrade_finds_the_administrator_by_record_not_by_name() {
    const BASE_URL: &str = "http://platform.test";
    let dir = tempfile::tempdir().unwrap();
    let postgres = match std::env::var("E2E_DATABASE_URL") {
        Ok(url) => Some(PgDatabase::create(&url).await),
        Err(_) => None,
    };
    // On SQLite the replicas share the data directory (and its database);
    // on PostgreSQL only the first one's names the earlier bootstrap.
    let data_dir = |n: usize| match &postgres {
        Some(_) => dir.path().join(format!("replica-{n}")),
        None => dir.path().join("data"),
    };
    let keys_dir = dir.path().join("keys");
    let store = match &postgres {
        Some(db) => platform_server::store::open_postgres(&db.url).await,
        None => {
            std::fs::create_dir_all(data_dir(0)).unwrap();
            platform_server::store::open_sqlite(&data_dir(0)).await
        }
    }
    .unwrap();
    let (root, admin, tenant_owner) = earlier_release_database(&store, &data_dir(0)).await;
    store.close().await;

    let config = |n: usize| platform_server::Config {
        data_dir: data_dir(n),
        keys_dir: Some(keys_dir.clone()),
        database_url: postgres.as_ref().map(|db| db.url.clone()),
        base_url: Some(BASE_URL.into()),
        ..Default::default()
    };
    // The replica without the earlier bootstrap starts first.
    let starting: Vec<_> = [1, 0]
        .into_iter()
        .map(|n| tokio::spawn(TestServer::start_with(config(n))))
        .collect();
    let mut servers = Vec::new();
    for server in starting {
        servers.push(server.await.unwrap());
    }
    for server in &servers {
        assert_eq!(server.admin_identity(), admin, "the recorded administrator");
        let roots = server.rest().get("/iam/v2/groups?pageSize=100").await;
        assert_eq!(roots.status, StatusCode::OK, "{:?}", roots.body);
        // The administrator may create root organizations; the tenant owner
        // who named its binding like the administrator's may not.
        server
            .rest()
            .create("/iam/v2/groups/", json!({"name": "by the administrator"}))
            .await;
        let refused = server
            .rest_as(Some(&server.token_for(&tenant_owner)))
            .post("/iam/v2/groups/", json!({"name": "by the tenant"}))
            .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{:?}", refused.body);
    }
    let store = match &postgres {
        Some(db) => platform_server::store::open_postgres(&db.url).await,
        None => platform_server::store::open_sqlite(&data_dir(0)).await,
    }
    .unwrap();
    let record: (String, String) =
        sqlx::query_as("SELECT root, admin FROM platform_bootstrap WHERE id = 1")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(record, (root.clone(), admin.clone()));
    let roots: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM groups WHERE parent = '' AND name NOT LIKE 'by the %'",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(roots, 2, "no root organization but the earlier two");
    store.close().await;
    for server in servers {
        server.stop().await;
    }
}
