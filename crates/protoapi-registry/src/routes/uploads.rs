//! Pushing blobs: `POST /v2/<name>/blobs/uploads/` (monolithic with
//! `?digest=`, a mount with `?mount=&from=`, or a session), then `PATCH`
//! chunks (in order, `Content-Range` checked), `GET` its progress, `PUT`
//! `?digest=` to finish and `DELETE` to cancel. Nothing is visible under a
//! digest before the bytes are checked against it.

use std::collections::HashMap;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, StatusCode, header};
use rand::RngCore as _;

use super::reply::{created, reply, upload_range};
use crate::blobs::{AppendError, VerifyError};
use crate::digest::Digest;
use crate::error::{Code, RegistryError, Result};
use crate::registry::Registry;
use crate::token::Presented;

fn unknown() -> RegistryError {
    RegistryError::new(Code::BlobUploadUnknown, "no such upload in progress")
}

/// A new upload id: 128 random bits in hex.
fn new_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn is_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn location(name: &str, id: &str) -> String {
    format!("/v2/{name}/blobs/uploads/{id}")
}

/// `202 Accepted` for an upload holding `len` bytes.
fn progress(name: &str, id: &str, len: u64, status: StatusCode) -> Result<Response> {
    reply(
        status,
        &[
            ("location", &location(name, id)),
            ("range", &upload_range(len)),
            ("docker-upload-uuid", id),
            ("content-length", "0"),
        ],
        Body::empty(),
    )
}

/// `POST /v2/<name>/blobs/uploads/`.
pub async fn start(
    registry: &Registry,
    presented: &Presented,
    name: &str,
    query: &HashMap<String, String>,
    body: Body,
) -> Result<Response> {
    if let (Some(mount), Some(from)) = (query.get("mount"), query.get("from"))
        && let Some(response) =
            mount_from(registry, presented, name, &Digest::parse(mount)?, from).await?
    {
        return Ok(response);
    }
    let id = new_id();
    registry.storage.index.create_upload(&id, name).await?;
    registry.storage.blobs.start_upload(&id).await?;
    match query.get("digest") {
        Some(digest) => finish_with(registry, name, &id, &Digest::parse(digest)?, body).await,
        None => progress(name, &id, 0, StatusCode::ACCEPTED),
    }
}

/// Links a blob `from` holds into `name`, when the caller may pull `from`
/// and it holds it; `None` starts an upload instead, as the spec asks.
async fn mount_from(
    registry: &Registry,
    presented: &Presented,
    name: &str,
    digest: &Digest,
    from: &str,
) -> Result<Option<Response>> {
    if !crate::path::is_name(from) || !registry.allowed(presented, from).await?.pull {
        return Ok(None);
    }
    let Some(size) = registry.storage.index.blob(from, digest).await? else {
        return Ok(None);
    };
    if registry.storage.blobs.size(digest).await?.is_none() {
        return Ok(None);
    }
    registry.storage.index.link_blob(name, digest, size).await?;
    created(&format!("/v2/{name}/blobs/{digest}"), digest).map(Some)
}

/// The upload `id` of `name`, with the bytes staged so far.
async fn staged(registry: &Registry, name: &str, id: &str) -> Result<u64> {
    if !is_id(id) {
        return Err(unknown());
    }
    match registry.storage.index.upload(id).await? {
        Some((repo, _)) if repo == name => {}
        _ => return Err(unknown()),
    }
    registry
        .storage
        .blobs
        .upload_len(id)
        .await?
        .ok_or_else(unknown)
}

/// `GET /v2/<name>/blobs/uploads/<id>`: how far it got.
pub async fn status(registry: &Registry, name: &str, id: &str) -> Result<Response> {
    let len = staged(registry, name, id).await?;
    progress(name, id, len, StatusCode::NO_CONTENT)
}

/// `PATCH /v2/<name>/blobs/uploads/<id>`: one more chunk, which must start
/// where the upload ends (`416` with the upload's `Range` otherwise).
pub async fn patch(
    registry: &Registry,
    name: &str,
    id: &str,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response> {
    let len = staged(registry, name, id).await?;
    if let Some(range) = headers.get(header::CONTENT_RANGE) {
        let start = range
            .to_str()
            .ok()
            .map(|text| text.trim().trim_start_matches("bytes "))
            .and_then(|text| text.split_once('-'))
            .and_then(|(start, _)| start.trim().parse::<u64>().ok());
        if start != Some(len) {
            return Err(RegistryError::new(
                Code::BlobUploadInvalid,
                format!("the chunk must start at byte {len}, where the upload ends"),
            )
            .with_status(StatusCode::RANGE_NOT_SATISFIABLE)
            .with_header(header::RANGE, upload_range(len))
            .with_header(header::LOCATION, location(name, id)));
        }
    }
    let len = append(registry, id, body).await?;
    progress(name, id, len, StatusCode::ACCEPTED)
}

/// Appends `body` to upload `id` within the size limit; an upload that
/// would grow past it is forgotten.
async fn append(registry: &Registry, id: &str, body: Body) -> Result<u64> {
    let limit = registry.storage.limits.max_blob_bytes;
    match registry.storage.blobs.append(id, body, limit).await {
        Ok(len) => Ok(len),
        Err(AppendError::TooLarge) => {
            registry.storage.forget(id).await?;
            Err(RegistryError::new(
                Code::SizeInvalid,
                format!("blobs are at most {limit} bytes"),
            )
            .with_status(StatusCode::PAYLOAD_TOO_LARGE))
        }
        Err(AppendError::Body) => Err(RegistryError::new(
            Code::BlobUploadInvalid,
            "the chunk broke off; ask the upload's status and resume from its end",
        )),
        Err(AppendError::Busy) => Err(busy()),
        Err(AppendError::Chunks) => Err(RegistryError::new(
            Code::BlobUploadInvalid,
            "the upload holds as many chunks as it may; send the rest in one",
        )),
        Err(AppendError::Io(error)) => Err(gone_or(error)),
    }
}

/// Another request on the same upload is still running.
fn busy() -> RegistryError {
    RegistryError::new(
        Code::BlobUploadInvalid,
        "another request is writing this upload; send its chunks one after another",
    )
    .with_status(StatusCode::CONFLICT)
}

/// An upload finished or cancelled meanwhile is unknown; other errors are
/// the storage's.
fn gone_or(error: std::io::Error) -> RegistryError {
    match error.kind() {
        std::io::ErrorKind::NotFound => unknown(),
        _ => error.into(),
    }
}

/// `PUT /v2/<name>/blobs/uploads/<id>?digest=`: the last chunk (if any),
/// then the blob, once its bytes are `digest`.
pub async fn finish(
    registry: &Registry,
    name: &str,
    id: &str,
    query: &HashMap<String, String>,
    body: Body,
) -> Result<Response> {
    staged(registry, name, id).await?;
    let digest = query.get("digest").ok_or_else(|| {
        RegistryError::new(Code::DigestInvalid, "finishing an upload needs `?digest=`")
    })?;
    finish_with(registry, name, id, &Digest::parse(digest)?, body).await
}

async fn finish_with(
    registry: &Registry,
    name: &str,
    id: &str,
    digest: &Digest,
    body: Body,
) -> Result<Response> {
    let blobs = &registry.storage.blobs;
    append(registry, id, body).await?;
    let verified = match blobs.verify(id, digest).await {
        Ok(verified) => verified,
        Err(VerifyError::Mismatch(actual)) => {
            registry.storage.forget(id).await?;
            return Err(RegistryError::new(
                Code::DigestInvalid,
                format!("the upload's bytes are {actual}, not {digest}"),
            ));
        }
        Err(VerifyError::Busy) => return Err(busy()),
        Err(VerifyError::Io(error)) => return Err(gone_or(error)),
    };
    // Linked first, stored second: garbage collection sets a blob aside,
    // then looks for links, so a blob linked meanwhile is put back, and one
    // linked after the check is stored after it was set aside.
    registry
        .storage
        .index
        .link_blob(name, digest, verified.size())
        .await?;
    verified.store().await?;
    registry.storage.index.delete_upload(id).await?;
    created(&format!("/v2/{name}/blobs/{digest}"), digest)
}

/// `DELETE /v2/<name>/blobs/uploads/<id>`.
pub async fn cancel(registry: &Registry, name: &str, id: &str) -> Result<Response> {
    staged(registry, name, id).await?;
    registry.storage.forget(id).await?;
    reply(StatusCode::NO_CONTENT, &[], Body::empty())
}
