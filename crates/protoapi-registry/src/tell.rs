//! Telling the application's [`Catalog`] what the registry's manifests now
//! are. Each change is recorded in the same transaction as itself
//! ([`crate::index::Change`]) and forgotten once the catalog heard it, so a
//! change the catalog missed (a crash between the two, the catalog's
//! storage failing) is told again by [`Registry::catch_up`].

use std::sync::Arc;

use protoapi_core::error::Error;

use crate::catalog::Catalog;
use crate::error::RegistryError;
use crate::index::Change;
use crate::registry::Registry;

/// Changes told in one round of [`Registry::catch_up`].
const CATCH_UP_BATCH: u32 = 100;

impl Registry {
    /// The same registry telling `catalog` about its manifests.
    pub fn with_catalog(mut self, catalog: Arc<dyn Catalog>) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// Tells the catalog about `changes` just made; one it could not take
    /// stays recorded for [`Registry::catch_up`].
    pub(crate) async fn tell(&self, changes: &[Change]) {
        for change in changes {
            if let Err(error) = self.tell_one(change).await {
                tracing::warn!(
                    repository = %change.repo,
                    digest = %change.digest,
                    %error,
                    "the catalog of images was not updated; it will be told again"
                );
            }
        }
    }

    /// Tells the catalog what the manifest of `change` now is, and forgets
    /// the change.
    async fn tell_one(&self, change: &Change) -> Result<(), Error> {
        let index = &self.storage.index;
        if let Some(catalog) = &self.catalog {
            match index.image(&change.repo, &change.digest).await {
                Ok(Some(image)) => catalog.put(&image).await?,
                Ok(None) => catalog.remove(&change.repo, &change.digest).await?,
                Err(error) => return Err(Error::internal(error)),
            }
        }
        index.told(change).await.map_err(Error::internal)
    }

    /// Tells the catalog every change it has not heard yet (those of
    /// requests that ended before they could, on any replica); answers how
    /// many. A server calls it when it starts and then now and again.
    pub async fn catch_up(&self) -> Result<u64, RegistryError> {
        let mut told = 0;
        loop {
            let pending = self.storage.index.pending_changes(CATCH_UP_BATCH).await?;
            let round = pending.len();
            for change in &pending {
                self.tell_one(change).await?;
                told += 1;
            }
            if round < CATCH_UP_BATCH as usize {
                return Ok(told);
            }
        }
    }
}
