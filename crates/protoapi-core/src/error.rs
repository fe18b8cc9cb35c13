//! The Google Cloud API error model, rendered for both transports.
//!
//! An [`Error`] is a canonical [`Code`], a client-facing message and typed
//! details. Every error carries an `ErrorInfo` (reason + domain); the other
//! details are optional. The same value becomes the REST body
//! `{"error": {"code", "status", "message", "details"}}` and a gRPC status
//! with the details in `grpc-status-details-bin`.
//!
//! Internal failures keep their cause for the log only: the client sees a fixed
//! message, never SQL, file paths or panics.
//!
//! Storage faults are not internal failures: storage that cannot be reached
//! is `UNAVAILABLE` (HTTP 503, reason `STORAGE_UNAVAILABLE`) with a
//! `RetryInfo` saying when to try again ([`Error::storage_unavailable`]),
//! and storage out of space is `RESOURCE_EXHAUSTED` (HTTP 429, reason
//! `STORAGE_FULL`, no `RetryInfo`: retrying soon does not help)
//! ([`Error::storage_full`]). Either keeps its cause (host names, driver
//! messages) for the log. An error with a retry delay is sent over REST with
//! a `Retry-After` header as well.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::Value;
use tonic_types::{ErrorDetail, StatusExt};

mod body;

/// A client's value as error messages quote it: at most 64 characters, so
/// an oversized input never makes an oversized error.
pub fn excerpt(value: &str) -> Cow<'_, str> {
    const MAX: usize = 64;
    match value.char_indices().nth(MAX) {
        None => Cow::Borrowed(value),
        Some((end, _)) => Cow::Owned(format!("{}…", &value[..end])),
    }
}

/// The most field violations one error reports.
pub const MAX_VIOLATIONS: usize = 100;

/// The most bytes of field violations one error reports: a gRPC error
/// travels in trailers, which clients commonly cap at 16 KiB.
pub const MAX_VIOLATION_BYTES: usize = 8 << 10;

pub use tonic_types::{ErrorInfo, FieldViolation, PreconditionViolation, ResourceInfo, RetryInfo};

/// The retry delay [`Error::storage_unavailable`] advises.
pub const STORAGE_RETRY_DELAY: Duration = Duration::from_secs(1);

/// The longest retry delay an error read back from an answer keeps: a
/// server cannot make a client wait longer by advising it.
const MAX_READ_RETRY_DELAY: Duration = Duration::from_secs(3600);

/// The domain of errors answered outside the scope of any API's domain
/// ([`scoped_domain`]) that name none of their own.
pub const DEFAULT_DOMAIN: &str = "api";

tokio::task_local! {
    static API_DOMAIN: &'static str;
}

/// Runs `future` with `domain` as the ErrorInfo domain of the errors it
/// answers that name none (unknown routes, authentication, limits): the
/// router built for an API runs every request so (the server names it in
/// its own timeouts' answers).
pub fn scoped_domain<F: std::future::Future>(
    domain: &'static str,
    future: F,
) -> impl std::future::Future<Output = F::Output> {
    API_DOMAIN.scope(domain, future)
}

/// Canonical error codes (`google.rpc.Code`) that this API returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    InvalidArgument,
    FailedPrecondition,
    OutOfRange,
    Unauthenticated,
    PermissionDenied,
    NotFound,
    AlreadyExists,
    Aborted,
    ResourceExhausted,
    Cancelled,
    DeadlineExceeded,
    Internal,
    Unimplemented,
    Unavailable,
}

impl Code {
    /// Every code this API returns.
    pub const ALL: [Code; 14] = [
        Code::InvalidArgument,
        Code::FailedPrecondition,
        Code::OutOfRange,
        Code::Unauthenticated,
        Code::PermissionDenied,
        Code::NotFound,
        Code::AlreadyExists,
        Code::Aborted,
        Code::ResourceExhausted,
        Code::Cancelled,
        Code::DeadlineExceeded,
        Code::Internal,
        Code::Unimplemented,
        Code::Unavailable,
    ];

    /// The `UPPER_SNAKE_CASE` name used in the REST `status` field.
    pub const fn name(self) -> &'static str {
        match self {
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::OutOfRange => "OUT_OF_RANGE",
            Code::Unauthenticated => "UNAUTHENTICATED",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::NotFound => "NOT_FOUND",
            Code::AlreadyExists => "ALREADY_EXISTS",
            Code::Aborted => "ABORTED",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::Cancelled => "CANCELLED",
            Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Code::Internal => "INTERNAL",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::Unavailable => "UNAVAILABLE",
        }
    }

    /// The HTTP status of this code (the contract's mapping, one place).
    pub fn http_status(self) -> StatusCode {
        match self {
            Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => {
                StatusCode::BAD_REQUEST
            }
            Code::Unauthenticated => StatusCode::UNAUTHORIZED,
            Code::PermissionDenied => StatusCode::FORBIDDEN,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::AlreadyExists | Code::Aborted => StatusCode::CONFLICT,
            Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
            Code::Cancelled => StatusCode::from_u16(499).unwrap(),
            Code::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
            Code::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
            Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The code of a REST `status` name (`NOT_FOUND`), if this API returns it.
    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|code| code.name() == name)
    }

    /// The code of a gRPC status; codes this API never returns (`UNKNOWN`,
    /// `DATA_LOSS`) read as `INTERNAL`.
    pub fn from_grpc(code: tonic::Code) -> Code {
        Code::ALL
            .into_iter()
            .find(|known| known.grpc() == code)
            .unwrap_or(Code::Internal)
    }

    /// The closest code to an HTTP status without an error body (a proxy's answer).
    pub fn from_http_status(status: StatusCode) -> Code {
        match status.as_u16() {
            400 => Code::InvalidArgument,
            401 => Code::Unauthenticated,
            403 => Code::PermissionDenied,
            404 => Code::NotFound,
            405 => Code::Unimplemented,
            409 => Code::Aborted,
            429 => Code::ResourceExhausted,
            499 => Code::Cancelled,
            501 => Code::Unimplemented,
            502..=504 => Code::Unavailable,
            _ => Code::Internal,
        }
    }

    const fn grpc(self) -> tonic::Code {
        match self {
            Code::InvalidArgument => tonic::Code::InvalidArgument,
            Code::FailedPrecondition => tonic::Code::FailedPrecondition,
            Code::OutOfRange => tonic::Code::OutOfRange,
            Code::Unauthenticated => tonic::Code::Unauthenticated,
            Code::PermissionDenied => tonic::Code::PermissionDenied,
            Code::NotFound => tonic::Code::NotFound,
            Code::AlreadyExists => tonic::Code::AlreadyExists,
            Code::Aborted => tonic::Code::Aborted,
            Code::ResourceExhausted => tonic::Code::ResourceExhausted,
            Code::Cancelled => tonic::Code::Cancelled,
            Code::DeadlineExceeded => tonic::Code::DeadlineExceeded,
            Code::Internal => tonic::Code::Internal,
            Code::Unimplemented => tonic::Code::Unimplemented,
            Code::Unavailable => tonic::Code::Unavailable,
        }
    }
}

/// An API error: what the client sees, plus an optional cause for the log.
///
/// The details live behind one box so that `Result<_, Error>` stays small.
#[derive(Clone)]
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Clone)]
struct Inner {
    code: Code,
    message: String,
    reason: Cow<'static, str>,
    domain: Option<String>,
    metadata: HashMap<String, String>,
    resource_info: Option<ResourceInfo>,
    field_violations: Vec<FieldViolation>,
    precondition_violations: Vec<PreconditionViolation>,
    /// When to try again (`RetryInfo`), if the server advises it.
    retry_delay: Option<Duration>,
    /// HTTP status override (413 for oversized bodies); the gRPC code is unchanged.
    http_status: Option<StatusCode>,
}

impl Error {
    /// A new error with a code, an `ErrorInfo` reason and a client-facing message.
    pub fn new(
        code: Code,
        reason: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        Error {
            inner: Box::new(Inner {
                code,
                message: message.into(),
                reason: reason.into(),
                domain: None,
                metadata: HashMap::new(),
                resource_info: None,
                field_violations: Vec::new(),
                precondition_violations: Vec::new(),
                retry_delay: None,
                http_status: None,
            }),
        }
    }

    /// `NOT_FOUND` with a `ResourceInfo` naming the missing resource.
    pub fn not_found(resource_type: &str, resource_name: &str) -> Self {
        Error::new(
            Code::NotFound,
            "RESOURCE_NOT_FOUND",
            format!("{resource_type} `{resource_name}` not found"),
        )
        .with_resource(resource_type, resource_name)
    }

    /// `INVALID_ARGUMENT` with one field violation.
    pub fn invalid_field(field: impl Into<String>, description: impl Into<String>) -> Self {
        Error::invalid_fields(vec![FieldViolation::new(field, description)])
    }

    /// `INVALID_ARGUMENT` with a `BadRequest` listing every violation.
    ///
    /// At most [`MAX_VIOLATIONS`] of at most [`MAX_VIOLATION_BYTES`] in all
    /// are reported (always the first; the message counts them all), so an
    /// answer stays small whatever the request held.
    pub fn invalid_fields(mut violations: Vec<FieldViolation>) -> Self {
        let message = match violations.as_slice() {
            [one] => format!("invalid value for `{}`: {}", one.field, one.description),
            many => format!("{} invalid fields in the request", many.len()),
        };
        let mut spent = 0;
        let kept = violations
            .iter()
            .take(MAX_VIOLATIONS)
            .position(|violation| {
                spent += violation.field.len() + violation.description.len();
                spent > MAX_VIOLATION_BYTES
            })
            .map_or(MAX_VIOLATIONS, |over| over.max(1));
        violations.truncate(kept);
        let mut error = Error::new(Code::InvalidArgument, "INVALID_ARGUMENT", message);
        error.inner.field_violations = violations;
        error
    }

    /// `FAILED_PRECONDITION` with a `PreconditionFailure`.
    pub fn failed_precondition(
        reason: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
        violations: Vec<PreconditionViolation>,
    ) -> Self {
        let mut error = Error::new(Code::FailedPrecondition, reason, message);
        error.inner.precondition_violations = violations;
        error
    }

    /// `INTERNAL`: the cause is logged, the client sees a fixed message.
    pub fn internal(cause: impl fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Error::new(Code::Internal, "INTERNAL", "internal error")
    }

    /// `UNAVAILABLE` (`STORAGE_UNAVAILABLE`) with a `RetryInfo` of
    /// [`STORAGE_RETRY_DELAY`]: the storage cannot be reached now (refused
    /// or lost connections, no connection free in time, a database shutting
    /// down). The cause is logged, the client sees a fixed message.
    pub fn storage_unavailable(cause: impl fmt::Display) -> Self {
        tracing::warn!(error = %cause, "storage unavailable");
        Error::new(
            Code::Unavailable,
            "STORAGE_UNAVAILABLE",
            "the storage is unavailable; retry later",
        )
        .with_retry_delay(STORAGE_RETRY_DELAY)
    }

    /// `RESOURCE_EXHAUSTED` (`STORAGE_FULL`): the storage refused a write
    /// for want of space (or a file size limit or quota). Nothing of the
    /// write was kept; reads go on. The cause is logged, the client sees a
    /// fixed message, and no retry is advised: space must be freed first.
    pub fn storage_full(cause: impl fmt::Display) -> Self {
        tracing::error!(error = %cause, "storage full");
        Error::new(
            Code::ResourceExhausted,
            "STORAGE_FULL",
            "the storage is full: writes are refused until space is freed; reads still work",
        )
    }

    /// `UNIMPLEMENTED` for a method the server does not provide.
    pub fn unimplemented(method: &str) -> Self {
        Error::new(
            Code::Unimplemented,
            "NOT_IMPLEMENTED",
            format!("`{method}` is not implemented by this server"),
        )
    }

    /// Attaches a `ResourceInfo`.
    pub fn with_resource(mut self, resource_type: &str, resource_name: &str) -> Self {
        self.inner.resource_info = Some(ResourceInfo::new(resource_type, resource_name, "", ""));
        self
    }

    /// Adds an `ErrorInfo` metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.inner.metadata.insert(key.into(), value.into());
        self
    }

    /// Sets the `ErrorInfo` domain unless one is already set.
    pub fn in_domain(mut self, domain: &str) -> Self {
        if self.inner.domain.is_none() {
            self.inner.domain = Some(domain.to_owned());
        }
        self
    }

    /// Adds a `RetryInfo`: the client should wait `delay` before retrying
    /// (sent over REST as `Retry-After` too, in whole seconds).
    pub fn with_retry_delay(mut self, delay: Duration) -> Self {
        self.inner.retry_delay = Some(delay);
        self
    }

    /// The delay of the error's `RetryInfo`, if it has one.
    pub fn retry_delay(&self) -> Option<Duration> {
        self.inner.retry_delay
    }

    /// Overrides the HTTP status (the gRPC code stays the canonical one).
    pub fn with_http_status(mut self, status: StatusCode) -> Self {
        self.inner.http_status = Some(status);
        self
    }

    pub fn code(&self) -> Code {
        self.inner.code
    }

    pub fn message(&self) -> &str {
        &self.inner.message
    }

    pub fn reason(&self) -> &str {
        &self.inner.reason
    }

    pub fn domain(&self) -> &str {
        self.inner.domain.as_deref().unwrap_or_else(|| {
            API_DOMAIN
                .try_with(|domain| *domain)
                .unwrap_or(DEFAULT_DOMAIN)
        })
    }

    pub fn field_violations(&self) -> &[FieldViolation] {
        &self.inner.field_violations
    }

    pub fn resource_info(&self) -> Option<&ResourceInfo> {
        self.inner.resource_info.as_ref()
    }

    /// Adds a precondition violation (the error should be FAILED_PRECONDITION).
    pub fn push_precondition_violation(&mut self, violation: PreconditionViolation) {
        self.inner.precondition_violations.push(violation);
    }

    pub fn precondition_violations(&self) -> &[PreconditionViolation] {
        &self.inner.precondition_violations
    }

    /// The HTTP status this error is sent with.
    pub fn http_status(&self) -> StatusCode {
        self.inner
            .http_status
            .unwrap_or(self.inner.code.http_status())
    }

    fn error_info(&self) -> ErrorInfo {
        ErrorInfo::new(
            self.inner.reason.clone(),
            self.domain(),
            self.inner.metadata.clone(),
        )
    }

    /// The REST body: `{"error": {...}}` with `@type`-tagged details.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.body()).expect("error JSON always serializes")
    }

    /// The REST body of this error, to serialize.
    fn body(&self) -> body::Body<'_> {
        use body::Detail;
        let inner = &self.inner;
        let mut details = vec![Detail::info(self.domain(), &inner.reason, &inner.metadata)];
        details.extend(inner.resource_info.as_ref().map(Detail::resource));
        if !inner.field_violations.is_empty() {
            details.push(Detail::bad_request(&inner.field_violations));
        }
        if !inner.precondition_violations.is_empty() {
            details.push(Detail::preconditions(&inner.precondition_violations));
        }
        details.extend(
            inner
                .retry_delay
                .map(|delay| Detail::retry(duration_json(delay))),
        );
        let status = self.http_status().as_u16();
        body::Body::new(status, inner.code.name(), &inner.message, details)
    }

    /// Reads an error back from a REST response: the `{"error": {...}}` body
    /// [`Error::to_json`] writes, or, when the body is not one (a proxy's
    /// answer), the code of the HTTP status with reason `HTTP_ERROR`.
    pub fn from_json(status: StatusCode, body: &[u8]) -> Self {
        let parsed: Option<Value> = serde_json::from_slice(body).ok();
        let Some(Value::Object(error)) =
            parsed.and_then(|mut v| v.get_mut("error").map(Value::take))
        else {
            let text = String::from_utf8_lossy(body);
            return Error::new(
                Code::from_http_status(status),
                "HTTP_ERROR",
                format!("HTTP {status}: {}", excerpt(text.trim())),
            )
            .with_http_status(status);
        };
        let text = |value: &Value, key: &str| value[key].as_str().unwrap_or_default().to_owned();
        let code = error
            .get("status")
            .and_then(Value::as_str)
            .and_then(Code::from_name)
            .unwrap_or_else(|| Code::from_http_status(status));
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut built = Error::new(code, "", message);
        let details = error.get("details").and_then(Value::as_array);
        for detail in details.into_iter().flatten() {
            match detail["@type"].as_str().unwrap_or_default() {
                ErrorInfo::TYPE_URL => {
                    built.inner.reason = text(detail, "reason").into();
                    built.inner.domain = Some(text(detail, "domain"));
                    if let Some(metadata) = detail["metadata"].as_object() {
                        built.inner.metadata = metadata
                            .iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                            .collect();
                    }
                }
                ResourceInfo::TYPE_URL => {
                    built.inner.resource_info = Some(ResourceInfo::new(
                        text(detail, "resourceType"),
                        text(detail, "resourceName"),
                        text(detail, "owner"),
                        text(detail, "description"),
                    ));
                }
                tonic_types::BadRequest::TYPE_URL => {
                    let violations = detail["fieldViolations"].as_array();
                    built.inner.field_violations = violations
                        .into_iter()
                        .flatten()
                        .map(|v| FieldViolation::new(text(v, "field"), text(v, "description")))
                        .collect();
                }
                tonic_types::PreconditionFailure::TYPE_URL => {
                    let violations = detail["violations"].as_array();
                    built.inner.precondition_violations = violations
                        .into_iter()
                        .flatten()
                        .map(|v| {
                            PreconditionViolation::new(
                                text(v, "type"),
                                text(v, "subject"),
                                text(v, "description"),
                            )
                        })
                        .collect();
                }
                RetryInfo::TYPE_URL => {
                    built.inner.retry_delay =
                        detail["retryDelay"].as_str().and_then(parse_duration);
                }
                _ => {}
            }
        }
        if built.http_status() != status {
            built.inner.http_status = Some(status);
        }
        built
    }

    /// Reads an error back from a gRPC status (used by clients and tests).
    ///
    /// `None` when the status carries no `ErrorInfo` (it did not come from an
    /// API built on this runtime); [`Error::from_grpc_status`] reads any status.
    pub fn from_status(status: &tonic::Status) -> Option<Self> {
        let code = Code::from_grpc(status.code());
        let details = status.get_error_details();
        let info = details.error_info()?;
        let mut error = Error::new(code, info.reason.clone(), status.message());
        error.inner.domain = Some(info.domain.clone());
        error.inner.metadata = info.metadata.clone();
        error.inner.resource_info = details.resource_info().cloned();
        error.inner.field_violations = details
            .bad_request()
            .map(|b| b.field_violations.clone())
            .unwrap_or_default();
        error.inner.precondition_violations = details
            .precondition_failure()
            .map(|p| p.violations.clone())
            .unwrap_or_default();
        error.inner.retry_delay = details
            .retry_info()
            .and_then(|info| info.retry_delay)
            .map(|delay| delay.min(MAX_READ_RETRY_DELAY));
        Some(error)
    }
}

impl Error {
    /// Reads any gRPC status: as [`Error::from_status`] when it carries an
    /// `ErrorInfo`, else its code and message with reason `GRPC_ERROR`
    /// (transport failures, other servers).
    pub fn from_grpc_status(status: &tonic::Status) -> Self {
        Error::from_status(status).unwrap_or_else(|| {
            Error::new(
                Code::from_grpc(status.code()),
                "GRPC_ERROR",
                status.message().to_owned(),
            )
        })
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("code", &self.inner.code)
            .field("reason", &self.inner.reason)
            .field("message", &self.inner.message)
            .field("field_violations", &self.inner.field_violations)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.inner.code.name(), self.inner.message)
    }
}

impl std::error::Error for Error {}

impl From<Error> for tonic::Status {
    fn from(error: Error) -> Self {
        let mut details = vec![ErrorDetail::from(error.error_info())];
        if let Some(resource) = error.inner.resource_info {
            details.push(resource.into());
        }
        if !error.inner.field_violations.is_empty() {
            details.push(tonic_types::BadRequest::new(error.inner.field_violations).into());
        }
        if !error.inner.precondition_violations.is_empty() {
            details.push(
                tonic_types::PreconditionFailure::new(error.inner.precondition_violations).into(),
            );
        }
        if let Some(delay) = error.inner.retry_delay {
            details.push(RetryInfo::new(Some(delay)).into());
        }
        tonic::Status::with_error_details_vec(error.inner.code.grpc(), error.inner.message, details)
    }
}

/// A `google.protobuf.Duration` in proto3 JSON: seconds with up to nine
/// fractional digits and an `s` (`1s`, `0.250s`).
fn duration_json(delay: Duration) -> String {
    // Canonical proto3 JSON: 0, 3, 6 or 9 fractional digits.
    let (seconds, nanos) = (delay.as_secs(), delay.subsec_nanos());
    match nanos {
        0 => format!("{seconds}s"),
        _ if nanos % 1_000_000 == 0 => format!("{seconds}.{:03}s", nanos / 1_000_000),
        _ if nanos % 1_000 == 0 => format!("{seconds}.{:06}s", nanos / 1_000),
        _ => format!("{seconds}.{nanos:09}s"),
    }
}

/// Reads [`duration_json`]'s form back; `None` for anything else (negative,
/// malformed); at most [`MAX_READ_RETRY_DELAY`].
fn parse_duration(text: &str) -> Option<Duration> {
    let number = text.strip_suffix('s')?;
    let (seconds, fraction) = match number.split_once('.') {
        Some((_, "")) => return None,
        Some(split) => split,
        None => (number, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if seconds.is_empty() || seconds.len() > 12 || fraction.len() > 9 {
        return None;
    }
    if !digits(seconds) || !digits(fraction) {
        return None;
    }
    let nanos = if fraction.is_empty() {
        0
    } else {
        format!("{fraction:0<9}").parse().ok()?
    };
    let delay = Duration::new(seconds.parse().ok()?, nanos);
    Some(delay.min(MAX_READ_RETRY_DELAY))
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&self.body()).expect("error JSON always serializes");
        let mut response = (
            self.http_status(),
            [(http::header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response();
        // The access layer's status label, when the status alone does not
        // say it (400 is also FAILED_PRECONDITION, 409 ALREADY_EXISTS): a
        // common answer such as a 404 allocates nothing for it.
        let code = self.code();
        if Code::from_http_status(self.http_status()) != code {
            response.extensions_mut().insert(code);
        }
        if let Some(delay) = self.inner.retry_delay {
            // Whole seconds, rounded up (RFC 9110 `delay-seconds`).
            let seconds = delay.as_secs() + u64::from(delay.subsec_nanos() > 0);
            response
                .headers_mut()
                .insert(http::header::RETRY_AFTER, seconds.into());
        }
        response
    }
}

#[cfg(test)]
mod answer_code_tests {
    use super::*;

    #[test]
    fn an_answer_carries_its_code_where_its_status_could_mean_another() {
        for code in Code::ALL {
            let error = Error::new(code, "TEST", "x");
            let response = error.into_response();
            let carried = response.extensions().get::<Code>().copied();
            let read = carried.unwrap_or_else(|| Code::from_http_status(response.status()));
            assert_eq!(read, code);
        }
        let precondition = Error::new(Code::FailedPrecondition, "TEST", "x").into_response();
        assert_eq!(
            precondition.extensions().get::<Code>(),
            Some(&Code::FailedPrecondition)
        );
        let missing = Error::new(Code::NotFound, "TEST", "x").into_response();
        assert!(missing.extensions().is_empty());
    }
}

#[cfg(test)]
mod excerpt_tests {
    #[test]
    fn long_values_are_shortened() {
        assert_eq!(super::excerpt("short"), "short");
        let long = "é".repeat(100_000);
        let quoted = super::excerpt(&long);
        assert_eq!(quoted.chars().count(), 65);
        assert!(quoted.ends_with('…'));
    }
}

#[cfg(test)]
mod reading_back {
    use super::*;

    /// An error with every detail a client can read.
    fn detailed() -> Error {
        let violation =
            PreconditionViolation::new("DEPENDENTS", "library.example/Shelf/abc", "3 books");
        let mut error =
            Error::failed_precondition("SHELF_NOT_EMPTY", "the shelf holds books", vec![violation])
                .with_resource("library.example/Shelf", "abc")
                .with_metadata("books", "3")
                .with_retry_delay(Duration::from_millis(1500))
                .in_domain("library.example");
        error.inner.field_violations = vec![FieldViolation::new("shelf.name", "required")];
        error
    }

    fn same(read: &Error, sent: &Error) {
        assert_eq!(read.code(), sent.code());
        assert_eq!(read.message(), sent.message());
        assert_eq!(read.reason(), sent.reason());
        assert_eq!(read.domain(), sent.domain());
        assert_eq!(read.inner.metadata, sent.inner.metadata);
        // The details types have no `PartialEq`; their `Debug` shows every field.
        let debug = |e: &Error| {
            format!(
                "{:?} {:?} {:?}",
                e.resource_info(),
                e.field_violations(),
                e.precondition_violations()
            )
        };
        assert_eq!(debug(read), debug(sent));
        assert_eq!(read.http_status(), sent.http_status());
        assert_eq!(read.retry_delay(), sent.retry_delay());
    }

    #[test]
    fn retry_delays_are_proto3_json_durations() {
        for (delay, text) in [
            (Duration::from_secs(1), "1s"),
            (Duration::from_millis(250), "0.250s"),
            (Duration::from_micros(1_000_001), "1.000001s"),
            (Duration::new(3, 1), "3.000000001s"),
        ] {
            assert_eq!(duration_json(delay), text);
            assert_eq!(parse_duration(text), Some(delay));
        }
        for bad in [
            "",
            "s",
            "1",
            "-1s",
            "1.s",
            ".5s",
            "1.0000000001s",
            "1e3s",
            "١s",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
        assert_eq!(parse_duration("999999999999s"), Some(MAX_READ_RETRY_DELAY));
    }

    #[test]
    fn storage_faults_hide_their_cause() {
        let unavailable = Error::storage_unavailable("connect to db.internal:5432: refused");
        assert_eq!(unavailable.code(), Code::Unavailable);
        assert_eq!(unavailable.http_status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(unavailable.retry_delay(), Some(STORAGE_RETRY_DELAY));
        let response = unavailable.clone().into_response();
        assert_eq!(response.headers()[http::header::RETRY_AFTER], "1");
        let full = Error::storage_full("SQLITE_FULL at /var/lib/db");
        assert_eq!(
            (full.code(), full.reason()),
            (Code::ResourceExhausted, "STORAGE_FULL")
        );
        assert_eq!(full.retry_delay(), None);
        for error in [unavailable, full] {
            let text = error.to_json().to_string();
            assert!(
                !text.contains("db.internal") && !text.contains("/var/lib"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_rest_body_reads_back_as_the_error_sent() {
        let sent = detailed();
        let body = serde_json::to_vec(&sent.to_json()).unwrap();
        same(&Error::from_json(sent.http_status(), &body), &sent);
    }

    #[test]
    fn a_grpc_status_reads_back_as_the_error_sent() {
        let sent = detailed();
        let status = tonic::Status::from(sent.clone());
        same(&Error::from_grpc_status(&status), &sent);
    }

    #[test]
    fn answers_without_the_error_model_keep_their_status() {
        let error = Error::from_json(StatusCode::BAD_GATEWAY, b"<html>proxy</html>");
        assert_eq!(error.code(), Code::Unavailable);
        assert_eq!(error.reason(), "HTTP_ERROR");
        assert!(error.message().contains("proxy"), "{error}");
        let status = tonic::Status::unavailable("connection refused");
        let error = Error::from_grpc_status(&status);
        assert_eq!(
            (error.code(), error.reason()),
            (Code::Unavailable, "GRPC_ERROR")
        );
    }
}

#[cfg(test)]
mod body_tests {
    use super::*;

    #[test]
    fn the_rest_body_names_every_detail_keys_in_order() {
        let violation = FieldViolation {
            field: "f".into(),
            description: "bad".into(),
            ..Default::default()
        };
        let mut error = Error::invalid_fields(vec![violation])
            .with_resource("t", "n")
            .with_metadata("b", "2")
            .with_metadata("a", "1")
            .with_retry_delay(Duration::from_millis(1500));
        error.push_precondition_violation(PreconditionViolation {
            r#type: "T".into(),
            subject: "s".into(),
            description: "d".into(),
        });
        let body = serde_json::to_string(&error.body()).unwrap();
        assert_eq!(
            body,
            concat!(
                r#"{"error":{"code":400,"details":["#,
                r#"{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"api","#,
                r#""metadata":{"a":"1","b":"2"},"reason":"INVALID_ARGUMENT"},"#,
                r#"{"@type":"type.googleapis.com/google.rpc.ResourceInfo","resourceName":"n","resourceType":"t"},"#,
                r#"{"@type":"type.googleapis.com/google.rpc.BadRequest","#,
                r#""fieldViolations":[{"description":"bad","field":"f"}]},"#,
                r#"{"@type":"type.googleapis.com/google.rpc.PreconditionFailure","#,
                r#""violations":[{"description":"d","subject":"s","type":"T"}]},"#,
                r#"{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.500s"}],"#,
                r#""message":"invalid value for `f`: bad","status":"INVALID_ARGUMENT"}}"#,
            )
        );
        assert_eq!(error.to_json().to_string(), body);
    }
}
