//! Token sources for the generated client (`platform_api::Client`), as the
//! Platform API's SDK offers them (CONTRACT §7):
//!
//! - a static token: `protoapi_runtime::client::StaticToken`;
//! - [`sts`]: an identity token file exchanged at the token service for an
//!   identity's API token, exchanged again before the one-hour expiry
//!   ([`sts_token`]: the identity token itself);
//! - [`login_cache`]: the token `platformctl auth login` cached, exchanged
//!   again (and re-cached) when it nears expiry.
//!
//! ```no_run
//! # async fn example() -> Result<(), protoapi_runtime::Error> {
//! use platform_api::Client;
//! use platform_api::platform::iam::v2::ListGroupsRequest;
//! use protoapi_runtime::client::Connection;
//!
//! let server = "http://127.0.0.1:8080";
//! let tokens = platformctl::tokens::sts(server, "<identity UIDP>", "/var/run/ci/token.jwt");
//! let client = Client::new(Connection::grpc(server)?.with_tokens(tokens));
//! let page = client.groups().list(ListGroupsRequest::default()).await?;
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};

use platform_api::Client;
use platform_api::platform::sts::v1::ExchangeTokenRequest;
use protoapi_runtime::client::{RefreshingToken, StaticToken};

/// Exchanges the identity token in `identity_token_file` (re-read on every
/// call, so a rotated file is picked up) for an API token of `identity`,
/// over the process's [`crate::transport`] settings.
pub async fn exchange(
    server: &str,
    identity: &str,
    identity_token_file: &Path,
) -> Result<String, protoapi_runtime::Error> {
    let identity_token = std::fs::read_to_string(identity_token_file).map_err(|e| {
        crate::credentials::local_error(format!(
            "cannot read {}: {e}",
            identity_token_file.display()
        ))
    })?;
    exchange_token(server, identity, identity_token.trim()).await
}

/// Exchanges `identity_token` for an API token of `identity` at `server`.
pub async fn exchange_token(
    server: &str,
    identity: &str,
    identity_token: &str,
) -> Result<String, protoapi_runtime::Error> {
    let connection = crate::transport::rest(server)?.with_tokens(StaticToken::new(identity_token));
    let response = Client::new(connection)
        .token()
        .exchange_token(ExchangeTokenRequest {
            aud: server.trim_end_matches('/').to_owned(),
            identity: identity.to_owned(),
        })
        .await?;
    Ok(response.token)
}

/// API tokens of `identity`, exchanged from `identity_token_file` at
/// `server` and replaced five minutes before they expire.
pub fn sts(
    server: impl Into<String>,
    identity: impl Into<String>,
    identity_token_file: impl Into<PathBuf>,
) -> RefreshingToken {
    let (server, identity, file) = (server.into(), identity.into(), identity_token_file.into());
    RefreshingToken::new(move || {
        let (server, identity, file) = (server.clone(), identity.clone(), file.clone());
        async move { exchange(&server, &identity, &file).await }
    })
}

/// API tokens of `identity`, exchanged from the identity token
/// `identity_token` itself (which a job may be handed instead of a file)
/// and replaced five minutes before they expire, while it is valid.
pub fn sts_token(
    server: impl Into<String>,
    identity: impl Into<String>,
    identity_token: impl Into<String>,
) -> RefreshingToken {
    let (server, identity, token) = (server.into(), identity.into(), identity_token.into());
    RefreshingToken::new(move || {
        let (server, identity, token) = (server.clone(), identity.clone(), token.clone());
        async move { exchange_token(&server, &identity, &token).await }
    })
}

/// The token `platformctl auth login` cached in `config_dir` for `server`.
pub fn login_cache(server: impl Into<String>, config_dir: impl Into<PathBuf>) -> RefreshingToken {
    let (server, dir) = (server.into(), config_dir.into());
    RefreshingToken::new(move || {
        let (server, dir) = (server.clone(), dir.clone());
        async move { crate::credentials::valid_token(&server, &dir).await }
    })
}
