//! Forced deletes (AIP-135 `force`): an item and every item below it, in
//! one transaction.

use super::{Counts, Table, Tables, backend_error, begin_write};
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
    /// delete (which then removes it) or finds its parent gone. The access
    /// epochs of the item and of every removed item's subject advance in
    /// the same commit, as a plain delete's do.
    pub(crate) async fn delete_forced(
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
            .dependents_naming(store, &mut transaction, uid, false)
            .await?;
        if !dependents.is_empty() {
            return Err(StoreError::HasDependents(dependents));
        }
        let outcome = self.outcome_of(&mut transaction, uid).await?;
        let (start, end) = uidp::descendant_range(uid);
        let mut subjects = vec![subject];
        for table in self.descendant_tables(store)? {
            // Each removed item's access subject (its own key when the
            // table guards none: then unused), so that grants derived from
            // a removed binding or role go stale in this same commit.
            let subject_column = table.column(table.access_subject.unwrap_or("uid"));
            let sql = format!(
                "DELETE FROM {} WHERE uid >= $1 AND uid < $2 RETURNING uid, {subject_column}",
                table.name
            );
            let removed: Vec<(String, Option<String>)> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(start.clone())
                .bind(end.clone())
                .fetch_all(&mut *transaction)
                .await
                .map_err(backend_error)?;
            let counts = Counts::of(removed.iter().map(|(uid, _)| uid.as_str()), table.parent_of);
            table.add_counts(&mut transaction, &counts, -1).await?;
            for (removed, _) in &removed {
                table.deleted(&mut transaction, removed).await?;
            }
            if table.access_subject.is_some() {
                subjects.extend(removed.into_iter().map(|(_, subject)| subject));
            }
        }
        self.delete_row(&mut transaction, uid).await?;
        self.record(&mut transaction, || outcome).await?;
        self.commit(transaction, &subjects).await?;
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
