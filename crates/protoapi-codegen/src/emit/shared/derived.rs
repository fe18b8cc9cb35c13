//! The value of a column derived from an item (`model::Derived`: a
//! filterable nested field, duration, list or map), which the row type
//! fills and the resource's `sort_value` answers alike.

use proc_macro2::TokenStream;
use quote::quote;

use super::super::ident;
use crate::model::derived::{Source, Value};

/// The value of a derived column read from `receiver` (an expression of
/// the message): an `i64` for a single non-text value, else a `String` (a
/// list's or a map's values as JSON), as the resource's `sort_value` reads it.
pub fn derived_value(source: &Source, receiver: &TokenStream) -> TokenStream {
    let private = quote!(::protoapi_runtime::__private);
    match source {
        Source::Single { path, value } => {
            let (last, parents) = path.split_last().expect("a path names a field");
            let leaf = ident(last);
            let Some(parent) = parents.first() else {
                return single(*value, &quote!(#receiver.#leaf));
            };
            let parent = ident(parent);
            let inner = single(*value, &quote!(parent.#leaf));
            quote!(#receiver.#parent.as_ref().map(|parent| #inner).unwrap_or_default())
        }
        Source::List { field, value } => {
            let field = ident(field);
            let each = element(*value, &quote!(value));
            quote!(#private::filter::json_values(#receiver.#field.iter().map(|value| #each)))
        }
        Source::Map { field, value } => {
            let field = ident(field);
            let each = element(*value, &quote!(value));
            quote!(#private::filter::json_entries(#receiver.#field.iter().map(|(key, value)| (key.as_str(), #each))))
        }
    }
}

/// A single field's column value from its place (`message.cure`).
fn single(value: Value, place: &TokenStream) -> TokenStream {
    let time = quote!(::protoapi_runtime::__private::time);
    match value {
        Value::Text => quote!(#place.clone()),
        Value::Int | Value::Bool => quote!(i64::from(#place)),
        Value::Int64 => quote!(#place),
        Value::Uint64 => quote!(i64::try_from(#place).unwrap_or(i64::MAX)),
        Value::Timestamp => quote!(#place.as_ref().map(#time::to_micros).unwrap_or_default()),
        Value::Duration => quote!(#place.as_ref().map(#time::duration_nanos).unwrap_or_default()),
    }
}

/// An element's (or a map value's) `SortValue`, from a reference to it.
fn element(value: Value, reference: &TokenStream) -> TokenStream {
    let sort_value = quote!(::protoapi_runtime::__private::resource::SortValue);
    match value {
        Value::Text => quote!(#sort_value::Text(#reference.clone())),
        _ => {
            let convert = convert(value, reference);
            quote!(#sort_value::Int(#convert))
        }
    }
}

/// The `i64` of a non-text value, from a reference to it.
fn convert(value: Value, reference: &TokenStream) -> TokenStream {
    let private = quote!(::protoapi_runtime::__private);
    match value {
        Value::Text => quote!(#reference.clone()),
        Value::Int | Value::Bool => quote!(i64::from(*#reference)),
        Value::Int64 => quote!(*#reference),
        Value::Uint64 => quote!(i64::try_from(*#reference).unwrap_or(i64::MAX)),
        Value::Timestamp => quote!(#private::time::to_micros(#reference)),
        Value::Duration => quote!(#private::time::duration_nanos(#reference)),
    }
}
