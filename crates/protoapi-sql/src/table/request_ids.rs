//! AIP-155 request ids in SQL: the outcome of a write recorded in the
//! write's own transaction under the current request id
//! ([`RequestId::current`]), in table `request_ids` (schema version 5), and
//! read back for a retry; and the end of the current AIP-151 operation,
//! in the same transaction.

use super::{Table, Tables, backend_error, read_direct};
use protoapi_core::operation::Running;
use protoapi_core::request_id::{Recorded, RequestId};
use protoapi_core::store::StoreError;

type Transaction = sqlx::Transaction<'static, sqlx::Any>;

/// Expired records forgotten by each recording write, at most.
const SWEEP: i64 = 16;

/// The unexpired record under `key`.
pub(crate) async fn recorded(
    store: &dyn Tables,
    key: &str,
) -> Result<Option<Recorded>, StoreError> {
    const SQL: &str =
        "SELECT fingerprint, outcome FROM request_ids WHERE key = $1 AND expires > $2";
    let now = protoapi_core::time::now_micros();
    let direct = read_direct(store, |connection| {
        let mut statement = connection.prepare_cached(SQL)?;
        let row = statement.query_row(rusqlite::params![key, now], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, Vec<u8>>(1)?))
        });
        rusqlite::OptionalExtension::optional(row)
    });
    let row: Option<(String, Vec<u8>)> = match direct {
        Some(row) => row,
        None => sqlx::query_as(SQL)
            .bind(key.to_owned())
            .bind(now)
            .fetch_optional(store.pool())
            .await
            .map_err(backend_error)?,
    };
    Ok(row.map(|(fingerprint, outcome)| Recorded {
        fingerprint,
        outcome,
    }))
}

impl Table {
    /// Records `outcome` under the current request id, if any, and ends
    /// the current operation, if any, with it, in `transaction`:
    /// `DuplicateRequest` when the id holds an unexpired record (a
    /// concurrent twin committed first), `OperationEnded` when the
    /// operation ended first; the caller's transaction is then dropped,
    /// undoing its write. Forgets a few expired records on the way.
    pub(super) async fn record(
        &self,
        transaction: &mut Transaction,
        outcome: impl FnOnce() -> Vec<u8>,
    ) -> Result<(), StoreError> {
        let (id, running) = (RequestId::current(), Running::current());
        if id.is_none() && running.is_none() {
            return Ok(());
        }
        let outcome = outcome();
        if let Some(running) = running {
            end_running(transaction, &running, &outcome).await?;
        }
        match id {
            Some(id) => record_under(transaction, &id, outcome).await,
            None => Ok(()),
        }
    }

    /// The stored body of `uid` when the write running now records its
    /// outcome (a delete's: the item it deletes), else nothing.
    pub(super) async fn outcome_of(
        &self,
        transaction: &mut Transaction,
        uid: &str,
    ) -> Result<Vec<u8>, StoreError> {
        if RequestId::current().is_none() && Running::current().is_none() {
            return Ok(Vec::new());
        }
        let sql = format!("SELECT body FROM {} WHERE uid = $1", self.name);
        let body: Option<Vec<u8>> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(uid.to_owned())
            .fetch_optional(&mut **transaction)
            .await
            .map_err(backend_error)?;
        Ok(body.unwrap_or_default())
    }
}

/// Records `outcome` under `id` in `transaction`: `DuplicateRequest` when
/// the id holds an unexpired record. Forgets a few expired records on the
/// way.
pub(crate) async fn record_under(
    transaction: &mut Transaction,
    id: &RequestId,
    outcome: Vec<u8>,
) -> Result<(), StoreError> {
    let now = protoapi_core::time::now_micros();
    sqlx::query(
        "DELETE FROM request_ids WHERE key IN \
         (SELECT key FROM request_ids WHERE expires <= $1 ORDER BY expires LIMIT $2)",
    )
    .bind(now)
    .bind(SWEEP)
    .execute(&mut **transaction)
    .await
    .map_err(backend_error)?;
    sqlx::query("DELETE FROM request_ids WHERE key = $1 AND expires <= $2")
        .bind(id.key().to_owned())
        .bind(now)
        .execute(&mut **transaction)
        .await
        .map_err(backend_error)?;
    let inserted = sqlx::query(
        "INSERT INTO request_ids (key, fingerprint, outcome, expires) VALUES ($1, $2, $3, $4)",
    )
    .bind(id.key().to_owned())
    .bind(id.fingerprint().to_owned())
    .bind(outcome)
    .bind(id.expires())
    .execute(&mut **transaction)
    .await;
    match inserted {
        Ok(_) => Ok(()),
        Err(sqlx::Error::Database(error)) if error.is_unique_violation() => {
            Err(StoreError::DuplicateRequest)
        }
        Err(error) => Err(backend_error(error)),
    }
}

/// Ends `running` with the write committing in `transaction` (whose
/// outcome is `outcome`): `OperationEnded` when it ended first.
async fn end_running(
    transaction: &mut Transaction,
    running: &Running,
    outcome: &[u8],
) -> Result<(), StoreError> {
    let ended = sqlx::query(
        "UPDATE operations SET done = 1, body = $2, lease = $3 WHERE name = $1 AND done = 0",
    )
    .bind(running.name().to_owned())
    .bind(running.done_body(outcome))
    .bind(protoapi_core::time::now_micros())
    .execute(&mut **transaction)
    .await
    .map_err(backend_error)?;
    match ended.rows_affected() {
        0 => Err(StoreError::OperationEnded),
        _ => Ok(()),
    }
}
