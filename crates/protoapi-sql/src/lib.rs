//! Storage of any generated API in SQL: embedded SQLite, or PostgreSQL
//! given a URL.
//!
//! Per resource a row type names the fields kept in columns of their own:
//! a generated API has one per resource, from its annotation files, and
//! lists them in its `tables()`; `#[derive(Row)]` (crate `protoapi-macros`)
//! declares one by hand. A [`SqlStore`] opens with one [`Table`] per row
//! type (`SqlOptions::new(tables())`). The store
//! implements [`Backend`], so every generated storage trait is implemented
//! for it: no SQL, paging or counting code is written per API.
//!
//! Each table keeps the resource as its encoded protobuf (`body`) beside the
//! columns that queries need: `uid` (primary key; a subtree is a key range),
//! `parent` (indexed with `uid`, for `children_of`), one column per declared
//! row field (each indexed with `uid`, for keyset paging and lookups of
//! dependents) and `etag`. A `<table>_counts` table keeps item counts per
//! uid prefix, so the `totalCount` of a hierarchy filter is one lookup.
//!
//! The rules each resource declares hold inside the write's transaction:
//! its parent (of `Resource::PARENT_TYPE`) and the targets of its
//! references must exist on insert, declared dependents block deletes.
//!
//! Tables marked as guarding access keep access epochs, so that caches of
//! access decisions on every server sharing the database know when they are
//! stale: [`GrantsCache`] keeps each identity's grants from its bindings and
//! their roles this way, and [`StoredAccess`] answers the authorizer from it.
//!
//! Storage faults are told apart from other failures (`fault`): a
//! database that cannot be reached, or no connection free within the
//! acquire timeout ([`SqlOptions::acquire_timeout`], default
//! [`DEFAULT_ACQUIRE_TIMEOUT`]), is [`StoreError::Unavailable`]; a write
//! refused for want of space is [`StoreError::Full`]. The store is a
//! [`Readiness`] check too: `SELECT 1`, bounded by its timeout.

mod budget;
mod dialect;
mod direct;
mod fault;
#[cfg(feature = "flags")]
mod flags;
mod grants;
mod on_delete;
mod operations;
mod schema;
mod table;

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, ConnectOptions, Connection, Row};

use futures_util::future::BoxFuture;
use protoapi_core::mask::Update;
use protoapi_core::request_id::Recorded;
use protoapi_core::resource::Resource;
use protoapi_core::store::{Backend, ListQuery, Page, StoreError};
use protoapi_http::probe::Readiness;

pub use budget::FilterBudget;
pub use dialect::Dialect;
#[cfg(feature = "flags")]
pub use flags::StorageFlags;
pub use grants::{GrantsCache, GrantsEntry, StoredAccess, read_grants};
pub use on_delete::OnDelete;
pub use schema::Migration;
/// Why a store could not open (connection, migration, or declarations that
/// cannot keep the declared rules).
pub use sqlx::Error;
pub use table::{AccessRead, Table};

/// Every collection of an API in one SQL database: one connection pool, one
/// [`Table`] per resource type.
#[derive(Clone, Debug)]
pub struct SqlStore {
    pool: AnyPool,
    dialect: Dialect,
    /// By resource type (`Resource::TYPE`), as rules name them.
    tables: Arc<HashMap<&'static str, Table>>,
    /// Point reads of an SQLite file on the calling thread (`direct`).
    direct: Option<Arc<direct::DirectReads>>,
    filter_budget: FilterBudget,
}

/// How a [`SqlStore`] is opened.
#[derive(Debug)]
pub struct SqlOptions {
    tables: Vec<Table>,
    migrations: Vec<Migration>,
    max_connections: Option<u32>,
    acquire_timeout: Duration,
    filter_budget: FilterBudget,
    on_delete: Vec<(&'static str, on_delete::Effect)>,
}

/// How long a statement waits for a free connection (or for a new one to
/// connect) before the store answers [`StoreError::Unavailable`].
pub const DEFAULT_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(2);

impl SqlOptions {
    /// A store of these tables.
    pub fn new(tables: impl IntoIterator<Item = Table>) -> Self {
        SqlOptions {
            tables: tables.into_iter().collect(),
            migrations: Vec::new(),
            max_connections: None,
            acquire_timeout: DEFAULT_ACQUIRE_TIMEOUT,
            filter_budget: FilterBudget::default(),
            on_delete: Vec::new(),
        }
    }

    /// Runs `effect` in the transaction of every delete of an item of
    /// `resource_type` (`Resource::TYPE`), after its row is gone.
    pub fn on_delete(
        mut self,
        resource_type: &'static str,
        effect: std::sync::Arc<dyn OnDelete>,
    ) -> Self {
        self.on_delete
            .push((resource_type, on_delete::Effect(Some(effect))));
        self
    }

    /// What a filtered list's statement may examine (default
    /// [`FilterBudget::default`]).
    pub fn filter_budget(mut self, budget: FilterBudget) -> Self {
        self.filter_budget = budget;
        self
    }

    /// Adds the application's own numbered schema steps (tables outside
    /// the API's collections), applied in order with the library's.
    pub fn migrations(mut self, migrations: impl IntoIterator<Item = Migration>) -> Self {
        self.migrations.extend(migrations);
        self
    }

    /// Connections at most (default: 4 on SQLite, 16 on PostgreSQL).
    pub fn max_connections(mut self, connections: u32) -> Self {
        self.max_connections = Some(connections);
        self
    }

    /// How long a statement waits for a connection before the store
    /// answers [`StoreError::Unavailable`] (default
    /// [`DEFAULT_ACQUIRE_TIMEOUT`]; also bounds [`SqlStore::open`]'s
    /// first connection).
    pub fn acquire_timeout(mut self, timeout: Duration) -> Self {
        self.acquire_timeout = timeout;
        self
    }
}

/// Per-connection settings of the embedded database: waiting instead of
/// failing when another connection holds the write lock, write-ahead logging
/// (readers never block the writer), and durable commits.
const SQLITE_PRAGMAS: &[&str] = &[
    "PRAGMA busy_timeout = 10000",
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = FULL",
];

impl SqlStore {
    /// Opens the database at `url` (`sqlite://path?mode=rwc` or
    /// `postgres://…`), brings its schema up to date under a lock (see
    /// [`Migration`]) and checks that every rule of every table can be kept:
    /// parents, references and dependents name stored resource types, and
    /// each field that `order_by`, filters or dependents name has a column.
    pub async fn open(url: &str, options: SqlOptions) -> Result<Self, sqlx::Error> {
        let dialect = if url.starts_with("sqlite:") {
            Dialect::Sqlite
        } else {
            Dialect::Postgres
        };
        let mut tables: HashMap<&'static str, Table> = options
            .tables
            .into_iter()
            .map(|table| (table.resource_type, table))
            .collect();
        for (resource_type, effect) in options.on_delete {
            let table = tables.get_mut(resource_type).ok_or_else(|| {
                sqlx::Error::Configuration(
                    format!("on_delete names {resource_type}, which has no table").into(),
                )
            })?;
            table.on_delete = effect;
        }
        table::check_rules(&tables)
            .map_err(|problem| sqlx::Error::Configuration(problem.into()))?;
        sqlx::any::install_default_drivers();
        let connect = AnyConnectOptions::from_str(url)?.disable_statement_logging();
        let pool = AnyPoolOptions::new()
            .max_connections(options.max_connections.unwrap_or(match dialect {
                Dialect::Sqlite => 4,
                Dialect::Postgres => 16,
            }))
            .acquire_timeout(options.acquire_timeout)
            .after_connect(move |connection, _| {
                Box::pin(async move {
                    if dialect == Dialect::Sqlite {
                        for pragma in SQLITE_PRAGMAS {
                            sqlx::query(*pragma).execute(&mut *connection).await?;
                        }
                    }
                    Ok(())
                })
            })
            .after_release(move |connection, _| {
                Box::pin(async move {
                    // A SQLite commit that fails on a full disk rolls the
                    // transaction back itself; the driver's own rollback then
                    // fails and it keeps counting the transaction as open, so
                    // the connection could never begin another. Such a
                    // connection is closed rather than pooled (the ping runs
                    // the driver's pending rollback first).
                    if dialect == Dialect::Sqlite {
                        connection.ping().await?;
                        return Ok(!connection.is_in_transaction());
                    }
                    Ok(true)
                })
            })
            .connect_with(connect)
            .await?;
        let store = SqlStore {
            pool,
            dialect,
            tables: Arc::new(tables),
            direct: match dialect {
                Dialect::Sqlite => direct::DirectReads::of(url).map(Arc::new),
                Dialect::Postgres => None,
            },
            filter_budget: options.filter_budget,
        };
        schema::migrate(&store, &options.migrations).await?;
        Ok(store)
    }

    /// Opens (creating if needed) the SQLite database file at `path`. Its
    /// files are readable by their owner only: the database is created so
    /// before SQLite opens it, and SQLite gives its journal (`-wal`) and
    /// shared memory (`-shm`) files the database's permissions; files an
    /// earlier release created readable by others are restricted first.
    pub async fn open_sqlite(
        path: &std::path::Path,
        options: SqlOptions,
    ) -> Result<Self, sqlx::Error> {
        protoapi_core::owner_only::own_file(path)?;
        for suffix in ["-wal", "-shm"] {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            protoapi_core::owner_only::restrict_file(std::path::Path::new(&name));
        }
        Self::open(&format!("sqlite://{}?mode=rwc", path.display()), options).await
    }

    /// The connection pool, for the application's own tables.
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The table of a resource type (every one a rule names is checked at
    /// open).
    fn table<R: Resource>(&self) -> Result<&Table, StoreError> {
        self.table_of(R::TYPE)
    }

    fn table_of(&self, resource_type: &str) -> Result<&Table, StoreError> {
        self.tables
            .get(resource_type)
            .ok_or(StoreError::Unimplemented)
    }

    /// Every item of `R` whose column for `field` (JSON name) holds `value`,
    /// in uid order (e.g. the bindings of one identity).
    pub async fn find_by<R: Resource>(
        &self,
        field: &str,
        value: &str,
    ) -> Result<Vec<R>, StoreError> {
        self.table::<R>()?.find_by(self, field, value).await
    }

    /// Inserts many new items in one transaction, without checking parents,
    /// references or uniqueness (bulk loading; the caller guarantees them).
    pub async fn import<R: Resource>(&self, resources: &[R]) -> Result<(), StoreError> {
        self.table::<R>()?.import(self, resources).await
    }

    /// The access epochs of `subjects`, in their order (0 for a subject
    /// never written): counters every write of a table marked
    /// [`Table::guarding_access`] advances for the subjects it touches in
    /// its own transaction, so caches of access decisions on every server
    /// sharing the database know when they are stale. One statement.
    pub async fn access_epochs(&self, subjects: &[&str]) -> Result<Vec<i64>, StoreError> {
        if subjects.is_empty() {
            return Ok(Vec::new());
        }
        let placeholders: Vec<String> = (1..=subjects.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT subject, epoch FROM access_epochs WHERE subject IN ({})",
            placeholders.join(", ")
        );
        let direct = self.direct.as_deref().and_then(|direct| {
            direct.read(|connection| {
                let mut statement = connection.prepare_cached(&sql)?;
                let rows = statement.query_map(rusqlite::params_from_iter(subjects), |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
                })?;
                rows.collect::<rusqlite::Result<HashMap<String, i64>>>()
            })
        });
        let epochs = match direct {
            Some(epochs) => epochs,
            None => self.pooled_epochs(&sql, subjects).await?,
        };
        Ok(subjects
            .iter()
            .map(|subject| epochs.get(*subject).copied().unwrap_or(0))
            .collect())
    }

    /// The epochs `sql` reads for `subjects`, through the pool.
    async fn pooled_epochs(
        &self,
        sql: &str,
        subjects: &[&str],
    ) -> Result<HashMap<String, i64>, StoreError> {
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()));
        for subject in subjects {
            query = query.bind((*subject).to_owned());
        }
        let rows = query
            .fetch_all(&self.pool)
            .await
            .map_err(StoreError::backend)?;
        let mut epochs = HashMap::with_capacity(rows.len());
        for row in &rows {
            let subject: String = row.try_get("subject").map_err(StoreError::backend)?;
            let epoch: i64 = row.try_get("epoch").map_err(StoreError::backend)?;
            epochs.insert(subject, epoch);
        }
        Ok(epochs)
    }

    /// What access decisions about `subject` derive from (e.g. the role
    /// bindings of an identity, `R`, whose `field` holds it, each with the
    /// role of `T` its `via` field names), with the access epochs of
    /// `subject` and of each target, read in one statement so that they are
    /// consistent: a write committed after it advances an epoch read here.
    pub async fn access_read<R: Resource, T: Resource>(
        &self,
        field: &str,
        via: &str,
        subject: &str,
    ) -> Result<AccessRead<R, T>, StoreError> {
        let target = self.table::<T>()?;
        self.table::<R>()?
            .access_read(self, target, field, via, subject)
            .await
    }

    /// The applied schema versions, in order.
    pub async fn schema_versions(&self) -> Result<Vec<i64>, sqlx::Error> {
        sqlx::query_scalar("SELECT version FROM schema_migrations ORDER BY version")
            .fetch_all(&self.pool)
            .await
    }

    /// Closes every connection, waiting for running statements.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

impl table::Tables for SqlStore {
    fn pool(&self) -> &AnyPool {
        &self.pool
    }

    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn table_of(&self, resource_type: &str) -> Result<&Table, StoreError> {
        self.table_of(resource_type)
    }

    fn tables(&self) -> Vec<&Table> {
        self.tables.values().collect()
    }

    fn direct(&self) -> Option<&direct::DirectReads> {
        self.direct.as_deref()
    }

    fn filter_budget(&self) -> FilterBudget {
        self.filter_budget
    }
}

/// Ready when the database answers `SELECT 1` within the acquire timeout;
/// otherwise `UNAVAILABLE` (`STORAGE_UNAVAILABLE`) with a retry delay, the
/// cause logged only.
impl Readiness for SqlStore {
    fn check(&self) -> BoxFuture<'_, Result<(), protoapi_core::Error>> {
        Box::pin(async move {
            sqlx::query("SELECT 1")
                .execute(&self.pool)
                .await
                .map(drop)
                .map_err(|error| protoapi_core::Error::from(fault::store_error(error)))
        })
    }
}

impl Backend for SqlStore {
    fn keeps(&self, resource_type: &str) -> bool {
        self.tables.contains_key(resource_type)
    }

    fn dry_runs(&self) -> bool {
        true
    }

    async fn insert<R: Resource>(&self, resource: &R) -> Result<(), StoreError> {
        self.table::<R>()?.insert(self, resource).await
    }

    async fn get<R: Resource>(&self, uid: &str) -> Result<Option<R>, StoreError> {
        self.table::<R>()?.get(self, uid).await
    }

    async fn list<R: Resource>(&self, query: &ListQuery) -> Result<Page<R>, StoreError> {
        self.table::<R>()?.list(self, query).await
    }

    async fn update<R: Resource>(
        &self,
        uid: &str,
        update: &Update<R>,
    ) -> Result<Option<R>, StoreError> {
        self.table::<R>()?.update(self, uid, update).await
    }

    async fn delete<R: Resource>(&self, uid: &str, etag: Option<&str>) -> Result<bool, StoreError> {
        self.table::<R>()?.delete(self, uid, etag).await
    }

    async fn delete_forced<R: Resource>(
        &self,
        uid: &str,
        etag: Option<&str>,
    ) -> Result<bool, StoreError> {
        self.table::<R>()?.delete_forced(self, uid, etag).await
    }

    async fn recorded(&self, key: &str) -> Result<Option<Recorded>, StoreError> {
        table::request_ids::recorded(self, key).await
    }
}
