//! `terraform-provider-platform`: the Platform API's Terraform provider.
//!
//! Every collection of the API's current version is a resource type and a
//! data source (`platform_group`, `platform_role_binding`, ...), built from
//! the generated `SCHEMA` by `protoapi_runtime::terraform`. Terraform starts
//! it; run by hand, it says so and exits. `terraform-provider-platform docs
//! DIR` writes its documentation (the Registry's layout) under `DIR`; the
//! pages in `platform/platformctl/terraform/docs/` are kept so.
//!
//! ```hcl
//! terraform {
//!   required_providers {
//!     platform = { source = "example.com/platform/platform" }
//!   }
//! }
//!
//! provider "platform" {
//!   endpoint = "http://127.0.0.1:8080"
//! }
//!
//! resource "platform_group" "team" {
//!   parent_id = var.organization
//!   name      = "team"
//! }
//! ```
//!
//! Credentials, first found: the block's `token`, `PLATFORM_TOKEN`, an
//! identity token exchanged for `identity` (`identity_token` or
//! `identity_token_file`, each also from `PLATFORM_…`), the login
//! `platformctl auth login` cached for the endpoint.

use std::process::ExitCode;

use platformctl::{credentials, tokens};
use protoapi_runtime::client::Connection;
use protoapi_runtime::terraform::{self, Settings};

/// The token sources `platformctl` and the SDK use.
fn credentials(connection: Connection, settings: &Settings) -> Connection {
    let endpoint = settings.endpoint.clone();
    let identity = settings.identity.clone();
    match (
        identity,
        &settings.identity_token,
        &settings.identity_token_file,
    ) {
        (Some(identity), Some(token), _) => {
            connection.with_tokens(tokens::sts_token(endpoint, identity, token.clone()))
        }
        (Some(identity), None, Some(file)) => {
            connection.with_tokens(tokens::sts(endpoint, identity, file.clone()))
        }
        _ => match login_dir() {
            Some(dir) => connection.with_tokens(tokens::login_cache(endpoint, dir)),
            None => connection,
        },
    }
}

/// Where `platformctl auth login` caches credentials: `PLATFORMCTL_CONFIG_DIR`
/// as for `platformctl`, else its default.
fn login_dir() -> Option<std::path::PathBuf> {
    std::env::var_os("PLATFORMCTL_CONFIG_DIR")
        .map(Into::into)
        .or_else(credentials::default_dir)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [command, dir] = args.as_slice()
        && command == "docs"
    {
        let provider = terraform::Provider::new(&platform_api::SCHEMA, "platform", credentials);
        return match terraform::docs::write(&provider, dir.as_ref()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("terraform-provider-platform: cannot write {dir}: {error}");
                ExitCode::FAILURE
            }
        };
    }
    match terraform::serve(&platform_api::SCHEMA, "platform", credentials).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("terraform-provider-platform: {error}");
            ExitCode::FAILURE
        }
    }
}
