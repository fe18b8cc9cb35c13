//! The error model for gRPC requests that fail before a handler runs.
//!
//! tonic answers a request it cannot decode by itself, with a bare status:
//! `INTERNAL` carrying the decoder's text for a message that is not valid
//! protobuf or a malformed frame, `OUT_OF_RANGE` for a message above its
//! size limit, and no `grpc-status-details-bin`. [`request_errors`] is a
//! middleware that gives those failures the API's error model instead:
//!
//! - it checks the framing of the request stream itself: a message above
//!   [`MAX_MESSAGE_BYTES`] is `RESOURCE_EXHAUSTED` (`MESSAGE_TOO_LARGE`) as
//!   soon as its length prefix arrives; a compressed flag without a
//!   `grpc-encoding`, an unknown flag or a stream that ends inside a frame
//!   is `INVALID_ARGUMENT` (`MALFORMED_FRAME`);
//! - it rewrites the remaining bare error statuses: `INTERNAL` (the message
//!   did not decode, or is missing) becomes `INVALID_ARGUMENT`
//!   (`MALFORMED_REQUEST`) without the decoder's text; tonic's size errors
//!   become `RESOURCE_EXHAUSTED` (`MESSAGE_TOO_LARGE`); any other bare status
//!   keeps its code and message and gains an `ErrorInfo`.
//!
//! Errors from handlers already carry details and pass through unchanged.
//! Only trailers-only answers (status in the response headers) are
//! rewritten: a stream that has started answering reports its own errors.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::{Buf, Bytes};
use hyper::body::{Frame, SizeHint};

use protoapi_core::error::{Code, Error};

/// Largest gRPC request message accepted (CONTRACT §5), as for REST bodies.
pub const MAX_MESSAGE_BYTES: usize = protoapi_http::rest::MAX_BODY_BYTES;

const STATUS: &str = "grpc-status";
const DETAILS: &str = "grpc-status-details-bin";
const ENCODING: &str = "grpc-encoding";

/// Gives gRPC requests that fail before their handler (in `next`) the
/// API's error model (see the [module docs](self)); `next` answers other
/// requests untouched.
pub async fn request_errors<F: Future<Output = Response>>(
    request: Request,
    next: impl FnOnce(Request) -> F,
) -> Response {
    if !protoapi_http::rest::is_grpc(request.headers()) {
        return next(request).await;
    }
    let compressed = request
        .headers()
        .get(ENCODING)
        .is_some_and(|encoding| encoding.as_bytes() != b"identity");
    let path = request.uri().path().to_owned();
    let problem = Arc::new(Mutex::new(None));
    let request = request.map(|body| {
        Body::new(Checked {
            inner: body,
            frames: Frames::new(compressed),
            problem: Arc::clone(&problem),
        })
    });
    let response = next(request).await;
    let problem = problem
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .take();
    if let Some(error) = problem {
        return with_headers_of(tonic::Status::from(error).into_http(), response);
    }
    if !response.headers().contains_key(STATUS) || response.headers().contains_key(DETAILS) {
        return response;
    }
    let Some(status) = tonic::Status::from_header_map(response.headers()) else {
        return response;
    };
    match explain(&status, &path) {
        Some(error) => with_headers_of(tonic::Status::from(error).into_http(), response),
        None => response,
    }
}

/// The API error for a bare status tonic answered with.
fn explain(status: &tonic::Status, path: &str) -> Option<Error> {
    let error = match status.code() {
        tonic::Code::Ok => return None,
        tonic::Code::Internal => {
            tracing::debug!(
                method = path,
                message = status.message(),
                "undecodable gRPC request"
            );
            malformed_request(path)
        }
        tonic::Code::OutOfRange | tonic::Code::ResourceExhausted => message_too_large(),
        other => {
            let code = canonical(other)?;
            Error::new(code, code.name(), status.message())
        }
    };
    Some(error)
}

fn malformed_request(path: &str) -> Error {
    Error::new(
        Code::InvalidArgument,
        "MALFORMED_REQUEST",
        format!("the request is not a valid protobuf request message for `{path}`"),
    )
}

fn malformed_frame(problem: &str) -> Error {
    Error::new(
        Code::InvalidArgument,
        "MALFORMED_FRAME",
        format!("the request stream is not valid gRPC framing: {problem}"),
    )
}

fn message_too_large() -> Error {
    Error::new(
        Code::ResourceExhausted,
        "MESSAGE_TOO_LARGE",
        format!("the request message exceeds {MAX_MESSAGE_BYTES} bytes"),
    )
    .with_metadata("limit", MAX_MESSAGE_BYTES.to_string())
}

fn canonical(code: tonic::Code) -> Option<Code> {
    Code::ALL.into_iter().find(|c| c.name() == code_name(code))
}

fn code_name(code: tonic::Code) -> &'static str {
    match code {
        tonic::Code::InvalidArgument => "INVALID_ARGUMENT",
        tonic::Code::FailedPrecondition => "FAILED_PRECONDITION",
        tonic::Code::OutOfRange => "OUT_OF_RANGE",
        tonic::Code::Unauthenticated => "UNAUTHENTICATED",
        tonic::Code::PermissionDenied => "PERMISSION_DENIED",
        tonic::Code::NotFound => "NOT_FOUND",
        tonic::Code::AlreadyExists => "ALREADY_EXISTS",
        tonic::Code::Aborted => "ABORTED",
        tonic::Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        tonic::Code::Cancelled => "CANCELLED",
        tonic::Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        tonic::Code::Internal => "INTERNAL",
        tonic::Code::Unimplemented => "UNIMPLEMENTED",
        tonic::Code::Unavailable => "UNAVAILABLE",
        _ => "",
    }
}

/// `replacement`, keeping headers of `original` it does not set itself
/// (e.g. `grpc-accept-encoding`).
fn with_headers_of(mut replacement: Response, original: Response) -> Response {
    let (parts, _) = original.into_parts();
    for (name, value) in &parts.headers {
        if !replacement.headers().contains_key(name) {
            replacement.headers_mut().append(name, value.clone());
        }
    }
    replacement
}

/// Incremental check of the gRPC length-prefixed message framing.
#[derive(Debug)]
struct Frames {
    /// Whether the request declares a `grpc-encoding`.
    compressed: bool,
    /// Bytes of the current 5-byte prefix received.
    prefix: [u8; 5],
    prefix_len: usize,
    /// Bytes of the current message still to come.
    remaining: usize,
}

impl Frames {
    fn new(compressed: bool) -> Self {
        Frames {
            compressed,
            prefix: [0; 5],
            prefix_len: 0,
            remaining: 0,
        }
    }

    /// Consumes the next bytes of the stream.
    fn feed(&mut self, mut data: &[u8]) -> Result<(), Error> {
        while !data.is_empty() {
            if self.remaining > 0 {
                let n = self.remaining.min(data.len());
                self.remaining -= n;
                data = &data[n..];
                continue;
            }
            let n = (5 - self.prefix_len).min(data.len());
            self.prefix[self.prefix_len..self.prefix_len + n].copy_from_slice(&data[..n]);
            self.prefix_len += n;
            data = &data[n..];
            if self.prefix_len == 5 {
                self.prefix_len = 0;
                match self.prefix[0] {
                    0 => {}
                    1 if self.compressed => {}
                    1 => {
                        return Err(malformed_frame(
                            "a message is flagged compressed but the request declares no grpc-encoding",
                        ));
                    }
                    flag => {
                        return Err(malformed_frame(&format!(
                            "unknown compressed flag {flag} (0 and 1 are defined)"
                        )));
                    }
                }
                let len = u32::from_be_bytes([
                    self.prefix[1],
                    self.prefix[2],
                    self.prefix[3],
                    self.prefix[4],
                ]) as usize;
                if len > MAX_MESSAGE_BYTES {
                    return Err(message_too_large());
                }
                self.remaining = len;
            }
        }
        Ok(())
    }

    /// The stream ended: it must not end inside a frame.
    fn finish(&self) -> Result<(), Error> {
        if self.prefix_len > 0 {
            return Err(malformed_frame(
                "the stream ends inside a message's length prefix",
            ));
        }
        if self.remaining > 0 {
            return Err(malformed_frame("the stream ends inside a message"));
        }
        Ok(())
    }
}

/// A gRPC request body checked by [`Frames`]; the first problem is kept for
/// the response and ends the body with an error.
struct Checked {
    inner: Body,
    frames: Frames,
    problem: Arc<Mutex<Option<Error>>>,
}

impl Checked {
    fn fail(&mut self, error: Error) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let message = error.message().to_owned();
        *self
            .problem
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(error);
        Poll::Ready(Some(Err(axum::Error::new(message))))
    }

    fn failed(&self) -> bool {
        self.problem
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .is_some()
    }
}

impl hyper::body::Body for Checked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.failed() {
            return Poll::Ready(None);
        }
        match ready!(Pin::new(&mut self.inner).poll_frame(cx)) {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref()
                    && let Err(error) = self.frames.feed(data.chunk())
                {
                    return self.fail(error);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(error)) => Poll::Ready(Some(Err(error))),
            None => match self.frames.finish() {
                Ok(()) => Poll::Ready(None),
                Err(error) => self.fail(error),
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        // The end is where the framing is checked.
        false
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(flag: u8, len: u32, payload: &[u8]) -> Vec<u8> {
        let mut bytes = vec![flag];
        bytes.extend_from_slice(&len.to_be_bytes());
        bytes.extend_from_slice(payload);
        bytes
    }

    fn check(compressed: bool, chunks: &[&[u8]]) -> Result<(), String> {
        let mut frames = Frames::new(compressed);
        for chunk in chunks {
            frames.feed(chunk).map_err(|e| e.reason().to_owned())?;
        }
        frames.finish().map_err(|e| e.reason().to_owned())
    }

    #[test]
    fn well_formed_streams_pass_in_any_chunking() {
        let mut stream = frame(0, 3, b"abc");
        stream.extend(frame(0, 0, b""));
        stream.extend(frame(0, 2, b"xy"));
        assert_eq!(check(false, &[&stream]), Ok(()));
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(check(false, &bytes), Ok(()));
        assert_eq!(check(false, &[]), Ok(()));
        assert_eq!(check(true, &[&frame(1, 1, b"z")]), Ok(()));
    }

    #[test]
    fn framing_problems_are_named() {
        let malformed = Err("MALFORMED_FRAME".to_owned());
        assert_eq!(check(false, &[&frame(1, 1, b"z")]), malformed);
        assert_eq!(check(true, &[&frame(2, 1, b"z")]), malformed);
        assert_eq!(check(false, &[&[0, 0, 0]]), malformed);
        assert_eq!(check(false, &[&frame(0, 10, b"abc")]), malformed);
        let limit = MAX_MESSAGE_BYTES as u32;
        assert_eq!(check(false, &[&frame(0, limit, b"")]), malformed);
        assert_eq!(
            check(false, &[&frame(0, limit + 1, b"")]),
            Err("MESSAGE_TOO_LARGE".to_owned())
        );
    }

    #[test]
    fn bare_statuses_gain_error_info() {
        let path = "/library.v1.ShelfService/GetShelf";
        let decode =
            tonic::Status::internal("failed to decode Protobuf message: invalid wire type");
        let error = explain(&decode, path).unwrap();
        assert_eq!(error.code(), Code::InvalidArgument);
        assert_eq!(error.reason(), "MALFORMED_REQUEST");
        assert!(!error.message().contains("wire type"));
        let large = tonic::Status::out_of_range("Error, decoded message length too large");
        assert_eq!(
            explain(&large, path).unwrap().code(),
            Code::ResourceExhausted
        );
        let other = tonic::Status::unimplemented("not here");
        let error = explain(&other, path).unwrap();
        assert_eq!(
            (error.code(), error.reason(), error.message()),
            (Code::Unimplemented, "UNIMPLEMENTED", "not here")
        );
        assert!(explain(&tonic::Status::unknown("?"), path).is_none());
    }
}
