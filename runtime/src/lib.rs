//! Runtime support for code generated from the Platform API contract.
//!
//! Generated crates call into this crate for everything that is the same for
//! every resource; it never depends on the generator.
//!
//! - [`error`]: the Google error model, for REST bodies and gRPC statuses.
//! - [`json`]: canonical proto3 JSON.
//! - [`rest`]: HTTP rule transcoding helpers for generated axum handlers.
//! - [`grpc`]: the error model for gRPC requests that fail before a handler runs.
//! - [`serve`]: serving a router with transport timeouts and a graceful drain.
//! - [`legacy`]: older versions of resources, shown over the same storage.
//! - [`resource`], [`standard`], [`mask`], [`paging`]: standard methods,
//!   update masks and page tokens, written once against [`resource::Resource`].
//! - [`store`]: types shared by generated storage traits; [`memory`]: an
//!   in-memory collection with their semantics, for tests and examples.
//! - [`row`]: storage rows, implemented by `#[derive(StorageRow)]`.
//! - [`context`], [`auth`]: the caller of a request, API tokens and access decisions.
//! - [`uidp`], [`time`]: identifiers and timestamps.

pub mod auth;
pub mod context;
pub mod error;
pub mod grpc;
pub mod json;
pub mod legacy;
pub mod mask;
pub mod memory;
pub mod paging;
pub mod resource;
pub mod rest;
pub mod row;
pub mod serve;
pub mod standard;
pub mod store;
pub mod time;
pub mod uidp;

pub use context::Caller;
pub use error::{Code, Error};

/// Re-exports for generated code only; not a stable API.
#[doc(hidden)]
pub mod __codegen {
    pub use axum;
    pub use http;
    pub use prost_reflect;
    pub use prost_types;
    pub use tonic;
}
