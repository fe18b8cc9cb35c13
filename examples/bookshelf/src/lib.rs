//! Shelves and books: an API declared in `proto/` (protos and
//! `annotations.toml`), generated in `build.rs`, served by the generated
//! [`Services`] over either of the library's stores.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use runtime::{Caller, auth::Authorizer, paging::PageTokens, standard::ApiContext};
//!
//! let store = bookshelf::open_sqlite("books.db".as_ref()).await?; // or bookshelf::MemoryStore::default()
//! let context = ApiContext::new(PageTokens::random(), Authorizer::allow_all());
//! let router = bookshelf::Services::new(context)
//!     .store(Arc::new(store))
//!     .layer(axum::Extension(Caller::System)) // in a real server: your authentication
//!     .build()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, router).await?; // REST, gRPC, reflection, /openapi.json
//! # Ok(())
//! # }
//! ```

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

/// Shelves and books in memory.
pub use runtime::memory::MemoryStore;
/// Shelves and books in SQLite (or PostgreSQL).
pub use runtime::sql::SqlStore;

use self::bookshelf::v1::{Book, Shelf};
use macros::StorageRow;
use runtime::sql::{SqlOptions, Table};

/// The shelf fields kept in columns: those `order_by` names.
#[derive(StorageRow)]
#[row(message = Shelf)]
pub struct ShelfColumns {
    name: String,
    #[row(timestamp, output_only)]
    create_time: i64,
}

/// The book fields kept in columns: those `order_by` and the `name` filter
/// name. The rest of a book (its isbn) is stored only in its encoded body.
#[derive(StorageRow)]
#[row(message = Book)]
pub struct BookColumns {
    name: String,
    author: String,
    #[row(timestamp, output_only)]
    create_time: i64,
}

/// Opens (creating if needed) the SQLite database file at `path`.
pub async fn open_sqlite(path: &std::path::Path) -> Result<SqlStore, runtime::sql::Error> {
    let tables = [Table::of::<ShelfColumns>(), Table::of::<BookColumns>()];
    SqlStore::open_sqlite(path, SqlOptions::new(tables)).await
}
