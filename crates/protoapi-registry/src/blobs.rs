//! Blob contents, content-addressed behind [`BlobStore`]; [`FsBlobs`] keeps
//! them in a directory. Uploads are staged in files of their own
//! ([`Staging`]) and reach the store only once their digest is verified,
//! by a rename: a crash never leaves part of a blob under a digest.

use std::io::SeekFrom;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use axum::body::Body;
use protoapi_core::auth::BoxFuture;
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

use crate::digest::{Digest, Hasher};

/// A blob's bytes from `start`, `len` of them.
pub struct Contents {
    pub body: Body,
    /// The blob's whole size.
    pub size: u64,
}

/// Where verified blobs live, by digest.
pub trait BlobStore: Send + Sync + 'static {
    /// The blob's size, if stored.
    fn size<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<Option<u64>>>;
    /// `len` bytes of the blob from `start` (the rest when `None`), if stored.
    fn read<'a>(
        &'a self,
        digest: &'a Digest,
        start: u64,
        len: Option<u64>,
    ) -> BoxFuture<'a, std::io::Result<Option<Contents>>>;
    /// Stores the staged file at `file`, whose contents were verified to
    /// be `digest`, and consumes it.
    fn put<'a>(&'a self, file: &'a Path, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<()>>;
    /// Moves the blob out of reach (reads answer it missing) while garbage
    /// collection makes sure nothing refers to it; whether it was stored.
    fn set_aside<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<bool>>;
    /// Brings a blob set aside back, unless it was stored again meanwhile.
    fn restore<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<()>>;
    /// Removes a blob set aside for good.
    fn purge<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<()>>;
    /// Every stored blob, with when it was last stored.
    fn list(&self) -> BoxFuture<'_, std::io::Result<Vec<(Digest, SystemTime)>>>;
}

/// Blobs in a directory: `sha256/<first two hex>/<hex>`.
#[derive(Clone, Debug)]
pub struct FsBlobs {
    root: PathBuf,
}

impl FsBlobs {
    /// Blobs under `root`, created if needed.
    pub fn open(root: impl Into<PathBuf>) -> std::io::Result<Self> {
        let root = root.into();
        std::fs::create_dir_all(root.join("sha256"))?;
        std::fs::create_dir_all(root.join("aside"))?;
        Ok(FsBlobs { root })
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

    fn put<'a>(&'a self, file: &'a Path, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(async move {
            let target = self.path(digest);
            let dir = target.parent().expect("a blob path has a parent");
            tokio::fs::create_dir_all(dir).await?;
            tokio::fs::rename(file, &target).await?;
            sync_dir(dir).await
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

/// `Ok(None)` for a missing file.
fn found<T>(result: std::io::Result<T>) -> std::io::Result<Option<T>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// Makes a rename in `dir` durable.
async fn sync_dir(dir: &Path) -> std::io::Result<()> {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || std::fs::File::open(dir)?.sync_all())
        .await
        .map_err(std::io::Error::other)?
}

/// Uploads in progress, one file each, named by the upload's id. They are
/// on the node that received them; a replica that did not answers an
/// unknown upload.
#[derive(Clone, Debug)]
pub struct Staging {
    dir: PathBuf,
}

/// Why appending to an upload stopped.
#[derive(Debug)]
pub enum AppendError {
    /// The upload would grow past the limit.
    TooLarge,
    /// The client's body broke off (what was received is kept).
    Body,
    Io(std::io::Error),
}

impl From<std::io::Error> for AppendError {
    fn from(error: std::io::Error) -> Self {
        AppendError::Io(error)
    }
}

impl Staging {
    /// Uploads staged under `dir`, created if needed.
    pub fn open(dir: impl Into<PathBuf>) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(Staging { dir })
    }

    /// The file of upload `id` (ids are hex, checked by the caller).
    pub fn path(&self, id: &str) -> PathBuf {
        self.dir.join(id)
    }

    /// Starts upload `id`, empty.
    pub async fn create(&self, id: &str) -> std::io::Result<()> {
        tokio::fs::File::create(self.path(id)).await.map(drop)
    }

    /// The bytes upload `id` holds, if it is staged here.
    pub async fn len(&self, id: &str) -> std::io::Result<Option<u64>> {
        found(tokio::fs::metadata(self.path(id)).await.map(|m| m.len()))
    }

    /// Appends `body` to upload `id` as it arrives, refusing to grow past
    /// `limit` bytes, and feeds it to `hasher` if given; answers the new
    /// length. A body that breaks off leaves what arrived, so the client can
    /// resume from there.
    pub async fn append(
        &self,
        id: &str,
        body: Body,
        limit: u64,
        mut hasher: Option<&mut Hasher>,
    ) -> Result<u64, AppendError> {
        use http_body_util::BodyExt as _;
        let mut file = tokio::fs::OpenOptions::new()
            .append(true)
            .open(self.path(id))
            .await?;
        let mut len = file.metadata().await?.len();
        let mut body = body;
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else {
                file.flush().await?;
                return Err(AppendError::Body);
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            len += data.len() as u64;
            if len > limit {
                return Err(AppendError::TooLarge);
            }
            file.write_all(&data).await?;
            if let Some(hasher) = hasher.as_deref_mut() {
                hasher.update(&data);
            }
        }
        file.flush().await?;
        Ok(len)
    }

    /// Makes upload `id`'s contents durable.
    pub async fn sync(&self, id: &str) -> std::io::Result<()> {
        tokio::fs::File::open(self.path(id)).await?.sync_all().await
    }

    /// The digest of upload `id`'s contents, read back.
    pub async fn digest(&self, id: &str) -> std::io::Result<Digest> {
        let mut file = tokio::fs::File::open(self.path(id)).await?;
        let mut hasher = Hasher::default();
        let mut buffer = vec![0; 1 << 16];
        loop {
            let read = file.read(&mut buffer).await?;
            if read == 0 {
                break;
            }
            hasher.update(&buffer[..read]);
        }
        Ok(hasher.finish())
    }

    /// Forgets upload `id`.
    pub async fn discard(&self, id: &str) -> std::io::Result<()> {
        found(tokio::fs::remove_file(self.path(id)).await).map(drop)
    }
}
