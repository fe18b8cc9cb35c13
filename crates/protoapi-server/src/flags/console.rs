//! Whether the web console is served at `/console/`, and the OIDC issuer
//! it may sign people in through.

use std::path::PathBuf;

use protoapi_console::{Issuer, Settings};

/// The console: served by default, signing in with a pasted API token, and
/// through an OIDC issuer when one is given.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConsoleFlags {
    /// Do not serve the web console at `/console/`.
    #[arg(long)]
    pub no_console: bool,
    /// The issuer's authorization endpoint: the console offers sign-in
    /// through it (authorization code with PKCE), then exchanges the
    /// identity token with the API's token service where it has one.
    /// Register `<base url>/console/oidc/callback` as the client's
    /// redirect URI.
    #[arg(
        long,
        value_name = "URL",
        requires_all = ["console_oidc_token", "console_oidc_client_id"]
    )]
    pub console_oidc_authorize: Option<String>,
    /// The issuer's token endpoint.
    #[arg(long, value_name = "URL", requires = "console_oidc_authorize")]
    pub console_oidc_token: Option<String>,
    /// The console's client id at the issuer.
    #[arg(long, value_name = "ID", requires = "console_oidc_authorize")]
    pub console_oidc_client_id: Option<String>,
    /// A file holding the client secret (confidential clients only).
    #[arg(long, value_name = "FILE", requires = "console_oidc_authorize")]
    pub console_oidc_client_secret_file: Option<PathBuf>,
    /// The name on the sign-in button.
    #[arg(long, value_name = "NAME", default_value = "your identity provider")]
    pub console_oidc_name: String,
}

impl ConsoleFlags {
    /// The console's settings (reading the client secret's file).
    pub fn settings(&self) -> Result<Settings, String> {
        let oidc = match (
            &self.console_oidc_authorize,
            &self.console_oidc_token,
            &self.console_oidc_client_id,
        ) {
            (Some(authorize), Some(token), Some(client_id)) => Some(Issuer {
                name: self.console_oidc_name.clone(),
                authorization_endpoint: authorize.clone(),
                token_endpoint: token.clone(),
                client_id: client_id.clone(),
                client_secret: self.client_secret()?,
            }),
            _ => None,
        };
        Ok(Settings {
            serve: !self.no_console,
            oidc,
        })
    }

    fn client_secret(&self) -> Result<Option<String>, String> {
        let Some(file) = &self.console_oidc_client_secret_file else {
            return Ok(None);
        };
        let secret = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        Ok(Some(secret.trim().to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Args {
        #[command(flatten)]
        console: ConsoleFlags,
    }

    #[test]
    fn an_issuer_needs_its_three_endpoints_and_reads_its_secret() {
        let plain = Args::parse_from(["server"]).console.settings().unwrap();
        assert!(plain.serve && plain.oidc.is_none());
        let off = Args::parse_from(["server", "--no-console"]);
        assert!(!off.console.settings().unwrap().serve);
        assert!(
            Args::try_parse_from(["server", "--console-oidc-authorize", "https://i/auth"]).is_err()
        );
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "s3cret\n").unwrap();
        let args = Args::parse_from([
            "server",
            "--console-oidc-authorize",
            "https://i/auth",
            "--console-oidc-token",
            "https://i/token",
            "--console-oidc-client-id",
            "console",
            "--console-oidc-client-secret-file",
            secret.to_str().unwrap(),
        ]);
        let issuer = args.console.settings().unwrap().oidc.unwrap();
        assert_eq!(
            (issuer.client_id.as_str(), issuer.client_secret.as_deref()),
            ("console", Some("s3cret"))
        );
        std::fs::remove_file(&secret).unwrap();
        assert!(args.console.settings().unwrap_err().contains("cannot read"));
    }
}
