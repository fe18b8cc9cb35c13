//! The one surface generated code names (`protoapi_runtime::__private::…`), listed
//! item by item: the runtime's public modules may move and grow without
//! breaking a generated crate, as long as this list keeps its names.
//!
//! Every path here is re-exported from where it lives; whole modules are
//! re-exported only where the module exists for generated code alone
//! (`rest`, `standard`, `stream`, `json::wire`, `cli`, `schema`).

// The crates generated code uses, at the versions the runtime builds with.
pub use {axum, futures_util, http, prost_reflect, prost_types, serde, serde_json, tonic};

pub use crate::{Caller, Error};
// REST transcoding, the standard methods' flows and message streams.
pub use crate::{rest, standard, stream};

pub mod auth {
    #[cfg(feature = "server")]
    pub use crate::auth::{IdentityClaims, StoredExchange, Subject, TokenExchange};
    pub use crate::auth::{Need, token_required};
}

pub mod error {
    pub use crate::error::FieldViolation;
}

pub mod json {
    pub use crate::json::{
        JsonMessage, JsonObject, MessageVisitor, escape_overhead, field_path, from_value,
        reflective, wire,
    };
}

pub mod legacy {
    pub use crate::legacy::{View, is_default, unknown_keys};
}

pub mod mask {
    pub use crate::mask::Update;
}

pub mod names {
    pub use crate::names::Pattern;
}

pub mod resource {
    pub use crate::resource::{
        Behavior, Dependent, FieldSpec, Public, Reach, Reference, Resource, SortValue, TextRule,
    };
}

pub mod row {
    pub use crate::row::{ColumnSpec, Row, TableOf};
}

pub mod store {
    pub use crate::store::{Backend, ListQuery, Page, StoreError};
}

pub mod time {
    pub use crate::time::{duration_nanos, to_micros};
}

pub mod filter {
    pub use crate::filter::{json_entries, json_values};
}

pub mod uidp {
    pub use crate::uidp::parent;
}

pub mod operation {
    pub use crate::operation::{Operation, OperationStore, StoredOperation, response, wait};
}

pub mod probe {
    pub use crate::probe::Probes;
}

#[cfg(feature = "client")]
pub mod client {
    pub use crate::client::{Connection, HttpRule, RawBodies, Route, items, pages};
}

#[cfg(feature = "cli")]
pub use crate::cli;

#[cfg(feature = "client")]
pub use protoapi_client::schema;

#[cfg(feature = "server")]
pub mod console {
    pub use crate::console::Console;
}

#[cfg(feature = "server")]
pub mod router {
    pub use crate::router::{
        Api, ApiRouter, ExchangeSlot, MissingHandlers, RouteLayer, ServiceSlot,
    };
}

#[cfg(feature = "server")]
pub mod web {
    pub use crate::web::Cors;
}
