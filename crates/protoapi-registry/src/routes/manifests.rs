//! Manifests, tags and referrers: `GET`/`HEAD`/`PUT`/`DELETE
//! /v2/<name>/manifests/<reference>`, `GET /v2/<name>/tags/list` with
//! `n`/`last` paging, and `GET /v2/<name>/referrers/<digest>`.

use std::collections::HashMap;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, StatusCode, header};

use super::reply::{CONTENT_DIGEST, accepted, reply};
use crate::digest::Digest;
use crate::error::{Code, RegistryError, Result};
use crate::manifest::{self, MAX_MANIFEST_BYTES, OCI_INDEX};
use crate::path::Reference;
use crate::registry::Registry;

/// Tags one page lists at most.
pub const MAX_TAGS_PAGE: u32 = 1000;

fn unknown() -> RegistryError {
    RegistryError::new(
        Code::ManifestUnknown,
        "the repository holds no manifest of this reference",
    )
}

/// The manifest (or its size, for `HEAD`), with its media type.
pub async fn get(
    registry: &Registry,
    name: &str,
    reference: &Reference,
    head: bool,
) -> Result<Response> {
    let stored = registry
        .storage
        .index
        .manifest(name, reference)
        .await?
        .ok_or_else(unknown)?;
    let length = stored.content.len().to_string();
    let etag = format!("\"{}\"", stored.digest);
    let body = if head {
        Body::empty()
    } else {
        Body::from(stored.content)
    };
    reply(
        StatusCode::OK,
        &[
            ("content-type", &stored.media_type),
            ("content-length", &length),
            (CONTENT_DIGEST, &stored.digest),
            ("etag", &etag),
        ],
        body,
    )
}

/// Stores a manifest whose blobs (and, for an index, manifests) the
/// repository holds, under its digest and the tag it is put at.
pub async fn put(
    registry: &Registry,
    name: &str,
    reference: &Reference,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response> {
    let bytes = axum::body::to_bytes(body, MAX_MANIFEST_BYTES)
        .await
        .map_err(|_| {
            RegistryError::new(
                Code::ManifestInvalid,
                format!("manifests are at most {MAX_MANIFEST_BYTES} bytes"),
            )
            .with_status(StatusCode::PAYLOAD_TOO_LARGE)
        })?;
    let digest = Digest::of(&bytes);
    if let Reference::Digest(named) = reference
        && *named != digest
    {
        return Err(RegistryError::new(
            Code::DigestInvalid,
            format!("the manifest's bytes are {digest}, not {named}"),
        ));
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let parsed = manifest::parse(content_type, &bytes)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| RegistryError::new(Code::ManifestInvalid, "a manifest is UTF-8 JSON"))?;
    let index = &registry.storage.index;
    let missing = [
        index.missing_blobs(name, &parsed.blobs).await?,
        index.missing_manifests(name, &parsed.manifests).await?,
    ]
    .concat();
    if let Some(first) = missing.first() {
        return Err(RegistryError::new(
            Code::ManifestBlobUnknown,
            format!("the repository holds nothing of digest {first}, which the manifest refers to"),
        ));
    }
    let tag = match reference {
        Reference::Tag(tag) => Some(tag.as_str()),
        Reference::Digest(_) => None,
    };
    let changes = index
        .put_manifest(name, &digest, &parsed, text, tag)
        .await?;
    registry.tell(&changes).await;
    let location = format!("/v2/{name}/manifests/{digest}");
    let mut fields = vec![
        ("location", location.as_str()),
        (CONTENT_DIGEST, digest.as_str()),
        ("content-length", "0"),
    ];
    let subject = parsed.subject.as_ref().map(Digest::to_string);
    if let Some(subject) = &subject {
        fields.push(("oci-subject", subject));
    }
    reply(StatusCode::CREATED, &fields, Body::empty())
}

/// Deletes a manifest by digest (with its tags), or only a tag.
pub async fn delete(registry: &Registry, name: &str, reference: &Reference) -> Result<Response> {
    let index = &registry.storage.index;
    let changes = match reference {
        Reference::Digest(digest) => index.delete_manifest(name, digest).await?,
        Reference::Tag(tag) => index.delete_tag(name, tag).await?,
    };
    registry.tell(&changes.ok_or_else(unknown)?).await;
    accepted()
}

/// `{"name", "tags"}`: at most `n` tags after `last`, in lexical order,
/// and a `Link` to the next page when there is one.
pub async fn tags(
    registry: &Registry,
    name: &str,
    query: &HashMap<String, String>,
) -> Result<Response> {
    let n = match query.get("n") {
        Some(n) => n
            .parse::<u32>()
            .map_err(|_| {
                RegistryError::new(Code::Unsupported, "`n` is a number of tags")
                    .with_status(StatusCode::BAD_REQUEST)
            })?
            .min(MAX_TAGS_PAGE),
        None => MAX_TAGS_PAGE,
    };
    let last = query.get("last").map(String::as_str).unwrap_or_default();
    let mut tags = if n == 0 {
        Vec::new()
    } else {
        registry.storage.index.tags(name, last, n + 1).await?
    };
    let more = tags.len() > n as usize;
    tags.truncate(n as usize);
    let body = serde_json::json!({"name": name, "tags": tags}).to_string();
    let link = match (more, tags.last()) {
        (true, Some(last)) => Some(format!(
            "</v2/{name}/tags/list?n={n}&last={last}>; rel=\"next\""
        )),
        _ => None,
    };
    let mut fields = vec![("content-type", "application/json")];
    if let Some(link) = &link {
        fields.push(("link", link));
    }
    reply(StatusCode::OK, &fields, Body::from(body))
}

/// The manifests whose subject is `digest`, as an image index, filtered
/// by `artifactType` when asked.
pub async fn referrers(
    registry: &Registry,
    name: &str,
    digest: &Digest,
    query: &HashMap<String, String>,
) -> Result<Response> {
    let artifact_type = query.get("artifactType").map(String::as_str);
    let manifests = registry
        .storage
        .index
        .referrers(name, digest, artifact_type)
        .await?;
    let body =
        serde_json::json!({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": manifests})
            .to_string();
    let mut fields = vec![("content-type", OCI_INDEX)];
    if artifact_type.is_some() {
        fields.push(("oci-filters-applied", "artifactType"));
    }
    reply(StatusCode::OK, &fields, Body::from(body))
}
