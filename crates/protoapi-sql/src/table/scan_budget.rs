//! What a list whose AIP-160 `filter` no index serves may examine: a
//! statement that would read more rows is stopped and the list refused,
//! so an unindexed filter costs at most a bounded scan whatever the table's
//! size. SQLite counts its virtual machine's instructions (reads on the
//! calling thread, `crate::direct`); PostgreSQL, which cannot count rows,
//! bounds the statement's time ([`crate::budget::FilterBudget`]).

use sqlx::Any;

use super::{Tables, backend_error};
use crate::dialect::Dialect;
use crate::direct::Exceeded;
use protoapi_core::error::Error;
use protoapi_core::store::StoreError;

/// PostgreSQL's `query_canceled`, which a statement timeout raises.
const QUERY_CANCELED: &str = "57014";

/// The refusal of a filter that needs more than the budget.
fn too_costly() -> StoreError {
    StoreError::Rejected(Error::invalid_field(
        "filter",
        "the filter would examine more items than one list may: compare a field that is indexed, \
         or narrow the list with a hierarchy filter",
    ))
}

/// `read` on the calling thread (`crate::direct`), within the budget when
/// `bounded`; `None` when the caller is to read through the pool.
pub(super) fn read_direct<T>(
    store: &dyn Tables,
    bounded: bool,
    read: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T>,
) -> Option<Result<T, StoreError>> {
    let direct = store.direct()?;
    if !bounded {
        return direct.read(read).map(Ok);
    }
    direct
        .read_within(store.filter_budget().sqlite_steps, read)
        .map(|answer| answer.map_err(|Exceeded| too_costly()))
}

/// What `run` answers on the pool: in a transaction bounded in time when
/// `bounded` on PostgreSQL (SQLite's pool reads are not bounded: a file
/// database is read directly, within the budget; one in memory is a test's).
pub(super) async fn on_pool<T>(
    store: &dyn Tables,
    bounded: bool,
    run: impl AsyncFnOnce(&mut sqlx::AnyConnection) -> Result<T, sqlx::Error>,
) -> Result<T, StoreError> {
    let mut connection = store.pool().acquire().await.map_err(backend_error)?;
    if !bounded || store.dialect() != Dialect::Postgres {
        return run(&mut connection).await.map_err(backend_error);
    }
    let mut transaction = sqlx::Connection::begin(&mut *connection)
        .await
        .map_err(backend_error)?;
    let millis = store.filter_budget().postgres_time.as_millis().max(1);
    let timeout = format!("SET LOCAL statement_timeout = {millis}");
    let answer = async {
        sqlx::query::<Any>(sqlx::AssertSqlSafe(timeout))
            .execute(&mut *transaction)
            .await?;
        run(&mut transaction).await
    }
    .await;
    // Reads only: the transaction is rolled back when dropped.
    answer.map_err(
        |error| match error.as_database_error().and_then(|e| e.code()) {
            Some(code) if code == QUERY_CANCELED => too_costly(),
            _ => backend_error(error),
        },
    )
}
