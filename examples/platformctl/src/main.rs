//! `platformctl`: the command-line client of the Platform API, on the
//! generated client (`generated::Client`) over REST/JSON or gRPC.
//!
//! ```text
//! platformctl auth login --identity <UIDP> --identity-token ci.jwt
//! platformctl auth login --browser --issuer https://login.example --identity <UIDP>
//! platformctl groups list --children-of <UIDP> --all
//! platformctl repos create --parent <UIDP> --set name=images --set public=true
//! platformctl groups update <UIDP> --set description="Platform team" --etag <ETAG>
//! platformctl roles get <UIDP> -o json
//! platformctl completion bash > /etc/bash_completion.d/platformctl
//! ```
//!
//! Credentials are cached in `$PLATFORMCTL_CONFIG_DIR`, else
//! `$XDG_CONFIG_HOME/platformctl`, else `~/.config/platformctl`; `--token`
//! (or `$PLATFORMCTL_TOKEN`) uses a token as given instead.

mod collections;
mod login;
mod output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use futures_util::TryStreamExt;
use platformctl::{credentials, describe, exit_code, tokens};
use runtime::client::{Connection, StaticToken};
use runtime::{Code, Error};
use serde_json::{Map, Value, json};

use crate::collections::Collection;
use crate::credentials::Credentials;
use crate::output::Format;

/// Where a browser login keeps the identity token it obtained (re-exchanged
/// until it expires).
const ID_TOKEN_FILE: &str = "identity-token.jwt";

const EXIT_CODES: &str = "\
Exit codes: 0 success, 1 other failures, 2 invalid input (usage or INVALID_ARGUMENT),
3 not found, 4 unauthenticated or permission denied, 5 conflict (ALREADY_EXISTS, or ABORTED
on a stale --etag), 6 unavailable (retried first) or timed out.";

#[derive(Parser)]
#[command(
    version,
    about = "The command-line client of the Platform API",
    after_help = EXIT_CODES,
    subcommand_required = true
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
    #[command(subcommand)]
    command: Option<Command>,
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
}

#[derive(Subcommand)]
enum Auth {
    /// Exchange an identity token for an API token of an identity, and cache it.
    Login {
        /// The UIDP of the identity to assume.
        #[arg(long)]
        identity: String,
        /// A file holding the identity token (an OIDC JWT); re-read on every exchange.
        #[arg(long, required_unless_present = "browser", conflicts_with = "browser")]
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
    /// Print a valid API token, exchanging again when the cached one expires.
    Token,
}

/// What to do with a collection (`platformctl <collection> <action>`).
#[derive(Subcommand)]
enum Action {
    /// List what you may see, one page or (`--all`) every page.
    List {
        /// Only the children of this group.
        #[arg(long)]
        children_of: Option<String>,
        /// Only the descendants of this group.
        #[arg(long)]
        descendants_of: Option<String>,
        /// Only the ancestors of this resource.
        #[arg(long)]
        ancestors_of: Option<String>,
        /// Only these UIDPs.
        #[arg(long, value_delimiter = ',')]
        ids: Vec<String>,
        /// A declared filter of the collection, `field=value` (e.g. `name=acme`).
        #[arg(long = "filter", value_name = "FIELD=VALUE", value_parser = field_value)]
        filters: Vec<(String, String)>,
        /// Order, e.g. `name` or `name desc`.
        #[arg(long)]
        order_by: Option<String>,
        #[arg(long)]
        page_size: Option<u32>,
        /// Start at this page (a previous answer's `nextPageToken`, which may start with `-`).
        #[arg(long, allow_hyphen_values = true)]
        page_token: Option<String>,
        /// Every page to the end.
        #[arg(long)]
        all: bool,
        /// No progress on stderr with `--all`.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Print one resource.
    Get { uid: String },
    /// Create a resource from `--set` fields.
    Create {
        /// The parent group (none: a root organization).
        #[arg(long, default_value = "")]
        parent: String,
        /// A field, `field=value`; values starting with `[`, `{` or `"`, and
        /// `true`/`false`, are JSON. Nested fields as `a.b=value`.
        #[arg(long = "set", value_name = "FIELD=VALUE", value_parser = field_value)]
        fields: Vec<(String, String)>,
    },
    /// Change the `--set` fields of a resource (they are the update mask).
    Update {
        uid: String,
        #[arg(long = "set", value_name = "FIELD=VALUE", value_parser = field_value, required = true)]
        fields: Vec<(String, String)>,
        /// Only if the resource still has this etag (which may start with `-`).
        #[arg(long, allow_hyphen_values = true)]
        etag: Option<String>,
    },
    /// Delete a resource.
    Delete {
        uid: String,
        /// Only if the resource still has this etag (which may start with `-`).
        #[arg(long, allow_hyphen_values = true)]
        etag: Option<String>,
    },
}

fn field_value(text: &str) -> Result<(String, String), String> {
    let (field, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected FIELD=VALUE, got `{text}`"))?;
    Ok((field.to_owned(), value.to_owned()))
}

/// The whole command line: [`Cli`] plus one subcommand per collection.
fn command() -> clap::Command {
    Collection::value_variants()
        .iter()
        .fold(Cli::command(), |command, collection| {
            let subcommand = clap::Command::new(collection.name())
                .about(format!("Work with {}.", collection.name()))
                .subcommand_required(true);
            command.subcommand(Action::augment_subcommands(subcommand))
        })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let matches = command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match (&cli.command, matches.subcommand()) {
        (Some(Command::Completion { shell }), _) => {
            clap_complete::generate(
                *shell,
                &mut command(),
                "platformctl",
                &mut std::io::stdout(),
            );
            Ok(())
        }
        (Some(Command::Auth(auth)), _) => run_auth(&cli, auth).await,
        (None, Some((name, matches))) => run_collection(&cli, name, matches).await,
        (None, None) => unreachable!("a subcommand is required"),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{}", describe(&error));
            exit_code(&error)
        }
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
            identity,
            identity_token,
            browser: _,
            issuer,
            client_id,
        } => {
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
            eprintln!("logged in as {identity} until {}", credentials.expires_at);
        }
        Auth::Token => println!("{}", credentials::valid_token(server(cli), &dir).await?),
    }
    Ok(())
}

/// The generated client over the chosen transport, with the chosen tokens.
fn client(cli: &Cli) -> Result<generated::Client, Error> {
    let connection = if cli.grpc {
        Connection::grpc(server(cli))?
    } else {
        Connection::rest(server(cli))?
    };
    let connection = match &cli.token {
        Some(token) => connection.with_tokens(StaticToken::new(token.clone())),
        None => connection.with_tokens(tokens::login_cache(server(cli), config_dir(cli)?)),
    };
    Ok(generated::Client::new(connection))
}

async fn run_collection(cli: &Cli, name: &str, matches: &ArgMatches) -> Result<(), Error> {
    let collection = Collection::from_str(name, false).expect("a collection subcommand");
    let action = Action::from_arg_matches(matches).unwrap_or_else(|e| e.exit());
    let client = client(cli)?;
    let print_one = |item: &Value| match cli.output {
        Format::Table => print!("{}", output::fields(item)),
        Format::Json => print!("{}", output::json(item)),
    };
    match action {
        Action::List {
            children_of,
            descendants_of,
            ancestors_of,
            ids,
            filters,
            order_by,
            page_size,
            page_token,
            all,
            quiet,
        } => {
            let mut uidp = Map::new();
            let hierarchy = [
                ("childrenOf", children_of),
                ("descendantsOf", descendants_of),
                ("ancestorsOf", ancestors_of),
            ];
            for (key, value) in hierarchy {
                if let Some(value) = value {
                    uidp.insert(key.into(), value.into());
                }
            }
            if !ids.is_empty() {
                uidp.insert("ids".into(), ids.into());
            }
            let mut request = Map::new();
            if !uidp.is_empty() {
                request.insert("uidp".into(), uidp.into());
            }
            for (field, value) in filters {
                request.insert(field, value.into());
            }
            for (key, value) in [("orderBy", order_by), ("pageToken", page_token)] {
                if let Some(value) = value {
                    request.insert(key.into(), value.into());
                }
            }
            if let Some(size) = page_size {
                request.insert("pageSize".into(), size.into());
            }
            list(cli, &client, collection, Value::Object(request), all, quiet).await?;
        }
        Action::Get { uid } => print_one(&collection.get(&client, json!({ "uid": uid })).await?),
        Action::Create { parent, fields } => {
            let resource = resource(&fields)?;
            let request = json!({ "parent": parent, collection.body_field(): resource });
            print_one(&collection.create(&client, request).await?);
        }
        Action::Update { uid, fields, etag } => {
            let mut resource = resource(&fields)?;
            if let Some(etag) = etag {
                resource["etag"] = etag.into();
            }
            let mask: Vec<&str> = fields.iter().map(|(field, _)| field.as_str()).collect();
            let request = json!({
                "uid": uid,
                collection.body_field(): resource,
                "updateMask": mask.join(","),
            });
            print_one(&collection.update(&client, request).await?);
        }
        Action::Delete { uid, etag } => {
            let request = json!({ "uid": uid, "etag": etag.unwrap_or_default() });
            collection.delete(&client, request).await?;
            eprintln!("deleted {uid}");
        }
    }
    Ok(())
}

/// One page, or every page (`all`) with progress on stderr.
async fn list(
    cli: &Cli,
    client: &generated::Client,
    collection: Collection,
    request: Value,
    all: bool,
    quiet: bool,
) -> Result<(), Error> {
    if !all {
        let page = collection.list(client, request).await?;
        match cli.output {
            Format::Table => print!("{}", output::table(&page.items)),
            Format::Json => print!(
                "{}",
                output::json(&json!({
                    "items": page.items,
                    "nextPageToken": page.next_page_token,
                    "totalCount": page.total_count,
                }))
            ),
        }
        return Ok(());
    }
    let pages = runtime::client::pages(
        request,
        |request| collection.list(client, request),
        |request, token| request["pageToken"] = token.into(),
        |page| &page.next_page_token,
    );
    let mut items = Vec::new();
    let mut pages = std::pin::pin!(pages);
    let mut count = 0;
    while let Some(page) = pages.try_next().await? {
        count += 1;
        items.extend(page.items);
        if !quiet {
            eprintln!("page {count}: {} of {}", items.len(), page.total_count);
        }
    }
    match cli.output {
        Format::Table => print!("{}", output::table(&items)),
        Format::Json => print!("{}", output::json(&json!({ "items": items }))),
    }
    Ok(())
}

/// The resource the `--set` flags describe, as JSON.
fn resource(fields: &[(String, String)]) -> Result<Value, Error> {
    let mut resource = Value::Object(Map::new());
    for (field, text) in fields {
        let value = if text.starts_with(['[', '{', '"']) || text == "true" || text == "false" {
            serde_json::from_str(text).map_err(|e| {
                Error::invalid_field(field.clone(), format!("`{text}` is not valid JSON: {e}"))
            })?
        } else {
            Value::String(text.clone())
        };
        let mut target = &mut resource;
        let mut parts = field.split('.').peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_none() {
                target[part] = value.clone();
            } else {
                if !target[part].is_object() {
                    target[part] = Value::Object(Map::new());
                }
                target = &mut target[part];
            }
        }
    }
    Ok(resource)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Etags and page tokens are base64url: they may start with `-`.
    #[test]
    fn values_starting_with_a_hyphen_are_values() {
        let matches = command()
            .try_get_matches_from([
                "platformctl",
                "groups",
                "update",
                "u",
                "--set",
                "a=b",
                "--etag",
                "-W1",
            ])
            .unwrap();
        let (_, matches) = matches.subcommand().unwrap();
        let Action::Update { etag, .. } = Action::from_arg_matches(matches).unwrap() else {
            panic!("an update");
        };
        assert_eq!(etag.as_deref(), Some("-W1"));
        let matches = command()
            .try_get_matches_from(["platformctl", "repos", "list", "--page-token", "-x"])
            .unwrap();
        let (_, matches) = matches.subcommand().unwrap();
        let Action::List { page_token, .. } = Action::from_arg_matches(matches).unwrap() else {
            panic!("a list");
        };
        assert_eq!(page_token.as_deref(), Some("-x"));
    }
}
