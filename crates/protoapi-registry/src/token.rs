//! The Docker token flow: the token endpoint trades an API token (the
//! password of Basic auth, as credential helpers hand it to clients, or a
//! bearer) or nothing at all for a short-lived registry token listing the
//! repository actions the caller holds; requests under `/v2/` present that
//! token, an API token, or nothing.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use http::{HeaderMap, HeaderValue, header};
use protoapi_core::Caller;
use serde::{Deserialize, Serialize};

use crate::access::{Actions, Scope};
use crate::error::{Code, RegistryError, Result};
use crate::registry::Registry;

/// How long a registry token holds.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(300);

/// Scopes one token request may name; more are left out of the token.
const MAX_SCOPES: usize = 16;

/// What a registry token says.
#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    iss: String,
    aud: String,
    /// The identity's uid; empty for an anonymous caller.
    sub: String,
    iat: u64,
    nbf: u64,
    exp: u64,
    access: Vec<Granted>,
}

/// One repository's actions in a token, as the token flow lists them.
#[derive(Debug, Serialize, Deserialize)]
struct Granted {
    #[serde(rename = "type")]
    kind: String,
    name: String,
    actions: Vec<String>,
}

impl Claims {
    /// The actions the token grants on `name`.
    pub fn actions(&self, name: &str) -> Actions {
        self.access
            .iter()
            .filter(|granted| granted.kind == "repository" && granted.name == name)
            .map(|granted| Actions::parse(&granted.actions.join(",")))
            .fold(Actions::NONE, Actions::or)
    }
}

/// Who a request presents itself as.
pub enum Presented {
    /// No credentials: the application's anonymous access applies.
    Anonymous,
    /// An API token (bearer, or the password of Basic auth): decided live.
    Caller(Caller),
    /// A registry token: its actions, decided when it was issued.
    Token(Claims),
}

impl Registry {
    /// Reads the `Authorization` header of a request under `/v2/`. A
    /// credential that does not verify is UNAUTHORIZED, even where no
    /// credential is needed (a public repository): presenting a token asks
    /// for it to be checked.
    pub(crate) fn presented(&self, headers: &HeaderMap) -> Result<Presented> {
        let Some(value) = self.authorization(headers)? else {
            return Ok(Presented::Anonymous);
        };
        if let Credential::Bearer(token) = &value
            && let Ok(claims) =
                self.tokens
                    .verify_signed::<Claims>(token, &self.audience, "registry token")
        {
            return Ok(Presented::Token(claims));
        }
        Ok(Presented::Caller(self.caller(&value)?))
    }

    /// The `Authorization` header, if any, as Basic or Bearer.
    fn authorization(&self, headers: &HeaderMap) -> Result<Option<Credential>> {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let Some(value) = values.next() else {
            return Ok(None);
        };
        let refused = || self.refusal("send one Authorization header: Basic or Bearer");
        if values.next().is_some() {
            return Err(refused());
        }
        let text = value.to_str().map_err(|_| refused())?;
        let (scheme, rest) = text.split_once(' ').ok_or_else(refused)?;
        let rest = rest.trim();
        if scheme.eq_ignore_ascii_case("bearer") && !rest.is_empty() {
            return Ok(Some(Credential::Bearer(rest.to_owned())));
        }
        if scheme.eq_ignore_ascii_case("basic") {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(rest)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or_else(refused)?;
            let (_, password) = decoded.split_once(':').ok_or_else(refused)?;
            return Ok(Some(Credential::Basic(password.to_owned())));
        }
        Err(refused())
    }

    /// The caller an API token names.
    fn caller(&self, credential: &Credential) -> Result<Caller> {
        let (Credential::Bearer(token) | Credential::Basic(token)) = credential;
        self.authentication
            .caller(token)
            .map_err(|error| self.refusal(error.message()))
    }

    /// UNAUTHORIZED with a challenge naming the token endpoint.
    pub(crate) fn refusal(&self, message: &str) -> RegistryError {
        RegistryError::challenge(&self.realm, &self.service, None, message)
    }

    /// What the presented credentials allow on `name`.
    pub(crate) async fn allowed(&self, presented: &Presented, name: &str) -> Result<Actions> {
        match presented {
            Presented::Anonymous => Ok(self.repositories.actions(&Caller::Anonymous, name).await?),
            Presented::Caller(caller) => Ok(self.repositories.actions(caller, name).await?),
            Presented::Token(claims) => Ok(claims.actions(name)),
        }
    }

    /// Succeeds when `presented` may take `needed` on `name`. Otherwise a
    /// challenge for exactly that scope, so that a client fetches a token
    /// for it and tries again: UNAUTHORIZED without credentials, DENIED
    /// (`insufficient_scope`) with credentials that hold too little. A
    /// repository that does not exist answers the same.
    pub(crate) async fn require(
        &self,
        presented: &Presented,
        name: &str,
        needed: Actions,
    ) -> Result<()> {
        if self.allowed(presented, name).await?.covers(needed) {
            return Ok(());
        }
        let scope = Scope::render(name, needed);
        Err(match presented {
            Presented::Anonymous => RegistryError::challenge(
                &self.realm,
                &self.service,
                Some(&scope),
                "authentication required",
            ),
            _ => RegistryError::insufficient(&self.realm, &self.service, &scope),
        })
    }

    /// A token for `caller` granting, of each scope asked for, the actions
    /// the caller holds.
    async fn issue(&self, caller: &Caller, scopes: &[Scope]) -> Result<(String, u64)> {
        let mut access = Vec::new();
        for scope in scopes.iter().take(MAX_SCOPES) {
            let held = self.repositories.actions(caller, &scope.name).await?;
            let granted = held.and(scope.actions);
            if granted != Actions::NONE {
                access.push(Granted {
                    kind: "repository".to_owned(),
                    name: scope.name.clone(),
                    actions: granted.list().into_iter().map(str::to_owned).collect(),
                });
            }
        }
        let now = protoapi_core::time::unix_seconds();
        let claims = Claims {
            iss: self.tokens.base_url().to_owned(),
            aud: self.audience.clone(),
            sub: caller.uid().unwrap_or_default().to_owned(),
            iat: now,
            nbf: now,
            exp: now + TOKEN_LIFETIME.as_secs(),
            access,
        };
        Ok((self.tokens.sign(&claims), now))
    }
}

enum Credential {
    Bearer(String),
    Basic(String),
}

/// `GET /v2/token?service=…&scope=repository:<name>:<actions>…`.
pub(crate) async fn token(
    State(registry): State<std::sync::Arc<Registry>>,
    Query(query): Query<Vec<(String, String)>>,
    headers: HeaderMap,
) -> Response {
    let answer = async {
        let caller = match registry.authorization(&headers)? {
            None => Caller::Anonymous,
            Some(credential) => registry.caller(&credential)?,
        };
        let scopes: Vec<Scope> = query
            .iter()
            .filter(|(key, _)| key == "scope")
            .flat_map(|(_, value)| value.split(' '))
            .filter_map(Scope::parse)
            .collect();
        let (token, issued) = registry.issue(&caller, &scopes).await?;
        let mut body = BTreeMap::new();
        body.insert("token", serde_json::Value::from(token.clone()));
        body.insert("access_token", serde_json::Value::from(token));
        body.insert("expires_in", TOKEN_LIFETIME.as_secs().into());
        body.insert("issued_at", rfc3339(issued).into());
        Ok::<_, RegistryError>(axum::Json(body))
    }
    .await;
    let mut response = match answer {
        Ok(body) => body.into_response(),
        Err(error) if error.code() == Code::Unauthorized => {
            // The token endpoint answers a bad credential without a challenge
            // (the client asked with it already).
            RegistryError::new(
                Code::Unauthorized,
                "the credentials presented are not valid",
            )
            .into_response()
        }
        Err(error) => error.into_response(),
    };
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `seconds` since the epoch in RFC 3339.
fn rfc3339(seconds: u64) -> String {
    let micros = i64::try_from(seconds).unwrap_or(i64::MAX / 1_000_000) * 1_000_000;
    protoapi_core::time::from_micros(micros).to_string()
}
