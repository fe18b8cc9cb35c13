//! AIP-151 operations in table `operations` (schema version 6): ended with
//! a compare-and-set on `done`, which the write ending one runs in its own
//! transaction (`table::request_ids`), so that an operation reads done
//! exactly when its write is made, and a cancelled or abandoned one undoes
//! a late write.

use protoapi_core::operation::{OperationStore, RETENTION, StoredOperation};
use protoapi_core::request_id::{Recorded, RequestId};
use protoapi_core::store::StoreError;
use sqlx::Row;

use crate::SqlStore;
use crate::fault::store_error;

const COLUMNS: &str = "name, resource_type, target, verb, done, lease, body";

/// Ended operations forgotten by each insert, at most.
const SWEEP: i64 = 16;

fn stored(row: &sqlx::any::AnyRow) -> Result<StoredOperation, sqlx::Error> {
    Ok(StoredOperation {
        name: row.try_get("name")?,
        resource_type: row.try_get("resource_type")?,
        target: row.try_get("target")?,
        verb: row.try_get("verb")?,
        done: row.try_get::<i64, _>("done")? != 0,
        lease: row.try_get("lease")?,
        body: row.try_get("body")?,
    })
}

impl OperationStore for SqlStore {
    async fn insert_operation(&self, operation: &StoredOperation) -> Result<(), StoreError> {
        let retention = i64::try_from(RETENTION.as_micros()).unwrap_or(i64::MAX);
        sqlx::query(
            "DELETE FROM operations WHERE name IN (SELECT name FROM operations \
             WHERE done = 1 AND lease < $1 ORDER BY lease LIMIT $2)",
        )
        .bind(protoapi_core::time::now_micros().saturating_sub(retention))
        .bind(SWEEP)
        .execute(self.pool())
        .await
        .map_err(store_error)?;
        let sql = format!("INSERT INTO operations ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)");
        let mut transaction = self.pool().begin().await.map_err(store_error)?;
        let inserted = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(operation.name.clone())
            .bind(operation.resource_type.clone())
            .bind(operation.target.clone())
            .bind(operation.verb.clone())
            .bind(i64::from(operation.done))
            .bind(operation.lease)
            .bind(operation.body.clone())
            .execute(&mut *transaction)
            .await;
        match inserted {
            Ok(_) => {}
            Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
                return Err(StoreError::AlreadyExists);
            }
            Err(error) => return Err(store_error(error)),
        }
        if let Some(id) = RequestId::current() {
            let name = operation.name.as_bytes().to_vec();
            crate::table::request_ids::record_under(&mut transaction, &id, name).await?;
        }
        transaction.commit().await.map_err(store_error)
    }

    async fn operation_started_under(&self, key: &str) -> Result<Option<Recorded>, StoreError> {
        crate::table::request_ids::recorded(self, key).await
    }

    async fn get_operation(&self, name: &str) -> Result<Option<StoredOperation>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM operations WHERE name = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(name.to_owned())
            .fetch_optional(self.pool())
            .await
            .map_err(store_error)?;
        row.as_ref().map(stored).transpose().map_err(store_error)
    }

    async fn list_operations(
        &self,
        prefix: &str,
        after: &str,
        limit: usize,
    ) -> Result<Vec<StoredOperation>, StoreError> {
        // Names under `prefix` sort between it and the prefix with its last
        // character (`/`) advanced (`0`).
        let end = format!("{}0", prefix.strip_suffix('/').unwrap_or(prefix));
        let sql = format!(
            "SELECT {COLUMNS} FROM operations WHERE name >= $1 AND name > $2 AND name < $3 \
             ORDER BY name LIMIT $4"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(prefix.to_owned())
            .bind(after.to_owned())
            .bind(end)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(self.pool())
            .await
            .map_err(store_error)?;
        rows.iter()
            .map(stored)
            .collect::<Result<_, _>>()
            .map_err(store_error)
    }

    async fn finish_operation(&self, name: &str, body: &[u8]) -> Result<bool, StoreError> {
        let ended =
            sqlx::query("UPDATE operations SET done = 1, body = $2 WHERE name = $1 AND done = 0")
                .bind(name.to_owned())
                .bind(body.to_vec())
                .execute(self.pool())
                .await
                .map_err(store_error)?;
        Ok(ended.rows_affected() > 0)
    }

    async fn renew_operation(&self, name: &str, lease: i64) -> Result<(), StoreError> {
        sqlx::query("UPDATE operations SET lease = $2 WHERE name = $1 AND done = 0")
            .bind(name.to_owned())
            .bind(lease)
            .execute(self.pool())
            .await
            .map_err(store_error)?;
        Ok(())
    }

    async fn delete_operation(&self, name: &str) -> Result<bool, StoreError> {
        let deleted = sqlx::query("DELETE FROM operations WHERE name = $1")
            .bind(name.to_owned())
            .execute(self.pool())
            .await
            .map_err(store_error)?;
        Ok(deleted.rows_affected() > 0)
    }
}
