//! Authentication (API tokens) and authorization (grants over the uid tree).
//!
//! API tokens are JWTs this server signs (HS256 with a key it keeps):
//! `iss` and `aud` are the API's base URL, `sub` the identity's UIDP, and
//! they expire after an hour. Verification accepts nothing else: no other
//! algorithm (`none`, RS/HS confusion), no other key, issuer or audience, no
//! expired or not-yet-valid token (beyond a small clock skew).
//!
//! Authorization is declared in the annotation files; generated methods call
//! [`Authorizer::check`] (or plan lists with [`Authorizer::list_scope`])
//! before storage is touched. A grant (e.g. a role binding) gives its capabilities
//! on its group and everything below it.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::context::Caller;
pub use crate::context::Held;
use crate::error::{Code, Error};
use crate::store::Hierarchy;

/// Lifetime of the API tokens this server issues.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(3600);
/// Clock skew tolerated on `exp` and `nbf`.
pub const LEEWAY_SECS: u64 = 30;

fn unauthenticated(reason: &'static str, message: impl Into<String>) -> Error {
    Error::new(Code::Unauthenticated, reason, message)
}

/// Claims of an API token.
#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub aud: String,
    pub sub: String,
    pub iat: u64,
    pub nbf: u64,
    pub exp: u64,
}

/// Issues and verifies this server's API tokens.
#[derive(Clone)]
pub struct ApiTokens {
    encoding: EncodingKey,
    decoding: DecodingKey,
    base_url: String,
}

impl std::fmt::Debug for ApiTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiTokens")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl ApiTokens {
    /// Tokens for the API at `base_url`, signed with `secret`.
    pub fn new(secret: &[u8; 32], base_url: &str) -> Self {
        ApiTokens {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            base_url: base_url.to_owned(),
        }
    }

    /// The API's base URL: the audience and issuer of its tokens.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// A token for `identity`, valid for [`TOKEN_LIFETIME`].
    pub fn issue(&self, identity: &str) -> String {
        let now = crate::time::unix_seconds();
        let claims = Claims {
            iss: self.base_url.clone(),
            aud: self.base_url.clone(),
            sub: identity.to_owned(),
            iat: now,
            nbf: now,
            exp: now + TOKEN_LIFETIME.as_secs(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .expect("HS256 signing cannot fail")
    }

    /// The claims of a genuine, current token for this API.
    pub fn verify(&self, token: &str) -> Result<Claims, Error> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = LEEWAY_SECS;
        validation.validate_nbf = true;
        validation.set_audience(&[&self.base_url]);
        validation.set_issuer(&[&self.base_url]);
        validation.set_required_spec_claims(&["exp", "nbf", "aud", "iss", "sub"]);
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation)
            .map(|data| data.claims)
            .map_err(|error| token_error(&error, "API token"))?;
        if !crate::uidp::is_valid(&claims.sub) {
            return Err(unauthenticated(
                "TOKEN_MALFORMED",
                "the API token's subject is not an identity",
            ));
        }
        Ok(claims)
    }
}

/// The UNAUTHENTICATED error for a token that failed verification.
pub fn token_error(error: &jsonwebtoken::errors::Error, what: &str) -> Error {
    let (reason, why) = match error.kind() {
        ErrorKind::ExpiredSignature => ("TOKEN_EXPIRED", "has expired"),
        ErrorKind::ImmatureSignature => ("TOKEN_NOT_YET_VALID", "is not valid yet"),
        ErrorKind::InvalidAudience => ("TOKEN_WRONG_AUDIENCE", "is for another audience"),
        ErrorKind::InvalidIssuer => ("TOKEN_WRONG_ISSUER", "comes from another issuer"),
        ErrorKind::InvalidSignature => ("TOKEN_BAD_SIGNATURE", "has an invalid signature"),
        ErrorKind::InvalidAlgorithm
        | ErrorKind::MissingAlgorithm
        | ErrorKind::InvalidAlgorithmName => (
            "TOKEN_WRONG_ALGORITHM",
            "is signed with an algorithm this API does not accept",
        ),
        ErrorKind::MissingRequiredClaim(_) | ErrorKind::InvalidClaimFormat(_) => {
            ("TOKEN_MALFORMED", "lacks a required claim")
        }
        _ => ("TOKEN_MALFORMED", "is not a well-formed JWT"),
    };
    unauthenticated(reason, format!("the {what} {why}"))
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

    #[test]
    fn tokens_round_trip_and_reject_foreign_ones() {
        let identity = "a".repeat(40);
        let tokens = ApiTokens::new(&[1; 32], "http://api");
        let claims = tokens.verify(&tokens.issue(&identity)).unwrap();
        assert_eq!(
            (claims.sub.as_str(), claims.aud.as_str()),
            (identity.as_str(), "http://api")
        );
        let other_key = ApiTokens::new(&[2; 32], "http://api");
        assert_eq!(
            other_key
                .verify(&tokens.issue(&identity))
                .unwrap_err()
                .reason(),
            "TOKEN_BAD_SIGNATURE"
        );
        let other_api = ApiTokens::new(&[1; 32], "http://other");
        assert_eq!(
            other_api
                .verify(&tokens.issue(&identity))
                .unwrap_err()
                .reason(),
            "TOKEN_WRONG_ISSUER"
        );
        assert_eq!(
            tokens
                .verify(&tokens.issue("not-a-uidp"))
                .unwrap_err()
                .reason(),
            "TOKEN_MALFORMED",
            "a subject that is not a UIDP"
        );
    }
}
