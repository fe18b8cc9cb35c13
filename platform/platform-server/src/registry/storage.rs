//! Where the registry keeps blobs and uploads.

use std::path::Path;
use std::sync::Arc;

use object_store::aws::AmazonS3Builder;
use protoapi_runtime::registry::{ObjectBlobs, Storage};

use crate::store::SqlStore;

/// Object storage for the registry's blobs and uploads, which replicas
/// share (`--registry-blobs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectStorage {
    /// `s3://<bucket>[/<prefix>]`.
    pub url: String,
    /// S3 settings besides the `AWS_*` environment variables, by the same
    /// names in lower case (`aws_endpoint`, `aws_allow_http`, …).
    pub options: Vec<(String, String)>,
}

impl ObjectStorage {
    /// The blobs under the URL's prefix in its bucket.
    fn open(&self) -> Result<ObjectBlobs, String> {
        let refused = |why: String| format!("--registry-blobs {}: {why}", self.url);
        let Some((bucket, prefix)) = self
            .url
            .strip_prefix("s3://")
            .map(|rest| rest.split_once('/').unwrap_or((rest, "")))
            .filter(|(bucket, _)| !bucket.is_empty())
        else {
            return Err(refused("expected s3://<bucket>[/<prefix>]".into()));
        };
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
        for (key, value) in &self.options {
            let key = key.parse().map_err(|e| refused(format!("{e}")))?;
            builder = builder.with_config(key, value);
        }
        let store = builder.build().map_err(|e| refused(e.to_string()))?;
        Ok(ObjectBlobs::new(
            Arc::new(store),
            prefix.trim_end_matches('/'),
        ))
    }
}

/// The registry's storage: its tables in the API's database; blobs and
/// uploads in `objects` when given, else under `data_dir/registry`.
pub fn storage(
    store: &SqlStore,
    data_dir: &Path,
    objects: Option<&ObjectStorage>,
) -> Result<Storage, String> {
    let pool = store.pool().clone();
    match objects {
        Some(objects) => Ok(Storage::new(pool, Arc::new(objects.open()?))),
        None => Storage::on_disk(pool, &data_dir.join("registry"))
            .map_err(|e| format!("cannot open the registry's blobs: {e}")),
    }
}
