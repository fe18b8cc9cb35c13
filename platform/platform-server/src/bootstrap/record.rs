//! The bootstrap record: which root organization and platform administrator
//! every server on the database uses, and what remains to create. It lives
//! in the platform's own table beside the collections (schema version 2).

use protoapi_runtime::sql::{Migration, SqlStore};

/// The platform's own schema steps. Version 2 creates the record. A database
/// that already holds a bootstrap (from a release that kept the record in
/// the data directory, `bootstrap.json`, and nowhere in the database) gets
/// a record of an *earlier bootstrap* instead: no root and no administrator,
/// which the first server whose data directory names them adopts (see
/// [`adopt`]). Nothing else identifies them: names in the database are set
/// by users. Until the record is adopted, no server creates a second root.
///
/// Version 7 records the capabilities of the API the built-in roles were
/// last brought up to date with (`super::upgrade`).
pub const MIGRATIONS: &[Migration] = &[
    Migration::new(
        2,
        "bootstrap record",
        &[
            "CREATE TABLE platform_bootstrap (\
                id BIGINT PRIMARY KEY, \
                root TEXT NOT NULL, \
                admin TEXT NOT NULL, \
                plan TEXT NOT NULL, \
                complete BIGINT NOT NULL)",
            "INSERT INTO platform_bootstrap (id, root, admin, plan, complete) \
             SELECT 1, '', '', '{}', 0 WHERE EXISTS (SELECT 1 FROM groups)",
        ],
    ),
    Migration::new(
        7,
        "capabilities known",
        &["CREATE TABLE platform_capabilities (capability TEXT PRIMARY KEY)"],
    ),
];

/// The bootstrap record.
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

impl BootstrapRecord {
    /// Whether this records a bootstrap of an earlier release that no
    /// server has adopted yet: its root and administrator are named only
    /// by that release's `bootstrap.json`.
    pub fn is_earlier(&self) -> bool {
        self.root.is_empty()
    }
}

/// The bootstrap record, if a server has written one.
pub async fn read(store: &SqlStore) -> Result<Option<BootstrapRecord>, sqlx::Error> {
    let row: Option<(String, String, String, i64)> =
        sqlx::query_as("SELECT root, admin, plan, complete FROM platform_bootstrap WHERE id = 1")
            .fetch_optional(store.pool())
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
pub async fn claim(
    store: &SqlStore,
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
    .execute(store.pool())
    .await?;
    read(store).await?.ok_or(sqlx::Error::RowNotFound)
}

/// Records `root` and `admin` as the earlier bootstrap of the record, unless
/// another server adopted one first; returns the stored record.
pub async fn adopt(
    store: &SqlStore,
    root: &str,
    admin: &str,
) -> Result<BootstrapRecord, sqlx::Error> {
    sqlx::query(
        "UPDATE platform_bootstrap SET root = $1, admin = $2, plan = '{}', complete = 1 \
         WHERE id = 1 AND root = ''",
    )
    .bind(root.to_owned())
    .bind(admin.to_owned())
    .execute(store.pool())
    .await?;
    read(store).await?.ok_or(sqlx::Error::RowNotFound)
}

/// Marks the bootstrap record complete.
pub async fn complete(store: &SqlStore) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE platform_bootstrap SET complete = 1 WHERE id = 1")
        .execute(store.pool())
        .await?;
    Ok(())
}
