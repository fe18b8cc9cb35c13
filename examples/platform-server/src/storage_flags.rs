//! The server's storage flags, flattened into its arguments.

use std::time::Duration;

/// How requests wait for the database.
#[derive(Debug, clap::Args)]
pub struct StorageFlags {
    /// How long a request waits for a database connection (or for a new one
    /// to connect) before it is answered 503 / UNAVAILABLE with a retry
    /// delay, e.g. when the database cannot be reached.
    #[arg(
        long,
        env = "PLATFORM_DB_ACQUIRE_TIMEOUT",
        value_name = "DURATION",
        default_value = "2s",
        value_parser = runtime::serve::parse_duration
    )]
    pub db_acquire_timeout: Duration,
}
