//! Blob contents, content-addressed behind [`BlobStore`], with the uploads
//! that become them. An upload is staged apart and reaches the blobs only
//! once its digest is verified, in one step a crash cannot leave half done.
//! [`FsBlobs`] keeps both in a directory (by default, the data dir's);
//! [`ObjectBlobs`] in object storage (S3 and the others `object_store`
//! speaks), where replicas share them.

mod fs;
mod hashes;
mod object;
mod staging;

use std::time::SystemTime;

use axum::body::Body;
use protoapi_core::auth::BoxFuture;

pub use self::fs::FsBlobs;
pub use self::object::ObjectBlobs;
use crate::digest::Digest;

/// A blob's bytes from `start`, `len` of them.
pub struct Contents {
    pub body: Body,
    /// The blob's whole size.
    pub size: u64,
}

/// Why appending to an upload stopped.
#[derive(Debug)]
pub enum AppendError {
    /// The upload would grow past the limit.
    TooLarge,
    /// Another request is writing to the upload now.
    Busy,
    /// The upload holds as many chunks as the store takes.
    Chunks,
    /// The client's body broke off: the upload holds what the store kept of
    /// it (its length says how much), and the client resumes from there.
    Body,
    Io(std::io::Error),
}

impl From<std::io::Error> for AppendError {
    fn from(error: std::io::Error) -> Self {
        AppendError::Io(error)
    }
}

/// Where verified blobs live, by digest, and where uploads wait until they
/// are verified. Upload ids are 32 lowercase hex characters, checked by the
/// caller; the index in SQL says which uploads exist and whose they are.
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
    /// Moves the blob out of reach (reads answer it missing) while garbage
    /// collection makes sure nothing refers to it; whether it was stored.
    fn set_aside<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<bool>>;
    /// Brings a blob set aside back, unless it was stored again meanwhile.
    fn restore<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<()>>;
    /// Removes a blob set aside for good.
    fn purge<'a>(&'a self, digest: &'a Digest) -> BoxFuture<'a, std::io::Result<()>>;
    /// Every stored blob, with when it was last stored.
    fn list(&self) -> BoxFuture<'_, std::io::Result<Vec<(Digest, SystemTime)>>>;

    /// Starts upload `id`, empty.
    fn start_upload<'a>(&'a self, id: &'a str) -> BoxFuture<'a, std::io::Result<()>>;
    /// The bytes upload `id` holds, if this store has it.
    fn upload_len<'a>(&'a self, id: &'a str) -> BoxFuture<'a, std::io::Result<Option<u64>>>;
    /// Appends `body` to upload `id` as it arrives, refusing to grow past
    /// `limit` bytes; answers the new length.
    fn append<'a>(
        &'a self,
        id: &'a str,
        body: Body,
        limit: u64,
    ) -> BoxFuture<'a, Result<u64, AppendError>>;
    /// Checks that upload `id` holds `digest`'s bytes: what is checked is
    /// exactly what [`Verified::store`] stores, whatever else writes to the
    /// upload meanwhile. Answers the digest its bytes have when another.
    fn verify<'a>(
        &'a self,
        id: &'a str,
        digest: &'a Digest,
    ) -> BoxFuture<'a, Result<Box<dyn Verified>, VerifyError>>;
    /// Forgets upload `id`.
    fn discard<'a>(&'a self, id: &'a str) -> BoxFuture<'a, std::io::Result<()>>;
}

/// An upload whose bytes were checked against a digest.
pub trait Verified: Send {
    /// How many bytes were checked.
    fn size(&self) -> u64;
    /// Makes the bytes checked the blob of their digest, durably and in one
    /// step (a crash leaves the blob whole or absent), and forgets the
    /// upload.
    fn store(self: Box<Self>) -> BoxFuture<'static, std::io::Result<()>>;
}

/// Why an upload did not verify.
#[derive(Debug)]
pub enum VerifyError {
    /// Its bytes have this other digest.
    Mismatch(Digest),
    /// Another request is writing to it now.
    Busy,
    Io(std::io::Error),
}

impl From<std::io::Error> for VerifyError {
    fn from(error: std::io::Error) -> Self {
        VerifyError::Io(error)
    }
}

/// `Ok(None)` for a missing file or object.
fn found<T>(result: std::io::Result<T>) -> std::io::Result<Option<T>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}
