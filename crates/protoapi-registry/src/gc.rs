//! Garbage collection: uploads left unfinished past their timeout, blobs a
//! repository holds that none of its manifests refers to, and blob bytes no
//! repository holds, each after a grace period that lets a push in
//! progress (blobs first, manifest last) finish.

use std::time::{Duration, SystemTime};

use crate::error::RegistryError;
use crate::registry::Storage;

/// What one collection removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Collected {
    /// Unfinished uploads forgotten.
    pub uploads: u64,
    /// Blobs that repositories no longer hold.
    pub links: u64,
    /// Blobs whose bytes were deleted.
    pub blobs: u64,
}

fn micros_before(age: Duration) -> i64 {
    protoapi_core::time::now_micros()
        .saturating_sub(i64::try_from(age.as_micros()).unwrap_or(i64::MAX))
}

impl Storage {
    /// Drops upload `id`'s bytes and record.
    pub(crate) async fn forget(&self, id: &str) -> Result<(), RegistryError> {
        self.blobs.discard(id).await?;
        Ok(self.index.delete_upload(id).await?)
    }

    /// Collects garbage older than `grace`. Safe beside pushes: a blob is
    /// set aside before the check that nothing holds it, and put back when
    /// something does (a push links a blob before it stores it).
    pub async fn collect_garbage(&self, grace: Duration) -> Result<Collected, RegistryError> {
        let mut collected = Collected::default();
        let expired = self
            .index
            .uploads_before(micros_before(self.limits.upload_timeout))
            .await?;
        for id in expired {
            self.forget(&id).await?;
            collected.uploads += 1;
        }
        collected.links = self.index.unlink_unreferenced(micros_before(grace)).await?;
        let cutoff = SystemTime::now() - grace;
        let stored = self.blobs.list().await?;
        for (digest, stored_at) in stored {
            if stored_at > cutoff || self.index.held_anywhere(&digest).await? {
                continue;
            }
            if !self.blobs.set_aside(&digest).await? {
                continue;
            }
            if self.index.held_anywhere(&digest).await? {
                self.blobs.restore(&digest).await?;
            } else {
                self.blobs.purge(&digest).await?;
                collected.blobs += 1;
            }
        }
        Ok(collected)
    }
}
