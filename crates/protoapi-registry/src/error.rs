//! The Distribution Spec's error format: `{"errors": [{"code", "message",
//! "detail"}]}` with the spec's codes, and the `WWW-Authenticate` challenge
//! of an UNAUTHORIZED answer.

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use protoapi_core::error::Code as ApiCode;

/// The header every answer under `/v2/` carries.
pub const API_VERSION: (&str, &str) = ("docker-distribution-api-version", "registry/2.0");

/// An error code of the Distribution Spec (and `UNAVAILABLE`, which
/// registries answer while their storage is down).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    BlobUnknown,
    BlobUploadInvalid,
    BlobUploadUnknown,
    DigestInvalid,
    ManifestBlobUnknown,
    ManifestInvalid,
    ManifestUnknown,
    NameInvalid,
    NameUnknown,
    SizeInvalid,
    Unauthorized,
    Denied,
    Unsupported,
    TooManyRequests,
    Unavailable,
}

impl Code {
    /// The code as the spec spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::BlobUnknown => "BLOB_UNKNOWN",
            Code::BlobUploadInvalid => "BLOB_UPLOAD_INVALID",
            Code::BlobUploadUnknown => "BLOB_UPLOAD_UNKNOWN",
            Code::DigestInvalid => "DIGEST_INVALID",
            Code::ManifestBlobUnknown => "MANIFEST_BLOB_UNKNOWN",
            Code::ManifestInvalid => "MANIFEST_INVALID",
            Code::ManifestUnknown => "MANIFEST_UNKNOWN",
            Code::NameInvalid => "NAME_INVALID",
            Code::NameUnknown => "NAME_UNKNOWN",
            Code::SizeInvalid => "SIZE_INVALID",
            Code::Unauthorized => "UNAUTHORIZED",
            Code::Denied => "DENIED",
            Code::Unsupported => "UNSUPPORTED",
            Code::TooManyRequests => "TOOMANYREQUESTS",
            Code::Unavailable => "UNAVAILABLE",
        }
    }

    fn status(self) -> StatusCode {
        match self {
            Code::BlobUnknown
            | Code::BlobUploadUnknown
            | Code::ManifestUnknown
            | Code::NameUnknown => StatusCode::NOT_FOUND,
            Code::Unauthorized => StatusCode::UNAUTHORIZED,
            Code::Denied => StatusCode::FORBIDDEN,
            Code::Unsupported => StatusCode::METHOD_NOT_ALLOWED,
            Code::TooManyRequests => StatusCode::TOO_MANY_REQUESTS,
            Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::BAD_REQUEST,
        }
    }
}

/// A refused registry request.
#[derive(Debug)]
pub struct RegistryError {
    code: Code,
    status: StatusCode,
    message: String,
    headers: Vec<(header::HeaderName, String)>,
}

/// What registry handlers answer.
pub type Result<T, E = RegistryError> = std::result::Result<T, E>;

impl RegistryError {
    /// `code` with its usual status and `message`.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        RegistryError {
            code,
            status: code.status(),
            message: message.into(),
            headers: Vec::new(),
        }
    }

    /// The same error answered with `status` (the spec's 416 for an upload
    /// range out of order, 413 for a body over the limit).
    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    /// The same error with `name: value` in its answer.
    pub fn with_header(mut self, name: header::HeaderName, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// The error's code.
    pub fn code(&self) -> Code {
        self.code
    }

    /// UNAUTHORIZED, challenging the client to fetch a token at `realm`
    /// for `service` and `scope` (RFC 6750, as Docker's token flow reads it).
    pub fn challenge(realm: &str, service: &str, scope: Option<&str>, message: &str) -> Self {
        RegistryError::new(Code::Unauthorized, message)
            .with_header(header::WWW_AUTHENTICATE, challenge(realm, service, scope))
    }

    /// DENIED for credentials that hold too little, with the challenge a
    /// client may answer with a token for `scope` (RFC 6750's
    /// `insufficient_scope`).
    pub fn insufficient(realm: &str, service: &str, scope: &str) -> Self {
        let challenge = format!(
            "{},error=\"insufficient_scope\"",
            challenge(realm, service, Some(scope))
        );
        RegistryError::new(Code::Denied, "requested access to the resource is denied")
            .with_header(header::WWW_AUTHENTICATE, challenge)
    }

    /// A storage failure: UNAVAILABLE (503, retry after a second); never the
    /// driver's words, which are logged.
    pub fn storage(error: impl std::fmt::Display) -> Self {
        tracing::error!(%error, "registry storage failed");
        RegistryError::new(Code::Unavailable, "the registry's storage is unavailable")
            .with_header(header::RETRY_AFTER, "1")
    }
}

fn challenge(realm: &str, service: &str, scope: Option<&str>) -> String {
    let mut challenge = format!("Bearer realm=\"{realm}\",service=\"{service}\"");
    if let Some(scope) = scope {
        challenge.push_str(&format!(",scope=\"{scope}\""));
    }
    challenge
}

impl std::fmt::Display for RegistryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for RegistryError {}

impl From<sqlx::Error> for RegistryError {
    fn from(error: sqlx::Error) -> Self {
        RegistryError::storage(error)
    }
}

impl From<std::io::Error> for RegistryError {
    fn from(error: std::io::Error) -> Self {
        RegistryError::storage(error)
    }
}

impl From<protoapi_core::error::Error> for RegistryError {
    /// An API error met while deciding access: storage trouble stays
    /// retryable; anything else is a refusal.
    fn from(error: protoapi_core::error::Error) -> Self {
        match error.code() {
            ApiCode::Unavailable => RegistryError::storage(error.message()),
            ApiCode::ResourceExhausted => {
                RegistryError::new(Code::TooManyRequests, error.message().to_owned())
            }
            ApiCode::Unauthenticated => {
                RegistryError::new(Code::Unauthorized, error.message().to_owned())
            }
            _ => RegistryError::new(Code::Denied, "requested access to the resource is denied"),
        }
    }
}

impl IntoResponse for RegistryError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({
            "errors": [{"code": self.code.as_str(), "message": self.message, "detail": null}]
        });
        let mut response = (self.status, axum::Json(body)).into_response();
        let headers = response.headers_mut();
        headers.insert(API_VERSION.0, HeaderValue::from_static(API_VERSION.1));
        for (name, value) in self.headers {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.append(name, value);
            }
        }
        response
    }
}
