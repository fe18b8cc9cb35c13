//! Several servers on one database act as one service (CONTRACT §9): they
//! share one bootstrap, accept each other's API tokens and page tokens, and
//! migrate a database together, including one created by the release before
//! schema versions were recorded.
//!
//! Every test runs on embedded SQLite (replicas sharing one data directory)
//! and, when `E2E_DATABASE_URL` is set, on a PostgreSQL database of its own,
//! created for the test and dropped afterwards (replicas with data
//! directories of their own and one shared keys directory).

use std::path::PathBuf;

use platform_api::platform::iam::v2::{
    Group, GroupRow, Identity, IdentityRow, Role, RoleBinding, RoleBindingRow, RoleRow,
};
use platform_server::store::SqlStore;
use platform_tests::{PgDatabase, StatusCode, TestServer};
use protoapi_runtime::Caller;
use protoapi_runtime::resource::{Resource, SortValue};
use protoapi_runtime::row::Row;
use protoapi_runtime::standard::prepare_create;
use serde_json::json;
use sqlx::AnyPool;

/// The audience of every replica's tokens: the service's address, not a replica's.
const BASE_URL: &str = "http://platform.test";

/// One database shared by the replicas of a test.
struct Shared {
    dir: tempfile::TempDir,
    postgres: Option<PgDatabase>,
}

impl Shared {
    /// A fresh SQLite database and, when `E2E_DATABASE_URL` is set, a fresh
    /// PostgreSQL database.
    async fn all() -> Vec<Shared> {
        let mut all = vec![Shared {
            dir: tempfile::tempdir().unwrap(),
            postgres: None,
        }];
        match std::env::var("E2E_DATABASE_URL") {
            Ok(url) => all.push(Shared {
                dir: tempfile::tempdir().unwrap(),
                postgres: Some(PgDatabase::create(&url).await),
            }),
            Err(_) => {
                // Past the test harness's output capture, once per run.
                static NOTE: std::sync::Once = std::sync::Once::new();
                NOTE.call_once(|| {
                    use std::io::Write as _;
                    std::io::stderr()
                        .write_all(
                            b"note: E2E_DATABASE_URL is not set; replica tests skip PostgreSQL\n",
                        )
                        .ok();
                });
            }
        }
        all
    }

    fn name(&self) -> &'static str {
        if self.postgres.is_some() {
            "postgres"
        } else {
            "sqlite"
        }
    }

    /// The data directory of replica `n`: its own on PostgreSQL; on SQLite
    /// the database lives in the data directory, so replicas share it.
    fn data_dir(&self, n: usize) -> PathBuf {
        match &self.postgres {
            Some(_) => self.dir.path().join(format!("replica-{n}")),
            None => self.dir.path().to_owned(),
        }
    }

    /// The configuration of replica `n`.
    fn replica(&self, n: usize) -> platform_server::Config {
        platform_server::Config {
            data_dir: self.data_dir(n),
            keys_dir: self.postgres.as_ref().map(|_| self.dir.path().join("keys")),
            database_url: self.postgres.as_ref().map(|db| db.url.clone()),
            base_url: Some(BASE_URL.into()),
            ..Default::default()
        }
    }

    /// Starts `count` replicas at the same time.
    async fn start(&self, count: usize) -> Vec<TestServer> {
        let starting: Vec<_> = (0..count)
            .map(|n| tokio::spawn(TestServer::start_with(self.replica(n))))
            .collect();
        let mut servers = Vec::new();
        for server in starting {
            servers.push(server.await.unwrap());
        }
        servers
    }

    /// A connection pool for inspecting the database directly.
    async fn pool(&self) -> AnyPool {
        sqlx::any::install_default_drivers();
        let url = match &self.postgres {
            Some(db) => db.url.clone(),
            None => format!(
                "sqlite://{}?mode=rwc",
                self.dir.path().join("platform.db").display()
            ),
        };
        sqlx::any::AnyPoolOptions::new()
            .max_connections(1)
            .connect(&url)
            .await
            .unwrap()
    }

    /// A store on the database (migrating it, as a server does).
    async fn open(&self) -> SqlStore {
        match &self.postgres {
            Some(db) => platform_server::store::open_postgres(&db.url)
                .await
                .unwrap(),
            None => platform_server::store::open_sqlite(self.dir.path())
                .await
                .unwrap(),
        }
    }

    fn backend(&self) -> platform_server::store::Dialect {
        match self.postgres {
            Some(_) => platform_server::store::Dialect::Postgres,
            None => platform_server::store::Dialect::Sqlite,
        }
    }
}

async fn count(pool: &AnyPool, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

async fn schema_versions(pool: &AnyPool) -> Vec<i64> {
    sqlx::query_scalar("SELECT version FROM schema_migrations ORDER BY version")
        .fetch_all(pool)
        .await
        .unwrap()
}

async fn bootstrap_record(pool: &AnyPool) -> (String, String, i64) {
    sqlx::query_as("SELECT root, admin, complete FROM platform_bootstrap")
        .fetch_one(pool)
        .await
        .unwrap()
}

/// Every replica accepts every replica's admin token.
async fn assert_tokens_accepted_everywhere(servers: &[TestServer], backend: &str) {
    for server in servers {
        for other in servers {
            let response = server
                .rest_as(Some(&other.admin_token))
                .get("/iam/v2/groups?pageSize=1")
                .await;
            assert_eq!(
                response.status,
                StatusCode::OK,
                "{backend}: {:?}",
                response.body
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_starting_together_on_an_empty_database_share_one_bootstrap() {
    for shared in Shared::all().await {
        let backend = shared.name();
        let servers = shared.start(3).await;
        let pool = shared.pool().await;
        assert_eq!(
            count(&pool, "SELECT COUNT(*) FROM groups WHERE parent = ''").await,
            1,
            "{backend}: one root organization"
        );
        assert_eq!(
            count(&pool, "SELECT COUNT(*) FROM identities").await,
            1,
            "{backend}"
        );
        assert_eq!(
            count(&pool, "SELECT COUNT(*) FROM roles").await,
            3,
            "{backend}"
        );
        assert_eq!(
            count(&pool, "SELECT COUNT(*) FROM role_bindings").await,
            1,
            "{backend}"
        );
        let (root, admin, complete) = bootstrap_record(&pool).await;
        assert_eq!(complete, 1, "{backend}");
        assert_eq!(
            schema_versions(&pool).await,
            [1, 2, 3, 4, 5, 6, 7, 100, 101],
            "{backend}"
        );
        pool.close().await;

        assert_tokens_accepted_everywhere(&servers, backend).await;
        for server in &servers {
            // Each replica wrote a token of the one administrator to its own data dir.
            let token = std::fs::read_to_string(
                server
                    .data_dir
                    .join(platform_server::bootstrap::ADMIN_TOKEN_FILE),
            )
            .unwrap();
            let response = server.rest_as(Some(&token)).get("/iam/v2/groups").await;
            assert_eq!(response.status, StatusCode::OK, "{backend}");
            assert_eq!(
                response.body["totalCount"], 1,
                "{backend}: {:?}",
                response.body
            );
            assert_eq!(response.body["items"][0]["uid"], root.as_str(), "{backend}");
            let response = server
                .rest()
                .get(&format!("/iam/v2/identities/{admin}"))
                .await;
            assert_eq!(response.status, StatusCode::OK, "{backend}");
        }
        for server in servers {
            server.stop().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tokens_and_page_tokens_of_one_replica_work_on_another() {
    for shared in Shared::all().await {
        let backend = shared.name();
        let servers = shared.start(2).await;
        let (a, b) = (&servers[0], &servers[1]);

        // An API token minted with the shared key by one replica's tooling.
        let root = a
            .rest()
            .create("/iam/v2/groups/", json!({"name": "replicas"}))
            .await;
        let identity = b
            .rest()
            .create(
                &format!("/iam/v2/identities/{root}"),
                json!({"name": "ci", "claimMatch": {"issuer": "https://issuer.example", "subject": "repo:x"}}),
            )
            .await;
        let token = a.token_for(&identity);
        for server in &servers {
            let response = server.rest_as(Some(&token)).get("/iam/v2/groups").await;
            assert_eq!(
                response.status,
                StatusCode::OK,
                "{backend}: {:?}",
                response.body
            );
        }
        assert_tokens_accepted_everywhere(&servers, backend).await;

        // Items created on both replicas, listed in pages alternating between them.
        let mut created = Vec::new();
        for n in 0..23 {
            let server = &servers[n % 2];
            let name = format!("team {:02}", (n * 7) % 23);
            created.push(
                server
                    .rest()
                    .create(&format!("/iam/v2/groups/{root}"), json!({"name": name}))
                    .await,
            );
        }
        let mut seen = Vec::new();
        let mut token = String::new();
        for page in 0.. {
            let server = &servers[page % 2];
            let mut path =
                format!("/iam/v2/groups?uidp.children_of={root}&pageSize=4&orderBy=name");
            if !token.is_empty() {
                path.push_str(&format!("&pageToken={token}"));
            }
            let response = server.rest().get(&path).await;
            assert_eq!(
                response.status,
                StatusCode::OK,
                "{backend}: page {page}: {:?}",
                response.body
            );
            assert_eq!(response.body["totalCount"], 23, "{backend}");
            for item in response.body["items"].as_array().unwrap() {
                seen.push((
                    item["name"].as_str().unwrap().to_owned(),
                    item["uid"].as_str().unwrap().to_owned(),
                ));
            }
            token = response.body["nextPageToken"].as_str().unwrap().to_owned();
            if token.is_empty() {
                break;
            }
        }
        let mut expected_order = seen.clone();
        expected_order.sort();
        assert_eq!(seen, expected_order, "{backend}: pages continue in order");
        let mut uids: Vec<String> = seen.into_iter().map(|(_, uid)| uid).collect();
        uids.sort();
        created.sort();
        assert_eq!(uids, created, "{backend}: every item exactly once");

        for server in servers {
            server.stop().await;
        }
    }
}

/// The schema the release before versioned migrations created at every
/// start (`{text}` and `{blob}` stand for the backend's types), kept as it
/// was: a database of that release is this, without `schema_migrations`.
const V1_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS groups (uid {text} PRIMARY KEY, parent {text} NOT NULL, name {text} NOT NULL, create_time BIGINT NOT NULL, update_time BIGINT NOT NULL, etag {text} NOT NULL, body {blob} NOT NULL)
CREATE INDEX IF NOT EXISTS groups_by_parent ON groups (parent, uid)
CREATE INDEX IF NOT EXISTS groups_by_name ON groups (name, uid)
CREATE INDEX IF NOT EXISTS groups_by_parent_name ON groups (parent, name, uid)
CREATE INDEX IF NOT EXISTS groups_by_create_time ON groups (create_time, uid)
CREATE INDEX IF NOT EXISTS groups_by_parent_create_time ON groups (parent, create_time, uid)
CREATE INDEX IF NOT EXISTS groups_by_update_time ON groups (update_time, uid)
CREATE INDEX IF NOT EXISTS groups_by_parent_update_time ON groups (parent, update_time, uid)
CREATE TABLE IF NOT EXISTS groups_counts (prefix {text} PRIMARY KEY, children BIGINT NOT NULL, descendants BIGINT NOT NULL)
CREATE TABLE IF NOT EXISTS roles (uid {text} PRIMARY KEY, parent {text} NOT NULL, name {text} NOT NULL, create_time BIGINT NOT NULL, update_time BIGINT NOT NULL, etag {text} NOT NULL, body {blob} NOT NULL)
CREATE INDEX IF NOT EXISTS roles_by_parent ON roles (parent, uid)
CREATE INDEX IF NOT EXISTS roles_by_name ON roles (name, uid)
CREATE INDEX IF NOT EXISTS roles_by_parent_name ON roles (parent, name, uid)
CREATE INDEX IF NOT EXISTS roles_by_create_time ON roles (create_time, uid)
CREATE INDEX IF NOT EXISTS roles_by_parent_create_time ON roles (parent, create_time, uid)
CREATE INDEX IF NOT EXISTS roles_by_update_time ON roles (update_time, uid)
CREATE INDEX IF NOT EXISTS roles_by_parent_update_time ON roles (parent, update_time, uid)
CREATE TABLE IF NOT EXISTS roles_counts (prefix {text} PRIMARY KEY, children BIGINT NOT NULL, descendants BIGINT NOT NULL)
CREATE TABLE IF NOT EXISTS identities (uid {text} PRIMARY KEY, parent {text} NOT NULL, name {text} NOT NULL, create_time BIGINT NOT NULL, update_time BIGINT NOT NULL, etag {text} NOT NULL, body {blob} NOT NULL)
CREATE INDEX IF NOT EXISTS identities_by_parent ON identities (parent, uid)
CREATE INDEX IF NOT EXISTS identities_by_name ON identities (name, uid)
CREATE INDEX IF NOT EXISTS identities_by_parent_name ON identities (parent, name, uid)
CREATE INDEX IF NOT EXISTS identities_by_create_time ON identities (create_time, uid)
CREATE INDEX IF NOT EXISTS identities_by_parent_create_time ON identities (parent, create_time, uid)
CREATE INDEX IF NOT EXISTS identities_by_update_time ON identities (update_time, uid)
CREATE INDEX IF NOT EXISTS identities_by_parent_update_time ON identities (parent, update_time, uid)
CREATE TABLE IF NOT EXISTS identities_counts (prefix {text} PRIMARY KEY, children BIGINT NOT NULL, descendants BIGINT NOT NULL)
CREATE TABLE IF NOT EXISTS role_bindings (uid {text} PRIMARY KEY, parent {text} NOT NULL, name {text} NOT NULL, create_time BIGINT NOT NULL, update_time BIGINT NOT NULL, role {text} NOT NULL, identity {text} NOT NULL, etag {text} NOT NULL, body {blob} NOT NULL)
CREATE INDEX IF NOT EXISTS role_bindings_by_parent ON role_bindings (parent, uid)
CREATE INDEX IF NOT EXISTS role_bindings_by_name ON role_bindings (name, uid)
CREATE INDEX IF NOT EXISTS role_bindings_by_parent_name ON role_bindings (parent, name, uid)
CREATE INDEX IF NOT EXISTS role_bindings_by_create_time ON role_bindings (create_time, uid)
CREATE INDEX IF NOT EXISTS role_bindings_by_parent_create_time ON role_bindings (parent, create_time, uid)
CREATE INDEX IF NOT EXISTS role_bindings_by_update_time ON role_bindings (update_time, uid)
CREATE INDEX IF NOT EXISTS role_bindings_by_parent_update_time ON role_bindings (parent, update_time, uid)
CREATE INDEX IF NOT EXISTS role_bindings_by_role ON role_bindings (role, uid)
CREATE INDEX IF NOT EXISTS role_bindings_by_parent_role ON role_bindings (parent, role, uid)
CREATE INDEX IF NOT EXISTS role_bindings_by_identity ON role_bindings (identity, uid)
CREATE INDEX IF NOT EXISTS role_bindings_by_parent_identity ON role_bindings (parent, identity, uid)
CREATE TABLE IF NOT EXISTS role_bindings_counts (prefix {text} PRIMARY KEY, children BIGINT NOT NULL, descendants BIGINT NOT NULL)
CREATE TABLE IF NOT EXISTS repos (uid {text} PRIMARY KEY, parent {text} NOT NULL, name {text} NOT NULL, create_time BIGINT NOT NULL, update_time BIGINT NOT NULL, public BIGINT NOT NULL, etag {text} NOT NULL, body {blob} NOT NULL)
CREATE INDEX IF NOT EXISTS repos_by_parent ON repos (parent, uid)
CREATE INDEX IF NOT EXISTS repos_by_name ON repos (name, uid)
CREATE INDEX IF NOT EXISTS repos_by_parent_name ON repos (parent, name, uid)
CREATE INDEX IF NOT EXISTS repos_by_create_time ON repos (create_time, uid)
CREATE INDEX IF NOT EXISTS repos_by_parent_create_time ON repos (parent, create_time, uid)
CREATE INDEX IF NOT EXISTS repos_by_update_time ON repos (update_time, uid)
CREATE INDEX IF NOT EXISTS repos_by_parent_update_time ON repos (parent, update_time, uid)
CREATE INDEX IF NOT EXISTS repos_by_public ON repos (public, uid)
CREATE INDEX IF NOT EXISTS repos_by_parent_public ON repos (parent, public, uid)
CREATE TABLE IF NOT EXISTS repos_counts (prefix {text} PRIMARY KEY, children BIGINT NOT NULL, descendants BIGINT NOT NULL)
CREATE TABLE IF NOT EXISTS advisories (uid {text} PRIMARY KEY, parent {text} NOT NULL, name {text} NOT NULL, create_time BIGINT NOT NULL, update_time BIGINT NOT NULL, advisory_id {text} NOT NULL, etag {text} NOT NULL, body {blob} NOT NULL)
CREATE INDEX IF NOT EXISTS advisories_by_parent ON advisories (parent, uid)
CREATE INDEX IF NOT EXISTS advisories_by_name ON advisories (name, uid)
CREATE INDEX IF NOT EXISTS advisories_by_parent_name ON advisories (parent, name, uid)
CREATE INDEX IF NOT EXISTS advisories_by_create_time ON advisories (create_time, uid)
CREATE INDEX IF NOT EXISTS advisories_by_parent_create_time ON advisories (parent, create_time, uid)
CREATE INDEX IF NOT EXISTS advisories_by_update_time ON advisories (update_time, uid)
CREATE INDEX IF NOT EXISTS advisories_by_parent_update_time ON advisories (parent, update_time, uid)
CREATE INDEX IF NOT EXISTS advisories_by_advisory_id ON advisories (advisory_id, uid)
CREATE INDEX IF NOT EXISTS advisories_by_parent_advisory_id ON advisories (parent, advisory_id, uid)
CREATE TABLE IF NOT EXISTS advisories_counts (prefix {text} PRIMARY KEY, children BIGINT NOT NULL, descendants BIGINT NOT NULL)
CREATE TABLE IF NOT EXISTS artifacts (uid {text} PRIMARY KEY, parent {text} NOT NULL, name {text} NOT NULL, create_time BIGINT NOT NULL, update_time BIGINT NOT NULL, etag {text} NOT NULL, body {blob} NOT NULL)
CREATE INDEX IF NOT EXISTS artifacts_by_parent ON artifacts (parent, uid)
CREATE INDEX IF NOT EXISTS artifacts_by_name ON artifacts (name, uid)
CREATE INDEX IF NOT EXISTS artifacts_by_parent_name ON artifacts (parent, name, uid)
CREATE INDEX IF NOT EXISTS artifacts_by_create_time ON artifacts (create_time, uid)
CREATE INDEX IF NOT EXISTS artifacts_by_parent_create_time ON artifacts (parent, create_time, uid)
CREATE INDEX IF NOT EXISTS artifacts_by_update_time ON artifacts (update_time, uid)
CREATE INDEX IF NOT EXISTS artifacts_by_parent_update_time ON artifacts (parent, update_time, uid)
CREATE TABLE IF NOT EXISTS artifacts_counts (prefix {text} PRIMARY KEY, children BIGINT NOT NULL, descendants BIGINT NOT NULL)
CREATE TABLE IF NOT EXISTS documents (uid {text} PRIMARY KEY, parent {text} NOT NULL, name {text} NOT NULL, create_time BIGINT NOT NULL, update_time BIGINT NOT NULL, etag {text} NOT NULL, body {blob} NOT NULL)
CREATE INDEX IF NOT EXISTS documents_by_parent ON documents (parent, uid)
CREATE INDEX IF NOT EXISTS documents_by_name ON documents (name, uid)
CREATE INDEX IF NOT EXISTS documents_by_parent_name ON documents (parent, name, uid)
CREATE INDEX IF NOT EXISTS documents_by_create_time ON documents (create_time, uid)
CREATE INDEX IF NOT EXISTS documents_by_parent_create_time ON documents (parent, create_time, uid)
CREATE INDEX IF NOT EXISTS documents_by_update_time ON documents (update_time, uid)
CREATE INDEX IF NOT EXISTS documents_by_parent_update_time ON documents (parent, update_time, uid)
CREATE TABLE IF NOT EXISTS documents_counts (prefix {text} PRIMARY KEY, children BIGINT NOT NULL, descendants BIGINT NOT NULL)
"#;

/// Creates the previous release's schema.
async fn create_v1_schema(pool: &AnyPool, postgres: bool) {
    let (text, blob) = if postgres {
        ("TEXT COLLATE \"C\"", "BYTEA")
    } else {
        ("TEXT", "BLOB")
    };
    for statement in V1_SCHEMA.lines().filter(|line| !line.is_empty()) {
        let statement = statement.replace("{text}", text).replace("{blob}", blob);
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(pool)
            .await
            .unwrap();
    }
}

/// Stores a resource as the previous release did: its row, and the counters
/// of every prefix above it.
async fn insert_v1<R: Resource, W: Row<Message = R>>(pool: &AnyPool, table: &str, resource: &R) {
    // The columns the previous release kept: a column added since is filled
    // by the upgrade.
    let created = format!("CREATE TABLE IF NOT EXISTS {table} (");
    let v1_table = V1_SCHEMA
        .lines()
        .find(|line| line.starts_with(&created))
        .expect("a table of the previous release");
    let kept = |name: &str| v1_table.contains(&format!(" {name} "));
    let (columns, values): (Vec<&str>, Vec<SortValue>) = (W::COLUMNS.iter())
        .zip(W::from_message(resource).values())
        .filter(|(column, _)| kept(column.name))
        .map(|(column, value)| (column.name, value))
        .unzip();
    let placeholders: Vec<String> = (1..=values.len() + 4).map(|i| format!("${i}")).collect();
    let sql = format!(
        "INSERT INTO {table} (uid, parent, {}, etag, body) VALUES ({})",
        columns.join(", "),
        placeholders.join(", ")
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(resource.key().to_owned())
        .bind(
            protoapi_runtime::uidp::parent(resource.key())
                .unwrap_or_default()
                .to_owned(),
        );
    for value in values {
        query = match value {
            SortValue::Int(value) => query.bind(value),
            SortValue::Text(value) => query.bind(value),
        };
    }
    query
        .bind(resource.etag().to_owned())
        .bind(resource.encode_to_vec())
        .execute(pool)
        .await
        .unwrap();
    let uid = resource.key();
    let parent = protoapi_runtime::uidp::parent(uid).unwrap_or_default();
    let mut increments = vec![(parent.to_owned(), 1_i64, 0_i64), (String::new(), 0, 1)];
    let mut prefix = uid;
    while let Some(above) = protoapi_runtime::uidp::parent(prefix) {
        increments.push((above.to_owned(), 0, 1));
        prefix = above;
    }
    for (prefix, children, descendants) in increments {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO {table}_counts (prefix, children, descendants) VALUES ($1, $2, $3) \
             ON CONFLICT (prefix) DO UPDATE SET children = {table}_counts.children + excluded.children, \
             descendants = {table}_counts.descendants + excluded.descendants"
        )))
        .bind(prefix)
        .bind(children)
        .bind(descendants)
        .execute(pool)
        .await
        .unwrap();
    }
}

fn new<R: Resource>(parent: &str, edit: impl FnOnce(&mut R)) -> R {
    let mut resource = R::default();
    edit(&mut resource);
    prepare_create(&Caller::System, parent, Some(resource), "resource").unwrap()
}

/// What the previous release left: its bootstrap (recorded in
/// `bootstrap.json` in the data directory) and a few groups.
struct V1Data {
    root: String,
    admin: String,
    groups: Vec<String>,
}

async fn create_v1_database(shared: &Shared) -> V1Data {
    let pool = shared.pool().await;
    create_v1_schema(&pool, shared.postgres.is_some()).await;
    let root: Group = new("", |g: &mut Group| g.name = "root organization".into());
    insert_v1::<_, GroupRow>(&pool, "groups", &root).await;
    let owner: Role = new(&root.uid, |r: &mut Role| {
        r.name = "owner".into();
        r.capabilities = vec!["groups.get".into(), "groups.list".into()];
    });
    insert_v1::<_, RoleRow>(&pool, "roles", &owner).await;
    let admin: Identity = new(&root.uid, |i: &mut Identity| {
        i.name = "platform administrator".into();
    });
    insert_v1::<_, IdentityRow>(&pool, "identities", &admin).await;
    let binding: RoleBinding = new(&root.uid, |b: &mut RoleBinding| {
        b.name = "platform administrator is owner".into();
        b.identity = admin.uid.clone();
        b.role = owner.uid.clone();
    });
    insert_v1::<_, RoleBindingRow>(&pool, "role_bindings", &binding).await;
    let mut groups = Vec::new();
    for n in 0..5 {
        let group: Group = new(&root.uid, |g: &mut Group| g.name = format!("team {n}"));
        insert_v1::<_, GroupRow>(&pool, "groups", &group).await;
        groups.push(group.uid);
    }
    pool.close().await;
    let data_dir = shared.data_dir(0);
    std::fs::create_dir_all(&data_dir).unwrap();
    std::fs::write(
        data_dir.join("bootstrap.json"),
        serde_json::to_vec(&json!({"root": root.uid, "admin": admin.uid})).unwrap(),
    )
    .unwrap();
    groups.sort();
    V1Data {
        root: root.uid,
        admin: admin.uid,
        groups,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_upgrade_a_database_of_the_previous_release_together() {
    for shared in Shared::all().await {
        let backend = shared.name();
        let v1 = create_v1_database(&shared).await;
        let servers = shared.start(2).await;

        let pool = shared.pool().await;
        assert_eq!(
            schema_versions(&pool).await,
            [1, 2, 3, 4, 5, 6, 7, 100, 101],
            "{backend}"
        );
        assert_eq!(
            count(&pool, "SELECT COUNT(*) FROM groups WHERE parent = ''").await,
            1,
            "{backend}: no second root organization"
        );
        assert_eq!(
            count(&pool, "SELECT COUNT(*) FROM identities").await,
            1,
            "{backend}"
        );
        assert_eq!(
            bootstrap_record(&pool).await,
            (v1.root.clone(), v1.admin.clone(), 1),
            "{backend}: the earlier bootstrap is adopted"
        );
        pool.close().await;

        assert_tokens_accepted_everywhere(&servers, backend).await;
        for server in &servers {
            // The data, its counters included, as the previous release left it.
            let response = server
                .rest()
                .get(&format!(
                    "/iam/v2/groups?uidp.children_of={}&pageSize=2",
                    v1.root
                ))
                .await;
            assert_eq!(
                response.status,
                StatusCode::OK,
                "{backend}: {:?}",
                response.body
            );
            assert_eq!(response.body["totalCount"], 5, "{backend}");
            let response = server
                .rest()
                .get(&format!("/iam/v2/groups?uidp.children_of={}", v1.root))
                .await;
            let mut uids: Vec<&str> = response.body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|item| item["uid"].as_str().unwrap())
                .collect();
            uids.sort();
            assert_eq!(uids, v1.groups, "{backend}");
        }
        // Both keep writing to the upgraded database.
        let uid = servers[1]
            .rest()
            .create(
                &format!("/iam/v2/groups/{}", v1.root),
                json!({"name": "after"}),
            )
            .await;
        let response = servers[0]
            .rest()
            .get(&format!("/iam/v2/groups/{uid}"))
            .await;
        assert_eq!(response.status, StatusCode::OK, "{backend}");
        // A column added since (the roles' capabilities, filterable) was
        // filled from the items stored before it; the built-in `owner`
        // gained what the releases since added (its verbs select every
        // capability).
        for (filter, count) in [
            ("capabilities%3Agroups.list", 1),
            ("capabilities%3Agroups.create", 1),
            ("capabilities%3Arepos.pull", 1),
            ("name%3D%22owner%22%20AND%20capabilities%3Arepos.push", 1),
        ] {
            let response = servers[1]
                .rest()
                .get(&format!(
                    "/iam/v2/roles?uidp.children_of={}&filter={filter}",
                    v1.root
                ))
                .await;
            assert_eq!(
                response.status,
                StatusCode::OK,
                "{backend}: {:?}",
                response.body
            );
            assert_eq!(
                response.body["totalCount"].as_u64().unwrap_or(0),
                count,
                "{backend} {filter}: {:?}",
                response.body
            );
        }
        for server in servers {
            server.stop().await;
        }
    }
}

/// The tables, columns and indexes of a database.
async fn schema_of(shared: &Shared) -> Vec<String> {
    let pool = shared.pool().await;
    let sql = match shared.backend() {
        platform_server::store::Dialect::Sqlite => {
            "SELECT m.type || ' ' || m.name || ' ' || COALESCE(p.name || ' ' || p.type || ' ' || p.\"notnull\" || ' ' || p.pk, m.sql) \
             FROM sqlite_master m LEFT JOIN pragma_table_info(m.name) p ON m.type = 'table' \
             WHERE m.name NOT LIKE 'sqlite_%' ORDER BY 1"
        }
        platform_server::store::Dialect::Postgres => {
            "SELECT table_name || ' ' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || COALESCE(collation_name, '') \
             FROM information_schema.columns WHERE table_schema = current_schema() \
             UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1"
        }
    };
    let schema = sqlx::query_scalar(sql).fetch_all(&pool).await.unwrap();
    pool.close().await;
    schema
}

#[tokio::test]
async fn an_upgraded_database_has_the_schema_of_a_new_one() {
    let fresh = Shared::all().await;
    let upgraded = Shared::all().await;
    for (fresh, upgraded) in fresh.iter().zip(&upgraded) {
        let backend = fresh.name();
        fresh.open().await.close().await;
        let pool = upgraded.pool().await;
        create_v1_schema(&pool, upgraded.postgres.is_some()).await;
        pool.close().await;
        upgraded.open().await.close().await;
        let schema = schema_of(fresh).await;
        assert!(schema.len() > 100, "{backend}: {schema:?}");
        assert_eq!(schema, schema_of(upgraded).await, "{backend}");
        let pool = upgraded.pool().await;
        assert_eq!(
            schema_versions(&pool).await,
            [1, 2, 3, 4, 5, 6, 7, 100, 101],
            "{backend}"
        );
        pool.close().await;
    }
}

#[tokio::test]
async fn migrations_run_once() {
    for shared in Shared::all().await {
        let backend = shared.name();
        for _ in 0..3 {
            shared.open().await.close().await;
        }
        let pool = shared.pool().await;
        assert_eq!(
            schema_versions(&pool).await,
            [1, 2, 3, 4, 5, 6, 7, 100, 101],
            "{backend}"
        );
        let applied: Vec<(i64, String)> =
            sqlx::query_as("SELECT version, name FROM schema_migrations ORDER BY version")
                .fetch_all(&pool)
                .await
                .unwrap();
        assert_eq!(applied[0].1, "collection tables", "{backend}");
        pool.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn revoking_a_binding_on_one_replica_denies_at_once_on_the_other() {
    for shared in Shared::all().await {
        let backend = shared.name();
        let servers = shared.start(2).await;
        let (a, b) = (&servers[0], &servers[1]);
        let root = a
            .rest()
            .create("/iam/v2/groups/", json!({"name": "revocation"}))
            .await;
        let role = a
            .rest()
            .create(
                &format!("/iam/v2/roles/{root}"),
                json!({"name": "reader", "capabilities": ["groups.get", "groups.list"]}),
            )
            .await;
        let reader = a.member(&root, "reader", &role, &root).await;
        let read = |server: &TestServer| {
            let rest = server.rest_as(Some(&reader.token));
            let path = format!("/iam/v2/groups/{root}");
            async move { rest.get(&path).await.status }
        };
        // Both replicas have the grant cached.
        for _ in 0..3 {
            assert_eq!(read(a).await, StatusCode::OK, "{backend}");
            assert_eq!(read(b).await, StatusCode::OK, "{backend}");
        }
        // A capability removed on one replica is gone on the other.
        let patched = a
            .rest()
            .patch(
                &format!("/iam/v2/roles/{role}?updateMask=capabilities"),
                json!({"capabilities": ["groups.list"]}),
            )
            .await;
        assert_eq!(patched.status, StatusCode::OK, "{backend}");
        assert_eq!(
            read(b).await,
            StatusCode::FORBIDDEN,
            "{backend}: role change"
        );
        a.rest()
            .patch(
                &format!("/iam/v2/roles/{role}?updateMask=capabilities"),
                json!({"capabilities": ["groups.get", "groups.list"]}),
            )
            .await;
        assert_eq!(read(b).await, StatusCode::OK, "{backend}");
        // The binding deleted on one replica grants nothing on the other.
        let deleted = a
            .rest()
            .delete(&format!("/iam/v2/roleBindings/{}", reader.binding))
            .await;
        assert_eq!(deleted.status, StatusCode::OK, "{backend}");
        assert_eq!(
            read(b).await,
            StatusCode::FORBIDDEN,
            "{backend}: revoked binding"
        );
        assert_eq!(
            read(a).await,
            StatusCode::FORBIDDEN,
            "{backend}: revoked binding"
        );
    }
}
