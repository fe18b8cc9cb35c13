//! Storage rows: per resource, a row type (`protoapi_runtime::row::Row`) naming the
//! fields a store keeps in columns of their own, exactly those the
//! annotation files' rules look up ([`Api::columns`]), and `tables()`,
//! every table of the API for `protoapi_runtime::sql::SqlOptions`, marked as access
//! decisions derive from them ([`Api::access_subject`]).

use heck::ToUpperCamelCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::ident;
use crate::model::{AccessSubject, Api, Column, FieldKind, Resource};

/// The row type's name, e.g. `GroupRow`.
pub fn row_name(resource: &Resource) -> syn::Ident {
    format_ident!("{}Row", resource.name.to_upper_camel_case())
}

/// The row type of `resource` and its `Row` implementation.
pub fn emit(scope: &super::Scope, api: &Api, resource: &Resource) -> TokenStream {
    let name = row_name(resource);
    let message = scope.path(&resource.rust_path);
    let columns = api.columns(resource);
    let doc = [
        format!(
            " The fields of [`{}`] a store keeps in columns of their own:",
            resource.name
        ),
        " those the annotation files' rules look up (ordering, the name filter,".to_owned(),
        " references, dependents, public items). The rest is kept only in the".to_owned(),
        " encoded item.".to_owned(),
    ];
    let fields = columns.iter().map(|column| {
        let field = ident(&column.field);
        let ty = rust_type(column);
        let doc = (column.kind == FieldKind::Timestamp)
            .then(|| quote!(#[doc = " Microseconds since the Unix epoch (0 when unset)."]));
        quote!(#doc pub #field: #ty)
    });
    let specs = columns.iter().map(column_spec);
    let from_message = columns.iter().map(from_message);
    let values = columns.iter().map(value);
    let source = if columns.is_empty() {
        quote!(_message)
    } else {
        quote!(message)
    };
    quote! {
        #(#[doc = #doc])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct #name {
            #(#fields,)*
        }

        impl ::protoapi_runtime::__private::row::Row for #name {
            type Message = #message;

            const COLUMNS: &'static [::protoapi_runtime::__private::row::ColumnSpec] = &[#(#specs),*];

            fn from_message(#source: &#message) -> Self {
                #name { #(#from_message),* }
            }

            fn values(&self) -> Vec<::protoapi_runtime::__private::resource::SortValue> {
                vec![#(#values,)*]
            }
        }
    }
}

/// `pub fn tables<T: TableOf>() -> Vec<T>` in the crate root: every table
/// of the API, for `protoapi_runtime::sql::SqlOptions::new(tables())`.
pub fn emit_tables(api: &Api) -> Option<TokenStream> {
    let tables: Vec<TokenStream> = api.resources().map(|r| table(api, r)).collect();
    if tables.is_empty() {
        return None;
    }
    Some(quote! {
        /// Every table of the API, one per resource with its row type, those
        /// that access decisions derive from marked: what a store keeps
        /// (`protoapi_runtime::sql::SqlOptions::new(tables())`).
        pub fn tables<T: ::protoapi_runtime::__private::row::TableOf>() -> Vec<T> {
            Vec::from([#(#tables),*])
        }
    })
}

/// `T::of::<GroupRow>()`, with `.guarding_access()` or
/// `.guarding_access_of("identity")` as the resource declares, and
/// `.unindexed(&["spare"])` for the columns its annotations leave unindexed.
fn table(api: &Api, resource: &Resource) -> TokenStream {
    let (module, _) = resource
        .rust_path
        .rsplit_once("::")
        .expect("a qualified path");
    let row: syn::Path =
        syn::parse_str(&format!("{module}::{}", row_name(resource))).expect("a row type's path");
    let guard = match api.access_subject(resource) {
        None => None,
        Some(AccessSubject::Item) => Some(quote!(.guarding_access())),
        Some(AccessSubject::Referenced(field)) => Some(quote!(.guarding_access_of(#field))),
    };
    let unindexed = api.unindexed(resource);
    let unindexed = (!unindexed.is_empty()).then(|| quote!(.unindexed(&[#(#unindexed),*])));
    quote!(T::of::<#row>()#guard #unindexed)
}

/// The Rust type holding a column's value.
fn rust_type(column: &Column) -> TokenStream {
    match column.kind {
        FieldKind::Bool => quote!(bool),
        FieldKind::Number | FieldKind::Timestamp => quote!(i64),
        _ => quote!(String),
    }
}

/// Whether the column stores numbers (booleans and times included).
fn integer(column: &Column) -> bool {
    matches!(
        column.kind,
        FieldKind::Bool | FieldKind::Number | FieldKind::Timestamp
    )
}

fn column_spec(column: &Column) -> TokenStream {
    let Column {
        field,
        json_name,
        output_only,
        ..
    } = column;
    let integer = integer(column);
    quote! {
        ::protoapi_runtime::__private::row::ColumnSpec { name: #field, field: #json_name, integer: #integer, output_only: #output_only }
    }
}

/// The column's value read from `message`, as the resource's `sort_value`
/// reads it (which fills a column added to an existing table).
fn from_message(column: &Column) -> TokenStream {
    let field = ident(&column.field);
    if let Some(source) = &column.derived {
        let value = super::shared::derived_value(source, &quote!(message));
        return quote!(#field: #value);
    }
    let value = match column.kind {
        FieldKind::Timestamp => quote! {
            message.#field.as_ref().map(::protoapi_runtime::__private::time::to_micros).unwrap_or_default()
        },
        FieldKind::Number if column.int64 => quote!(message.#field),
        FieldKind::Number => quote!(message.#field.into()),
        FieldKind::Float => quote!(format!("{:020.6}", message.#field)),
        FieldKind::Bool => quote!(message.#field),
        _ => quote!(message.#field.clone()),
    };
    quote!(#field: #value)
}

fn value(column: &Column) -> TokenStream {
    let field = ident(&column.field);
    match column.kind {
        FieldKind::Bool => {
            quote!(::protoapi_runtime::__private::resource::SortValue::Int(self.#field.into()))
        }
        FieldKind::Number | FieldKind::Timestamp => {
            quote!(::protoapi_runtime::__private::resource::SortValue::Int(self.#field))
        }
        _ => quote!(::protoapi_runtime::__private::resource::SortValue::Text(self.#field.clone())),
    }
}
