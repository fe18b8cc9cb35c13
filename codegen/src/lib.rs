//! The contract-first generator: protobuf (+ annotations) in, Rust out.
//!
//! The pipeline has three stages with a typed model between them:
//!
//! 1. [`load`]: parse `.proto` files with protox into descriptors.
//! 2. [`model`]: build the typed model — services, HTTP rules with parsed
//!    [`template`]s, standard methods, resources and field behaviours —
//!    reporting mistakes as [`diagnostics`] (`file:line:col: message`).
//! 3. [`emit`]: one emitter per output kind, formatted with prettyplease.
//!
//! [`Config`] drives the pipeline for `build.rs` users and the CLI alike.

pub mod annotations;
pub mod config;
pub mod diagnostics;
pub mod emit;
pub mod load;
pub mod model;
pub mod template;

use std::path::PathBuf;

pub use config::{Config, Output};
pub use diagnostics::Diagnostic;

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Parse(#[from] protox::Error),
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<Diagnostic>),
    #[error("code generation failed: {0}")]
    Prost(std::io::Error),
    #[error("{path}: {source}", path = .0.display(), source = .1)]
    Io(PathBuf, std::io::Error),
}
