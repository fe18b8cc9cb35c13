//! Storage of every collection in SQL (`runtime::sql`): embedded SQLite by
//! default, or PostgreSQL given a URL. This module only declares which
//! fields each collection keeps in columns of their own; the library
//! stores, pages, counts and checks the declared rules.

use std::path::Path;

use generated::platform::advisory::v2::Document;
use generated::platform::iam::v2::{Group, Identity, Role, RoleBinding};
use generated::platform::libraries::v2::Artifact;
use generated::platform::registry::v2::Repo;
use generated::platform::vulnerabilities::v2::Advisory;
use macros::StorageRow;
use runtime::sql::{SqlOptions, Table};

pub use runtime::sql::{Dialect, SqlStore};

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

/// The store's tables and the platform's own schema steps. Grants derive
/// from roles and role bindings, so their writes advance the access epoch.
fn options() -> SqlOptions {
    SqlOptions::new([
        Table::of::<GroupColumns>(),
        Table::of::<RoleColumns>().guarding_access(),
        Table::of::<IdentityColumns>(),
        Table::of::<RoleBindingColumns>().guarding_access(),
        Table::of::<RepoColumns>(),
        Table::of::<AdvisoryColumns>(),
        Table::of::<ArtifactColumns>(),
        Table::of::<DocumentColumns>(),
    ])
    .migrations(crate::bootstrap::MIGRATIONS.iter().copied())
}

/// Opens (creating if needed) the embedded database in `data_dir`.
pub async fn open_sqlite(data_dir: &Path) -> Result<SqlStore, sqlx::Error> {
    SqlStore::open_sqlite(&data_dir.join("platform.db"), options()).await
}

/// Connects to PostgreSQL at `url`.
pub async fn open_postgres(url: &str) -> Result<SqlStore, sqlx::Error> {
    SqlStore::open(url, options()).await
}
