//! `protoapi_runtime::legacy::View` impls: how each legacy message shows its resource,
//! field by field, in both directions.

use heck::ToLowerCamelCase;
use proc_macro2::TokenStream;
use quote::quote;

use super::{Scope, ident};
use crate::model::{Api, Conversion, View, ViewField};

pub fn emit(scope: &Scope, api: &Api, view: &View) -> TokenStream {
    let ty = scope.path(&view.rust_path);
    let target = api.resource(&view.target).expect("views show resources");
    let current = scope.path(&target.rust_path);
    let doc = format!(
        " `{}` shows `{}` under its earlier field names.",
        view.message, view.target
    );
    let replaces = &view.replaces;
    let shown = fields_from(&view.fields, &quote!(current));
    // Only maps can hold what the resource cannot (unknown keys).
    let (path, violations) = if has_map(&view.fields) {
        (quote!(path), quote!(violations))
    } else {
        (quote!(_path), quote!(_violations))
    };
    let read = fields_into(&view.fields, &quote!(self), &path);
    let rest = rest(view.complete);
    quote! {
        #[doc = #doc]
        impl ::protoapi_runtime::__private::legacy::View for #ty {
            type Current = #current;

            const REPLACES: &'static [&'static str] = &[#(#replaces),*];

            fn from_current(current: #current) -> Self {
                #ty { #shown }
            }

            fn into_current(
                self,
                #path: &str,
                #violations: &mut Vec<::protoapi_runtime::__private::error::FieldViolation>,
            ) -> #current {
                #current {
                    #read
                    #rest
                }
            }
        }
    }
}

/// `..Default::default()` unless every field is already given.
fn rest(complete: bool) -> TokenStream {
    if complete {
        TokenStream::new()
    } else {
        quote!(..Default::default())
    }
}

fn has_map(fields: &[ViewField]) -> bool {
    fields.iter().any(|field| match &field.conversion {
        Conversion::Same => false,
        Conversion::Message { fields, .. } => has_map(fields),
        Conversion::Map { .. } => true,
    })
}

/// `view_field: <value of the resource's field>` for each field.
fn fields_from(fields: &[ViewField], source: &TokenStream) -> TokenStream {
    let fields = fields.iter().map(|field| {
        let name = ident(&field.name);
        let target = ident(&field.target);
        let value = quote!(#source.#target);
        let value = match &field.conversion {
            Conversion::Same => value,
            Conversion::Message { view, fields, .. } => {
                let ty = super::path(view);
                let inner = fields_from(fields, &quote!(value));
                quote!(#value.map(|value| #ty { #inner }))
            }
            Conversion::Map { keys, .. } => {
                let entries = keys.iter().map(|(key, field)| {
                    let field = ident(field);
                    quote!((#key, value.#field))
                });
                quote! {{
                    let mut map = ::std::collections::HashMap::new();
                    if let Some(value) = #value {
                        for (key, value) in [#(#entries),*] {
                            if !::protoapi_runtime::__private::legacy::is_default(&value) {
                                map.insert(key.to_owned(), value);
                            }
                        }
                    }
                    map
                }}
            }
        };
        quote!(#name: #value,)
    });
    quote!(#(#fields)*)
}

/// `resource_field: <value of the legacy field>` for each field; map keys
/// that name no field are reported under `path`.
fn fields_into(fields: &[ViewField], source: &TokenStream, path: &TokenStream) -> TokenStream {
    let fields = fields.iter().map(|field| {
        let name = ident(&field.name);
        let target = ident(&field.target);
        let value = quote!(#source.#name);
        let json = field.name.to_lower_camel_case();
        let value = match &field.conversion {
            Conversion::Same => value,
            Conversion::Message {
                target: ty,
                fields,
                complete,
                ..
            } => {
                let ty = super::path(ty);
                let inner = fields_into(
                    fields,
                    &quote!(value),
                    &quote!(&::protoapi_runtime::__private::json::field_path(#path, #json)),
                );
                let rest = rest(*complete);
                quote!(#value.map(|value| #ty { #inner #rest }))
            }
            Conversion::Map { target: ty, keys } => {
                let ty = super::path(ty);
                let known = keys.iter().map(|(key, _)| key);
                let taken = keys.iter().map(|(key, field)| {
                    let field = ident(field);
                    quote!(#field: map.remove(#key).unwrap_or_default(),)
                });
                quote! {{
                    let mut map = #value;
                    let value = (!map.is_empty()).then(|| #ty { #(#taken)* });
                    ::protoapi_runtime::__private::legacy::unknown_keys(
                        map,
                        &::protoapi_runtime::__private::json::field_path(#path, #json),
                        &[#(#known),*],
                        violations,
                    );
                    value
                }}
            }
        };
        quote!(#target: #value,)
    });
    quote!(#(#fields)*)
}
