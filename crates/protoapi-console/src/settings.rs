//! What a server's configuration says about its console: whether it is
//! served, and the OIDC issuer people may sign in through.

use protoapi_client::client::Tls;

use crate::oidc::{Exchange, Oidc};
use crate::{Console, Schema};

/// Whether the console is served, and how people sign in to it.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Serve `/console/` (the default).
    pub serve: bool,
    /// Offer sign-in through this OIDC issuer besides a pasted token.
    pub oidc: Option<Issuer>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            serve: true,
            oidc: None,
        }
    }
}

/// An OIDC issuer the console signs people in through (the authorization
/// code flow with PKCE), as an operator configures it.
#[derive(Clone, Debug)]
pub struct Issuer {
    /// The name on the sign-in button.
    pub name: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub client_id: String,
    /// For confidential clients; public clients rely on PKCE alone.
    pub client_secret: Option<String>,
}

impl Settings {
    /// The console of the API `schema` describes, served at `base_url`
    /// (session cookies `Secure` with `tls`), if it is served at all. An
    /// identity token from the issuer is traded for an API token through
    /// `exchange`, or used as it is when `None`.
    pub fn console(
        &self,
        schema: &'static Schema,
        base_url: &str,
        tls: bool,
        exchange: Option<Exchange>,
    ) -> Option<Console> {
        if !self.serve {
            return None;
        }
        let console = Console::new(schema).secure_cookies(tls);
        let Some(issuer) = &self.oidc else {
            return Some(console);
        };
        Some(console.oidc(Oidc {
            name: issuer.name.clone(),
            authorization_endpoint: issuer.authorization_endpoint.clone(),
            token_endpoint: issuer.token_endpoint.clone(),
            client_id: issuer.client_id.clone(),
            client_secret: issuer.client_secret.clone(),
            redirect_uri: format!("{base_url}/console/oidc/callback"),
            tls: Tls::new(),
            exchange,
        }))
    }
}
