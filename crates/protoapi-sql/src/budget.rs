//! What a filtered list may examine ([`FilterBudget`]).

use std::time::Duration;

/// What one statement of a list whose AIP-160 `filter` compares fields may
/// examine before the list is refused (INVALID_ARGUMENT on `filter`): a
/// filter no index serves costs a bounded scan whatever the table's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilterBudget {
    /// SQLite virtual machine instructions: 5 to 20 per row examined,
    /// through an index or the table (counted on the reads of a database
    /// file; one in memory is not bounded).
    pub sqlite_steps: u64,
    /// PostgreSQL's statement time (it counts no rows).
    pub postgres_time: Duration,
}

impl Default for FilterBudget {
    /// 50,000 to 200,000 rows examined on SQLite (a filter no index serves
    /// on 100,000 rows takes about 50 ms), a second on PostgreSQL.
    fn default() -> Self {
        FilterBudget {
            sqlite_steps: 1_000_000,
            postgres_time: Duration::from_secs(1),
        }
    }
}
