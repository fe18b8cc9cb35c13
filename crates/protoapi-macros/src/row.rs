//! `#[derive(Row)]`: parse the struct into a model, check it, emit.

use heck::ToLowerCamelCase;
use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Data, DeriveInput, Fields, LitStr};

use crate::ctxt::Ctxt;

/// How a column is stored, from the field's Rust type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Integer,
    Bool,
    /// `#[row(timestamp)] i64`: a `Timestamp` as microseconds.
    Timestamp,
}

struct Field {
    ident: syn::Ident,
    /// The message field (Rust ident), spanned where it was named.
    message_field: syn::Ident,
    json: String,
    kind: Kind,
    skip: bool,
    output_only: bool,
}

struct Row {
    ident: syn::Ident,
    message: syn::Path,
    fields: Vec<Field>,
}

pub fn expand(input: &DeriveInput) -> Result<TokenStream, syn::Error> {
    let cx = Ctxt::new();
    let row = parse(&cx, input);
    cx.check()?;
    Ok(row.map(|row| emit(&row)).unwrap_or_default())
}

fn parse(cx: &Ctxt, input: &DeriveInput) -> Option<Row> {
    let named = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(fields) => Some(&fields.named),
            _ => {
                cx.error_spanned_by(
                    &input.ident,
                    "`#[derive(Row)]` needs a struct with named fields",
                );
                None
            }
        },
        Data::Enum(data) => {
            cx.error_spanned_by(
                data.enum_token,
                "`#[derive(Row)]` needs a struct, not an enum",
            );
            None
        }
        Data::Union(data) => {
            cx.error_spanned_by(
                data.union_token,
                "`#[derive(Row)]` needs a struct, not a union",
            );
            None
        }
    };
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(&input.generics, "`#[derive(Row)]` rows cannot be generic");
        return None;
    }
    // The shape comes first: other mistakes are only reported on a struct.
    let named = named?;
    let message = message_attribute(cx, input);
    let fields: Vec<Field> = named
        .iter()
        .filter_map(|field| parse_field(cx, field))
        .collect();
    Some(Row {
        ident: input.ident.clone(),
        message: message?,
        fields,
    })
}

/// `#[row(message = Path)]` on the struct.
fn message_attribute(cx: &Ctxt, input: &DeriveInput) -> Option<syn::Path> {
    let mut message: Option<syn::Path> = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("row")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("message") {
                let path: syn::Path = meta.value()?.parse()?;
                if message.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `message` attribute");
                }
                message = Some(path);
                Ok(())
            } else {
                Err(meta.error("unknown row attribute; expected `message = Type`"))
            }
        });
        if let Err(error) = result {
            cx.syn_error(error);
        }
    }
    if message.is_none() {
        cx.error_spanned_by(
            &input.ident,
            "missing `#[row(message = Type)]`: which message is this a row of?",
        );
    }
    message
}

fn parse_field(cx: &Ctxt, field: &syn::Field) -> Option<Field> {
    let ident = field.ident.clone()?;
    let mut rename: Option<LitStr> = None;
    let mut skip: Option<syn::Path> = None;
    let mut output_only: Option<syn::Path> = None;
    let mut timestamp: Option<syn::Path> = None;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("row")) {
        let result = attr.parse_nested_meta(|meta| {
            let set = |slot: &mut Option<syn::Path>, name: &str| {
                if slot.is_some() {
                    cx.error_spanned_by(&meta.path, format!("duplicate `{name}` attribute"));
                }
                *slot = Some(meta.path.clone());
            };
            if meta.path.is_ident("rename") {
                let value: LitStr = meta.value()?.parse()?;
                if rename.is_some() {
                    cx.error_spanned_by(&meta.path, "duplicate `rename` attribute");
                }
                if syn::parse_str::<syn::Ident>(&value.value()).is_ok() {
                    rename = Some(value);
                } else {
                    cx.error_spanned_by(&value, "`rename` takes a message field name");
                }
            } else if meta.path.is_ident("skip") {
                set(&mut skip, "skip");
            } else if meta.path.is_ident("output_only") {
                set(&mut output_only, "output_only");
            } else if meta.path.is_ident("timestamp") {
                set(&mut timestamp, "timestamp");
            } else {
                return Err(meta.error("unknown row attribute; expected `rename`, `skip`, `output_only` or `timestamp`"));
            }
            Ok(())
        });
        if let Err(error) = result {
            cx.syn_error(error);
        }
    }
    if skip.is_some() {
        if let Some(rename) = &rename {
            cx.error_spanned_by(rename, "a skipped field has no message field to rename");
        }
        for conflict in [&output_only, &timestamp].into_iter().flatten() {
            cx.error_spanned_by(conflict, "a skipped field is not a column");
        }
    }
    let kind = match (type_kind(&field.ty), &timestamp) {
        (Some(Kind::Integer), Some(_)) if is_type(&field.ty, "i64") => Kind::Timestamp,
        (_, Some(_)) => {
            cx.error_spanned_by(
                &field.ty,
                "`timestamp` columns hold microseconds in an `i64`",
            );
            Kind::Timestamp
        }
        (Some(kind), None) => kind,
        (None, None) if skip.is_some() => Kind::Text,
        (None, None) => {
            cx.error_spanned_by(
                &field.ty,
                "unsupported column type; use String, bool, i32, i64, u32 or u64",
            );
            Kind::Text
        }
    };
    let message_field = match &rename {
        Some(rename) => syn::Ident::new(&rename.value(), rename.span()),
        None => ident.clone(),
    };
    Some(Field {
        json: message_field.to_string().to_lower_camel_case(),
        message_field,
        ident,
        kind,
        skip: skip.is_some(),
        output_only: output_only.is_some(),
    })
}

fn is_type(ty: &syn::Type, name: &str) -> bool {
    match ty {
        // Types passed through `macro_rules!` arrive wrapped in invisible groups.
        syn::Type::Group(group) => is_type(&group.elem, name),
        syn::Type::Paren(paren) => is_type(&paren.elem, name),
        syn::Type::Path(path) => path.qself.is_none() && path.path.is_ident(name),
        _ => false,
    }
}

fn type_kind(ty: &syn::Type) -> Option<Kind> {
    if is_type(ty, "String") {
        Some(Kind::Text)
    } else if is_type(ty, "bool") {
        Some(Kind::Bool)
    } else if ["i32", "i64", "u32", "u64"]
        .iter()
        .any(|name| is_type(ty, name))
    {
        Some(Kind::Integer)
    } else {
        None
    }
}

fn emit(row: &Row) -> TokenStream {
    let ident = &row.ident;
    let message = &row.message;
    let columns: Vec<&Field> = row.fields.iter().filter(|f| !f.skip).collect();

    let specs = columns.iter().map(|f| {
        let name = f.ident.to_string();
        let field = &f.json;
        let integer = f.kind != Kind::Text;
        let output_only = f.output_only;
        quote! {
            ::protoapi_runtime::__private::row::ColumnSpec { name: #name, field: #field, integer: #integer, output_only: #output_only }
        }
    });
    let from_message = row.fields.iter().map(|f| {
        let ident = &f.ident;
        let source = &f.message_field;
        let span = located_at(f.message_field.span());
        if f.skip {
            return quote!(#ident: ::core::default::Default::default());
        }
        match f.kind {
            Kind::Timestamp => quote_spanned! {span=>
                #ident: message.#source.as_ref().map(::protoapi_runtime::__private::time::to_micros).unwrap_or_default()
            },
            _ => quote_spanned! {span=> #ident: ::core::clone::Clone::clone(&message.#source) },
        }
    });
    let values = columns.iter().map(|f| {
        let ident = &f.ident;
        match f.kind {
            Kind::Text => {
                quote!(::protoapi_runtime::__private::resource::SortValue::Text(::core::clone::Clone::clone(&self.#ident)))
            }
            Kind::Bool => quote!(::protoapi_runtime::__private::resource::SortValue::Int(i64::from(self.#ident))),
            Kind::Integer => quote! {
                ::protoapi_runtime::__private::resource::SortValue::Int(i64::try_from(self.#ident).unwrap_or(i64::MAX))
            },
            Kind::Timestamp => quote!(::protoapi_runtime::__private::resource::SortValue::Int(self.#ident)),
        }
    });
    quote! {
        #[automatically_derived]
        impl ::protoapi_runtime::__private::row::Row for #ident {
            type Message = #message;

            const COLUMNS: &'static [::protoapi_runtime::__private::row::ColumnSpec] = &[#(#specs),*];

            fn from_message(message: &Self::Message) -> Self {
                #ident { #(#from_message),* }
            }

            fn values(&self) -> ::std::vec::Vec<::protoapi_runtime::__private::resource::SortValue> {
                ::std::vec![#(#values),*]
            }
        }
    }
}

/// A span that resolves names like the derive's own tokens (so `self` and
/// `message` are always found, even for fields written by a `macro_rules!`)
/// but reports errors at `location`.
fn located_at(location: Span) -> Span {
    Span::call_site().located_at(location)
}
