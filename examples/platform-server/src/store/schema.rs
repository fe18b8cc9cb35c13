//! The database schema: numbered migrations, applied at start-up under a lock.
//!
//! `schema_migrations` records every applied version. At start each server
//! takes the migration lock (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: a
//! transaction-scoped advisory lock), applies the versions not recorded yet,
//! records them, and commits, all in one transaction: servers starting
//! together apply each migration exactly once, and a failed migration leaves
//! the database as it was.
//!
//! Version 1 creates the collection tables, derived from the [`Table`]
//! descriptions (columns from the row types). A database created before
//! migrations were versioned (collection tables, no `schema_migrations`) is
//! recognised as version 1 and upgraded from there. A collection added later
//! gets its table, derived the same way, at the next start; a change to an
//! existing table (a new column) needs a numbered migration, and a table that
//! lacks a column of its description stops the start with an error naming it.

use sqlx::{Any, AnyConnection, AnyPool, Transaction};

use super::{Backend, SqlStore, Table};

/// Per-connection settings of the embedded database: waiting instead of
/// failing when another connection holds the write lock, write-ahead logging
/// (readers never block the writer), and durable commits.
pub const SQLITE_PRAGMAS: &[&str] = &[
    "PRAGMA busy_timeout = 10000",
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
];

/// Key of the PostgreSQL advisory lock serialising concurrent migrations.
const MIGRATION_LOCK: i64 = 0x706c_6174_666f_726d;

/// One schema version.
struct Migration {
    version: i64,
    name: &'static str,
    change: Change,
}

enum Change {
    /// The collection tables and their counters, from the `Table` descriptions.
    CollectionTables,
    /// `platform_bootstrap`: what the first start created, shared by every
    /// server on the database.
    BootstrapRecord,
    /// `access_epoch`: a counter every write of roles and role bindings
    /// advances, so that every server knows when cached grants are stale.
    AccessEpoch,
}

/// Every migration, in order. Append only: a released version never changes.
const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "collection tables",
        change: Change::CollectionTables,
    },
    Migration {
        version: 2,
        name: "bootstrap record",
        change: Change::BootstrapRecord,
    },
    Migration {
        version: 3,
        name: "access epoch",
        change: Change::AccessEpoch,
    },
];

/// The schema version this build creates.
pub const LATEST_VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].version;

/// Column types per backend. Text compares byte-wise everywhere, so uid
/// subtrees are key ranges.
struct Types {
    text: &'static str,
    blob: &'static str,
}

impl Types {
    fn of(backend: Backend) -> Types {
        match backend {
            Backend::Sqlite => Types {
                text: "TEXT",
                blob: "BLOB",
            },
            Backend::Postgres => Types {
                text: "TEXT COLLATE \"C\"",
                blob: "BYTEA",
            },
        }
    }
}

/// Brings the schema to [`LATEST_VERSION`], under the migration lock.
pub async fn migrate(
    pool: &AnyPool,
    backend: Backend,
    tables: &[&Table],
) -> Result<(), sqlx::Error> {
    let mut transaction = lock(pool, backend).await?;
    let types = Types::of(backend);
    let applied = applied_versions(&mut transaction, backend, &types, tables).await?;
    for migration in MIGRATIONS {
        if applied.contains(&migration.version) {
            continue;
        }
        match migration.change {
            Change::CollectionTables => {
                create_collection_tables(&mut transaction, &types, tables).await?;
            }
            Change::BootstrapRecord => create_bootstrap_record(&mut transaction, &types).await?,
            Change::AccessEpoch => create_access_epoch(&mut transaction).await?,
        }
        record(&mut transaction, migration.version, migration.name).await?;
        tracing::info!(
            version = migration.version,
            name = migration.name,
            "applied schema migration"
        );
    }
    if let Some(newer) = applied
        .iter()
        .copied()
        .filter(|v| *v > LATEST_VERSION)
        .max()
    {
        // A newer server migrated the database (a rolling upgrade): its
        // migrations only add, so this server keeps working.
        tracing::warn!(
            database = newer,
            build = LATEST_VERSION,
            "the database schema is newer than this server"
        );
    }
    for table in tables {
        if !table_exists(&mut transaction, backend, table.name).await? {
            // A collection added since the database was created.
            create_collection_table(&mut transaction, &types, table).await?;
            tracing::info!(table = table.name, "created the table of a new collection");
        }
        check_columns(&mut transaction, table).await?;
    }
    transaction.commit().await
}

/// Opens the migration transaction, holding the migration lock until it ends.
async fn lock(pool: &AnyPool, backend: Backend) -> Result<Transaction<'static, Any>, sqlx::Error> {
    match backend {
        Backend::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await,
        Backend::Postgres => {
            let mut transaction = pool.begin().await?;
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(MIGRATION_LOCK)
                .execute(&mut *transaction)
                .await?;
            Ok(transaction)
        }
    }
}

/// The versions already applied, creating `schema_migrations` if needed; a
/// database from before versioning is recorded as version 1.
async fn applied_versions(
    connection: &mut AnyConnection,
    backend: Backend,
    types: &Types,
    tables: &[&Table],
) -> Result<Vec<i64>, sqlx::Error> {
    if !table_exists(connection, backend, "schema_migrations").await? {
        let mut unversioned = false;
        for table in tables {
            unversioned |= table_exists(connection, backend, table.name).await?;
        }
        let text = types.text;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "CREATE TABLE schema_migrations (\
                version BIGINT PRIMARY KEY, \
                name {text} NOT NULL, \
                applied_at BIGINT NOT NULL)"
        )))
        .execute(&mut *connection)
        .await?;
        if unversioned {
            // Version 1 is idempotent: running it again completes what an
            // earlier build may have left out (counters).
            create_collection_tables(connection, types, tables).await?;
            record(
                connection,
                1,
                "collection tables (created before versioning)",
            )
            .await?;
            tracing::info!("recognised a database created before schema versioning as version 1");
        }
    }
    sqlx::query_scalar("SELECT version FROM schema_migrations ORDER BY version")
        .fetch_all(&mut *connection)
        .await
}

async fn record(
    connection: &mut AnyConnection,
    version: i64,
    name: &str,
) -> Result<(), sqlx::Error> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_micros()).unwrap_or(i64::MAX)
        });
    sqlx::query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)")
        .bind(version)
        .bind(name.to_owned())
        .bind(now)
        .execute(&mut *connection)
        .await?;
    Ok(())
}

async fn table_exists(
    connection: &mut AnyConnection,
    backend: Backend,
    name: &str,
) -> Result<bool, sqlx::Error> {
    let sql = match backend {
        Backend::Sqlite => "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = $1",
        Backend::Postgres => {
            "SELECT COUNT(*) FROM pg_catalog.pg_tables \
             WHERE schemaname = current_schema() AND tablename = $1"
        }
    };
    let count: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(name.to_owned())
        .fetch_one(&mut *connection)
        .await?;
    Ok(count > 0)
}

/// Version 1: every collection table, with counters backfilled for items
/// stored before counters existed.
async fn create_collection_tables(
    connection: &mut AnyConnection,
    types: &Types,
    tables: &[&Table],
) -> Result<(), sqlx::Error> {
    for table in tables {
        create_collection_table(connection, types, table).await?;
        backfill_counts(connection, table.name).await?;
    }
    Ok(())
}

/// The table of one collection: `uid`, `parent`, the columns of its row type,
/// `etag` and `body`, their indexes, and its counters.
async fn create_collection_table(
    connection: &mut AnyConnection,
    types: &Types,
    table: &Table,
) -> Result<(), sqlx::Error> {
    let Types { text, blob } = types;
    let name = table.name;
    let columns: String = table
        .columns
        .iter()
        .map(|column| {
            let ty = if column.integer { "BIGINT" } else { text };
            format!("{} {ty} NOT NULL, ", column.name)
        })
        .collect();
    let mut statements = vec![format!(
        "CREATE TABLE IF NOT EXISTS {name} (\
            uid {text} PRIMARY KEY, \
            parent {text} NOT NULL, \
            {columns}\
            etag {text} NOT NULL, \
            body {blob} NOT NULL)"
    )];
    statements.push(format!(
        "CREATE INDEX IF NOT EXISTS {name}_by_parent ON {name} (parent, uid)"
    ));
    // Keyset paging in each order, over the whole table and among the
    // children of one parent; lookups of referring items.
    for column in table.columns.iter().map(|column| column.name) {
        statements.push(format!(
            "CREATE INDEX IF NOT EXISTS {name}_by_{column} ON {name} ({column}, uid)"
        ));
        statements.push(format!(
            "CREATE INDEX IF NOT EXISTS {name}_by_parent_{column} \
             ON {name} (parent, {column}, uid)"
        ));
    }
    // Item counts per uid prefix, kept by every insert and delete so that
    // `totalCount` of a hierarchy filter is one lookup.
    statements.push(format!(
        "CREATE TABLE IF NOT EXISTS {name}_counts (\
            prefix {text} PRIMARY KEY, \
            children BIGINT NOT NULL, \
            descendants BIGINT NOT NULL)"
    ));
    for statement in statements {
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(&mut *connection)
            .await?;
    }
    Ok(())
}

/// Fills the counters of a table that has items but no counters yet (a
/// database created before counters existed).
async fn backfill_counts(connection: &mut AnyConnection, name: &str) -> Result<(), sqlx::Error> {
    let counted: Option<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT 1 FROM {name}_counts LIMIT 1"
    )))
    .fetch_optional(&mut *connection)
    .await?;
    if counted.is_some() {
        return Ok(());
    }
    let uids: Vec<String> =
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT uid FROM {name}")))
            .fetch_all(&mut *connection)
            .await?;
    let counts = super::sql::Counts::of(uids.iter().map(String::as_str));
    for (prefix, (children, descendants)) in counts.0 {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "INSERT INTO {name}_counts (prefix, children, descendants) VALUES ($1, $2, $3)"
        )))
        .bind(prefix)
        .bind(children)
        .bind(descendants)
        .execute(&mut *connection)
        .await?;
    }
    Ok(())
}

/// Fails, naming the table, when a column of its description is missing.
async fn check_columns(connection: &mut AnyConnection, table: &Table) -> Result<(), sqlx::Error> {
    let columns: Vec<&str> = ["uid", "parent"]
        .into_iter()
        .chain(table.columns.iter().map(|column| column.name))
        .chain(["etag", "body"])
        .collect();
    let sql = format!(
        "SELECT {} FROM {} WHERE 1 = 0",
        columns.join(", "),
        table.name
    );
    match sqlx::query(sqlx::AssertSqlSafe(sql))
        .execute(&mut *connection)
        .await
    {
        Ok(_) => Ok(()),
        Err(sqlx::Error::Database(error)) => Err(sqlx::Error::Configuration(
            format!(
                "table `{}` does not have the columns {columns:?} of its description ({}); \
                 a changed table needs a numbered migration",
                table.name,
                error.message()
            )
            .into(),
        )),
        Err(error) => Err(error),
    }
}

/// Version 3: the access epoch, one row.
async fn create_access_epoch(connection: &mut AnyConnection) -> Result<(), sqlx::Error> {
    for statement in [
        "CREATE TABLE access_epoch (id BIGINT PRIMARY KEY, epoch BIGINT NOT NULL)",
        "INSERT INTO access_epoch (id, epoch) VALUES (1, 0)",
    ] {
        sqlx::query(statement).execute(&mut *connection).await?;
    }
    Ok(())
}

/// Name releases before version 2 gave the role binding making the platform
/// administrator `owner` of the root organization.
const EARLIER_ADMIN_BINDING: &str = "platform administrator is owner";

/// Version 2: the bootstrap record. A database that already holds a
/// bootstrap (from a release that kept the record in the data directory)
/// gets a record of it: the root organization and identity of the oldest
/// administrator binding, so no server creates a second root.
async fn create_bootstrap_record(
    connection: &mut AnyConnection,
    types: &Types,
) -> Result<(), sqlx::Error> {
    let text = types.text;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "CREATE TABLE platform_bootstrap (\
            id BIGINT PRIMARY KEY, \
            root {text} NOT NULL, \
            admin {text} NOT NULL, \
            plan {text} NOT NULL, \
            complete BIGINT NOT NULL)"
    )))
    .execute(&mut *connection)
    .await?;
    let earlier: Option<(String, String)> = sqlx::query_as(
        "SELECT parent, identity FROM role_bindings \
         WHERE name = $1 AND parent <> '' AND parent NOT LIKE '%/%' \
         ORDER BY create_time, uid LIMIT 1",
    )
    .bind(EARLIER_ADMIN_BINDING)
    .fetch_optional(&mut *connection)
    .await?;
    if let Some((root, admin)) = earlier {
        sqlx::query(
            "INSERT INTO platform_bootstrap (id, root, admin, plan, complete) \
             VALUES (1, $1, $2, '{}', 1)",
        )
        .bind(root.clone())
        .bind(admin.clone())
        .execute(&mut *connection)
        .await?;
        tracing::info!(%root, %admin, "recorded the bootstrap found in the database");
    }
    Ok(())
}

/// The bootstrap record: the root organization and platform administrator
/// every server on the database uses, and what remains to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootstrapRecord {
    pub root: String,
    pub admin: String,
    /// The uids of the other items the bootstrap creates (JSON, owned by
    /// `crate::bootstrap`).
    pub plan: String,
    /// Whether every planned item exists.
    pub complete: bool,
}

impl SqlStore {
    /// The bootstrap record, if a server has written one.
    pub async fn bootstrap_record(&self) -> Result<Option<BootstrapRecord>, sqlx::Error> {
        let row: Option<(String, String, String, i64)> = sqlx::query_as(
            "SELECT root, admin, plan, complete FROM platform_bootstrap WHERE id = 1",
        )
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|(root, admin, plan, complete)| BootstrapRecord {
            root,
            admin,
            plan,
            complete: complete != 0,
        }))
    }

    /// Stores `proposal` unless a record exists; returns the stored record
    /// (`proposal`, or the one another server stored first).
    pub async fn claim_bootstrap(
        &self,
        proposal: &BootstrapRecord,
    ) -> Result<BootstrapRecord, sqlx::Error> {
        sqlx::query(
            "INSERT INTO platform_bootstrap (id, root, admin, plan, complete) \
             VALUES (1, $1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
        )
        .bind(proposal.root.clone())
        .bind(proposal.admin.clone())
        .bind(proposal.plan.clone())
        .bind(i64::from(proposal.complete))
        .execute(&self.pool)
        .await?;
        self.bootstrap_record()
            .await?
            .ok_or(sqlx::Error::RowNotFound)
    }

    /// Marks the bootstrap record complete.
    pub async fn complete_bootstrap(&self) -> Result<(), sqlx::Error> {
        sqlx::query("UPDATE platform_bootstrap SET complete = 1 WHERE id = 1")
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The applied schema versions, in order.
    pub async fn schema_versions(&self) -> Result<Vec<i64>, sqlx::Error> {
        sqlx::query_scalar("SELECT version FROM schema_migrations ORDER BY version")
            .fetch_all(&self.pool)
            .await
    }
}
