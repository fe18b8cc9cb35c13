//! Derive macros for the storage side of generated APIs.
//!
//! `#[derive(Row)]` turns a struct naming some fields of a resource
//! message into a storage row (`protoapi_runtime::row::Row`): the column descriptions
//! and the row's values taken from a message, which storage keeps in columns
//! of their own to filter and order by.
//!
//! ```ignore
//! #[derive(Row)]
//! #[row(message = Book)]
//! struct BookRow {
//!     name: String,
//!     #[row(timestamp, output_only)]
//!     create_time: i64,
//!     #[row(rename = "shelf")]
//!     shelf_uid: String,
//!     #[row(skip)]
//!     cached: bool,
//! }
//! ```
//!
//! Field attributes: `rename = "proto_field"` (the message field, when it is
//! named otherwise), `skip` (not a message field; defaults on conversion),
//! `output_only` (set by the server; recorded in the column description),
//! `timestamp` (an `i64` holding a `google.protobuf.Timestamp` as
//! microseconds).

mod ctxt;
mod row;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Implements `protoapi_runtime::row::Row` for a struct; see the crate docs.
#[proc_macro_derive(Row, attributes(row))]
pub fn derive_row(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    row::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
