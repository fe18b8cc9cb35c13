//! Building the registry's answers.

use axum::body::Body;
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};

use crate::digest::Digest;
use crate::error::{Code, RegistryError, Result};

/// The header naming a blob's or manifest's digest.
pub const CONTENT_DIGEST: &str = "docker-content-digest";

/// An answer with `status`, `headers` and `body`.
pub fn reply(status: StatusCode, headers: &[(&str, &str)], body: Body) -> Result<Response> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    for (name, value) in headers {
        let value = HeaderValue::from_str(value).map_err(|_| {
            RegistryError::new(Code::NameInvalid, "a value cannot be sent in a header")
        })?;
        response.headers_mut().append(
            header::HeaderName::from_bytes(name.as_bytes()).expect("header names are constants"),
            value,
        );
    }
    Ok(response)
}

/// `201 Created` of content now at `location`, with its digest.
pub fn created(location: &str, digest: &Digest) -> Result<Response> {
    reply(
        StatusCode::CREATED,
        &[
            ("location", location),
            (CONTENT_DIGEST, digest.as_str()),
            ("content-length", "0"),
        ],
        Body::empty(),
    )
}

/// `202 Accepted`, for deletes.
pub fn accepted() -> Result<Response> {
    reply(
        StatusCode::ACCEPTED,
        &[("content-length", "0")],
        Body::empty(),
    )
}

/// The `Range` header of an upload holding `len` bytes (`0-0` when empty,
/// as clients read it).
pub fn upload_range(len: u64) -> String {
    format!("0-{}", len.saturating_sub(1))
}

/// The answer to a method the endpoint does not take.
pub fn unsupported() -> RegistryError {
    RegistryError::new(Code::Unsupported, "the endpoint does not take this method")
}
