//! Schema creation at start-up; idempotent, so every start runs it.

use sqlx::{AnyConnection, AnyPool};

use super::{Backend, Table};

/// Per-connection settings of the embedded database: write-ahead logging
/// (readers never block the writer), durable commits, and waiting instead of
/// failing when another connection holds the write lock.
pub const SQLITE_PRAGMAS: &[&str] = &[
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
    "PRAGMA busy_timeout = 10000",
];

/// Key of the PostgreSQL advisory lock serialising concurrent migrations.
const MIGRATION_LOCK: i64 = 0x706c_6174_666f_726d;

pub async fn migrate(
    pool: &AnyPool,
    backend: Backend,
    tables: &[&Table],
) -> Result<(), sqlx::Error> {
    let mut connection = pool.acquire().await?;
    if backend == Backend::Postgres {
        // Servers starting together must not race on `CREATE ... IF NOT EXISTS`.
        sqlx::query("SELECT pg_advisory_lock($1)")
            .bind(MIGRATION_LOCK)
            .execute(&mut *connection)
            .await?;
    }
    let result = create_tables(&mut connection, backend, tables).await;
    if backend == Backend::Postgres {
        sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(MIGRATION_LOCK)
            .execute(&mut *connection)
            .await?;
    }
    result
}

async fn create_tables(
    connection: &mut AnyConnection,
    backend: Backend,
    tables: &[&Table],
) -> Result<(), sqlx::Error> {
    // Byte-wise text order everywhere: uid subtrees are key ranges.
    let (text, blob) = match backend {
        Backend::Sqlite => ("TEXT", "BLOB"),
        Backend::Postgres => ("TEXT COLLATE \"C\"", "BYTEA"),
    };
    for table in tables {
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
        backfill_counts(connection, name).await?;
    }
    Ok(())
}

/// Fills the counters of a table that has items but no counters yet (a
/// database created before counters existed).
async fn backfill_counts(connection: &mut AnyConnection, name: &str) -> Result<(), sqlx::Error> {
    let counters: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT COUNT(*) FROM {name}_counts"
    )))
    .fetch_one(&mut *connection)
    .await?;
    if counters > 0 {
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
