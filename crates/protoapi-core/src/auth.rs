//! Authorization (grants over the uid tree) and the bearer token of a
//! request; the API tokens themselves are signed and verified by the
//! server (`protoapi_server::tokens`).
//!
//! Authorization is declared in the annotation files; generated methods call
//! [`Authorizer::check`] (or plan lists with [`Authorizer::list_scope`])
//! before storage is touched. A grant (e.g. a role binding) gives its capabilities
//! on its group and everything below it.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::context::Caller;
pub use crate::context::Held;
use crate::error::{Code, Error};
use crate::store::Hierarchy;

/// An UNAUTHENTICATED error with `reason`.
pub fn unauthenticated(reason: &'static str, message: impl Into<String>) -> Error {
    Error::new(Code::Unauthenticated, reason, message)
}

/// The bearer token of a request's `Authorization` header, if any.
///
/// No header is `Ok(None)` (anonymous); more than one `Authorization` header,
/// or anything but `Bearer <token>`, is UNAUTHENTICATED.
pub fn bearer(headers: &http::HeaderMap) -> Result<Option<String>, Error> {
    let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(unauthenticated(
            "AUTHORIZATION_DUPLICATED",
            "send one Authorization header, not several",
        ));
    }
    let value = value.to_str().map_err(|_| {
        unauthenticated(
            "AUTHORIZATION_MALFORMED",
            "the Authorization header is not text",
        )
    })?;
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(unauthenticated(
            "AUTHORIZATION_WRONG_SCHEME",
            "the Authorization header must be `Bearer <token>`",
        ));
    }
    let token = token.trim();
    if token.is_empty() {
        return Err(unauthenticated(
            "AUTHORIZATION_MALFORMED",
            "the bearer token is empty",
        ));
    }
    Ok(Some(token.to_owned()))
}

/// Capabilities granted on subtrees of the uid hierarchy.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    grants: Vec<(String, BTreeSet<String>)>,
}

impl Grants {
    /// Grants `capabilities` on `scope` and everything below it.
    pub fn add(
        &mut self,
        scope: impl Into<String>,
        capabilities: impl IntoIterator<Item = String>,
    ) {
        self.grants
            .push((scope.into(), capabilities.into_iter().collect()));
    }

    /// Whether `capability` is granted on `uid`.
    pub fn allows(&self, capability: &str, uid: &str) -> bool {
        self.grants
            .iter()
            .any(|(scope, capabilities)| covers(scope, uid) && capabilities.contains(capability))
    }

    /// Every capability granted on `uid`.
    pub fn held_at(&self, uid: &str) -> BTreeSet<String> {
        self.grants
            .iter()
            .filter(|(scope, _)| covers(scope, uid))
            .flat_map(|(_, capabilities)| capabilities.iter().cloned())
            .collect()
    }

    /// The smallest set of scopes granting `capability`, in uid order.
    ///
    /// In byte order a scope's descendants follow it before anything else
    /// (`/` sorts below every hex digit), so a scope is covered by another
    /// exactly when the last one kept covers it: one pass after sorting.
    pub fn scopes(&self, capability: &str) -> Vec<String> {
        let mut scopes: Vec<&str> = self
            .grants
            .iter()
            .filter(|(_, capabilities)| capabilities.contains(capability))
            .map(|(scope, _)| scope.as_str())
            .collect();
        scopes.sort_unstable();
        let mut minimal: Vec<String> = Vec::new();
        for scope in scopes {
            if !minimal.last().is_some_and(|kept| covers(kept, scope)) {
                minimal.push(scope.to_owned());
            }
        }
        minimal
    }
}

/// Whether `uid` is `scope` or below it.
pub fn covers(scope: &str, uid: &str) -> bool {
    uid == scope
        || uid
            .strip_prefix(scope)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// A boxed future, for object-safe async traits.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where grants come from (e.g. bindings of roles the server keeps).
pub trait Access: Send + Sync + 'static {
    /// Everything granted to an identity.
    fn grants<'a>(&'a self, identity: &'a str) -> BoxFuture<'a, Result<Grants, Error>>;
}

/// Makes the access decisions generated methods ask for.
#[derive(Clone)]
pub struct Authorizer {
    access: Option<Arc<dyn Access>>,
}

impl std::fmt::Debug for Authorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authorizer")
            .field("enforcing", &self.access.is_some())
            .finish()
    }
}

impl Authorizer {
    /// Decisions from the grants `access` reports.
    pub fn new(access: Arc<dyn Access>) -> Self {
        Authorizer {
            access: Some(access),
        }
    }

    /// Allows every authenticated caller everything (embedded use and
    /// tests only); an anonymous caller still gets only what needs no token.
    pub fn allow_all() -> Self {
        Authorizer { access: None }
    }

    /// Succeeds when `caller` holds `capability` on `target`.
    ///
    /// Denials do not depend on whether `target` exists (no existence oracle).
    pub async fn check(
        &self,
        caller: &Caller,
        capability: &str,
        target: &str,
    ) -> Result<(), Error> {
        let Some(access) = &self.access else {
            return require_token(caller);
        };
        match caller {
            Caller::System => Ok(()),
            Caller::Identity { admin: true, .. } => Ok(()),
            Caller::Identity { uid, .. } => {
                if access.grants(uid).await?.allows(capability, target) {
                    Ok(())
                } else {
                    Err(denied(capability, target))
                }
            }
            Caller::Anonymous | Caller::Presented { .. } => Err(token_required()),
        }
    }

    /// The capabilities `caller` holds on `target`.
    pub async fn held(&self, caller: &Caller, target: &str) -> Result<Held, Error> {
        match (caller, &self.access) {
            (Caller::Anonymous | Caller::Presented { .. }, _) => Ok(Held::Only(BTreeSet::new())),
            (_, None) | (Caller::System | Caller::Identity { admin: true, .. }, _) => Ok(Held::All),
            (Caller::Identity { uid, .. }, Some(access)) => {
                Ok(Held::Only(access.grants(uid).await?.held_at(target)))
            }
        }
    }

    /// What a list may cover: the filter itself when the caller holds
    /// `capability` on it, or (without a filter) the caller's grants.
    pub async fn list_scope(
        &self,
        caller: &Caller,
        capability: &str,
        filter: Hierarchy,
    ) -> Result<Hierarchy, Error> {
        let Some(access) = &self.access else {
            return require_token(caller).map(|()| filter);
        };
        match (caller, &filter) {
            (Caller::System | Caller::Identity { admin: true, .. }, _) => Ok(filter),
            (Caller::Identity { uid, .. }, Hierarchy::All) => Ok(Hierarchy::Within(
                access.grants(uid).await?.scopes(capability),
            )),
            (
                Caller::Identity { .. },
                Hierarchy::ChildrenOf(scope) | Hierarchy::DescendantsOf(scope),
            ) => self.check(caller, capability, scope).await.map(|()| filter),
            (_, Hierarchy::Within(_)) => Err(Error::internal(
                "lists are not planned with explicit scopes",
            )),
            (Caller::Anonymous | Caller::Presented { .. }, _) => Err(token_required()),
        }
    }
}

/// What a method needs of its caller: generated from the annotation files
/// (`anonymous`, `permissions`, the default `<collection>.<verb>`) and
/// checked by the standard methods (`ApiContext::authorize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need<'a> {
    /// Nothing: anyone may call the method, with or without a token
    /// (declared `anonymous`).
    Nothing,
    /// An authenticated caller, whatever it holds (an API without access
    /// rules: no annotation file).
    Token,
    /// An authenticated caller holding this capability on the target.
    Capability(&'a str),
}

impl<'a> Need<'a> {
    /// The capability needed, if any.
    pub fn capability(self) -> Option<&'a str> {
        match self {
            Need::Capability(capability) => Some(capability),
            Need::Nothing | Need::Token => None,
        }
    }
}

/// Ok for an authenticated caller (an identity, or trusted local access);
/// UNAUTHENTICATED for anyone else.
pub fn require_token(caller: &Caller) -> Result<(), Error> {
    match caller {
        Caller::System | Caller::Identity { .. } => Ok(()),
        Caller::Anonymous | Caller::Presented { .. } => Err(token_required()),
    }
}

/// UNAUTHENTICATED for a method that needs a token.
pub fn token_required() -> Error {
    unauthenticated(
        "TOKEN_REQUIRED",
        "this method needs `Authorization: Bearer <API token>`",
    )
}

fn denied(capability: &str, target: &str) -> Error {
    Error::new(
        Code::PermissionDenied,
        "PERMISSION_DENIED",
        format!("the caller lacks `{capability}` on `{target}`"),
    )
    .with_metadata("capability", capability)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_cover_subtrees_only() {
        let root = "a".repeat(40);
        let team = format!("{root}/1111111111111111");
        let mut grants = Grants::default();
        grants.add(team.clone(), ["groups.get".to_owned()]);
        grants.add(
            format!("{team}/2222222222222222"),
            ["groups.get".to_owned()],
        );
        assert!(grants.allows("groups.get", &team));
        assert!(grants.allows("groups.get", &format!("{team}/3333333333333333")));
        assert!(!grants.allows("groups.get", &root), "not above the binding");
        assert!(
            !grants.allows("groups.get", &format!("{root}/11111111111111112")),
            "prefix is not parent"
        );
        assert!(!grants.allows("groups.delete", &team));
        assert_eq!(grants.scopes("groups.get"), vec![team.clone()]);
        let held = Held::Only(grants.held_at(&team));
        assert_eq!(
            held.missing(["groups.get", "groups.delete", "groups.delete"]),
            ["groups.delete"]
        );
        assert!(held.require(["groups.get"], &team).is_ok());
        assert_eq!(
            held.require(["groups.delete"], &team).unwrap_err().reason(),
            "ESCALATION_DENIED"
        );
        assert!(Held::All.missing(["anything"]).is_empty());
    }
}
