//! Blobs and uploads in object storage (S3 and whatever else implements
//! `object_store`'s trait), where every replica of a server finds them:
//! `<prefix>/blobs/sha256/<hex>`, `<prefix>/aside/<hex>` and the chunks of
//! upload `id` at `<prefix>/uploads/<id>/<offset>-<random>`. Objects appear
//! whole or not at all, and a chunk is never overwritten (its name is new),
//! so what an upload was checked to be is exactly what becomes its blob,
//! whichever replica receives another chunk meanwhile.

use std::sync::Arc;
use std::time::SystemTime;

use axum::body::Body;
use bytes::Bytes;
use futures_util::{StreamExt as _, TryStreamExt as _};
use object_store::buffered::BufWriter;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt as _, PutPayload};
use protoapi_core::auth::BoxFuture;
use rand::RngCore as _;
use tokio::io::AsyncWriteExt as _;

use super::hashes::Hashes;
use super::{AppendError, BlobStore, Contents, Verified, VerifyError, found};
use crate::digest::{Digest, Hasher};

/// The part size of multipart writes (S3's smallest), and so what one
/// chunk being written holds in memory at most, times [`PARTS_IN_FLIGHT`].
const PART_BYTES: usize = 5 << 20;
const PARTS_IN_FLIGHT: usize = 2;
/// The largest object a server-side copy makes (S3's `CopyObject`); a
/// larger blob is streamed through the server.
const MAX_COPY_BYTES: u64 = 5 << 30;
/// The chunks an upload may have: each request on it lists them.
pub(super) const MAX_CHUNKS: usize = 1000;

/// Blobs and uploads in an object store, under a prefix.
#[derive(Clone)]
pub struct ObjectBlobs {
    store: Arc<dyn ObjectStore>,
    prefix: Path,
    /// Hashes by the chunks they are of ([`fingerprint`]).
    hashes: Arc<Hashes<Digest>>,
}

impl std::fmt::Debug for ObjectBlobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ObjectBlobs({}/{})", self.store, self.prefix)
    }
}

/// One chunk of an upload.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Chunk {
    path: Path,
    offset: u64,
    size: u64,
}

impl ObjectBlobs {
    /// Blobs and uploads in `store` under `prefix` (empty: at its root).
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> Self {
        ObjectBlobs {
            store,
            prefix: Path::from(prefix),
            hashes: Arc::default(),
        }
    }

    fn path(&self, parts: &[&str]) -> Path {
        parts
            .iter()
            .fold(self.prefix.clone(), |path, part| path.join(*part))
    }

    fn blob(&self, digest: &Digest) -> Path {
        self.path(&["blobs", "sha256", digest.hex()])
    }

    fn aside(&self, digest: &Digest) -> Path {
        self.path(&["aside", digest.hex()])
    }

    fn upload(&self, id: &str) -> Path {
        self.path(&["uploads", id])
    }

    /// Upload `id`'s chunks that follow one another from its start (of
    /// two at one offset, the first by name).
    async fn chunks(&self, id: &str) -> std::io::Result<Vec<Chunk>> {
        let mut found: Vec<Chunk> = self
            .store
            .list(Some(&self.upload(id)))
            .map_ok(|meta| {
                let offset = meta
                    .location
                    .filename()
                    .and_then(|name| name.split_once('-'))
                    .and_then(|(offset, _)| offset.parse().ok());
                offset.map(|offset| Chunk {
                    path: meta.location,
                    offset,
                    size: meta.size,
                })
            })
            .try_filter_map(|chunk| std::future::ready(Ok(chunk)))
            .try_collect()
            .await?;
        found.sort_by(|a, b| (a.offset, a.path.as_ref()).cmp(&(b.offset, b.path.as_ref())));
        let mut end = 0;
        found.retain(|chunk| {
            let next = chunk.offset == end && chunk.size > 0;
            if next {
                end += chunk.size;
            }
            next
        });
        Ok(found)
    }

    /// The hash of `chunks`, as remembered or read back.
    async fn digest_of(&self, id: &str, chunks: &[Chunk]) -> std::io::Result<Digest> {
        if let Some(hasher) = self.hashes.take(id, &fingerprint(chunks)) {
            return Ok(hasher.finish());
        }
        let mut hasher = Hasher::default();
        let mut stream = concatenated(self.store.clone(), chunks.to_vec());
        while let Some(bytes) = stream.next().await {
            hasher.update(&bytes?);
        }
        Ok(hasher.finish())
    }
}

/// The bytes of `chunks`, one after another.
fn concatenated(
    store: Arc<dyn ObjectStore>,
    chunks: Vec<Chunk>,
) -> futures_util::stream::BoxStream<'static, std::io::Result<Bytes>> {
    futures_util::stream::iter(chunks)
        .then(move |chunk| {
            let store = store.clone();
            async move { store.get(&chunk.path).await.map(|got| got.into_stream()) }
        })
        .try_flatten()
        .map_err(std::io::Error::from)
        .boxed()
}

/// `Ok(None)` for a missing object.
fn present<T>(result: object_store::Result<T>) -> std::io::Result<Option<T>> {
    found(result.map_err(std::io::Error::from))
}

impl BlobStore for ObjectBlobs {
    fn size<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<Option<u64>>> {
        Box::pin(
            async move { Ok(present(self.store.head(&self.blob(digest)).await)?.map(|m| m.size)) },
        )
    }

    fn read<'a>(
        &'a self,
        digest: &'a Digest,
        start: u64,
        len: Option<u64>,
    ) -> BoxFuture<'a, std::io::Result<Option<Contents>>> {
        Box::pin(async move {
            let range = match len {
                Some(0) => return self.empty_read(digest).await,
                Some(len) => GetRange::Bounded(start..start + len),
                None => GetRange::Offset(start),
            };
            let options = GetOptions::new().with_range(Some(range));
            let got = present(self.store.get_opts(&self.blob(digest), options).await)?;
            Ok(got.map(|got| Contents {
                size: got.meta.size,
                body: Body::from_stream(got.into_stream()),
            }))
        })
    }

    fn set_aside<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<bool>> {
        Box::pin(async move {
            let moved = self
                .store
                .rename(&self.blob(digest), &self.aside(digest))
                .await;
            Ok(present(moved)?.is_some())
        })
    }

    fn restore<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(async move {
            if self.size(digest).await?.is_some() {
                return self.purge(digest).await;
            }
            let moved = self
                .store
                .rename(&self.aside(digest), &self.blob(digest))
                .await;
            present(moved).map(drop)
        })
    }

    fn purge<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(async move { present(self.store.delete(&self.aside(digest)).await).map(drop) })
    }

    fn list(&self) -> BoxFuture<'_, std::io::Result<Vec<(Digest, SystemTime)>>> {
        Box::pin(async move {
            let root = self.path(&["blobs", "sha256"]);
            let metas: Vec<_> = self.store.list(Some(&root)).try_collect().await?;
            Ok(metas
                .into_iter()
                .filter_map(|meta| {
                    let name = meta.location.filename()?;
                    let digest = Digest::parse(&format!("sha256:{name}")).ok()?;
                    Some((digest, SystemTime::from(meta.last_modified)))
                })
                .collect())
        })
    }

    fn start_upload<'a>(&'a self, id: &'a str) -> BoxFuture<'a, std::io::Result<()>> {
        self.hashes.keep(id, fingerprint(&[]), Hasher::default());
        Box::pin(std::future::ready(Ok(())))
    }

    fn upload_len<'a>(&'a self, id: &'a str) -> BoxFuture<'a, std::io::Result<Option<u64>>> {
        Box::pin(async move { Ok(Some(self.chunks(id).await?.iter().map(|c| c.size).sum())) })
    }

    fn append<'a>(
        &'a self,
        id: &'a str,
        body: Body,
        limit: u64,
    ) -> BoxFuture<'a, Result<u64, AppendError>> {
        Box::pin(self.append_chunk(id, body, limit))
    }

    fn verify<'a>(
        &'a self,
        id: &'a str,
        digest: &'a Digest,
    ) -> BoxFuture<'a, Result<Box<dyn Verified>, VerifyError>> {
        Box::pin(async move {
            let chunks = self.chunks(id).await?;
            let actual = self.digest_of(id, &chunks).await?;
            if actual != *digest {
                return Err(VerifyError::Mismatch(actual));
            }
            Ok(Box::new(Checked {
                blobs: self.clone(),
                id: id.to_owned(),
                target: self.blob(digest),
                chunks,
            }) as Box<dyn Verified>)
        })
    }

    fn discard<'a>(&'a self, id: &'a str) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(async move {
            self.hashes.forget(id);
            let chunks = self
                .store
                .list(Some(&self.upload(id)))
                .map_ok(|m| m.location)
                .boxed();
            let mut deleted = self.store.delete_stream(chunks);
            while let Some(result) = deleted.next().await {
                present(result)?;
            }
            Ok(())
        })
    }
}

impl ObjectBlobs {
    /// An empty body for a zero-length read of a stored blob.
    async fn empty_read(&self, digest: &Digest) -> std::io::Result<Option<Contents>> {
        Ok(self.size(digest).await?.map(|size| Contents {
            body: Body::empty(),
            size,
        }))
    }

    /// Writes `body` as the upload's next chunk: nothing of it is kept if it
    /// breaks off (the client resumes from the upload's length before it).
    async fn append_chunk(&self, id: &str, body: Body, limit: u64) -> Result<u64, AppendError> {
        use http_body_util::BodyExt as _;
        let mut chunks = self.chunks(id).await?;
        if chunks.len() >= MAX_CHUNKS {
            return Err(AppendError::Chunks);
        }
        let start: u64 = chunks.iter().map(|c| c.size).sum();
        let mut hasher = self.hashes.take(id, &fingerprint(&chunks));
        let path = self.path(&["uploads", id, &format!("{start:020}-{}", nonce())]);
        let mut writer = BufWriter::with_capacity(self.store.clone(), path.clone(), PART_BYTES)
            .with_max_concurrency(PARTS_IN_FLIGHT);
        let mut len = start;
        let mut body = body;
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else {
                writer.abort().await.ok();
                return Err(AppendError::Body);
            };
            let Ok(data) = frame.into_data() else {
                continue;
            };
            len += data.len() as u64;
            if len > limit {
                writer.abort().await.ok();
                return Err(AppendError::TooLarge);
            }
            if let Some(hasher) = hasher.as_mut() {
                hasher.update(&data);
            }
            if let Err(error) = writer.put(data).await {
                writer.abort().await.ok();
                return Err(std::io::Error::from(error).into());
            }
        }
        if len == start {
            writer.abort().await.ok();
        } else {
            writer.shutdown().await?;
            chunks.push(Chunk {
                path,
                offset: start,
                size: len - start,
            });
        }
        if let Some(hasher) = hasher {
            self.hashes.keep(id, fingerprint(&chunks), hasher);
        }
        Ok(len)
    }
}

/// What a remembered hash is of: the names of an upload's chunks (never
/// reused, each object never overwritten), hashed so that what is kept per
/// upload stays small.
fn fingerprint(chunks: &[Chunk]) -> Digest {
    let mut hasher = Hasher::default();
    for chunk in chunks {
        hasher.update(chunk.path.as_ref().as_bytes());
        hasher.update(b"\n");
    }
    hasher.finish()
}

/// 64 random bits in hex: a chunk's name is never reused.
fn nonce() -> String {
    format!("{:016x}", rand::rng().next_u64())
}

/// An upload's chunks checked against a digest.
struct Checked {
    blobs: ObjectBlobs,
    id: String,
    target: Path,
    chunks: Vec<Chunk>,
}

impl Verified for Checked {
    fn size(&self) -> u64 {
        self.chunks.iter().map(|c| c.size).sum()
    }

    fn store(self: Box<Self>) -> BoxFuture<'static, std::io::Result<()>> {
        Box::pin(async move {
            let store = &self.blobs.store;
            match self.chunks.as_slice() {
                [] => {
                    store.put(&self.target, PutPayload::default()).await?;
                }
                [one] if one.size <= MAX_COPY_BYTES => store.copy(&one.path, &self.target).await?,
                _ => {
                    let mut writer =
                        BufWriter::with_capacity(store.clone(), self.target.clone(), PART_BYTES)
                            .with_max_concurrency(PARTS_IN_FLIGHT);
                    let mut bytes = concatenated(store.clone(), self.chunks.clone());
                    while let Some(part) = bytes.next().await {
                        match part {
                            Ok(part) => writer.put(part).await?,
                            Err(error) => {
                                writer.abort().await.ok();
                                return Err(error);
                            }
                        }
                    }
                    writer.shutdown().await?;
                }
            }
            self.blobs.discard(&self.id).await
        })
    }
}
