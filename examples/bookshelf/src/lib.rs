//! Shelves and books: an API declared in `proto/` (protos and
//! `annotations.toml`), generated in `build.rs`, served by the generated
//! [`Services`] over either of the library's stores.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use protoapi_runtime::{Caller, auth::Authorizer, paging::PageTokens, standard::ApiContext};
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
pub use protoapi_runtime::memory::MemoryStore;
/// Shelves and books in SQLite (or PostgreSQL).
pub use protoapi_runtime::sql::SqlStore;

/// Opens (creating if needed) the SQLite database file at `path`, with the
/// generated tables: each keeps in columns of their own the fields the
/// annotation files' rules look up (`bookshelf::v1::ShelfRow`,
/// `bookshelf::v1::BookRow`); a book's isbn, which none looks up, is
/// kept only in its encoded body.
pub async fn open_sqlite(path: &std::path::Path) -> Result<SqlStore, protoapi_runtime::sql::Error> {
    SqlStore::open_sqlite(path, protoapi_runtime::sql::SqlOptions::new(tables())).await
}
