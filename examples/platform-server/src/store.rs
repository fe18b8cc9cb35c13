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
    ($($row:ident for $message:ident { $($(#[$meta:meta])* $field:ident: $ty:ty),* })*) => {$(
        #[derive(StorageRow)]
        #[row(message = $message)]
        pub struct $row {
            name: String,
            #[row(timestamp, output_only)]
            create_time: i64,
            #[row(timestamp, output_only)]
            update_time: i64,
            $($(#[$meta])* $field: $ty,)*
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
    // Anonymous callers list published documents only.
    DocumentColumns for Document { #[row(timestamp)] published: i64 }
}

/// The store's tables and the platform's own schema steps. Grants derive
/// from roles and role bindings, so their writes advance the access epochs
/// of the roles and of the identities bound.
fn options() -> SqlOptions {
    SqlOptions::new([
        Table::of::<GroupColumns>(),
        Table::of::<RoleColumns>().guarding_access(),
        Table::of::<IdentityColumns>(),
        Table::of::<RoleBindingColumns>().guarding_access_of("identity"),
        Table::of::<RepoColumns>(),
        Table::of::<AdvisoryColumns>(),
        Table::of::<ArtifactColumns>(),
        Table::of::<DocumentColumns>(),
    ])
    .migrations(crate::bootstrap::MIGRATIONS.iter().copied())
}

/// Opens (creating if needed) the embedded database in `data_dir`. Its
/// files are readable by their owner only: the database is created so
/// before SQLite opens it, and SQLite gives its journal (`-wal`) and shared
/// memory (`-shm`) files the database's permissions; files an earlier
/// release created readable by others are restricted first.
pub async fn open_sqlite(data_dir: &Path) -> Result<SqlStore, sqlx::Error> {
    let path = data_dir.join("platform.db");
    crate::private::own_file(&path)?;
    for suffix in ["-wal", "-shm"] {
        let mut name = path.clone().into_os_string();
        name.push(suffix);
        crate::private::restrict_file(Path::new(&name));
    }
    SqlStore::open_sqlite(&path, options()).await
}

/// Connects to PostgreSQL at `url`.
pub async fn open_postgres(url: &str) -> Result<SqlStore, sqlx::Error> {
    SqlStore::open(url, options()).await
}
