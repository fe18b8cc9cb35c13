//! A signed-in request, as the pages that answer it see it.

use super::call::Asker;
use super::session::Session;
use super::view::Badge;
use protoapi_core::context::Caller;

/// A signed-in request: its session, caller and `Authorization`, where it
/// was sent and whether from this site. Extracting it from a request
/// without a session answers the redirect to the sign-in page (back here
/// after).
pub(super) struct Visit {
    pub session: Session,
    pub caller: Caller,
    /// The session's token and the client's address, for the API calls.
    pub asker: Asker,
    /// The path and query asked for.
    pub here: String,
    /// The request's `Origin`, when sent, is this host.
    pub same_origin: bool,
    /// Who is signed in, for the header of its pages.
    pub badge: Badge,
}
