//! Which driver errors are storage faults rather than failures of a request.
//!
//! | driver error | [`StoreError`] | answered |
//! |---|---|---|
//! | no connection free within the acquire timeout, pool closed, I/O (refused, reset, lost), TLS, the SQLite worker gone | `Unavailable` | `UNAVAILABLE` + `RetryInfo` |
//! | PostgreSQL SQLSTATE class `08` (connection exception), `57P01`–`57P03` (shutting down, cannot connect now), class `53` except `53100` (too many connections, out of memory) | `Unavailable` | `UNAVAILABLE` + `RetryInfo` |
//! | SQLite `SQLITE_BUSY`, `SQLITE_LOCKED` (after the busy timeout), `SQLITE_CANTOPEN`, I/O errors other than writing | `Unavailable` | `UNAVAILABLE` + `RetryInfo` |
//! | PostgreSQL `53100` (`disk_full`) | `Full` | `RESOURCE_EXHAUSTED` (`STORAGE_FULL`) |
//! | SQLite `SQLITE_FULL`, and I/O errors writing, syncing or growing a file (how SQLite reports a file size limit or quota: `EFBIG`, `EDQUOT`) | `Full` | `RESOURCE_EXHAUSTED` (`STORAGE_FULL`) |
//! | anything else (constraint, decoding, corruption, SQL) | `Backend` | `INTERNAL` |
//!
//! A failed write leaves nothing behind: the transaction it ran in is
//! rolled back, and reads go on while writes are refused.

use protoapi_core::store::StoreError;

/// What kind of fault a driver error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    Unavailable,
    Full,
    Other,
}

/// The [`StoreError`] of a driver error.
pub(crate) fn store_error(error: sqlx::Error) -> StoreError {
    match fault(&error) {
        Fault::Unavailable => StoreError::Unavailable(Box::new(error)),
        Fault::Full => StoreError::Full(Box::new(error)),
        Fault::Other => StoreError::backend(error),
    }
}

pub(crate) fn fault(error: &sqlx::Error) -> Fault {
    match error {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => Fault::Unavailable,
        sqlx::Error::Database(database) => {
            let code = database.code();
            let code = code.as_deref().unwrap_or_default();
            if database
                .try_downcast_ref::<sqlx::sqlite::SqliteError>()
                .is_some()
            {
                code.parse().map_or(Fault::Other, sqlite_fault)
            } else {
                sqlstate_fault(code)
            }
        }
        _ => Fault::Other,
    }
}

/// A PostgreSQL SQLSTATE.
fn sqlstate_fault(code: &str) -> Fault {
    match code {
        "53100" => Fault::Full,
        "57P01" | "57P02" | "57P03" => Fault::Unavailable,
        _ if code.starts_with("08") || code.starts_with("53") => Fault::Unavailable,
        _ => Fault::Other,
    }
}

/// An extended SQLite result code.
fn sqlite_fault(code: i32) -> Fault {
    const BUSY: i32 = 5;
    const LOCKED: i32 = 6;
    const IOERR: i32 = 10;
    const FULL: i32 = 13;
    const CANTOPEN: i32 = 14;
    const IOERR_WRITE: i32 = IOERR | (3 << 8);
    const IOERR_FSYNC: i32 = IOERR | (4 << 8);
    const IOERR_DIR_FSYNC: i32 = IOERR | (5 << 8);
    const IOERR_TRUNCATE: i32 = IOERR | (6 << 8);
    const IOERR_SHMSIZE: i32 = IOERR | (19 << 8);
    match code {
        IOERR_WRITE | IOERR_FSYNC | IOERR_DIR_FSYNC | IOERR_TRUNCATE | IOERR_SHMSIZE => Fault::Full,
        _ => match code & 0xff {
            FULL => Fault::Full,
            BUSY | LOCKED | IOERR | CANTOPEN => Fault::Unavailable,
            _ => Fault::Other,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_faults_are_unavailable() {
        for error in [
            sqlx::Error::PoolTimedOut,
            sqlx::Error::PoolClosed,
            sqlx::Error::WorkerCrashed,
            sqlx::Error::Io(std::io::ErrorKind::ConnectionRefused.into()),
            sqlx::Error::Io(std::io::ErrorKind::ConnectionReset.into()),
        ] {
            assert_eq!(fault(&error), Fault::Unavailable, "{error}");
        }
        assert_eq!(fault(&sqlx::Error::RowNotFound), Fault::Other);
        assert_eq!(fault(&sqlx::Error::Protocol("?".into())), Fault::Other);
    }

    #[test]
    fn sqlstates() {
        for code in [
            "08000", "08006", "08P01", "57P01", "57P02", "57P03", "53300", "53200",
        ] {
            assert_eq!(sqlstate_fault(code), Fault::Unavailable, "{code}");
        }
        assert_eq!(sqlstate_fault("53100"), Fault::Full);
        for code in ["23505", "40001", "57014", "42P01", "XX000", ""] {
            assert_eq!(sqlstate_fault(code), Fault::Other, "{code}");
        }
    }

    #[test]
    fn sqlite_codes() {
        // SQLITE_FULL, SQLITE_IOERR_WRITE (what a file size limit gives), _FSYNC.
        for code in [13, 778, 1034] {
            assert_eq!(sqlite_fault(code), Fault::Full, "{code}");
        }
        // SQLITE_BUSY, _LOCKED, SQLITE_IOERR_READ, SQLITE_CANTOPEN.
        for code in [5, 6, 266, 14] {
            assert_eq!(sqlite_fault(code), Fault::Unavailable, "{code}");
        }
        // SQLITE_CONSTRAINT_UNIQUE, SQLITE_CORRUPT, SQLITE_ERROR.
        for code in [2067, 11, 1] {
            assert_eq!(sqlite_fault(code), Fault::Other, "{code}");
        }
    }

    #[tokio::test]
    async fn a_full_sqlite_database_is_full() {
        sqlx::any::install_default_drivers();
        use sqlx::Connection;
        let mut connection = sqlx::AnyConnection::connect("sqlite::memory:")
            .await
            .unwrap();
        for sql in ["CREATE TABLE t (x BLOB)", "PRAGMA max_page_count = 3"] {
            sqlx::query(sql).execute(&mut connection).await.unwrap();
        }
        let mut outcome = Ok(());
        for _ in 0..16 {
            outcome = sqlx::query("INSERT INTO t VALUES (zeroblob(4000))")
                .execute(&mut connection)
                .await
                .map(drop);
            if outcome.is_err() {
                break;
            }
        }
        let error = outcome.expect_err("a database of 3 pages fills up");
        assert_eq!(fault(&error), Fault::Full, "{error}");
    }
}
