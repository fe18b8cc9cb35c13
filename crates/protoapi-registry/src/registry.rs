//! What a registry is built from.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use protoapi_server::authenticate::Authentication;
use protoapi_server::tokens::ApiTokens;
use sqlx::AnyPool;

use crate::access::Repositories;
use crate::blobs::{BlobStore, FsBlobs};
use crate::catalog::Catalog;
use crate::index::Index;

/// How much one client may make the registry hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest blob an upload may grow to.
    pub max_blob_bytes: u64,
    /// How long an upload may stay unfinished before garbage collection
    /// forgets it.
    pub upload_timeout: Duration,
}

impl Default for Limits {
    /// Blobs up to 10 GiB; uploads forgotten after a day.
    fn default() -> Self {
        Limits {
            max_blob_bytes: 10 << 30,
            upload_timeout: Duration::from_secs(24 * 3600),
        }
    }
}

/// What a registry keeps: blobs and uploads in progress in a [`BlobStore`],
/// the rest in the API's SQL database ([`Index`]).
#[derive(Clone)]
pub struct Storage {
    pub(crate) index: Index,
    pub(crate) blobs: Arc<dyn BlobStore>,
    pub(crate) limits: Limits,
}

impl Storage {
    /// Tables in `pool` ([`crate::index::migrations`] create them), blobs
    /// and uploads in `blobs`.
    pub fn new(pool: AnyPool, blobs: Arc<dyn BlobStore>) -> Self {
        Storage {
            index: Index::new(pool),
            blobs,
            limits: Limits::default(),
        }
    }

    /// Tables in `pool`, blobs and uploads under `dir` ([`FsBlobs`]).
    pub fn on_disk(pool: AnyPool, dir: &Path) -> std::io::Result<Self> {
        Ok(Storage::new(pool, Arc::new(FsBlobs::open(dir)?)))
    }

    /// The same storage with other [`Limits`].
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}

/// An OCI Distribution registry beside an API: the API's tokens (through
/// its [`Authentication`]), the application's decisions of who may pull and
/// push ([`Repositories`]), and its [`Storage`].
pub struct Registry {
    pub(crate) authentication: Authentication,
    pub(crate) tokens: ApiTokens,
    pub(crate) repositories: Arc<dyn Repositories>,
    pub(crate) storage: Storage,
    pub(crate) catalog: Option<Arc<dyn Catalog>>,
    /// The token endpoint, `<base URL>/v2/token`.
    pub(crate) realm: String,
    /// The service challenges name: the API's host.
    pub(crate) service: String,
    /// The audience of registry tokens: `<base URL>/v2/`.
    pub(crate) audience: String,
}

impl Registry {
    /// A registry at the API `tokens` serve (its base URL).
    pub fn new(
        authentication: Authentication,
        tokens: ApiTokens,
        repositories: Arc<dyn Repositories>,
        storage: Storage,
    ) -> Self {
        let base_url = tokens.base_url().trim_end_matches('/').to_owned();
        let service = base_url
            .split_once("://")
            .map_or(base_url.as_str(), |(_, host)| host)
            .to_owned();
        Registry {
            authentication,
            realm: format!("{base_url}/v2/token"),
            audience: format!("{base_url}/v2/"),
            service,
            tokens,
            repositories,
            storage,
            catalog: None,
        }
    }

    /// What the registry keeps.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }
}
