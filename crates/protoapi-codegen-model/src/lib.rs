//! The typed model of an API that `protoapi-codegen` generates from.
//!
//! - [`model`]: the model itself (`Api`: packages, services, methods with
//!   their HTTP rules and standard method, resources with their fields,
//!   keys and rules) and, in `model::build`, the passes that build it from
//!   a descriptor pool.
//! - [`annotations`]: the annotation files, what proto cannot say.
//! - [`template`]: `google.api.http` path templates.
//! - [`diagnostics`]: every mistake at `file:line:col`, shown as rustc shows
//!   its own.
//!
//! The emitters (crate `protoapi-codegen`) read the model and nothing else.

pub mod annotations;
pub mod diagnostics;
pub mod model;
pub mod template;
