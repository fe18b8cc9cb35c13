//! Schema creation at start-up; idempotent, so every start runs it.

use sqlx::AnyPool;

use super::{Backend, Table};

/// Per-connection settings of the embedded database: write-ahead logging
/// (readers never block the writer), durable commits, and waiting instead of
/// failing when another connection holds the write lock.
pub const SQLITE_PRAGMAS: &[&str] = &[
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
    "PRAGMA busy_timeout = 10000",
];

pub async fn migrate(
    pool: &AnyPool,
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
        let order_columns: String = table
            .columns
            .iter()
            .map(|(json, column)| {
                let ty = if json.ends_with("Time") {
                    "BIGINT"
                } else {
                    text
                };
                format!("{column} {ty} NOT NULL, ")
            })
            .collect();
        let create = format!(
            "CREATE TABLE IF NOT EXISTS {name} (\
                uid {text} PRIMARY KEY, \
                parent {text} NOT NULL, \
                {order_columns}\
                etag {text} NOT NULL, \
                body {blob} NOT NULL)"
        );
        sqlx::query(sqlx::AssertSqlSafe(create))
            .execute(pool)
            .await?;
        let mut indexes = vec![format!(
            "CREATE INDEX IF NOT EXISTS {name}_by_parent ON {name} (parent, uid)"
        )];
        // Keyset paging in each order: over the whole table, and among the
        // children of one parent.
        for (_, column) in table.columns {
            indexes.push(format!(
                "CREATE INDEX IF NOT EXISTS {name}_by_{column} ON {name} ({column}, uid)"
            ));
            indexes.push(format!(
                "CREATE INDEX IF NOT EXISTS {name}_by_parent_{column} ON {name} (parent, {column}, uid)"
            ));
        }
        for index in indexes {
            sqlx::query(sqlx::AssertSqlSafe(index))
                .execute(pool)
                .await?;
        }
    }
    Ok(())
}
