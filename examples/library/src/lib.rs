//! Shelves and books keyed by resource names (AIP-122): a shelf is
//! `shelves/{shelf}` (a top-level collection), a book
//! `shelves/{shelf}/books/{book}`. The parent relation, the collection ids
//! and the existence of a book's shelf come from those patterns; ids are
//! chosen by the client (`shelf_id`, `book_id`) or by the server. Books
//! and the UIDP-keyed `archive.v1` records soft-delete (AIP-164). Declared
//! in `proto/`, generated in `build.rs`, served by the generated
//! [`Services`] over either of the library's stores.

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

/// Shelves and books in memory.
pub use protoapi_runtime::memory::MemoryStore;
/// Shelves and books in SQLite or PostgreSQL.
pub use protoapi_runtime::sql::SqlStore;

/// Opens the database at `url` (`sqlite:…` or `postgres://…`) with the
/// generated tables, creating them if needed.
pub async fn open(url: &str) -> Result<SqlStore, protoapi_runtime::sql::Error> {
    SqlStore::open(url, protoapi_runtime::sql::SqlOptions::new(tables())).await
}
