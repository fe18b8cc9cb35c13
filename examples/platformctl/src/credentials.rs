//! The cached API token, with what is needed to exchange it again.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use crate::client::Client;

const FILE: &str = "credentials.json";
/// Tokens this close to expiry are exchanged again.
const MARGIN_SECS: u64 = 60;

#[derive(Debug, Serialize, Deserialize)]
pub struct Credentials {
    pub server: String,
    pub identity: String,
    pub identity_token_file: PathBuf,
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
    /// Exchanges the identity token in `identity_token_file` at the server's token service.
    pub async fn exchange(
        client: &Client,
        identity: &str,
        identity_token_file: &Path,
    ) -> Result<Self, String> {
        let identity_token = std::fs::read_to_string(identity_token_file)
            .map_err(|e| format!("cannot read {}: {e}", identity_token_file.display()))?;
        let path = format!("/sts/exchange?aud={}&identity={identity}", client.base_url);
        let response = client.get(&path, Some(identity_token.trim())).await?;
        let token = response["token"]
            .as_str()
            .ok_or("the token service returned no token")?
            .to_owned();
        Ok(Credentials {
            server: client.base_url.clone(),
            identity: identity.to_owned(),
            identity_token_file: std::path::absolute(identity_token_file)
                .map_err(|e| e.to_string())?,
            expires_at: expiry(&token)?,
            token,
        })
    }

    pub fn save(&self, dir: &Path) -> Result<(), String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let path = dir.join(FILE);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let text = serde_json::to_vec_pretty(self).map_err(|e| e.to_string())?;
        std::io::Write::write_all(
            &mut options
                .open(&path)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
            &text,
        )
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    fn load(dir: &Path) -> Result<Self, String> {
        let path = dir.join(FILE);
        let text = std::fs::read(&path)
            .map_err(|_| "not logged in: run `platformctl auth login`".to_owned())?;
        serde_json::from_slice(&text)
            .map_err(|e| format!("{} is corrupt ({e}); log in again", path.display()))
    }
}

/// The cached token, exchanged again (and cached) when it is about to expire.
pub async fn valid_token(client: &Client, dir: &Path) -> Result<String, String> {
    let cached = Credentials::load(dir)?;
    if cached.server != client.base_url {
        return Err(format!(
            "logged in to {}, not {}; log in again",
            cached.server, client.base_url
        ));
    }
    if cached.expires_at > now() + MARGIN_SECS {
        return Ok(cached.token);
    }
    let fresh =
        Credentials::exchange(client, &cached.identity, &cached.identity_token_file).await?;
    fresh.save(dir)?;
    Ok(fresh.token)
}

/// The `exp` claim of a JWT (read, not verified: the server verifies).
fn expiry(token: &str) -> Result<u64, String> {
    let payload = token
        .split('.')
        .nth(1)
        .ok_or("the API token is not a JWT")?;
    let bytes = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| "the API token is not a JWT")?;
    let claims: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|_| "the API token is not a JWT")?;
    claims["exp"]
        .as_u64()
        .ok_or_else(|| "the API token has no expiry".to_owned())
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}
