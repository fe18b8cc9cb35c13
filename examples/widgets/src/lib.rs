//! A small API of its own — widgets — generated from `proto/` in `build.rs`
//! and served over an in-memory store. Everything between the wire and the
//! store is generated, the store and the server wiring included:
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn context() -> protoapi_runtime::standard::ApiContext { unimplemented!() }
//! // REST and gRPC for widgets and parts, v0 of widgets (declared in
//! // `proto/widgets/v0`) beside v1 over the same store, gRPC reflection and
//! // health, `/openapi.json`, and error bodies for unknown routes.
//! let router = widgets::Services::new(context())
//!     .store(Arc::new(widgets::MemoryStore::default()))
//!     .drawing_service(Arc::new(widgets::Drawings::default()))
//!     .build()?;
//! # Ok::<(), protoapi_runtime::router::MissingHandlers>(())
//! ```
//!
//! Run it: `cargo run -p widgets` (serves on 127.0.0.1:8090, every request
//! acting with full local access).

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

mod drawings;

/// Drawings of widgets, kept in memory: the hand-written custom methods of
/// `widgets.v1.DrawingService` (`google.api.HttpBody` in and out, server
/// streaming).
pub use drawings::Drawings;

/// Widgets and their parts in memory: the generated crate implements their
/// storage traits for it, with the annotation files' rules (a widget with
/// parts cannot be deleted).
pub use protoapi_runtime::memory::MemoryStore;
/// Widgets and their parts in SQLite (or PostgreSQL), with the same rules.
pub use protoapi_runtime::sql::SqlStore;

/// Opens (creating if needed) the SQLite database file at `path`, with the
/// generated tables: each keeps in columns of their own the fields the
/// annotation files' rules look up (`widgets::v1::WidgetRow`,
/// `widgets::v1::PartRow`).
pub async fn open_sqlite(path: &std::path::Path) -> Result<SqlStore, protoapi_runtime::sql::Error> {
    SqlStore::open_sqlite(path, protoapi_runtime::sql::SqlOptions::new(tables())).await
}
