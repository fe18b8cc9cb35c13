//! The caller of a request, as seen by generated handlers.
//!
//! Authentication middleware puts a [`Caller`] into the request extensions;
//! REST handlers extract it with axum, gRPC handlers read it from the tonic
//! request extensions. Both then pass it to the same service method.

use axum::extract::FromRequestParts;
use http::request::Parts;

use std::collections::BTreeSet;

use crate::error::{Code, Error};

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

    /// The uid of an authenticated identity.
    pub fn uid(&self) -> Option<&str> {
        match self {
            Caller::Identity { uid, .. } => Some(uid),
            _ => None,
        }
    }

    /// How logs name this caller: the identity's uid, `system`, or
    /// `presented` for a token passed on unverified (never the token);
    /// `None` for an anonymous one.
    pub fn log_name(&self) -> Option<&str> {
        match self {
            Caller::Identity { uid, .. } => Some(uid),
            Caller::System => Some("system"),
            Caller::Presented { .. } => Some("presented"),
            _ => None,
        }
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

/// The capabilities a caller holds at one place of the hierarchy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Held {
    /// Every capability (the administrator, trusted local access).
    All,
    Only(BTreeSet<String>),
}

impl Held {
    /// The values of `wanted` not held, in order, without repeats.
    pub fn missing<'a>(&self, wanted: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
        let Held::Only(held) = self else {
            return Vec::new();
        };
        let mut missing: Vec<&str> = Vec::new();
        for capability in wanted {
            if !held.contains(capability) && !missing.contains(&capability) {
                missing.push(capability);
            }
        }
        missing
    }

    /// PERMISSION_DENIED unless every value of `wanted` is held at `target`.
    /// The refusal names none of them: `wanted` may be the capabilities of a
    /// role the caller may not read.
    pub fn require<'a>(
        &self,
        wanted: impl IntoIterator<Item = &'a str>,
        target: &str,
    ) -> Result<(), Error> {
        if self.missing(wanted).is_empty() {
            return Ok(());
        }
        Err(Error::new(
            Code::PermissionDenied,
            "ESCALATION_DENIED",
            format!(
                "granting capabilities needs holding them: the caller does not hold every \
                 capability it would grant on `{target}`"
            ),
        ))
    }
}
