//! The Platform API's client side beyond the generated client: token
//! sources, the login cache `platformctl` keeps, and the output and exit
//! codes its binaries share (`platformctl`, `docker-credential-platform`),
//! and how they reach servers ([`transport`]: TLS roots, plain HTTP).

pub mod credentials;
pub mod tokens;
pub mod transport;

use std::process::ExitCode;

use runtime::Code;

/// Exit codes of the binaries, one per kind of failure a script handles
/// differently (documented in `platformctl --help`).
pub mod exit {
    /// Any other failure.
    pub const FAILURE: u8 = 1;
    /// The input was invalid: a usage error, or INVALID_ARGUMENT / OUT_OF_RANGE.
    pub const INVALID: u8 = 2;
    /// NOT_FOUND.
    pub const NOT_FOUND: u8 = 3;
    /// UNAUTHENTICATED or PERMISSION_DENIED.
    pub const DENIED: u8 = 4;
    /// ALREADY_EXISTS or ABORTED (a stale etag): read again and retry.
    pub const CONFLICT: u8 = 5;
    /// UNAVAILABLE or DEADLINE_EXCEEDED: try again later.
    pub const UNAVAILABLE: u8 = 6;
}

/// The exit code of a failed call.
pub fn exit_code(error: &runtime::Error) -> ExitCode {
    ExitCode::from(match error.code() {
        Code::InvalidArgument | Code::OutOfRange => exit::INVALID,
        Code::NotFound => exit::NOT_FOUND,
        Code::Unauthenticated | Code::PermissionDenied => exit::DENIED,
        Code::AlreadyExists | Code::Aborted => exit::CONFLICT,
        Code::Unavailable | Code::DeadlineExceeded => exit::UNAVAILABLE,
        _ => exit::FAILURE,
    })
}

/// `error: CODE: message`, then one line per field violation and the reason.
pub fn describe(error: &runtime::Error) -> String {
    let mut text = format!("error: {error}");
    for violation in error.field_violations() {
        text.push_str(&format!(
            "\n  {}: {}",
            violation.field, violation.description
        ));
    }
    if let Some(resource) = error.resource_info() {
        text.push_str(&format!(
            "\n  resource: {} {}",
            resource.resource_type, resource.resource_name
        ));
    }
    if !error.reason().is_empty() {
        text.push_str(&format!("\n  reason: {}", error.reason()));
    }
    text
}
