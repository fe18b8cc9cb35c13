//! `google.api.HttpBody` over REST: a method whose answer is an `HttpBody`
//! answers its raw `data` with its `content_type` ([`respond`]); a method
//! whose request is one, or whose `body` field is one, takes the raw request
//! body and its `Content-Type` ([`RawBody`]), at most
//! [`MAX_BODY_BYTES`](super::MAX_BODY_BYTES) like JSON bodies.
//!
//! The runtime does not name the generated `HttpBody` message: generated
//! handlers move its `content_type` and `data` in and out.

use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};

use protoapi_core::error::{Code, Error};

/// The media type of raw data sent or answered without one.
pub const DEFAULT_CONTENT_TYPE: &str = "application/octet-stream";

/// A raw request body, of any content type, at most
/// [`MAX_BODY_BYTES`](super::MAX_BODY_BYTES).
#[derive(Debug, Default)]
pub struct RawBody {
    /// The request's `Content-Type`, empty when it sent none.
    pub content_type: String,
    pub data: Bytes,
}

impl<S: Send + Sync> axum::extract::FromRequest<S> for RawBody {
    type Rejection = Error;

    async fn from_request(request: axum::extract::Request, _state: &S) -> Result<Self, Error> {
        let content_type = match request.headers().get(header::CONTENT_TYPE) {
            None => String::new(),
            Some(value) => value.to_str().map(str::to_owned).map_err(|_| {
                Error::new(
                    Code::InvalidArgument,
                    "BAD_CONTENT_TYPE",
                    "the `Content-Type` header is not printable ASCII",
                )
                .with_http_status(StatusCode::BAD_REQUEST)
            })?,
        };
        let data = super::read_body(request).await?;
        Ok(RawBody { content_type, data })
    }
}

/// The `Content-Type` of raw data answered with `content_type` (empty:
/// [`DEFAULT_CONTENT_TYPE`]); one that is no header value is the handler's
/// mistake, answered as `INTERNAL`.
pub fn content_type(content_type: &str) -> Result<HeaderValue, Error> {
    if content_type.is_empty() {
        return Ok(HeaderValue::from_static(DEFAULT_CONTENT_TYPE));
    }
    HeaderValue::from_str(content_type).map_err(|_| {
        Error::internal(format!(
            "the answer's content type `{}` is not a header value",
            protoapi_core::error::excerpt(content_type)
        ))
    })
}

/// `data` answered as it is, with `content_type`.
pub fn respond(content_type: &str, data: Vec<u8>) -> Result<Response, Error> {
    let content_type = self::content_type(content_type)?;
    let mut response = Response::new(axum::body::Body::from(data));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, content_type);
    Ok(sandboxed(response))
}

/// Browsers take the declared type as it is (the data is the application's,
/// not the API's: no guessing it is a page), and whatever the type, a page
/// opened from it is sandboxed: a unique origin, no script, no forms, so
/// data a user uploaded cannot act as the API's (or the console's) origin.
pub(super) fn sandboxed(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox; default-src 'none'"),
    );
    response
}
