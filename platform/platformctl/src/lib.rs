//! The Platform API's client side beyond the generated client: token
//! sources, the login cache `platformctl` keeps, and the output and exit
//! codes its binaries share (`platformctl`, `docker-credential-platform`),
//! and how they reach servers ([`transport`]: TLS roots, plain HTTP).

pub mod credentials;
pub mod docker;
pub mod text;
pub mod tokens;
pub mod transport;

use std::process::ExitCode;

use protoapi_runtime::Code;

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
    /// FAILED_PRECONDITION with the preconditions the server found unmet (a
    /// delete with dependents, whose list is printed): change them first.
    pub const PRECONDITION: u8 = 7;
}

/// The exit code of a failed call.
pub fn exit_code(error: &protoapi_runtime::Error) -> ExitCode {
    ExitCode::from(match error.code() {
        Code::InvalidArgument | Code::OutOfRange => exit::INVALID,
        Code::NotFound => exit::NOT_FOUND,
        Code::Unauthenticated | Code::PermissionDenied => exit::DENIED,
        Code::AlreadyExists | Code::Aborted => exit::CONFLICT,
        Code::Unavailable | Code::DeadlineExceeded => exit::UNAVAILABLE,
        Code::FailedPrecondition if !error.precondition_violations().is_empty() => {
            exit::PRECONDITION
        }
        _ => exit::FAILURE,
    })
}

/// `error: CODE: message`, then one line per field violation and per
/// precondition violation (a refused delete's dependents), the resource and
/// the reason, every part from the server [escaped](text::escape) for the
/// terminal.
pub fn describe(error: &protoapi_runtime::Error) -> String {
    use text::escape;
    let mut text = format!("error: {}", escape(&error.to_string()));
    for violation in error.field_violations() {
        text.push_str(&format!(
            "\n  {}: {}",
            escape(&violation.field),
            escape(&violation.description)
        ));
    }
    for violation in error.precondition_violations() {
        text.push_str(&format!(
            "\n  {} {}: {}",
            escape(&violation.r#type),
            escape(&violation.subject),
            escape(&violation.description)
        ));
    }
    if let Some(resource) = error.resource_info() {
        text.push_str(&format!(
            "\n  resource: {} {}",
            escape(&resource.resource_type),
            escape(&resource.resource_name)
        ));
    }
    if !error.reason().is_empty() {
        text.push_str(&format!("\n  reason: {}", escape(error.reason())));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_descriptions_are_escaped() {
        let error =
            protoapi_runtime::Error::new(Code::NotFound, "GONE\x1b[2J", "no \x1b]0;pwned\x07 here");
        let text = describe(&error);
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
        assert!(text.contains("no \\u{1b}]0;pwned\\u{7} here"), "{text}");
        assert!(text.contains("reason: GONE\\u{1b}[2J"), "{text}");
    }
}
