//! The plugin protocol's messages and services, compiled from `proto/` by
//! the build script.
#![allow(clippy::all, missing_docs, dead_code)]

tonic::include_proto!("tfplugin6");

/// The plugin framework's own services.
pub mod plugin {
    tonic::include_proto!("plugin");
}
