//! `platformctl`: the command-line client of the Platform API, on the
//! generated client (`platform_api::Client`) over REST/JSON or gRPC.
//!
//! ```text
//! platformctl auth login --identity <UIDP> --identity-token ci.jwt
//! platformctl auth login --browser --issuer https://login.example --identity <UIDP>
//! platformctl groups list --children-of <UIDP> --all
//! platformctl --server https://api.example:8443 --ca-file ca.pem groups list
//! platformctl repos create --parent <UIDP> --set name=images --set public=true
//! platformctl groups update <UIDP> --set description="Platform team" --etag <ETAG>
//! platformctl roles get <UIDP> -o json
//! platformctl completion bash > /etc/bash_completion.d/platformctl
//! platformctl --server https://api.example auth configure-docker --registry registry.example
//! ```
//!
//! Credentials are cached in `$PLATFORMCTL_CONFIG_DIR`, else
//! `$XDG_CONFIG_HOME/platformctl`, else `~/.config/platformctl`; `--token`
//! (or `$PLATFORMCTL_TOKEN`) uses a token as given instead. The cache and
//! its directory are the user's only (0600, 0700), whatever they were
//! before. Text from the server is printed with control characters and
//! bidirectional overrides escaped (`platformctl::text`).
//!
//! `https://` servers and issuers are verified against the system's roots,
//! or only the CA of `--ca-file` (`$PLATFORMCTL_CA_FILE`); plain `http://`
//! goes to this machine only, unless `--allow-insecure-http`.

mod login;
mod output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use platformctl::{credentials, describe, exit_code, tokens, transport};
use protoapi_runtime::client::StaticToken;
use protoapi_runtime::{Code, Error};

use crate::credentials::Credentials;
use crate::output::Format;
use platformctl::docker::{DockerConfig, RegistryHost};

/// Where a browser login keeps the identity token it obtained (re-exchanged
/// until it expires).
const ID_TOKEN_FILE: &str = "identity-token.jwt";

const EXIT_CODES: &str = "\
Exit codes: 0 success, 1 other failures, 2 invalid input (usage or INVALID_ARGUMENT),
3 not found, 4 unauthenticated or permission denied, 5 conflict (ALREADY_EXISTS, or ABORTED
on a stale --etag), 6 unavailable (retried first) or timed out, 7 preconditions unmet (FAILED_PRECONDITION
naming them, such as a delete's dependents, which are listed).";

#[derive(Parser)]
#[command(
    version,
    about = "The command-line client of the Platform API",
    after_help = EXIT_CODES,
    subcommand_required = true,
    next_help_heading = "Global options"
)]
struct Cli {
    /// The API's base URL (also the audience of its tokens).
    #[arg(
        long,
        env = "PLATFORMCTL_SERVER",
        default_value = "http://127.0.0.1:8080",
        global = true
    )]
    server: String,
    /// Where credentials are cached.
    #[arg(long, env = "PLATFORMCTL_CONFIG_DIR", global = true)]
    config_dir: Option<PathBuf>,
    /// An API token to use as is, instead of the cached login.
    #[arg(long, env = "PLATFORMCTL_TOKEN", global = true, hide_env_values = true)]
    token: Option<String>,
    /// Call the API over gRPC instead of REST/JSON.
    #[arg(long, global = true)]
    grpc: bool,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = Format::Table, global = true)]
    output: Format,
    #[command(flatten)]
    transport: transport::TransportFlags,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Log in and print tokens.
    #[command(subcommand)]
    Auth(Auth),
    /// Print a shell completion script.
    Completion {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// The collections of the API's current version (`groups list`, ...),
    /// generated from its contract.
    #[command(flatten)]
    Collection(platform_api::cli::Command),
}

#[derive(Subcommand)]
enum Auth {
    /// Cache an API token: one read from standard input (`--with-token`), or
    /// one exchanged for an identity token of an identity.
    #[command(after_help = "Examples:\n  \
        platformctl auth login --with-token < data/admin.token\n  \
        platformctl auth login --identity <uidp> --identity-token ci-token.jwt\n  \
        platformctl auth login --identity <uidp> --browser --issuer https://accounts.example.com")]
    Login {
        /// Read an API token from standard input and cache it as it is, after
        /// the server has accepted it (the administrator's `admin.token` in
        /// the server's data dir, say). It is not renewed: log in again once it
        /// expires.
        #[arg(long, conflicts_with_all = ["identity", "identity_token", "browser"])]
        with_token: bool,
        /// The UIDP of the identity to assume.
        #[arg(long, required_unless_present = "with_token")]
        identity: Option<String>,
        /// A file holding the identity token (an OIDC JWT); re-read on every exchange.
        #[arg(long, required_unless_present_any = ["browser", "with_token"], conflicts_with = "browser")]
        identity_token: Option<PathBuf>,
        /// Obtain the identity token by logging in with a browser at `--issuer`.
        #[arg(long, requires = "issuer")]
        browser: bool,
        /// The OIDC issuer to log in at (with `--browser`).
        #[arg(long)]
        issuer: Option<String>,
        /// The OAuth client id registered at the issuer (default: the server URL,
        /// the audience the token service requires).
        #[arg(long)]
        client_id: Option<String>,
    },
    /// Print the API token commands use: `--token` (or `PLATFORMCTL_TOKEN`)
    /// when given, else the cached login's, exchanged again when it nears
    /// expiry.
    Token,
    /// Record `--server` and the registry hosts `docker-credential-platform`
    /// answers for (besides the server's own host), and print the
    /// `credHelpers` entries for `~/.docker/config.json`.
    ConfigureDocker {
        /// A registry host (`host` or `host:port`) whose credentials are this
        /// server's tokens; repeatable. Replaces the hosts recorded before.
        #[arg(long = "registry")]
        registries: Vec<String>,
    },
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = run(&cli).await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{}", describe(&error));
            exit_code(&error)
        }
    }
}

async fn run(cli: &Cli) -> Result<(), Error> {
    if let Command::Completion { shell } = &cli.command {
        let mut command = Cli::command();
        clap_complete::generate(*shell, &mut command, "platformctl", &mut std::io::stdout());
        return Ok(());
    }
    // Every connection below, the issuer's included, goes by these settings.
    transport::configure(cli.transport.tls()?);
    match &cli.command {
        Command::Completion { .. } => Ok(()),
        Command::Auth(auth) => run_auth(cli, auth).await,
        Command::Collection(command) => run_collection(cli, command).await,
    }
}

fn config_dir(cli: &Cli) -> Result<PathBuf, Error> {
    cli.config_dir
        .clone()
        .or_else(credentials::default_dir)
        .ok_or_else(|| {
            credentials::local_error("no config directory: set PLATFORMCTL_CONFIG_DIR".into())
        })
}

fn server(cli: &Cli) -> &str {
    cli.server.trim_end_matches('/')
}

async fn run_auth(cli: &Cli, auth: &Auth) -> Result<(), Error> {
    let dir = config_dir(cli)?;
    match auth {
        Auth::Login {
            with_token: true, ..
        } => login_with_token(cli, &dir).await?,
        Auth::Login {
            identity,
            identity_token,
            issuer,
            client_id,
            ..
        } => {
            let identity = identity.as_deref().expect("clap requires an identity");
            let token_file = match (identity_token, issuer) {
                (Some(file), _) => file.clone(),
                (None, Some(issuer)) => {
                    let client_id = client_id.as_deref().unwrap_or(server(cli));
                    let id_token =
                        login::browser_login(issuer, client_id)
                            .await
                            .map_err(|message| {
                                Error::new(Code::Unauthenticated, "BROWSER_LOGIN_FAILED", message)
                            })?;
                    credentials::write_private(&dir, ID_TOKEN_FILE, id_token.as_bytes())?;
                    dir.join(ID_TOKEN_FILE)
                }
                (None, None) => unreachable!("clap requires a token file or a browser login"),
            };
            let credentials = Credentials::exchange(server(cli), identity, &token_file).await?;
            credentials.save(&dir)?;
            eprintln!("logged in as {identity}; {}", credentials.expires_in());
        }
        Auth::Token => {
            let token = match &cli.token {
                Some(token) => token.clone(),
                None => credentials::valid_token(server(cli), &dir).await?,
            };
            println!("{}", platformctl::text::escape(&token));
        }
        Auth::ConfigureDocker { registries } => configure_docker(cli, &dir, registries)?,
    }
    Ok(())
}

/// `auth login --with-token`: caches the API token on standard input once
/// the server has accepted it.
async fn login_with_token(cli: &Cli, dir: &std::path::Path) -> Result<(), Error> {
    let mut token = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut token)
        .map_err(|e| credentials::local_error(format!("cannot read the token on stdin: {e}")))?;
    let credentials = Credentials::given(server(cli), token.trim())?;
    // Any answer but UNAUTHENTICATED means the server took the token.
    let connection =
        transport::rest(server(cli))?.with_tokens(StaticToken::new(credentials.token.clone()));
    let probe = platform_api::Client::new(connection)
        .groups()
        .list(platform_api::platform::iam::v2::ListGroupsRequest {
            page_size: 1,
            ..Default::default()
        })
        .await;
    if let Err(error) = probe
        && error.code() == Code::Unauthenticated
    {
        return Err(error);
    }
    credentials.save(dir)?;
    eprintln!(
        "logged in as {}; {} (it is not renewed: log in again then)",
        credentials.identity,
        credentials.expires_in()
    );
    Ok(())
}

/// Records the credential helper's server and registries in `dir`, and
/// prints the Docker configuration that uses the helper for them.
fn configure_docker(cli: &Cli, dir: &std::path::Path, registries: &[String]) -> Result<(), Error> {
    let mut hosts = Vec::new();
    let named = std::iter::once(("server", server(cli)))
        .chain(registries.iter().map(|text| ("registry", text.as_str())));
    for (field, text) in named {
        let host = RegistryHost::parse(text).ok_or_else(|| {
            Error::invalid_field(
                field,
                format!("`{text}` is not a registry host (`host`, `host:port` or a URL)"),
            )
        })?;
        hosts.push(host.docker_name());
    }
    let recorded = DockerConfig {
        server: server(cli).to_owned(),
        registries: hosts[1..].to_vec(),
    };
    recorded.save(dir)?;
    let helpers: serde_json::Map<String, serde_json::Value> = hosts
        .into_iter()
        .map(|host| (host, "platform".into()))
        .collect();
    let config = serde_json::json!({ "credHelpers": helpers });
    eprintln!("add to ~/.docker/config.json (docker-credential-platform on the PATH):");
    println!("{}", serde_json::to_string_pretty(&config).expect("JSON"));
    Ok(())
}

/// The generated client over the chosen transport, with the chosen tokens.
fn client(cli: &Cli) -> Result<platform_api::Client, Error> {
    let connection = if cli.grpc {
        transport::grpc(server(cli))?
    } else {
        transport::rest(server(cli))?
    };
    let connection = match &cli.token {
        Some(token) => connection.with_tokens(StaticToken::new(token.clone())),
        None => connection.with_tokens(tokens::login_cache(server(cli), config_dir(cli)?)),
    };
    Ok(platform_api::Client::new(connection))
}

/// A collection's command through the generated client, its answer printed.
async fn run_collection(cli: &Cli, command: &platform_api::cli::Command) -> Result<(), Error> {
    let answer = command.run(&client(cli)?).await?;
    output::print(cli.output, &answer);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_api::cli::{Command as Collection, Groups, Repos};

    fn parse(args: &[&str]) -> Command {
        Cli::try_parse_from(std::iter::once("platformctl").chain(args.iter().copied()))
            .unwrap()
            .command
    }

    /// Etags and page tokens are base64url: they may start with `-`.
    #[test]
    fn values_starting_with_a_hyphen_are_values() {
        let update = parse(&["groups", "update", "u", "--set", "a=b", "--etag", "-W1"]);
        let Command::Collection(Collection::Groups(Groups::Update(update))) = update else {
            panic!("an update");
        };
        assert_eq!(update.etag.as_deref(), Some("-W1"));
        let list = parse(&["repos", "list", "--page-token", "-x"]);
        let Command::Collection(Collection::Repos(Repos::List(list))) = list else {
            panic!("a list");
        };
        assert_eq!(list.paging.page_token.as_deref(), Some("-x"));
    }
}
