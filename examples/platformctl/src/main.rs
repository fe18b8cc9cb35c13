//! `platformctl`: a small command-line client of the Platform API.
//!
//! ```text
//! platformctl --server http://127.0.0.1:8080 auth login --identity <UIDP> --identity-token ci.jwt
//! platformctl auth token          # a valid API token, re-exchanged when expired
//! platformctl groups list [--children-of <UIDP>]
//! ```
//!
//! `auth login` exchanges an identity token from a trusted OIDC issuer for an
//! API token at the server's token service and caches it, with its expiry,
//! in the user's config directory (`$PLATFORMCTL_CONFIG_DIR`, else
//! `$XDG_CONFIG_HOME/platformctl`, else `~/.config/platformctl`).

mod client;
mod credentials;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::client::Client;
use crate::credentials::Credentials;

#[derive(Parser)]
#[command(version, about = "A command-line client of the Platform API")]
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
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Log in and print tokens.
    #[command(subcommand)]
    Auth(Auth),
    /// Work with groups.
    #[command(subcommand)]
    Groups(Groups),
}

#[derive(Subcommand)]
enum Auth {
    /// Exchange an identity token for an API token and cache it.
    Login {
        /// The UIDP of the identity to assume.
        #[arg(long)]
        identity: String,
        /// A file holding the identity token (an OIDC JWT); re-read on every exchange.
        #[arg(long)]
        identity_token: PathBuf,
    },
    /// Print a valid API token, exchanging again when the cached one expired.
    Token,
}

#[derive(Subcommand)]
enum Groups {
    /// List the groups you may see.
    List {
        /// Only the children of this group.
        #[arg(long)]
        children_of: Option<String>,
    },
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), String> {
    let config_dir = cli
        .config_dir
        .clone()
        .or_else(credentials::default_dir)
        .ok_or("no config directory: set PLATFORMCTL_CONFIG_DIR")?;
    let client = Client::new(&cli.server);
    match cli.command {
        Command::Auth(Auth::Login {
            identity,
            identity_token,
        }) => {
            let credentials = Credentials::exchange(&client, &identity, &identity_token).await?;
            credentials.save(&config_dir)?;
            eprintln!("logged in as {identity} until {}", credentials.expires_at);
        }
        Command::Auth(Auth::Token) => {
            println!("{}", credentials::valid_token(&client, &config_dir).await?);
        }
        Command::Groups(Groups::List { children_of }) => {
            let token = credentials::valid_token(&client, &config_dir).await?;
            let mut path = "/iam/v2/groups?pageSize=200".to_owned();
            if let Some(parent) = children_of {
                path.push_str(&format!("&uidp.children_of={parent}"));
            }
            loop {
                let page = client.get(&path, Some(&token)).await?;
                for group in page["items"].as_array().into_iter().flatten() {
                    println!(
                        "{}\t{}",
                        group["uid"].as_str().unwrap_or_default(),
                        group["name"].as_str().unwrap_or_default()
                    );
                }
                match page["nextPageToken"].as_str().filter(|t| !t.is_empty()) {
                    Some(next) => {
                        path = format!(
                            "{}&pageToken={next}",
                            path.split("&pageToken=").next().unwrap_or_default()
                        )
                    }
                    None => break,
                }
            }
        }
    }
    Ok(())
}
