//! Uploads staged on disk, one file each, named by the upload's id. They
//! are on the node that received them; a replica that did not answers an
//! unknown upload. One request at a time writes or checks an upload (a
//! second is refused while the first runs), so the hash kept as its bytes
//! arrive is the hash of the file.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Body;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::hashes::Hashes;
use super::{AppendError, VerifyError, found};
use crate::digest::{Digest, Hasher};

#[derive(Clone, Default)]
pub(super) struct Staging {
    dir: PathBuf,
    /// Uploads a request is writing or checking now.
    busy: Arc<Mutex<HashSet<String>>>,
    /// Hashes by the length of the file they are of.
    hashes: Arc<Hashes<u64>>,
}

/// Upload `id` kept from other requests while this lives.
pub(super) struct Busy {
    id: String,
    uploads: Arc<Mutex<HashSet<String>>>,
}

impl Drop for Busy {
    fn drop(&mut self) {
        lock(&self.uploads).remove(&self.id);
    }
}

fn lock(uploads: &Mutex<HashSet<String>>) -> std::sync::MutexGuard<'_, HashSet<String>> {
    uploads.lock().unwrap_or_else(PoisonError::into_inner)
}

impl std::fmt::Debug for Staging {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Staging").field("dir", &self.dir).finish()
    }
}

impl Staging {
    /// Uploads staged under `dir`, created if needed.
    pub(super) fn open(dir: PathBuf) -> std::io::Result<Self> {
        std::fs::create_dir_all(&dir)?;
        Ok(Staging {
            dir,
            ..Staging::default()
        })
    }

    /// The file of upload `id` (ids are hex, checked by the caller).
    pub(super) fn path(&self, id: &str) -> PathBuf {
        self.dir.join(id)
    }

    /// Keeps upload `id` from other requests, unless one has it.
    fn claim(&self, id: &str) -> Option<Busy> {
        lock(&self.busy).insert(id.to_owned()).then(|| Busy {
            id: id.to_owned(),
            uploads: self.busy.clone(),
        })
    }

    /// Starts upload `id`, empty.
    pub(super) async fn create(&self, id: &str) -> std::io::Result<()> {
        tokio::fs::File::create(self.path(id)).await?;
        self.hashes.keep(id, 0, Hasher::default());
        Ok(())
    }

    /// The bytes upload `id` holds, if it is staged here.
    pub(super) async fn len(&self, id: &str) -> std::io::Result<Option<u64>> {
        found(tokio::fs::metadata(self.path(id)).await.map(|m| m.len()))
    }

    /// Appends `body` to upload `id` as it arrives, refusing to grow past
    /// `limit` bytes. A body that breaks off leaves what arrived, so the
    /// client can resume from there.
    pub(super) async fn append(
        &self,
        id: &str,
        body: Body,
        limit: u64,
    ) -> Result<u64, AppendError> {
        use http_body_util::BodyExt as _;
        let _busy = self.claim(id).ok_or(AppendError::Busy)?;
        let mut file = tokio::fs::OpenOptions::new()
            .append(true)
            .open(self.path(id))
            .await?;
        let mut len = file.metadata().await?.len();
        let mut hasher = self.hashes.take(id, &len);
        let mut body = body;
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else {
                file.flush().await?;
                if let Some(hasher) = hasher {
                    self.hashes.keep(id, len, hasher);
                }
                return Err(AppendError::Body);
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if len + data.len() as u64 > limit {
                return Err(AppendError::TooLarge);
            }
            file.write_all(&data).await?;
            len += data.len() as u64;
            if let Some(hasher) = hasher.as_mut() {
                hasher.update(&data);
            }
        }
        file.flush().await?;
        if let Some(hasher) = hasher {
            self.hashes.keep(id, len, hasher);
        }
        Ok(len)
    }

    /// Checks that upload `id` holds `digest`'s bytes, durably written;
    /// answers it kept from other requests, with its length.
    pub(super) async fn verify(
        &self,
        id: &str,
        digest: &Digest,
    ) -> Result<(Busy, u64), VerifyError> {
        let busy = self.claim(id).ok_or(VerifyError::Busy)?;
        let file = tokio::fs::File::open(self.path(id)).await?;
        file.sync_all().await?;
        let len = file.metadata().await?.len();
        let actual = match self.hashes.take(id, &len) {
            Some(hasher) => hasher.finish(),
            None => read_digest(file).await?,
        };
        match actual == *digest {
            true => Ok((busy, len)),
            false => Err(VerifyError::Mismatch(actual)),
        }
    }

    /// Forgets upload `id`.
    pub(super) async fn discard(&self, id: &str) -> std::io::Result<()> {
        self.hashes.forget(id);
        found(tokio::fs::remove_file(self.path(id)).await).map(drop)
    }
}

/// The digest of a file's contents, read from its start.
async fn read_digest(mut file: tokio::fs::File) -> std::io::Result<Digest> {
    let mut hasher = Hasher::default();
    let mut buffer = vec![0; 1 << 16];
    loop {
        let read = file.read(&mut buffer).await?;
        if read == 0 {
            return Ok(hasher.finish());
        }
        hasher.update(&buffer[..read]);
    }
}
