//! `docker-credential-platform`: a Docker credential helper handing the
//! registry an API token.
//!
//! Docker runs it as `docker-credential-platform get` with the registry host
//! on stdin, and reads `{"ServerURL", "Username", "Secret"}` from stdout.
//! The token is the one `platformctl auth login` cached, or, with
//! `PLATFORM_IDENTITY` and `PLATFORM_IDENTITY_TOKEN_FILE` set (CI jobs), a
//! fresh exchange of that identity token file for that identity. The API is
//! at `PLATFORMCTL_SERVER`, by default `http://<registry host>`.
//!
//! ```json
//! // ~/.docker/config.json
//! { "credHelpers": { "registry.example:8080": "platform" } }
//! ```

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use platformctl::{credentials, tokens, transport};

#[derive(Parser)]
#[command(
    version,
    about = "A Docker credential helper for the Platform API's registry"
)]
struct Cli {
    /// The API's base URL (default: `http://<the registry host>`).
    #[arg(long, env = "PLATFORMCTL_SERVER")]
    server: Option<String>,
    /// Where `platformctl auth login` caches credentials.
    #[arg(long, env = "PLATFORMCTL_CONFIG_DIR")]
    config_dir: Option<PathBuf>,
    /// Exchange an identity token for this identity (UIDP) instead of using the login cache.
    #[arg(long, env = "PLATFORM_IDENTITY", requires = "identity_token_file")]
    identity: Option<String>,
    /// The identity token (an OIDC JWT) to exchange.
    #[arg(long, env = "PLATFORM_IDENTITY_TOKEN_FILE")]
    identity_token_file: Option<PathBuf>,
    /// The CA file and the plain-HTTP opt-in (`PLATFORMCTL_CA_FILE`,
    /// `PLATFORMCTL_ALLOW_INSECURE_HTTP`: Docker passes no flags).
    #[command(flatten)]
    transport: transport::TransportFlags,
    /// The credential-helper operation Docker asks for.
    operation: Operation,
}

#[derive(Clone, Copy, ValueEnum)]
enum Operation {
    Get,
    Store,
    Erase,
    List,
}

/// What Docker expects on stdout when a helper has no credentials for a host.
const NOT_FOUND: &str = "credentials not found in native keychain";

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(error) = configure_transport(&cli) {
        eprintln!("{}", platformctl::describe(&error));
        return platformctl::exit_code(&error);
    }
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        eprintln!("error: cannot read stdin: {e}");
        return ExitCode::FAILURE;
    }
    match cli.operation {
        // Tokens are short-lived and minted on demand: nothing to store or erase.
        Operation::Store | Operation::Erase => ExitCode::SUCCESS,
        Operation::List => {
            println!("{{}}");
            ExitCode::SUCCESS
        }
        Operation::Get => get(&cli, input.trim()).await,
    }
}

/// The token exchange goes over TLS with the CA file's roots, and over plain
/// HTTP only to this machine or with the opt-in.
fn configure_transport(cli: &Cli) -> Result<(), runtime::Error> {
    transport::configure(cli.transport.tls()?);
    Ok(())
}

async fn get(cli: &Cli, host: &str) -> ExitCode {
    if host.is_empty() {
        eprintln!("error: expected the registry host on stdin");
        return ExitCode::from(platformctl::exit::INVALID);
    }
    let server = cli.server.clone().unwrap_or_else(|| {
        if host.contains("://") {
            host.to_owned()
        } else {
            format!("http://{host}")
        }
    });
    let server = server.trim_end_matches('/');
    let token = match (&cli.identity, &cli.identity_token_file) {
        (Some(identity), Some(file)) => tokens::exchange(server, identity, file).await,
        _ => match cli.config_dir.clone().or_else(credentials::default_dir) {
            Some(dir) => credentials::valid_token(server, &dir).await,
            None => {
                println!("{NOT_FOUND}");
                return ExitCode::FAILURE;
            }
        },
    };
    match token {
        Ok(token) => {
            let answer = serde_json::json!({
                "ServerURL": host,
                "Username": "token",
                "Secret": token,
            });
            println!("{answer}");
            ExitCode::SUCCESS
        }
        Err(error) if error.reason() == "NOT_LOGGED_IN" => {
            println!("{NOT_FOUND}");
            eprintln!("{}", platformctl::describe(&error));
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("{}", platformctl::describe(&error));
            platformctl::exit_code(&error)
        }
    }
}
