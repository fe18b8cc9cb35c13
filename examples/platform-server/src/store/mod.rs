//! Storage of every collection in SQL: embedded SQLite by default, or
//! PostgreSQL given a URL. The generated storage traits are implemented by
//! delegating to one generic [`Table`], so a collection costs one table
//! description, not a backend's worth of code.
//!
//! Each table keeps the resource as its encoded protobuf (`body`) beside the
//! columns that queries need: `uid` (primary key; a subtree is a key range),
//! `parent` (indexed with `uid`, for `children_of`) and one column per
//! `order_by` field (each indexed with `uid`, for keyset paging).

mod schema;
mod sql;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use generated::platform::iam::v2::{Group, GroupStore};
use runtime::mask::Update;
use runtime::store::{ListQuery, Page, StoreError};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, ConnectOptions};

pub use sql::Table;

/// Which SQL database backs the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The platform's storage: one connection pool, one [`Table`] per collection.
#[derive(Clone, Debug)]
pub struct SqlStore {
    pool: AnyPool,
    backend: Backend,
}

const GROUPS: Table = Table {
    name: "groups",
    parent_table: Some("groups"),
    order_columns: &[
        ("name", "name"),
        ("createTime", "create_time"),
        ("updateTime", "update_time"),
    ],
    dependents: &[("groups", "iam.platform/Group")],
};

/// Every table, in creation order (for migrations).
const TABLES: &[&Table] = &[&GROUPS];

impl SqlStore {
    /// Opens (creating if needed) the embedded database in `data_dir`.
    pub async fn open_sqlite(data_dir: &Path) -> Result<Self, sqlx::Error> {
        let path = data_dir.join("platform.db");
        let url = format!("sqlite://{}?mode=rwc", path.display());
        Self::connect(&url, Backend::Sqlite).await
    }

    /// Connects to PostgreSQL at `url`.
    pub async fn open_postgres(url: &str) -> Result<Self, sqlx::Error> {
        Self::connect(url, Backend::Postgres).await
    }

    async fn connect(url: &str, backend: Backend) -> Result<Self, sqlx::Error> {
        sqlx::any::install_default_drivers();
        let options = AnyConnectOptions::from_str(url)?.disable_statement_logging();
        let pool = AnyPoolOptions::new()
            .max_connections(if backend == Backend::Sqlite { 4 } else { 16 })
            .acquire_timeout(Duration::from_secs(10))
            .after_connect(move |connection, _| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        for pragma in schema::SQLITE_PRAGMAS {
                            sqlx::query(*pragma).execute(&mut *connection).await?;
                        }
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await?;
        let store = SqlStore { pool, backend };
        schema::migrate(&store.pool, backend, TABLES).await?;
        Ok(store)
    }

    /// Closes every connection, waiting for running statements.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

impl GroupStore for SqlStore {
    async fn insert_group(&self, group: &Group) -> Result<(), StoreError> {
        GROUPS.insert(&self.pool, group).await
    }

    async fn get_group(&self, uid: &str) -> Result<Option<Group>, StoreError> {
        GROUPS.get(&self.pool, uid).await
    }

    async fn list_groups(&self, query: &ListQuery) -> Result<Page<Group>, StoreError> {
        GROUPS.list(&self.pool, query).await
    }

    async fn update_group(
        &self,
        uid: &str,
        update: &Update<Group>,
    ) -> Result<Option<Group>, StoreError> {
        GROUPS.update(&self.pool, self.backend, uid, update).await
    }

    async fn delete_group(&self, uid: &str, etag: Option<&str>) -> Result<bool, StoreError> {
        GROUPS.delete(&self.pool, self.backend, uid, etag).await
    }
}
