//! Storage of every collection in SQL: embedded SQLite by default, or
//! PostgreSQL given a URL. The generated storage traits are implemented by
//! delegating to one generic [`Table`], so a collection costs one table
//! description, not a backend's worth of code.
//!
//! Each table keeps the resource as its encoded protobuf (`body`) beside the
//! columns that queries need: `uid` (primary key; a subtree is a key range),
//! `parent` (indexed with `uid`, for `children_of`) and one column per
//! `order_by` field (each indexed with `uid`, for keyset paging).

mod grants;
mod schema;
mod sql;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use generated::platform::advisory::v2::{Document, DocumentStore};
use generated::platform::iam::v2::{
    Group, GroupStore, Identity, IdentityStore, Role, RoleBinding, RoleBindingStore, RoleStore,
};
use generated::platform::libraries::v2::{Artifact, ArtifactStore};
use generated::platform::registry::v2::{Repo, RepoStore};
use generated::platform::vulnerabilities::v2::{Advisory, AdvisoryStore};
use macros::StorageRow;
use runtime::auth::{Access, BoxFuture, Grants};
use runtime::mask::Update;
use runtime::store::{ListQuery, Page, StoreError};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, ConnectOptions};

pub use schema::BootstrapRecord;
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
    grants: std::sync::Arc<grants::GrantsCache>,
}

/// Declares row types keeping the standard `order_by` fields (name, times)
/// in columns, plus any extra fields of the message.
macro_rules! rows {
    ($($row:ident for $message:ident { $($field:ident: $ty:ty),* })*) => {$(
        #[derive(StorageRow)]
        #[row(message = $message)]
        pub struct $row {
            name: String,
            #[row(timestamp, output_only)]
            create_time: i64,
            #[row(timestamp, output_only)]
            update_time: i64,
            $($field: $ty,)*
        }
    )*};
}

rows! {
    GroupColumns for Group {}
    RoleColumns for Role {}
    IdentityColumns for Identity {}
    // Deleting a role or an identity, and finding an identity's grants, look
    // up the bindings that refer to it.
    RoleBindingColumns for RoleBinding { role: String, identity: String }
    // Anonymous callers list public repos only.
    RepoColumns for Repo { public: bool }
    AdvisoryColumns for Advisory { advisory_id: String }
    ArtifactColumns for Artifact {}
    DocumentColumns for Document {}
}

const GROUPS: Table = Table::new::<GroupColumns>("groups", "groups");
const ROLES: Table = Table::new::<RoleColumns>("roles", "roles").guarding_access();
const IDENTITIES: Table = Table::new::<IdentityColumns>("identities", "identities");
const ROLE_BINDINGS: Table =
    Table::new::<RoleBindingColumns>("role_bindings", "roleBindings").guarding_access();
const REPOS: Table = Table::new::<RepoColumns>("repos", "repos");
const ADVISORIES: Table = Table::new::<AdvisoryColumns>("advisories", "advisories");
const ARTIFACTS: Table = Table::new::<ArtifactColumns>("artifacts", "artifacts");
const DOCUMENTS: Table = Table::new::<DocumentColumns>("documents", "documents");

/// Every table, in creation order (for migrations).
const TABLES: &[&Table] = &[
    &GROUPS,
    &ROLES,
    &IDENTITIES,
    &ROLE_BINDINGS,
    &REPOS,
    &ADVISORIES,
    &ARTIFACTS,
    &DOCUMENTS,
];

/// The table of a collection.
fn table_of(collection: &str) -> &'static Table {
    TABLES
        .iter()
        .find(|table| table.collection == collection)
        .unwrap_or_else(|| panic!("no table stores collection `{collection}`"))
}

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
        let store = SqlStore {
            pool,
            backend,
            grants: Default::default(),
        };
        schema::migrate(&store.pool, backend, TABLES).await?;
        Ok(store)
    }

    /// Bulk-loads groups in one transaction (seeding, benchmarks). Parents
    /// are not checked; the caller loads them first.
    pub async fn import_groups(&self, groups: &[Group]) -> Result<(), StoreError> {
        GROUPS
            .import::<_, GroupColumns>(&self.pool, self.backend, groups)
            .await
    }

    /// Closes every connection, waiting for running statements.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Grants from role bindings, cached until a role or binding changes on any
/// server (`store::grants`).
impl Access for SqlStore {
    fn grants<'a>(&'a self, identity: &'a str) -> BoxFuture<'a, Result<Grants, runtime::Error>> {
        Box::pin(async move {
            self.grants
                .grants_of(&self.pool, identity)
                .await
                .map_err(runtime::Error::internal)
        })
    }
}

/// Implements a generated storage trait by delegating to the collection's table.
macro_rules! table_store {
    ($($store:ident for $resource:ident in $table:ident as $row:ident { $insert:ident, $get:ident, $list:ident, $update:ident, $delete:ident })*) => {$(
        impl $store for SqlStore {
            async fn $insert(&self, resource: &$resource) -> Result<(), StoreError> {
                $table.insert::<_, $row>(&self.pool, self.backend, resource).await
            }

            async fn $get(&self, uid: &str) -> Result<Option<$resource>, StoreError> {
                $table.get(&self.pool, uid).await
            }

            async fn $list(&self, query: &ListQuery) -> Result<Page<$resource>, StoreError> {
                $table.list(&self.pool, query).await
            }

            async fn $update(&self, uid: &str, update: &Update<$resource>) -> Result<Option<$resource>, StoreError> {
                $table.update::<_, $row>(&self.pool, self.backend, uid, update).await
            }

            async fn $delete(&self, uid: &str, etag: Option<&str>) -> Result<bool, StoreError> {
                $table.delete::<$resource>(&self.pool, self.backend, uid, etag).await
            }
        }
    )*};
}

table_store! {
    GroupStore for Group in GROUPS as GroupColumns { insert_group, get_group, list_groups, update_group, delete_group }
    RoleStore for Role in ROLES as RoleColumns { insert_role, get_role, list_roles, update_role, delete_role }
    IdentityStore for Identity in IDENTITIES as IdentityColumns {
        insert_identity, get_identity, list_identities, update_identity, delete_identity
    }
    RoleBindingStore for RoleBinding in ROLE_BINDINGS as RoleBindingColumns {
        insert_role_binding, get_role_binding, list_role_bindings, update_role_binding, delete_role_binding
    }
    RepoStore for Repo in REPOS as RepoColumns { insert_repo, get_repo, list_repos, update_repo, delete_repo }
    AdvisoryStore for Advisory in ADVISORIES as AdvisoryColumns {
        insert_advisory, get_advisory, list_advisories, update_advisory, delete_advisory
    }
    ArtifactStore for Artifact in ARTIFACTS as ArtifactColumns {
        insert_artifact, get_artifact, list_artifacts, update_artifact, delete_artifact
    }
    DocumentStore for Document in DOCUMENTS as DocumentColumns {
        insert_document, get_document, list_documents, update_document, delete_document
    }
}
