//! Reading and deleting blobs: `GET`/`HEAD`/`DELETE /v2/<name>/blobs/<digest>`,
//! with single HTTP ranges.

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, StatusCode, header};

use super::reply::{CONTENT_DIGEST, accepted, reply};
use crate::digest::Digest;
use crate::error::{Code, RegistryError, Result};
use crate::registry::Registry;

fn unknown() -> RegistryError {
    RegistryError::new(
        Code::BlobUnknown,
        "the repository holds no blob of this digest",
    )
}

/// The blob's bytes (or their size, for `HEAD`), the whole or one range.
pub async fn get(
    registry: &Registry,
    name: &str,
    digest: &Digest,
    headers: &HeaderMap,
    head: bool,
) -> Result<Response> {
    let size = registry
        .storage
        .index
        .blob(name, digest)
        .await?
        .ok_or_else(unknown)?;
    let range = match headers.get(header::RANGE) {
        Some(value) => Some(
            parse_range(value.to_str().unwrap_or_default(), size).ok_or_else(|| {
                RegistryError::new(Code::BlobUnknown, "the range is not satisfiable")
                    .with_status(StatusCode::RANGE_NOT_SATISFIABLE)
                    .with_header(header::CONTENT_RANGE, format!("bytes */{size}"))
            })?,
        ),
        None => None,
    };
    let (start, len) = range.unwrap_or((0, size));
    let body = if head || len == 0 {
        Body::empty()
    } else {
        registry
            .storage
            .blobs
            .read(digest, start, Some(len))
            .await?
            .ok_or_else(unknown)?
            .body
    };
    let length = len.to_string();
    let etag = format!("\"{digest}\"");
    let mut fields = vec![
        ("content-type", "application/octet-stream"),
        ("content-length", length.as_str()),
        (CONTENT_DIGEST, digest.as_str()),
        ("accept-ranges", "bytes"),
        ("etag", etag.as_str()),
    ];
    let content_range = format!("bytes {start}-{}/{size}", (start + len).saturating_sub(1));
    let status = if range.is_some() {
        fields.push(("content-range", content_range.as_str()));
        StatusCode::PARTIAL_CONTENT
    } else {
        StatusCode::OK
    };
    reply(status, &fields, body)
}

/// One range of `bytes=<first>-<last>`, `bytes=<first>-` or
/// `bytes=-<suffix>` within `size`, as `(start, len)`; `None` when it is
/// malformed, several, or outside the blob.
pub fn parse_range(value: &str, size: u64) -> Option<(u64, u64)> {
    let spec = value.trim().strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None;
    }
    let (first, last) = spec.split_once('-')?;
    let (start, end) = match (first.trim(), last.trim()) {
        ("", suffix) => {
            let suffix: u64 = suffix.parse().ok()?;
            (size.checked_sub(suffix.min(size))?, size.checked_sub(1)?)
        }
        (first, "") => (first.parse().ok()?, size.checked_sub(1)?),
        (first, last) => (
            first.parse().ok()?,
            last.parse::<u64>().ok()?.min(size.checked_sub(1)?),
        ),
    };
    (start <= end && start < size).then(|| (start, end - start + 1))
}

/// Forgets that the repository holds the blob (garbage collection removes
/// its bytes once no repository does).
pub async fn delete(registry: &Registry, name: &str, digest: &Digest) -> Result<Response> {
    match registry.storage.index.unlink_blob(name, digest).await? {
        true => accepted(),
        false => Err(unknown()),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_range;

    #[test]
    fn ranges_are_one_satisfiable_span() {
        assert_eq!(parse_range("bytes=0-9", 100), Some((0, 10)));
        assert_eq!(parse_range("bytes=90-", 100), Some((90, 10)));
        assert_eq!(parse_range("bytes=-10", 100), Some((90, 10)));
        assert_eq!(parse_range("bytes=95-200", 100), Some((95, 5)));
        for bad in [
            "bytes=100-",
            "bytes=5-2",
            "bytes=0-1,3-4",
            "items=0-1",
            "bytes=a-b",
            "bytes=-0",
        ] {
            assert_eq!(parse_range(bad, 100), None, "{bad}");
        }
        assert_eq!(parse_range("bytes=0-0", 0), None);
    }
}
