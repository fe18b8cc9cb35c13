//! The storage flags of a server binary (feature `flags`).

use std::time::Duration;

use protoapi_core::time::parse_duration;

use crate::{SqlOptions, SqlStore};

/// Which database, and how long a request waits for it.
#[derive(Debug, Clone, clap::Args)]
pub struct StorageFlags {
    /// Use the database at this URL (`postgres://…`, or
    /// `sqlite://FILE?mode=rwc`) instead of the server's default store.
    #[arg(long, value_name = "URL")]
    pub database_url: Option<String>,
    /// How long a request waits for a database connection (or for a new one
    /// to connect) before it is answered 503 / UNAVAILABLE with a retry
    /// delay, e.g. when the database cannot be reached.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration)]
    pub db_acquire_timeout: Duration,
}

impl StorageFlags {
    /// `options` with the flags' acquire timeout.
    pub fn options(&self, options: SqlOptions) -> SqlOptions {
        options.acquire_timeout(self.db_acquire_timeout)
    }

    /// Opens the database of `--database-url`, if one is given.
    pub async fn open(&self, options: SqlOptions) -> Option<Result<SqlStore, sqlx::Error>> {
        let url = self.database_url.as_deref()?;
        Some(SqlStore::open(url, self.options(options)).await)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::DEFAULT_ACQUIRE_TIMEOUT;

    #[derive(Debug, Parser)]
    struct Args {
        #[command(flatten)]
        storage: StorageFlags,
    }

    #[test]
    fn the_default_acquire_timeout_is_the_stores() {
        let args = Args::parse_from(["server"]);
        assert_eq!(args.storage.db_acquire_timeout, DEFAULT_ACQUIRE_TIMEOUT);
        assert!(args.storage.database_url.is_none());
        let args = Args::parse_from(["server", "--db-acquire-timeout", "250ms"]);
        assert_eq!(args.storage.db_acquire_timeout, Duration::from_millis(250));
    }
}
