//! What one call is, whichever transport carries it: its route, the raw
//! bodies of `google.api.HttpBody` methods, the retry policy, and the error
//! of an API that cannot be reached.

use std::fmt;
use std::time::Duration;

use protoapi_core::error::{Code, Error};
use protoapi_http::rest::template::Template;

/// One RPC as generated clients describe it: how to call it over each transport.
#[derive(Clone, Copy, Debug)]
pub struct Route {
    /// The gRPC path, `/package.Service/Method`.
    pub grpc_path: &'static str,
    /// Its `google.api.http` rule; `None` for a method served over gRPC
    /// only, which a REST connection answers `UNIMPLEMENTED`.
    pub http: Option<HttpRule>,
}

/// How an RPC is called over REST: its `google.api.http` rule.
#[derive(Clone, Copy, Debug)]
pub struct HttpRule {
    /// The HTTP verb (`GET`, `POST`, ...).
    pub verb: &'static str,
    /// The rule's path template.
    pub template: Template,
    /// The request field sent as the body, `*` for the whole request, if any.
    pub body: Option<&'static str>,
    /// The response field the rule answers instead of the whole response
    /// (`response_body`), if any.
    pub response_body: Option<&'static str>,
}

impl Route {
    /// Whether a request for `path` is a call of this route, over gRPC or
    /// over its HTTP rule (with any non-empty value of each variable).
    pub fn is_path(&self, path: &str) -> bool {
        if path == self.grpc_path {
            return true;
        }
        self.http.is_some_and(|rule| {
            matches!(
                rule.template.bind(path),
                Ok(Some(vars)) if vars.0.iter().all(|(_, value)| !value.is_empty())
            )
        })
    }

    /// Its HTTP rule, or `UNIMPLEMENTED` naming the method, which has none.
    pub fn http(&self) -> Result<&HttpRule, Error> {
        self.http.as_ref().ok_or_else(|| {
            let method = self.grpc_path.trim_start_matches('/').replace('/', ".");
            Error::new(
                Code::Unimplemented,
                "NOT_IMPLEMENTED",
                format!("`{method}` is served over gRPC only: it has no HTTP rule"),
            )
        })
    }
}

/// How often and how patiently a call is retried.
///
/// Retried, for every method (writes included, since the call was refused
/// before it took effect):
///
/// - `UNAVAILABLE` (the server cannot be reached, or cannot reach its
///   storage), after exponential backoff, or after the delay of the
///   answer's `RetryInfo` when that is longer;
/// - `RESOURCE_EXHAUSTED` only when the answer carries a `RetryInfo` (the
///   server says when to come back, e.g. a rate limit); without one (a full
///   disk, an oversized request) retrying soon does not help.
///
/// Every pause is at most [`Retry::max_backoff`], whatever a server advises.
/// Nothing else is retried: `DEADLINE_EXCEEDED` (the client's timeout
/// included) and transport failures after a request was sent may hide a
/// write that happened, `ABORTED` needs a fresh read, and the other codes
/// would answer the same again.
#[derive(Clone, Copy, Debug)]
pub struct Retry {
    /// Attempts in all, the first included (1 disables retries).
    pub attempts: u32,
    /// The pause before the second attempt; doubled for each further one.
    pub initial_backoff: Duration,
    /// The longest pause between attempts.
    pub max_backoff: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            attempts: 4,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
        }
    }
}

impl Retry {
    /// No retries.
    pub const NONE: Retry = Retry {
        attempts: 1,
        initial_backoff: Duration::ZERO,
        max_backoff: Duration::ZERO,
    };

    /// The pause after failed attempt `attempt` (1-based), with up to 20% jitter
    /// so that many clients do not retry in step.
    fn backoff(&self, attempt: u32) -> Duration {
        let doubled = self
            .initial_backoff
            .saturating_mul(1 << attempt.saturating_sub(1).min(16));
        let base = doubled.min(self.max_backoff);
        base.mul_f64(1.0 - rand::random::<f64>() * 0.2)
    }

    /// The pause before retrying a call whose attempt `attempt` (1-based)
    /// failed with `error`, or `None` when such a failure is not retried
    /// (see [`Retry`]).
    pub fn pause(&self, attempt: u32, error: &Error) -> Option<Duration> {
        let advised = error.retry_delay();
        let pause = match error.code() {
            Code::Unavailable => self.backoff(attempt).max(advised.unwrap_or_default()),
            Code::ResourceExhausted => advised?.max(self.backoff(attempt)),
            _ => return None,
        };
        Some(pause.min(self.max_backoff))
    }
}

/// A raw body: its content type and data.
pub type RawBody = (String, Vec<u8>);

/// How a method's `google.api.HttpBody` bodies travel over REST (raw, not
/// as JSON); gRPC carries them as any message. Generated clients fill it:
/// the runtime does not name the generated `HttpBody`.
pub struct RawBodies<Req, Resp> {
    /// Takes the raw request body (content type, data) out of the request:
    /// the whole request, or the field the rule's `body` names.
    pub request: Option<fn(&mut Req) -> Option<RawBody>>,
    /// The response (or each streamed chunk) from raw data and its content type.
    pub response: Option<fn(String, Vec<u8>) -> Resp>,
}

impl<Req, Resp> Default for RawBodies<Req, Resp> {
    fn default() -> Self {
        RawBodies {
            request: None,
            response: None,
        }
    }
}

impl<Req, Resp> Clone for RawBodies<Req, Resp> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<Req, Resp> Copy for RawBodies<Req, Resp> {}

impl<Req, Resp> fmt::Debug for RawBodies<Req, Resp> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawBodies")
            .field("request", &self.request.is_some())
            .field("response", &self.response.is_some())
            .finish()
    }
}

/// The UNAVAILABLE error of an API that cannot be reached.
pub(super) fn unavailable(message: String) -> Error {
    Error::new(Code::Unavailable, "UNREACHABLE", message)
}
