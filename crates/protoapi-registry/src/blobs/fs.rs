//! Blobs and uploads in a directory: `blobs/sha256/<first two hex>/<hex>`
//! and `uploads/<id>`, on one file system so that a verified upload becomes
//! its blob by a rename, after an fsync: a crash never leaves part of a blob
//! under a digest.

use std::io::SeekFrom;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use axum::body::Body;
use protoapi_core::auth::BoxFuture;
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use super::staging::{Busy, Staging};
use super::{AppendError, BlobStore, Contents, Verified, VerifyError, found};
use crate::digest::Digest;

/// Blobs and uploads under one directory.
#[derive(Clone, Debug)]
pub struct FsBlobs {
    /// `<dir>/blobs`.
    root: PathBuf,
    staging: Staging,
}

impl FsBlobs {
    /// Blobs under `dir/blobs` and uploads under `dir/uploads`, created if
    /// needed.
    pub fn open(dir: &Path) -> std::io::Result<Self> {
        let root = dir.join("blobs");
        std::fs::create_dir_all(root.join("sha256"))?;
        std::fs::create_dir_all(root.join("aside"))?;
        Ok(FsBlobs {
            root,
            staging: Staging::open(dir.join("uploads"))?,
        })
    }

    fn path(&self, digest: &Digest) -> PathBuf {
        let hex = digest.hex();
        self.root.join("sha256").join(&hex[..2]).join(hex)
    }

    /// Where a blob set aside waits (not under `sha256/`, so never listed
    /// or read).
    fn aside(&self, digest: &Digest) -> PathBuf {
        self.root.join("aside").join(digest.hex())
    }
}

impl BlobStore for FsBlobs {
    fn size<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<Option<u64>>> {
        Box::pin(async move {
            found(
                tokio::fs::metadata(self.path(digest))
                    .await
                    .map(|m| m.len()),
            )
        })
    }

    fn read<'a>(
        &'a self,
        digest: &'a Digest,
        start: u64,
        len: Option<u64>,
    ) -> BoxFuture<'a, std::io::Result<Option<Contents>>> {
        Box::pin(async move {
            let Some(mut file) = found(tokio::fs::File::open(self.path(digest)).await)? else {
                return Ok(None);
            };
            let size = file.metadata().await?.len();
            file.seek(SeekFrom::Start(start)).await?;
            let len = len.unwrap_or(size.saturating_sub(start));
            let stream = tokio_util::io::ReaderStream::with_capacity(file.take(len), 1 << 16);
            Ok(Some(Contents {
                body: Body::from_stream(stream),
                size,
            }))
        })
    }

    fn set_aside<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<bool>> {
        Box::pin(async move {
            let moved = tokio::fs::rename(self.path(digest), self.aside(digest)).await;
            Ok(found(moved)?.is_some())
        })
    }

    fn restore<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(async move {
            if self.size(digest).await?.is_some() {
                return self.purge(digest).await;
            }
            found(tokio::fs::rename(self.aside(digest), self.path(digest)).await).map(drop)
        })
    }

    fn purge<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(async move { found(tokio::fs::remove_file(self.aside(digest)).await).map(drop) })
    }

    fn list(&self) -> BoxFuture<'_, std::io::Result<Vec<(Digest, SystemTime)>>> {
        let root = self.root.join("sha256");
        Box::pin(async move {
            tokio::task::spawn_blocking(move || list_dir(&root))
                .await
                .map_err(std::io::Error::other)?
        })
    }

    fn start_upload<'a>(&'a self, id: &'a str) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(self.staging.create(id))
    }

    fn upload_len<'a>(&'a self, id: &'a str) -> BoxFuture<'a, std::io::Result<Option<u64>>> {
        Box::pin(self.staging.len(id))
    }

    fn append<'a>(
        &'a self,
        id: &'a str,
        body: Body,
        limit: u64,
    ) -> BoxFuture<'a, Result<u64, AppendError>> {
        Box::pin(self.staging.append(id, body, limit))
    }

    fn verify<'a>(
        &'a self,
        id: &'a str,
        digest: &'a Digest,
    ) -> BoxFuture<'a, Result<Box<dyn Verified>, VerifyError>> {
        Box::pin(async move {
            let (busy, len) = self.staging.verify(id, digest).await?;
            Ok(Box::new(Checked {
                busy,
                file: self.staging.path(id),
                target: self.path(digest),
                len,
            }) as Box<dyn Verified>)
        })
    }

    fn discard<'a>(&'a self, id: &'a str) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(self.staging.discard(id))
    }
}

/// An upload file checked against its digest, kept from other writers
/// until it is renamed to its blob.
struct Checked {
    busy: Busy,
    file: PathBuf,
    target: PathBuf,
    len: u64,
}

impl Verified for Checked {
    fn size(&self) -> u64 {
        self.len
    }

    fn store(self: Box<Self>) -> BoxFuture<'static, std::io::Result<()>> {
        Box::pin(async move {
            let dir = self.target.parent().expect("a blob path has a parent");
            tokio::fs::create_dir_all(dir).await?;
            tokio::fs::rename(&self.file, &self.target).await?;
            sync_dir(dir).await?;
            drop(self.busy);
            Ok(())
        })
    }
}

fn list_dir(root: &Path) -> std::io::Result<Vec<(Digest, SystemTime)>> {
    let mut blobs = Vec::new();
    for prefix in std::fs::read_dir(root)? {
        for entry in std::fs::read_dir(prefix?.path())? {
            let entry = entry?;
            let name = entry.file_name();
            if let Ok(digest) = Digest::parse(&format!("sha256:{}", name.to_string_lossy())) {
                blobs.push((digest, entry.metadata()?.modified()?));
            }
        }
    }
    Ok(blobs)
}

/// Makes a rename in `dir` durable.
async fn sync_dir(dir: &Path) -> std::io::Result<()> {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || std::fs::File::open(dir)?.sync_all())
        .await
        .map_err(std::io::Error::other)?
}
