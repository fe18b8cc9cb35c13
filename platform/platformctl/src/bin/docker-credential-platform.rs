//! `docker-credential-platform`: a Docker credential helper handing the
//! registry an API token.
//!
//! Docker runs it as `docker-credential-platform get` with the registry host
//! on stdin, and reads `{"ServerURL", "Username", "Secret"}` from stdout.
//! The token is the one `platformctl auth login` cached, or, with
//! `PLATFORM_IDENTITY` and `PLATFORM_IDENTITY_TOKEN_FILE` set (CI jobs), a
//! fresh exchange of that identity token file for that identity.
//!
//! The host on stdin is whatever an image names, so it never chooses where
//! tokens go. The API is configured: `--server`/`PLATFORMCTL_SERVER`, else
//! the server `platformctl auth configure-docker` recorded, else the one
//! `platformctl auth login` logged in to. The helper answers only for that
//! API's own host and the registry hosts configured for it
//! (`--registry`/`PLATFORMCTL_REGISTRIES`, comma-separated, and those
//! `configure-docker` recorded), compared exactly after normalisation (case,
//! default port 443); for any other host, or with no API configured, it
//! answers Docker's "credentials not found" without a network call
//! (`platformctl::docker`).
//!
//! ```sh
//! platformctl --server https://api.example auth configure-docker --registry registry.example
//! ```
//! ```json
//! // ~/.docker/config.json
//! { "credHelpers": { "api.example": "platform", "registry.example": "platform" } }
//! ```

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use platformctl::docker::{Binding, DockerConfig};
use platformctl::text::escape;
use platformctl::{credentials, tokens, transport};

#[derive(Parser)]
#[command(
    version,
    about = "A Docker credential helper for the Platform API's registry"
)]
struct Cli {
    /// The API's base URL (default: the server `platformctl auth
    /// configure-docker` recorded, else the one `platformctl auth login` used).
    #[arg(long, env = "PLATFORMCTL_SERVER")]
    server: Option<String>,
    /// A registry host (`host` or `host:port`) to answer for besides the
    /// API's own; repeatable (the variable takes a comma-separated list).
    #[arg(
        long = "registry",
        env = "PLATFORMCTL_REGISTRIES",
        value_delimiter = ','
    )]
    registries: Vec<String>,
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

/// The configured API and its registries, read from the command line, the
/// environment and the config dir (no network).
fn binding(cli: &Cli) -> Option<Binding> {
    let dir = cli.config_dir.clone().or_else(credentials::default_dir);
    let recorded = dir.as_deref().and_then(DockerConfig::load);
    let logged_in = dir.as_deref().and_then(credentials::logged_in_server);
    Binding::new(cli.server.as_deref(), &cli.registries, recorded, logged_in)
}

/// Docker's answer for a host the helper has no credentials for.
fn not_found(why: String) -> ExitCode {
    println!("{NOT_FOUND}");
    eprintln!("{}", escape(&why));
    ExitCode::FAILURE
}

/// The token exchange goes over TLS with the CA file's roots, and over plain
/// HTTP only to this machine or with the opt-in.
fn configure_transport(cli: &Cli) -> Result<(), protoapi_runtime::Error> {
    transport::configure(cli.transport.tls()?);
    Ok(())
}

async fn get(cli: &Cli, host: &str) -> ExitCode {
    if host.is_empty() {
        eprintln!("error: expected the registry host on stdin");
        return ExitCode::from(platformctl::exit::INVALID);
    }
    let Some(binding) = binding(cli) else {
        return not_found(
            "no API configured: set PLATFORMCTL_SERVER, or run `platformctl auth configure-docker`"
                .into(),
        );
    };
    if !binding.serves(host) {
        return not_found(format!(
            "{host} is not a registry configured for {} (see `platformctl auth configure-docker`)",
            binding.server
        ));
    }
    let server = binding.server.as_str();
    let token = match (&cli.identity, &cli.identity_token_file) {
        (Some(identity), Some(file)) => tokens::exchange(server, identity, file).await,
        _ => match cli.config_dir.clone().or_else(credentials::default_dir) {
            Some(dir) => credentials::valid_token(server, &dir).await,
            None => return not_found("no config directory: set PLATFORMCTL_CONFIG_DIR".into()),
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
