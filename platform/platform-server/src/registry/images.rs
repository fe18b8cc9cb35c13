//! The API's images, kept as the registry's manifests change, and the
//! registry's manifests deleted with the images the API deletes.

use std::sync::Arc;

use platform_api::platform::registry::v2::Image;
use protoapi_runtime::Error;
use protoapi_runtime::auth::BoxFuture;
use protoapi_runtime::mask::Update;
use protoapi_runtime::registry::{Catalog, Digest, index};
use protoapi_runtime::sql::OnDelete;
use protoapi_runtime::store::{Backend as _, StoreError};

use crate::store::SqlStore;

/// The fields of an image the registry's changes set.
const CATALOGUED: [&str; 5] = [
    "media_type",
    "size_bytes",
    "tags",
    "artifact_type",
    "subject",
];

/// The images of the API, written as the registry's manifests change.
pub struct Images {
    store: Arc<SqlStore>,
}

impl Images {
    pub fn new(store: Arc<SqlStore>) -> Self {
        Images { store }
    }

    fn uid(repository: &str, digest: &Digest) -> String {
        format!("{repository}/{}", &digest.hex()[..16])
    }

    async fn put(&self, image: &protoapi_runtime::registry::Image) -> Result<(), Error> {
        let uid = Images::uid(&image.repository, &image.digest);
        let item = Image {
            uid: uid.clone(),
            digest: image.digest.to_string(),
            media_type: image.media_type.clone(),
            size_bytes: i64::try_from(image.size).unwrap_or(i64::MAX),
            tags: image.tags.clone(),
            artifact_type: image.artifact_type.clone(),
            subject: image.subject.clone(),
            ..Image::default()
        };
        if self.store.get::<Image>(&uid).await?.is_none() {
            let pushed = protoapi_runtime::time::from_micros(image.pushed_micros);
            let mut new = item.clone();
            new.create_time = Some(pushed);
            new.update_time = Some(pushed);
            new.etag = protoapi_runtime::resource::etag(&new);
            match self.store.insert(&new).await {
                // Written first by another server telling the same change.
                Err(StoreError::AlreadyExists) => {}
                done => return Ok(done?),
            }
        }
        // Updated, not deleted and made again: deleting an image deletes
        // its manifest (`ImageDeletes`).
        let update = Update::of_fields(item, &CATALOGUED);
        self.store.update::<Image>(&uid, &update).await?;
        Ok(())
    }

    async fn remove(&self, repository: &str, digest: &Digest) -> Result<(), Error> {
        let uid = Images::uid(repository, digest);
        self.store.delete::<Image>(&uid, None).await?;
        Ok(())
    }
}

impl Catalog for Images {
    fn put<'a>(
        &'a self,
        image: &'a protoapi_runtime::registry::Image,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(Images::put(self, image))
    }

    fn remove<'a>(
        &'a self,
        repository: &'a str,
        digest: &'a Digest,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(Images::remove(self, repository, digest))
    }
}

/// Deleting an image deletes its manifest (and its tags) from the
/// registry, in the delete's transaction.
pub struct ImageDeletes;

impl OnDelete for ImageDeletes {
    fn deleted<'a>(
        &'a self,
        connection: &'a mut sqlx::AnyConnection,
        uid: &'a str,
    ) -> BoxFuture<'a, Result<(), sqlx::Error>> {
        Box::pin(async move {
            // `<repo uid>/<the digest's first 16 hex characters>`.
            let Some((repo, prefix)) = uid.rsplit_once('/') else {
                return Ok(());
            };
            if prefix.len() != 16 || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Ok(());
            }
            index::delete_manifests_by_prefix(connection, repo, prefix)
                .await
                .map(drop)
        })
    }
}

/// Deleting a repo deletes what the registry keeps of it (its manifests,
/// tags and blob links; its blobs go at the next garbage collection), in the
/// delete's transaction.
pub struct RepoDeletes;

impl OnDelete for RepoDeletes {
    fn deleted<'a>(
        &'a self,
        connection: &'a mut sqlx::AnyConnection,
        uid: &'a str,
    ) -> BoxFuture<'a, Result<(), sqlx::Error>> {
        Box::pin(index::delete_repository(connection, uid))
    }
}
