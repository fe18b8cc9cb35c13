//! Telling the application's [`Catalog`] what the registry's manifests now
//! are.

use std::sync::Arc;

use protoapi_core::error::Error;

use crate::catalog::Catalog;
use crate::digest::Digest;
use crate::registry::Registry;

impl Registry {
    /// The same registry telling `catalog` about its manifests.
    pub fn with_catalog(mut self, catalog: Arc<dyn Catalog>) -> Self {
        self.catalog = Some(catalog);
        self
    }

    /// Tells the catalog what manifest `digest` of `repository` now is.
    pub(crate) async fn refresh(&self, repository: &str, digest: &Digest) {
        let Some(catalog) = &self.catalog else {
            return;
        };
        let told = match self.storage.index.image(repository, digest).await {
            Ok(Some(image)) => catalog.put(&image).await,
            Ok(None) => catalog.remove(repository, digest).await,
            Err(error) => Err(Error::internal(error)),
        };
        if let Err(error) = told {
            tracing::warn!(%repository, %digest, %error, "the catalog of images was not updated");
        }
    }
}
