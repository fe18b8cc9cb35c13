//! The caller of a request, as seen by generated handlers.
//!
//! Authentication middleware puts a [`Caller`] into the request extensions;
//! REST handlers extract it with axum, gRPC handlers read it from the tonic
//! request extensions. Both then pass it to the same service method.

use axum::extract::FromRequestParts;
use http::request::Parts;

use crate::error::Error;

/// Who is calling.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Caller {
    /// No credentials were presented.
    #[default]
    Anonymous,
    /// An authenticated identity (its UIDP).
    Identity {
        uid: String,
        /// Whether this identity is the API's administrator (holds every
        /// capability and may create root-level items).
        admin: bool,
    },
    /// Trusted local access with every permission (a server without auth).
    System,
    /// A bearer token this server did not issue, passed on unverified to the
    /// methods that exchange identity tokens; every other method refuses it.
    Presented { token: String },
}

impl Caller {
    /// The caller stored in a set of request extensions, anonymous if none.
    pub fn from_extensions(extensions: &http::Extensions) -> Caller {
        extensions.get::<Caller>().cloned().unwrap_or_default()
    }

    /// Whether this caller presented no credentials.
    pub fn is_anonymous(&self) -> bool {
        matches!(self, Caller::Anonymous)
    }

    /// Whether this caller may create root-level items.
    pub fn is_admin(&self) -> bool {
        matches!(self, Caller::System | Caller::Identity { admin: true, .. })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Caller::from_extensions(&parts.extensions))
    }
}
