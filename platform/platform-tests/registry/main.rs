//! The registry under `/v2/` (CONTRACT §10) over a real socket, on SQLite or,
//! with `E2E_DATABASE_URL`, PostgreSQL. The modules follow the categories of
//! the Distribution Spec's conformance workflow (pull, push, content
//! discovery, content management), plus the token flow and access rules.

mod common;
mod content_discovery;
mod content_management;
mod images;
mod object_storage;
mod oras;
mod pull;
mod push;
mod tokens;
