//! The database schema: numbered migrations, applied at start-up under a lock.
//!
//! `schema_migrations` records every applied version. At start each server
//! takes the migration lock (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: a
//! transaction-scoped advisory lock), applies the versions not recorded yet,
//! records them, and commits, all in one transaction: servers starting
//! together apply each migration exactly once, and a failed migration leaves
//! the database as it was.
//!
//! The versions form one sequence: the library's own steps
//! ([`LIBRARY_VERSIONS`]: 1 creates the collection tables, 3 the access
//! epoch, no longer advanced, 4 the access epochs per subject) and the application's [`Migration`]s for its own tables. A
//! database created before migrations were versioned (collection tables, no
//! `schema_migrations`) is recognised as version 1 and upgraded from there.
//!
//! Collections follow their declarations without numbered steps: a
//! collection added later gets its table at the next start, and a row field
//! added to a declaration (a proto field that becomes a column) is added to
//! the existing table, filled from each stored item, and indexed.

use sqlx::{Any, AnyConnection, Transaction};

use super::dialect::Dialect;
use super::table::{Table, Tables};

/// One numbered schema step of the application (its own tables, outside the
/// API's collections): statements run in the migration transaction.
#[derive(Clone, Copy, Debug)]
pub struct Migration {
    version: i64,
    name: &'static str,
    statements: &'static [&'static str],
}

impl Migration {
    /// A step; `version` must not be one of the library's own schema
    /// versions (`LIBRARY_VERSIONS`: 1, 3, 4, 5, 6). Append only: a released
    /// version never changes.
    pub const fn new(
        version: i64,
        name: &'static str,
        statements: &'static [&'static str],
    ) -> Self {
        Migration {
            version,
            name,
            statements,
        }
    }

    pub fn version(&self) -> i64 {
        self.version
    }

    /// The statements it runs, in order.
    pub fn statements(&self) -> &'static [&'static str] {
        self.statements
    }
}

/// The library's own steps.
#[derive(Clone, Copy, Debug)]
enum Change {
    /// The collection tables and their counters, from the `Table` descriptions.
    CollectionTables,
    /// `access_epoch`: a counter every write of tables guarding access
    /// advances, so that every server knows when cached access decisions are
    /// stale.
    AccessEpoch,
    /// `access_epochs`: a counter per access subject (a role, an identity
    /// granted roles), so a write evicts only the cached decisions that
    /// derive from that subject.
    AccessEpochs,
    /// `request_ids`: what writes under AIP-155 request ids recorded.
    RequestIds,
    /// `operations`: AIP-151 long-running operations.
    Operations,
    Application(&'static [&'static str]),
}

/// The versions the library's own steps take.
pub const LIBRARY_VERSIONS: &[i64] = &[1, 3, 4, 5, 6];

const LIBRARY: &[(i64, &str, Change)] = &[
    (1, "collection tables", Change::CollectionTables),
    (3, "access epoch", Change::AccessEpoch),
    (4, "access epochs per subject", Change::AccessEpochs),
    (5, "request ids", Change::RequestIds),
    (6, "operations", Change::Operations),
];

/// Key of the PostgreSQL advisory lock serialising concurrent migrations.
const MIGRATION_LOCK: i64 = 0x706c_6174_666f_726d;

/// Column types per dialect. Text compares byte-wise everywhere, so uid
/// subtrees are key ranges.
struct Types {
    text: &'static str,
    blob: &'static str,
}

impl Types {
    fn of(dialect: Dialect) -> Types {
        match dialect {
            Dialect::Sqlite => Types {
                text: "TEXT",
                blob: "BLOB",
            },
            Dialect::Postgres => Types {
                text: "TEXT COLLATE \"C\"",
                blob: "BYTEA",
            },
        }
    }
}

/// Applies every step not recorded yet, under the migration lock, then
/// brings each collection's table to its declaration.
pub(super) async fn migrate(
    store: &dyn Tables,
    migrations: &[Migration],
) -> Result<(), sqlx::Error> {
    let mut steps: Vec<(i64, &str, Change)> = LIBRARY.to_vec();
    for migration in migrations {
        if steps
            .iter()
            .any(|(version, ..)| *version == migration.version)
        {
            return Err(sqlx::Error::Configuration(
                format!(
                    "schema version {} of migration `{}` is taken (the library's: {LIBRARY_VERSIONS:?})",
                    migration.version, migration.name
                )
                .into(),
            ));
        }
        steps.push((
            migration.version,
            migration.name,
            Change::Application(migration.statements),
        ));
    }
    steps.sort_by_key(|(version, ..)| *version);
    let latest = steps.last().map_or(0, |(version, ..)| *version);
    let tables: Vec<&Table> = store.tables();
    let dialect = store.dialect();
    let mut transaction = lock(store).await?;
    let types = Types::of(dialect);
    let applied = applied_versions(&mut transaction, dialect, &types, &tables).await?;
    for (version, name, change) in steps {
        if applied.contains(&version) {
            continue;
        }
        match change {
            Change::CollectionTables => {
                create_collection_tables(&mut transaction, dialect, &types, &tables).await?;
            }
            Change::AccessEpoch => create_access_epoch(&mut transaction).await?,
            Change::AccessEpochs => {
                let statement = format!(
                    "CREATE TABLE access_epochs (subject {} PRIMARY KEY, epoch BIGINT NOT NULL)",
                    types.text
                );
                sqlx::query(sqlx::AssertSqlSafe(statement))
                    .execute(&mut *transaction)
                    .await?;
            }
            Change::RequestIds => {
                let Types { text, blob } = &types;
                let statements = [
                    format!(
                        "CREATE TABLE request_ids (key {text} PRIMARY KEY, \
                         fingerprint {text} NOT NULL, outcome {blob} NOT NULL, \
                         expires BIGINT NOT NULL)"
                    ),
                    "CREATE INDEX request_ids_by_expiry ON request_ids (expires)".to_owned(),
                ];
                for statement in statements {
                    sqlx::query(sqlx::AssertSqlSafe(statement))
                        .execute(&mut *transaction)
                        .await?;
                }
            }
            Change::Operations => {
                let Types { text, blob } = &types;
                let statements = [
                    format!(
                        "CREATE TABLE operations (name {text} PRIMARY KEY, \
                         resource_type {text} NOT NULL, target {text} NOT NULL, \
                         verb {text} NOT NULL, done BIGINT NOT NULL, lease BIGINT NOT NULL, \
                         body {blob} NOT NULL)"
                    ),
                    "CREATE INDEX operations_by_end ON operations (done, lease)".to_owned(),
                ];
                for statement in statements {
                    sqlx::query(sqlx::AssertSqlSafe(statement))
                        .execute(&mut *transaction)
                        .await?;
                }
            }
            Change::Application(statements) => {
                for statement in statements {
                    sqlx::query(sqlx::AssertSqlSafe(*statement))
                        .execute(&mut *transaction)
                        .await?;
                }
            }
        }
        record(&mut transaction, version, name).await?;
        tracing::info!(version, name, "applied schema migration");
    }
    if let Some(newer) = applied.iter().copied().filter(|v| *v > latest).max() {
        // A newer server migrated the database (a rolling upgrade): its
        // migrations only add, so this server keeps working.
        tracing::warn!(
            database = newer,
            build = latest,
            "the database schema is newer than this server"
        );
    }
    for table in &tables {
        if !table_exists(&mut transaction, dialect, &table.name).await? {
            // A collection added since the database was created.
            create_collection_table(&mut transaction, &types, table).await?;
            tracing::info!(table = table.name, "created the table of a new collection");
        }
        add_missing_columns(&mut transaction, dialect, &types, table).await?;
    }
    transaction.commit().await
}

/// Opens the migration transaction, holding the migration lock until it ends.
async fn lock(store: &dyn Tables) -> Result<Transaction<'static, Any>, sqlx::Error> {
    match store.dialect() {
        Dialect::Sqlite => store.pool().begin_with("BEGIN IMMEDIATE").await,
        Dialect::Postgres => {
            let mut transaction = store.pool().begin().await?;
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
    dialect: Dialect,
    types: &Types,
    tables: &[&Table],
) -> Result<Vec<i64>, sqlx::Error> {
    if !table_exists(connection, dialect, "schema_migrations").await? {
        let mut unversioned = false;
        for table in tables {
            unversioned |= table_exists(connection, dialect, &table.name).await?;
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
            create_collection_tables(connection, dialect, types, tables).await?;
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
    dialect: Dialect,
    name: &str,
) -> Result<bool, sqlx::Error> {
    let sql = match dialect {
        Dialect::Sqlite => "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = $1",
        Dialect::Postgres => {
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
    dialect: Dialect,
    types: &Types,
    tables: &[&Table],
) -> Result<(), sqlx::Error> {
    for table in tables {
        // A table of a database from before versioning lacks the columns
        // declared since: they are added before its indexes are made.
        if table_exists(connection, dialect, &table.name).await? {
            add_missing_columns(connection, dialect, types, table).await?;
        }
        create_collection_table(connection, types, table).await?;
        backfill_counts(connection, &table.name, table.parent_of).await?;
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
    let name = &table.name;
    let columns: String = table
        .columns
        .iter()
        .map(|column| {
            let ty = if column.integer { "BIGINT" } else { text };
            format!("{} {ty} NOT NULL, ", column.name)
        })
        .collect();
    let statements = [
        format!(
            "CREATE TABLE IF NOT EXISTS {name} (\
                uid {text} PRIMARY KEY, \
                parent {text} NOT NULL, \
                {columns}\
                etag {text} NOT NULL, \
                body {blob} NOT NULL)"
        ),
        // Item counts per uid prefix, kept by every insert and delete so
        // that `totalCount` of a hierarchy filter is one lookup.
        format!(
            "CREATE TABLE IF NOT EXISTS {name}_counts (\
                prefix {text} PRIMARY KEY, \
                children BIGINT NOT NULL, \
                descendants BIGINT NOT NULL)"
        ),
    ];
    for statement in statements {
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(&mut *connection)
            .await?;
    }
    create_indexes(connection, table).await
}

/// The indexes of a collection table: children of a parent; keyset paging in
/// each column's order, over the whole table and among the children of one
/// parent; lookups of referring items. A column declared unindexed has none
/// (those an earlier declaration made are dropped).
async fn create_indexes(connection: &mut AnyConnection, table: &Table) -> Result<(), sqlx::Error> {
    let name = &table.name;
    let mut statements = vec![format!(
        "CREATE INDEX IF NOT EXISTS {name}_by_parent ON {name} (parent, uid)"
    )];
    for spec in table.columns {
        let column = spec.name;
        if table.unindexed.contains(&spec.field) {
            statements.push(format!("DROP INDEX IF EXISTS {name}_by_{column}"));
            statements.push(format!("DROP INDEX IF EXISTS {name}_by_parent_{column}"));
            continue;
        }
        statements.push(format!(
            "CREATE INDEX IF NOT EXISTS {name}_by_{column} ON {name} ({column}, uid)"
        ));
        statements.push(format!(
            "CREATE INDEX IF NOT EXISTS {name}_by_parent_{column} \
             ON {name} (parent, {column}, uid)"
        ));
    }
    for statement in statements {
        sqlx::query(sqlx::AssertSqlSafe(statement))
            .execute(&mut *connection)
            .await?;
    }
    Ok(())
}

/// Fills the counters of a table that has items but no counters yet (a
/// database created before counters existed).
async fn backfill_counts(
    connection: &mut AnyConnection,
    name: &str,
    parent_of: fn(&str) -> Option<&str>,
) -> Result<(), sqlx::Error> {
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
    let counts = super::table::Counts::of(uids.iter().map(String::as_str), parent_of);
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

/// Adds the columns a table's declaration has and the table lacks (a field
/// that became a column), filled from every stored item, with their indexes.
async fn add_missing_columns(
    connection: &mut AnyConnection,
    dialect: Dialect,
    types: &Types,
    table: &Table,
) -> Result<(), sqlx::Error> {
    let sql = match dialect {
        Dialect::Sqlite => "SELECT name FROM pragma_table_info($1)",
        Dialect::Postgres => {
            "SELECT CAST(column_name AS TEXT) FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = $1"
        }
    };
    let existing: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(table.name.clone())
        .fetch_all(&mut *connection)
        .await?;
    let missing: Vec<_> = table
        .columns
        .iter()
        .filter(|column| !existing.iter().any(|name| name == column.name))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let name = &table.name;
    for column in &missing {
        let (ty, default) = if column.integer {
            ("BIGINT", "0")
        } else {
            (types.text, "''")
        };
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "ALTER TABLE {name} ADD COLUMN {} {ty} NOT NULL DEFAULT {default}",
            column.name
        )))
        .execute(&mut *connection)
        .await?;
    }
    // Fill the new columns from each stored item.
    let fields: Vec<&str> = missing.iter().map(|column| column.field).collect();
    let assignments: Vec<String> = missing
        .iter()
        .enumerate()
        .map(|(i, column)| format!("{} = ${}", column.name, i + 2))
        .collect();
    let update = format!(
        "UPDATE {name} SET {} WHERE uid = $1",
        assignments.join(", ")
    );
    let rows: Vec<(String, Vec<u8>)> =
        sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT uid, body FROM {name}")))
            .fetch_all(&mut *connection)
            .await?;
    for (uid, body) in &rows {
        let values = (table.values_of)(body, &fields)
            .map_err(|error| sqlx::Error::Decode(Box::new(error)))?;
        let query = sqlx::query(sqlx::AssertSqlSafe(update.clone())).bind(uid.clone());
        values
            .into_iter()
            .fold(query, super::table::bind_value)
            .execute(&mut *connection)
            .await?;
    }
    create_indexes(connection, table).await?;
    tracing::info!(
        table = %name,
        columns = ?missing.iter().map(|column| column.name).collect::<Vec<_>>(),
        items = rows.len(),
        "added the columns of new row fields"
    );
    Ok(())
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
