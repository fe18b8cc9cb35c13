//! The provider block: where the API is and who calls it.
//!
//! ```hcl
//! provider "library" {
//!   endpoint = "https://api.example:8443"   # or LIBRARY_ENDPOINT
//!   ca_file  = "ca.pem"                     # a private certificate authority
//!   token    = var.token                    # or LIBRARY_TOKEN
//! }
//! ```
//!
//! Without a token, the application's [`Credentials`] give the connection
//! its token source: an identity token exchanged for an identity's API
//! token (`identity`, `identity_token_file`), or the command-line client's
//! login cache.

use std::path::PathBuf;

use protoapi_client::client::{Connection, StaticToken, Tls};

use crate::diagnostics;
use crate::proto::Diagnostic;
use crate::schema::{Attr, Kind, Mode};
use crate::value::Value;

/// What the provider block says about whom to call as, besides a token.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The API's address.
    pub endpoint: String,
    /// The identity to exchange an identity token for.
    pub identity: Option<String>,
    /// The file holding that identity token (re-read at each exchange).
    pub identity_token_file: Option<PathBuf>,
    /// The identity token itself, when given instead of a file.
    pub identity_token: Option<String>,
}

/// Gives a connection the token source `Settings` name when the provider
/// block and the environment hold no token: the application's own (the
/// ones its command-line client and SDK use).
pub type Credentials = fn(Connection, &Settings) -> Connection;

/// The provider's own attributes.
pub fn attrs(prefix: &str) -> Vec<Attr> {
    let upper = prefix.to_uppercase();
    let attr = |name: &str, description: String| Attr {
        name: name.to_owned(),
        json: name.to_owned(),
        kind: Kind::String,
        mode: Mode::Optional,
        replace: false,
        sensitive: name.ends_with("token"),
        description,
    };
    vec![
        attr(
            "endpoint",
            format!(
                "The API's address: `https://host:port`, or `http://` on a loopback host \
                 (default `{upper}_ENDPOINT`, else `http://127.0.0.1:8080`)."
            ),
        ),
        attr(
            "ca_file",
            "A PEM file of the certificate authority that signed the API's certificate, when \
             the operating system's roots do not hold it."
                .to_owned(),
        ),
        attr(
            "token",
            format!("The API token to call with (default `{upper}_TOKEN`)."),
        ),
        attr(
            "identity",
            format!(
                "An identity (its uid) whose API tokens the provider obtains by exchanging an \
                 identity token (default `{upper}_IDENTITY`)."
            ),
        ),
        attr(
            "identity_token_file",
            format!(
                "The file holding the identity token to exchange (default \
                 `{upper}_IDENTITY_TOKEN_FILE`)."
            ),
        ),
        attr(
            "identity_token",
            format!(
                "The identity token to exchange itself, instead of a file (default \
                 `{upper}_IDENTITY_TOKEN`)."
            ),
        ),
    ]
}

/// How the provider reaches the API, from the provider block and the
/// environment.
pub fn connect(
    prefix: &str,
    config: &Value,
    credentials: Credentials,
) -> Result<Connection, Vec<Diagnostic>> {
    let upper = prefix.to_uppercase();
    let setting = |name: &str| -> Option<String> {
        config
            .get(name)
            .as_str()
            .map(str::to_owned)
            .or_else(|| std::env::var(format!("{upper}_{}", name.to_uppercase())).ok())
            .filter(|value| !value.is_empty())
    };
    let endpoint = setting("endpoint").unwrap_or_else(|| "http://127.0.0.1:8080".into());
    let mut tls = Tls::new();
    if let Some(ca_file) = setting("ca_file") {
        tls = tls.ca_file(&ca_file).map_err(|e| {
            vec![diagnostics::error(
                "Cannot read the CA file",
                e.message(),
                &["ca_file"],
            )]
        })?;
    }
    let connection = Connection::rest_with(&endpoint, &tls).map_err(|e| {
        vec![diagnostics::error(
            "Cannot use the endpoint",
            e.message(),
            &["endpoint"],
        )]
    })?;
    if let Some(token) = setting("token") {
        return Ok(connection.with_tokens(StaticToken::new(token)));
    }
    let settings = Settings {
        endpoint,
        identity: setting("identity"),
        identity_token_file: setting("identity_token_file").map(PathBuf::from),
        identity_token: setting("identity_token"),
    };
    Ok(credentials(connection, &settings))
}
