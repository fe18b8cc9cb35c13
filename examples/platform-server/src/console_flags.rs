//! The web console's flags of `platform-server`: whether `/console/` is
//! served, and the OIDC issuer it may sign people in through.

use std::path::PathBuf;

/// The console's configuration: served by default, signing in with a
/// pasted API token, and through an OIDC issuer when one is given.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConsoleFlags {
    /// Do not serve the web console at `/console/`.
    #[arg(long, env = "PLATFORM_NO_CONSOLE")]
    pub no_console: bool,
    /// The issuer's authorization endpoint: the console offers sign-in
    /// through it (authorization code with PKCE), then exchanges the
    /// identity token with the token service (the issuer must be trusted,
    /// `--trust-issuer`). Register `<base url>/console/oidc/callback` as
    /// the client's redirect URI.
    #[arg(
        long,
        env = "PLATFORM_CONSOLE_OIDC_AUTHORIZE",
        value_name = "URL",
        requires_all = ["console_oidc_token", "console_oidc_client_id"]
    )]
    pub console_oidc_authorize: Option<String>,
    /// The issuer's token endpoint.
    #[arg(
        long,
        env = "PLATFORM_CONSOLE_OIDC_TOKEN",
        value_name = "URL",
        requires = "console_oidc_authorize"
    )]
    pub console_oidc_token: Option<String>,
    /// The console's client id at the issuer.
    #[arg(
        long,
        env = "PLATFORM_CONSOLE_OIDC_CLIENT_ID",
        value_name = "ID",
        requires = "console_oidc_authorize"
    )]
    pub console_oidc_client_id: Option<String>,
    /// A file holding the client secret (confidential clients only).
    #[arg(
        long,
        env = "PLATFORM_CONSOLE_OIDC_CLIENT_SECRET_FILE",
        value_name = "FILE",
        requires = "console_oidc_authorize"
    )]
    pub console_oidc_client_secret_file: Option<PathBuf>,
    /// The name on the sign-in button.
    #[arg(
        long,
        env = "PLATFORM_CONSOLE_OIDC_NAME",
        value_name = "NAME",
        default_value = "your identity provider"
    )]
    pub console_oidc_name: String,
}

impl ConsoleFlags {
    /// The server's console configuration.
    pub fn config(&self) -> Result<platform_server::ConsoleConfig, String> {
        let oidc = match (
            &self.console_oidc_authorize,
            &self.console_oidc_token,
            &self.console_oidc_client_id,
        ) {
            (Some(authorize), Some(token), Some(client_id)) => {
                let client_secret = match &self.console_oidc_client_secret_file {
                    Some(file) => Some(
                        std::fs::read_to_string(file)
                            .map_err(|e| format!("cannot read {}: {e}", file.display()))?
                            .trim()
                            .to_owned(),
                    ),
                    None => None,
                };
                Some(platform_server::ConsoleOidc {
                    name: self.console_oidc_name.clone(),
                    authorization_endpoint: authorize.clone(),
                    token_endpoint: token.clone(),
                    client_id: client_id.clone(),
                    client_secret,
                })
            }
            _ => None,
        };
        Ok(platform_server::ConsoleConfig {
            serve: !self.no_console,
            oidc,
        })
    }
}
