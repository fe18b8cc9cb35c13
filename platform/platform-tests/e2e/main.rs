//! End-to-end tests over real sockets. One binary (faster to link); each
//! module covers one area.

mod attacks;
mod audit;
mod auth;
mod bad_input;
mod browsers;
mod client;
mod collections;
mod conformance;
mod console;
mod console_access;
mod console_oidc;
mod faults;
mod filters;
mod grants;
mod groups_grpc;
mod groups_rest;
mod holes;
mod leaks;
mod legacy_grpc;
mod legacy_rest;
mod limits;
mod observability;
mod operations;
mod paging;
mod policies;
mod published;
mod races;
mod reflection;
mod replicas;
mod tls;
mod transport;
mod wiring;
