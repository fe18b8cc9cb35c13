//! What the registry tells the application about each manifest it stores,
//! so that the API can show a repository's images as a collection of its
//! own: after every change of a manifest or of its tags, the manifest as it
//! now is, or that it is gone.

use protoapi_core::auth::BoxFuture;
use protoapi_core::error::Error;

use crate::digest::Digest;

/// One manifest of a repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub repository: String,
    pub digest: Digest,
    pub media_type: String,
    /// The manifest's bytes and those of the blobs it refers to.
    pub size: u64,
    /// The tags naming it, in lexical order.
    pub tags: Vec<String>,
    /// Its `artifactType`, else its config's media type (empty for an index
    /// without one).
    pub artifact_type: String,
    /// The digest of the manifest it refers to, or empty.
    pub subject: String,
    /// When it was pushed, in microseconds since the epoch.
    pub pushed_micros: i64,
}

/// Where the application keeps its view of the registry's manifests.
/// Called after the registry's own write is committed: a call that fails is
/// logged, and the image is brought up to date by its next change.
pub trait Catalog: Send + Sync + 'static {
    /// `image` was stored, or its tags changed.
    fn put<'a>(&'a self, image: &'a Image) -> BoxFuture<'a, Result<(), Error>>;
    /// The manifest `digest` of `repository` is gone.
    fn remove<'a>(
        &'a self,
        repository: &'a str,
        digest: &'a Digest,
    ) -> BoxFuture<'a, Result<(), Error>>;
}
