//! The Platform API server: REST and gRPC on one port, over embedded SQLite
//! (default) or PostgreSQL.
//!
//! Everything between the wire and storage is generated (`generated`) or
//! runtime support (`runtime`); this crate only wires the generated routers
//! and tonic services to a storage implementation. The binary
//! (`src/main.rs`) parses flags; [`serve`] is what it runs, and what the
//! end-to-end tests start on a real socket.

mod app;
mod keys;
pub mod store;

use std::future::Future;
use std::path::PathBuf;

use tokio::net::TcpListener;

use crate::store::SqlStore;

/// What a server instance needs.
#[derive(Clone, Debug)]
pub struct Config {
    /// Directory for the embedded database and server keys.
    pub data_dir: PathBuf,
    /// Use PostgreSQL at this URL instead of the embedded database.
    pub database_url: Option<String>,
    /// Base URL of the API (the audience of its tokens); `http://<listen>` when `None`.
    pub base_url: Option<String>,
}

/// Serves the API on `listener` until `shutdown` completes, then finishes
/// in-flight requests and closes the database.
pub async fn serve(
    config: Config,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    std::fs::create_dir_all(&config.data_dir)
        .map_err(|e| format!("cannot create data dir {}: {e}", config.data_dir.display()))?;
    let store = match &config.database_url {
        Some(url) => SqlStore::open_postgres(url).await?,
        None => SqlStore::open_sqlite(&config.data_dir).await?,
    };
    let page_tokens = keys::page_tokens(&config.data_dir)?;
    let router = app::router(store.clone(), page_tokens).await;

    let address = listener.local_addr()?;
    let base_url = config
        .base_url
        .unwrap_or_else(|| format!("http://{address}"));
    tracing::info!(%address, %base_url, "listening (REST and gRPC)");
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await?;
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}
