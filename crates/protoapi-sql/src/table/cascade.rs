//! Forced deletes (AIP-135 `force`): an item and every item below it, in
//! one transaction.

use super::{Counts, Table, Tables, backend_error, begin_write, row_lock};
use protoapi_core::store::StoreError;
use protoapi_core::uidp;

impl Table {
    /// Deletes the item `uid` and, in every table that names this one's
    /// items (or their descendants') their parent, every item whose key
    /// lies below it (a key range: no scan). Dependents other than children
    /// (reference fields) still refuse the delete, changing nothing.
    ///
    /// The item's row is locked first (`FOR UPDATE` on PostgreSQL, SQLite's
    /// write lock), so a create under it either commits before the range
    /// delete (which then removes it) or finds its parent gone.
    pub(crate) async fn delete_forced(
        &self,
        store: &dyn Tables,
        uid: &str,
        etag: Option<&str>,
    ) -> Result<bool, StoreError> {
        let mut transaction = begin_write(store).await?;
        let lock = row_lock(store.dialect());
        let sql = format!("SELECT etag FROM {} WHERE uid = $1{lock}", self.name);
        let Some(stored_etag) = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql))
            .bind(uid.to_owned())
            .fetch_optional(&mut *transaction)
            .await
            .map_err(backend_error)?
        else {
            return Ok(false);
        };
        if etag.is_some_and(|etag| etag != stored_etag) {
            return Err(StoreError::EtagMismatch);
        }
        let mut dependents = Vec::new();
        for dependent in self.dependents.iter().filter(|d| d.field != "parent") {
            let table = store.table_of(dependent.resource_type)?;
            let sql = format!(
                "SELECT uid FROM {} WHERE {} = $1 ORDER BY uid LIMIT 10",
                table.name,
                table.column(dependent.field)
            );
            let uids: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(uid.to_owned())
                .fetch_all(&mut *transaction)
                .await
                .map_err(backend_error)?;
            dependents.extend(
                uids.into_iter()
                    .map(|uid| (dependent.resource_type.to_owned(), uid)),
            );
        }
        if !dependents.is_empty() {
            return Err(StoreError::HasDependents(dependents));
        }
        let (start, end) = uidp::descendant_range(uid);
        for table in self.descendant_tables(store)? {
            let sql = format!(
                "DELETE FROM {} WHERE uid >= $1 AND uid < $2 RETURNING uid",
                table.name
            );
            let uids: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .bind(start.clone())
                .bind(end.clone())
                .fetch_all(&mut *transaction)
                .await
                .map_err(backend_error)?;
            let counts = Counts::of(uids.iter().map(String::as_str), table.parent_of);
            table.add_counts(&mut transaction, &counts, -1).await?;
        }
        let sql = format!("DELETE FROM {} WHERE uid = $1", self.name);
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(uid.to_owned())
            .execute(&mut *transaction)
            .await
            .map_err(backend_error)?;
        self.add_counts(&mut transaction, &Counts::of([uid], self.parent_of), -1)
            .await?;
        self.commit(transaction, &[]).await?;
        Ok(true)
    }

    /// The tables whose items live below this table's, through declared
    /// parents (children, their children, ...), each once.
    fn descendant_tables<'s>(&self, store: &'s dyn Tables) -> Result<Vec<&'s Table>, StoreError> {
        let mut tables: Vec<&Table> = Vec::new();
        let mut pending: Vec<&'static str> = children(self);
        while let Some(resource_type) = pending.pop() {
            let table = store.table_of(resource_type)?;
            if tables.iter().any(|t| t.name == table.name) {
                continue;
            }
            pending.extend(children(table));
            tables.push(table);
        }
        Ok(tables)
    }
}

/// The resource types whose items name an item of `table` their parent.
fn children(table: &Table) -> Vec<&'static str> {
    table
        .dependents
        .iter()
        .filter(|d| d.field == "parent")
        .map(|d| d.resource_type)
        .collect()
}
