//! Storage of every collection in SQL (`protoapi_runtime::sql`): embedded SQLite by
//! default, or PostgreSQL given a URL. The generated crate declares the
//! tables (which fields each collection keeps in columns of their own, and
//! which writes advance access epochs); the library stores, pages, counts
//! and checks the declared rules.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use platform_api::platform::registry::v2::{Image, Repo};
use protoapi_runtime::resource::Resource;
use protoapi_runtime::sql::SqlOptions;

use crate::registry;

pub use protoapi_runtime::sql::{Dialect, SqlStore};

/// The schema versions of the registry's tables (this one and the next).
const REGISTRY_SCHEMA: i64 = 100;

/// The API's tables (their row types generated from the annotation files),
/// the platform's own schema steps and the registry's tables, with a pool
/// acquire timeout when not the default
/// (`protoapi_runtime::sql::DEFAULT_ACQUIRE_TIMEOUT`).
fn options_with(dialect: Dialect, acquire_timeout: Option<Duration>) -> SqlOptions {
    let migrations = crate::bootstrap::MIGRATIONS.iter().copied().chain(
        protoapi_runtime::registry::index::migrations(REGISTRY_SCHEMA, dialect),
    );
    let options = SqlOptions::new(platform_api::tables())
        .migrations(migrations)
        .on_delete(<Image as Resource>::TYPE, Arc::new(registry::ImageDeletes))
        .on_delete(<Repo as Resource>::TYPE, Arc::new(registry::RepoDeletes));
    match acquire_timeout {
        Some(timeout) => options.acquire_timeout(timeout),
        None => options,
    }
}

/// Opens (creating if needed) the embedded database in `data_dir`,
/// readable by its owner only (`SqlStore::open_sqlite`).
pub async fn open_sqlite(data_dir: &Path) -> Result<SqlStore, sqlx::Error> {
    open_sqlite_with(data_dir, None).await
}

/// [`open_sqlite`] with a pool acquire timeout.
pub async fn open_sqlite_with(
    data_dir: &Path,
    acquire_timeout: Option<Duration>,
) -> Result<SqlStore, sqlx::Error> {
    SqlStore::open_sqlite(
        &data_dir.join("platform.db"),
        options_with(Dialect::Sqlite, acquire_timeout),
    )
    .await
}

/// Connects to PostgreSQL at `url`.
pub async fn open_postgres(url: &str) -> Result<SqlStore, sqlx::Error> {
    open_postgres_with(url, None).await
}

/// [`open_postgres`] with a pool acquire timeout.
pub async fn open_postgres_with(
    url: &str,
    acquire_timeout: Option<Duration>,
) -> Result<SqlStore, sqlx::Error> {
    SqlStore::open(url, options_with(Dialect::Postgres, acquire_timeout)).await
}

/// Sets the storage pool's gauges before each render of `metrics`:
/// `storage_pool_connections` (open) and `storage_pool_idle_connections`.
pub fn sample_pool(store: &SqlStore, metrics: &protoapi_runtime::observe::Metrics) {
    let pool = store.pool().clone();
    metrics::describe_gauge!(
        "storage_pool_connections",
        "Connections the storage pool holds open"
    );
    metrics::describe_gauge!(
        "storage_pool_idle_connections",
        "Open connections of the storage pool that no request uses"
    );
    metrics.sample_with(move || {
        metrics::gauge!("storage_pool_connections").set(f64::from(pool.size()));
        metrics::gauge!("storage_pool_idle_connections").set(pool.num_idle() as f64);
    });
}
