//! The login cache: the API token, its expiry, and what is needed to exchange
//! it again (the identity and the file holding its identity token), unless
//! the token was given as it is (`auth login --with-token`).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::tokens;

const FILE: &str = "credentials.json";
/// Tokens this close to expiry are exchanged again.
const MARGIN_SECS: u64 = 60;

#[derive(Debug, Serialize, Deserialize)]
pub struct Credentials {
    pub server: String,
    pub identity: String,
    /// Where the identity token to exchange again is; none for a token given
    /// as it is, which is used until it expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_token_file: Option<PathBuf>,
    pub token: String,
    /// Seconds since the epoch.
    pub expires_at: u64,
}

/// `$XDG_CONFIG_HOME/platformctl`, else `~/.config/platformctl`.
pub fn default_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .map(|dir| dir.join("platformctl"))
}

impl Credentials {
    /// Exchanges the identity token in `identity_token_file` at `server`'s token service.
    pub async fn exchange(
        server: &str,
        identity: &str,
        identity_token_file: &Path,
    ) -> Result<Self, protoapi_runtime::Error> {
        let token = tokens::exchange(server, identity, identity_token_file).await?;
        Ok(Credentials {
            server: server.to_owned(),
            identity: identity.to_owned(),
            identity_token_file: Some(
                std::path::absolute(identity_token_file)
                    .map_err(|e| local_error(format!("{}: {e}", identity_token_file.display())))?,
            ),
            expires_at: expiry(&token)?,
            token,
        })
    }

    /// An API token given as it is (the administrator's `admin.token`, say),
    /// used until it expires. Its identity is read from it for display.
    pub fn given(server: &str, token: &str) -> Result<Self, protoapi_runtime::Error> {
        let expires_at = expiry(token)?;
        if expires_at <= now() {
            return Err(protoapi_runtime::Error::invalid_field(
                "token",
                "the API token has expired",
            ));
        }
        Ok(Credentials {
            server: server.to_owned(),
            identity: protoapi_runtime::client::jwt_subject(token).unwrap_or_default(),
            identity_token_file: None,
            expires_at,
            token: token.to_owned(),
        })
    }

    /// When the token expires, in minutes from now (`the token expires in
    /// 59 min`).
    pub fn expires_in(&self) -> String {
        let minutes = self.expires_at.saturating_sub(now()) / 60;
        format!("the token expires in {minutes} min")
    }

    pub fn save(&self, dir: &Path) -> Result<(), protoapi_runtime::Error> {
        let text = serde_json::to_vec_pretty(self).expect("credentials serialize");
        write_private(dir, FILE, &text)
    }

    fn load(dir: &Path) -> Result<Self, protoapi_runtime::Error> {
        let path = dir.join(FILE);
        let text = std::fs::read(&path).map_err(|_| {
            protoapi_runtime::Error::new(
                protoapi_runtime::Code::Unauthenticated,
                "NOT_LOGGED_IN",
                "not logged in: run `platformctl auth login --with-token < <token file>` \
                 (the administrator's is `admin.token` in the server's data dir), or \
                 `platformctl auth login --identity <uidp> --identity-token <file>`",
            )
        })?;
        serde_json::from_slice(&text)
            .map_err(|e| local_error(format!("{} is corrupt ({e}); log in again", path.display())))
    }
}

/// The server the login cached in `dir` is for, if there is one.
pub fn logged_in_server(dir: &Path) -> Option<String> {
    Credentials::load(dir).ok().map(|cached| cached.server)
}

/// The cached token, exchanged again (and cached) when it is about to expire.
pub async fn valid_token(server: &str, dir: &Path) -> Result<String, protoapi_runtime::Error> {
    let cached = Credentials::load(dir)?;
    if cached.server != server {
        return Err(protoapi_runtime::Error::new(
            protoapi_runtime::Code::Unauthenticated,
            "NOT_LOGGED_IN",
            format!("logged in to {}, not {server}; log in again", cached.server),
        ));
    }
    if cached.expires_at > now() + MARGIN_SECS {
        return Ok(cached.token);
    }
    let Some(identity_token_file) = &cached.identity_token_file else {
        if cached.expires_at > now() {
            return Ok(cached.token);
        }
        return Err(protoapi_runtime::Error::new(
            protoapi_runtime::Code::Unauthenticated,
            "NOT_LOGGED_IN",
            "the token given to `auth login --with-token` has expired; log in again",
        ));
    };
    let fresh = Credentials::exchange(server, &cached.identity, identity_token_file).await?;
    fresh.save(dir)?;
    Ok(fresh.token)
}

/// The `exp` of an API token, in seconds since the epoch.
fn expiry(token: &str) -> Result<u64, protoapi_runtime::Error> {
    protoapi_runtime::client::jwt_expiry(token)
        .and_then(|at| at.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
        .ok_or_else(|| {
            protoapi_runtime::Error::invalid_field(
                "token",
                "the API token is not a JWT with an expiry",
            )
        })
}

/// Writes `dir/name`, readable by its owner only: it holds a secret. The
/// directory is created 0700, or restricted to its owner if it exists; the
/// file is written to a new 0600 file renamed over the old one, so neither
/// a file left readable by others before nor a partial write remains (the
/// old file is restricted first, in case the rename fails).
pub fn write_private(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), protoapi_runtime::Error> {
    let path = dir.join(name);
    let failed = |e: std::io::Error| local_error(format!("cannot write {}: {e}", path.display()));
    protoapi_runtime::owner_only::own_dir(dir).map_err(failed)?;
    protoapi_runtime::owner_only::restrict_file(&path);
    protoapi_runtime::owner_only::replace(&path, bytes).map_err(failed)
}

/// A failure on this machine (files), reported like the API's errors.
pub fn local_error(message: String) -> protoapi_runtime::Error {
    protoapi_runtime::Error::new(
        protoapi_runtime::Code::FailedPrecondition,
        "LOCAL_ERROR",
        message,
    )
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}
