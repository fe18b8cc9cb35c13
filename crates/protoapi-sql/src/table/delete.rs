//! Deletes: the row locked and its etag checked, the declared dependents
//! refusing, the row removed and its ancestors' counts taken down. A forced
//! delete (`cascade`) takes the same steps around its range deletes.

use sqlx::{Any, Row};

use super::{Counts, Table, Tables, backend_error, begin_write, row_lock};
use protoapi_core::store::StoreError;

type Transaction = sqlx::Transaction<'static, Any>;

/// The dependents a delete found: up to ten of each kind, as
/// `(resource type, uid)`.
pub(super) type Dependents = Vec<(String, String)>;

impl Table {
    pub(crate) async fn delete(
        &self,
        store: &dyn Tables,
        uid: &str,
        etag: Option<&str>,
    ) -> Result<bool, StoreError> {
        let mut transaction = begin_write(store).await?;
        let Some(subject) = self
            .lock_for_delete(store, &mut transaction, uid, etag)
            .await?
        else {
            return Ok(false);
        };
        let dependents = self
            .dependents_naming(store, &mut transaction, uid, true)
            .await?;
        if !dependents.is_empty() {
            return Err(StoreError::HasDependents(dependents));
        }
        let outcome = self.outcome_of(&mut transaction, uid).await?;
        self.delete_row(&mut transaction, uid).await?;
        self.record(&mut transaction, || outcome).await?;
        self.commit(transaction, &[subject]).await?;
        Ok(true)
    }

    /// Locks the row of `uid` (`FOR UPDATE` on PostgreSQL, SQLite's write
    /// lock) and checks `etag` against it. `None` when there is no such
    /// item; else its access subject, when the table guards access.
    pub(super) async fn lock_for_delete(
        &self,
        store: &dyn Tables,
        transaction: &mut Transaction,
        uid: &str,
        etag: Option<&str>,
    ) -> Result<Option<Option<String>>, StoreError> {
        let lock = row_lock(store.dialect());
        // The access subject's column (the uid itself when the table guards
        // no access: then it is not used).
        let subject_column = self.column(self.access_subject.unwrap_or("uid"));
        let sql = format!(
            "SELECT etag, {subject_column} AS subject FROM {} WHERE uid = $1{lock}",
            self.name
        );
        let Some(row) = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(uid.to_owned())
            .fetch_optional(&mut **transaction)
            .await
            .map_err(backend_error)?
        else {
            return Ok(None);
        };
        let stored_etag: String = row.try_get("etag").map_err(backend_error)?;
        if etag.is_some_and(|etag| etag != stored_etag) {
            return Err(StoreError::EtagMismatch);
        }
        let subject = match self.access_subject {
            Some(_) => Some(row.try_get("subject").map_err(backend_error)?),
            None => None,
        };
        Ok(Some(subject))
    }

    /// Up to ten items of each declared dependent that name `uid`; children
    /// (dependents through `parent`) only with `children`.
    pub(super) async fn dependents_naming(
        &self,
        store: &dyn Tables,
        transaction: &mut Transaction,
        uid: &str,
        children: bool,
    ) -> Result<Dependents, StoreError> {
        let mut dependents = Vec::new();
        for dependent in self
            .dependents
            .iter()
            .filter(|d| children || d.field != "parent")
        {
            let table = store.table_of(dependent.resource_type)?;
            let sql = format!(
                "SELECT uid FROM {} WHERE {} = $1 ORDER BY uid LIMIT 10",
                table.name,
                table.column(dependent.field)
            );
            let uids: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(uid.to_owned())
                .fetch_all(&mut **transaction)
                .await
                .map_err(backend_error)?;
            let resource_type = dependent.resource_type;
            dependents.extend(uids.into_iter().map(|uid| (resource_type.to_owned(), uid)));
        }
        Ok(dependents)
    }

    /// Deletes the row of `uid` and takes it off its ancestors' counts.
    pub(super) async fn delete_row(
        &self,
        transaction: &mut Transaction,
        uid: &str,
    ) -> Result<(), StoreError> {
        let sql = format!("DELETE FROM {} WHERE uid = $1", self.name);
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(uid.to_owned())
            .execute(&mut **transaction)
            .await
            .map_err(backend_error)?;
        self.add_counts(transaction, &Counts::of([uid], self.parent_of), -1)
            .await?;
        self.deleted(transaction, uid).await
    }

    /// Runs the application's work for item `uid`, deleted in `transaction`.
    pub(super) async fn deleted(
        &self,
        transaction: &mut Transaction,
        uid: &str,
    ) -> Result<(), StoreError> {
        match &self.on_delete.0 {
            Some(effect) => effect
                .deleted(transaction, uid)
                .await
                .map_err(backend_error),
            None => Ok(()),
        }
    }
}
