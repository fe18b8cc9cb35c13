//! `protoapi-codegen generate|check`: regenerate a checked-in API crate, or verify
//! that it is up to date.
//!
//! Paths are taken from the current directory, as any command line tool
//! takes them. The defaults (`--proto proto`, `--out generated/src`) are a
//! crate `generated/` beside its `proto/`; elsewhere, name both.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use protoapi_codegen::Warnings;
use protoapi_codegen::diagnostics::Style;

#[derive(Parser)]
#[command(about = "Generate a Rust API crate from protos and annotation files")]
struct Cli {
    /// Import root holding the API's protos (and annotation files): every
    /// `.proto` under it is generated, but vendored copies under
    /// `google/api`, `google/protobuf`, `google/rpc` and `google/type`.
    #[arg(long, default_value = "proto", global = true)]
    proto: PathBuf,
    /// Further import roots (e.g. a vendored googleapis tree), searched after
    /// `--proto` for imports only; repeatable.
    #[arg(long = "include", short = 'I', global = true)]
    includes: Vec<PathBuf>,
    /// The API's title in the OpenAPI document (default: from the packages).
    #[arg(long, global = true)]
    title: Option<String>,
    /// The generated crate's feature compiling its command-line module (`cli`).
    #[arg(long, default_value = "cli", global = true)]
    cli_feature: String,
    /// Directory of the generated crate's sources (created if missing).
    #[arg(long, default_value = "generated/src", global = true)]
    out: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Rewrite the generated sources from the protos.
    Generate,
    /// Fail, naming the files, when the generated sources are out of date.
    Check,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let proto = cli.proto.clone();
    let out = cli.out.clone();
    if !proto.is_dir() {
        let cwd = std::env::current_dir().unwrap_or_default();
        eprintln!(
            "error: `--proto {}`: no such directory under {} (paths are relative to the \
             current directory)",
            proto.display(),
            cwd.display()
        );
        return ExitCode::FAILURE;
    }
    let mut config = protoapi_codegen::Config::new();
    config.include(&proto).cli(cli.cli_feature.as_str());
    for include in &cli.includes {
        config.include(include);
    }
    if let Some(title) = &cli.title {
        config.title(title.as_str());
    }
    if let Err(error) = config.files_under(&proto) {
        report(&error);
        return ExitCode::FAILURE;
    }
    match cli.command {
        Command::Generate => match config.write_to(&out) {
            Ok((changed, warnings)) => {
                warn(&warnings);
                for path in &changed {
                    println!("wrote {}", out.join(path).display());
                }
                println!("{} file(s) changed", changed.len());
                ExitCode::SUCCESS
            }
            Err(error) => {
                report(&error);
                ExitCode::FAILURE
            }
        },
        Command::Check => match config.check(&out) {
            Ok((differing, warnings)) if differing.is_empty() => {
                warn(&warnings);
                println!("{} is up to date", out.display());
                ExitCode::SUCCESS
            }
            Ok((differing, warnings)) => {
                warn(&warnings);
                for path in &differing {
                    eprintln!("out of date: {}", out.join(path).display());
                }
                eprintln!(
                    "run `protoapi-codegen generate --proto {} --out {}` and commit the result",
                    proto.display(),
                    out.display()
                );
                ExitCode::FAILURE
            }
            Err(error) => {
                report(&error);
                ExitCode::FAILURE
            }
        },
    }
}

/// How to show diagnostics on stderr: coloured on a terminal (unless
/// `NO_COLOR` is set).
fn style() -> Style {
    if std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        Style::Colored
    } else {
        Style::Plain
    }
}

/// Prints `warnings` as rustc prints its warnings, with paths relative to the
/// current directory.
fn warn(warnings: &Warnings) {
    if warnings.is_empty() {
        return;
    }
    let root = std::env::current_dir().unwrap_or_default();
    eprintln!("{}", warnings.render_with(&root, style()));
    match warnings.diagnostics().len() {
        1 => eprintln!("warning: 1 warning emitted\n"),
        count => eprintln!("warning: {count} warnings emitted\n"),
    }
}

/// Prints `error` as rustc prints its errors, with paths relative to the
/// current directory.
fn report(error: &protoapi_codegen::Error) {
    let root = std::env::current_dir().unwrap_or_default();
    eprint!("{}", error.render_with(&root, style()));
    match error.diagnostics().iter().filter(|d| d.is_error()).count() {
        0 => {}
        1 => eprintln!("\nerror: aborting due to 1 previous error"),
        count => eprintln!("\nerror: aborting due to {count} previous errors"),
    }
}
