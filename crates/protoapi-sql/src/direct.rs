//! Reads of the embedded database on the calling thread.
//!
//! sqlx runs each SQLite connection on a thread of its own and hands it
//! every statement through a channel: a point read costs two thread
//! wake-ups and task switches, more than the read itself. The statements
//! that serve most requests (a row by its key, access epochs) run here
//! instead, on read-only connections of the same database file, in the
//! calling task: a read of a few pages the page cache holds, with each
//! connection's prepared statements kept.
//!
//! Consistency is SQLite's: with write-ahead logging every statement
//! outside a transaction sees every commit that ended before it began, from
//! any connection or process, so a read here after an acknowledged write
//! sees it. A connection that cannot read at once (busy, or any other
//! error) is not waited for: the caller falls back to the pool, which
//! waits, retries and reports faults.

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// Idle read connections kept at most; more are opened when more tasks
/// read at once, and closed after.
const MAX_IDLE: usize = 8;

/// Instructions between two checks of a bounded read's budget.
const PROGRESS_INTERVAL: u64 = 100;

/// A bounded read needed more than its budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Exceeded;

/// Read-only connections to one database file; see the [module docs](self).
#[derive(Debug)]
pub(crate) struct DirectReads {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl DirectReads {
    /// Reads of the SQLite database `url` names; `None` for a database in
    /// memory (other connections cannot open it) or a URL sqlx would not
    /// open either.
    pub(crate) fn of(url: &str) -> Option<Self> {
        if url.contains(":memory:") || url.contains("mode=memory") {
            return None;
        }
        let options = sqlx::sqlite::SqliteConnectOptions::from_str(url).ok()?;
        let path = options.get_filename();
        if path.as_os_str().is_empty() {
            return None;
        }
        Some(DirectReads {
            path: path.to_owned(),
            idle: Mutex::new(Vec::new()),
        })
    }

    /// What `read` answers on a read-only connection, or `None` when it
    /// fails (the caller then reads through the pool).
    pub(crate) fn read<T>(
        &self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Option<T> {
        let idle = self.lock().pop();
        let connection = match idle {
            Some(connection) => connection,
            None => self.connect()?,
        };
        let answer = read(&connection);
        let mut idle = self.lock();
        if idle.len() < MAX_IDLE {
            idle.push(connection);
        }
        drop(idle);
        answer
            .inspect_err(
                |error| tracing::debug!(%error, "direct read failed: reading through the pool"),
            )
            .ok()
    }

    /// What `read` answers within `steps` of SQLite's virtual machine
    /// instructions (5 to 20 per row examined): `Some(Err(Exceeded))`
    /// when it needed more, which the caller answers as it is (the pool
    /// would read without the bound); `None` when it fails otherwise.
    pub(crate) fn read_within<T>(
        &self,
        steps: u64,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Option<Result<T, Exceeded>> {
        self.read(|connection| {
            let mut left = steps / PROGRESS_INTERVAL;
            connection.progress_handler(
                PROGRESS_INTERVAL as i32,
                Some(move || match left.checked_sub(1) {
                    Some(rest) => {
                        left = rest;
                        false
                    }
                    None => true,
                }),
            )?;
            let answer = read(connection);
            connection.progress_handler(0, None::<fn() -> bool>)?;
            match answer {
                Err(rusqlite::Error::SqliteFailure(error, _))
                    if error.code == rusqlite::ErrorCode::OperationInterrupted =>
                {
                    Ok(Err(Exceeded))
                }
                answer => answer.map(Ok),
            }
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn connect(&self) -> Option<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        // Never wait for a lock on the caller's thread: the pool waits.
        Connection::open_with_flags(&self.path, flags)
            .and_then(|connection| connection.busy_timeout(Duration::ZERO).map(|()| connection))
            .inspect_err(|error| tracing::debug!(%error, "no direct read connection"))
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_read_directly_and_see_what_other_connections_committed() {
        assert!(DirectReads::of("sqlite::memory:").is_none());
        assert!(DirectReads::of("sqlite://x.db?mode=memory&cache=shared").is_none());
        let dir = std::env::temp_dir().join(format!("direct-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("store.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode = WAL; CREATE TABLE t (uid TEXT PRIMARY KEY, n INTEGER);",
            )
            .unwrap();
        let reads = DirectReads::of(&format!("sqlite://{}?mode=rwc", path.display())).unwrap();
        let count = |reads: &DirectReads| {
            reads.read(|connection| {
                connection
                    .prepare_cached("SELECT count(*) FROM t WHERE n > $1")?
                    .query_row([0], |row| row.get::<_, i64>(0))
            })
        };
        assert_eq!(count(&reads), Some(0));
        writer.execute("INSERT INTO t VALUES ('a', 1)", []).unwrap();
        assert_eq!(count(&reads), Some(1), "a committed write is seen at once");
        // A write the connection may not make fails, and the caller falls back.
        let write =
            reads.read(|connection| connection.execute("INSERT INTO t VALUES ('b', 2)", []));
        assert_eq!(write, None);
        assert_eq!(count(&reads), Some(1));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
