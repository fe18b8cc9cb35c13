//! A small API of its own — widgets — generated from `proto/` in `build.rs`
//! and served over an in-memory store. Everything between the wire and the
//! store is generated, the store and the server wiring included:
//!
//! ```no_run
//! # use std::sync::Arc;
//! # fn context() -> runtime::standard::ApiContext { unimplemented!() }
//! // REST and gRPC for widgets and parts, v0 of widgets (declared in
//! // `proto/widgets/v0`) beside v1 over the same store, gRPC reflection and
//! // health, `/openapi.json`, and error bodies for unknown routes.
//! let router = widgets::Services::new(context())
//!     .store(Arc::new(widgets::MemoryStore::default()))
//!     .build()?;
//! # Ok::<(), runtime::router::MissingHandlers>(())
//! ```
//!
//! Run it: `cargo run -p widgets` (serves on 127.0.0.1:8090, every request
//! acting with full local access).

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

/// Widgets and their parts in memory: the generated crate implements their
/// storage traits for it, with the annotation files' rules (a widget with
/// parts cannot be deleted).
pub use runtime::memory::MemoryStore;
/// Widgets and their parts in SQLite (or PostgreSQL), with the same rules.
pub use runtime::sql::SqlStore;

use self::widgets::v1::{Part, Widget};
use macros::StorageRow;

/// The widget fields kept in columns of their own: what `order_by` names.
#[derive(StorageRow)]
#[row(message = Widget)]
pub struct WidgetColumns {
    name: String,
    stock: i32,
    #[row(timestamp, output_only)]
    create_time: i64,
}

/// The part fields kept in columns: what `order_by` names, and the widget
/// a part keeps from deletion.
#[derive(StorageRow)]
#[row(message = Part)]
pub struct PartColumns {
    name: String,
    #[row(timestamp, output_only)]
    create_time: i64,
    #[row(timestamp, output_only)]
    update_time: i64,
    widget: String,
}

/// Opens (creating if needed) the SQLite database file at `path`.
pub async fn open_sqlite(path: &std::path::Path) -> Result<SqlStore, runtime::sql::Error> {
    use runtime::sql::{SqlOptions, Table};
    let tables = [Table::of::<WidgetColumns>(), Table::of::<PartColumns>()];
    SqlStore::open_sqlite(path, SqlOptions::new(tables)).await
}
