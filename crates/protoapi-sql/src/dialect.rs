//! Which SQL database a store runs on.

/// Which SQL database backs a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}
