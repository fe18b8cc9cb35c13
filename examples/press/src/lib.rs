//! Publishers and their books: an API written in Google's style
//! (`proto/press/v1/press.proto`: resource names, `:verb` methods, plural
//! list fields, `google.type` fields, `google.api.HttpBody`, a server
//! stream), generated in `build.rs` with no annotation file and served by
//! the generated [`Services`].
//!
//! The standard methods need nothing but a store; the custom ones
//! (`SearchBooks`, `UploadCover`, `GetCover`, `ExportBooks`) are
//! [`Catalog`]'s, written against the store's [`Backend`](protoapi_runtime::store::Backend).
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use protoapi_runtime::{Caller, auth::Authorizer, paging::PageTokens, standard::ApiContext};
//!
//! let store = press::open_sqlite("press.db".as_ref()).await?; // or press::MemoryStore::default()
//! let context = ApiContext::new(PageTokens::random(), Authorizer::allow_all());
//! let router = press::Services::new(context)
//!     .press(Arc::new(press::Catalog::new(store)))
//!     .layer(axum::Extension(Caller::System)) // in a real server: your authentication
//!     .build()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, router).await?; // REST, gRPC, reflection, /openapi.json
//! # Ok(())
//! # }
//! ```

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

mod catalog;

pub use catalog::Catalog;
/// Publishers and books in memory.
pub use protoapi_runtime::memory::MemoryStore;
/// Publishers and books in SQLite (or PostgreSQL).
pub use protoapi_runtime::sql::SqlStore;

/// Opens (creating if needed) the SQLite database file at `path`, with the
/// generated tables.
pub async fn open_sqlite(path: &std::path::Path) -> Result<SqlStore, protoapi_runtime::sql::Error> {
    SqlStore::open_sqlite(path, protoapi_runtime::sql::SqlOptions::new(tables())).await
}
