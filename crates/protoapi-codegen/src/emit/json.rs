//! `protoapi_runtime::json::JsonMessage` for every message: canonical JSON written
//! field by field, and read without reflection when input is in canonical
//! form (anything else goes to the runtime's reflective decoder).

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Container, JsonField, JsonShape, JsonValue, Message, NamedField, QueryKind};

/// The imports the impls of `messages` use, at the top of the API file (a
/// package without messages of its own may still call `JsonMessage` on
/// others').
pub fn imports(messages: &[&Message]) -> TokenStream {
    let allow = messages
        .is_empty()
        .then(|| quote!(#[allow(unused_imports)]));
    let mut imports = vec![quote!(
        #allow
        use ::protoapi_runtime::__private::serde::Serializer;
    )];
    imports.push(quote!(
        #allow
        use ::protoapi_runtime::__private::json::{JsonMessage, JsonObject};
    ));
    if messages
        .iter()
        .any(|message| matches!(message.json, JsonShape::Fields(_)))
    {
        imports.push(quote!(
            use ::protoapi_runtime::__private::serde::ser::SerializeStruct as _;
        ));
    }
    if messages
        .iter()
        .any(|message| !message.named_fields.is_empty())
    {
        imports.push(quote!(
            use ::protoapi_runtime::__private::json::wire;
        ));
    }
    quote!(#(#imports)*)
}

pub fn emit(scope: &super::Scope, messages: &[&Message]) -> TokenStream {
    let impls = messages.iter().map(|message| {
        let ty = scope.path(&message.rust_path);
        let (doc, serialize, decode) = match &message.json {
            JsonShape::Fields(fields) => (
                None,
                serialize_fields(&message.full_name, fields, scope),
                decode_fields(fields, scope),
            ),
            JsonShape::Reflective(reason) => {
                let doc = format!(" Canonical JSON through reflection: {reason}.");
                (
                    Some(quote!(#[doc = #doc])),
                    quote!(::protoapi_runtime::__private::json::reflective::serialize(
                        self, serializer
                    )),
                    quote!(::protoapi_runtime::__private::json::reflective::from_object(object)),
                )
            }
        };
        let json_field = json_field(&message.named_fields, scope);
        quote! {
            #doc
            impl JsonMessage for #ty {
                fn serialize_json<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                    #serialize
                }

                fn from_json_object(object: &JsonObject) -> Option<Self> {
                    #decode
                }

                #json_field
            }
        }
    });
    quote!(#(#impls)*)
}

fn serialize_fields(full_name: &str, fields: &[JsonField], scope: &super::Scope) -> TokenStream {
    let name = full_name.rsplit('.').next().unwrap_or(full_name);
    let count = proc_macro2::Literal::usize_unsuffixed(fields.len());
    let entries = fields.iter().map(|field| {
        let key = &field.json_name;
        let member = super::ident(&field.rust_name);
        match &field.container {
            Container::Single => {
                let value = wrap(
                    &field.value,
                    scope,
                    quote!(&self.#member),
                    quote!(self.#member),
                )
                .map_or_else(|| quote!(&self.#member), |wrapped| quote!(&#wrapped));
                quote!(object.serialize_field(#key, #value)?;)
            }
            Container::Optional { boxed } => {
                let place = if *boxed {
                    quote!(self.#member.as_deref())
                } else {
                    quote!(&self.#member)
                };
                let value = wrap(&field.value, scope, quote!(value), quote!(*value))
                    .unwrap_or_else(|| quote!(value));
                quote! {
                    if let Some(value) = #place {
                        object.serialize_field(#key, &#value)?;
                    }
                }
            }
            Container::Present => {
                let value = wrap(&field.value, scope, quote!(value), quote!(*value))
                    .unwrap_or_else(|| quote!(value));
                quote! {
                    if let Some(value) = &self.#member {
                        object.serialize_field(#key, &#value)?;
                    }
                }
            }
            Container::Member { member, boxed } => {
                let (place, variant) = scope.member(member);
                let reference = if *boxed {
                    quote!(&**value)
                } else {
                    quote!(value)
                };
                let value = wrap(&field.value, scope, reference, quote!(*value))
                    .unwrap_or_else(|| quote!(value));
                quote! {
                    if let Some(#variant(value)) = &self.#place {
                        object.serialize_field(#key, &#value)?;
                    }
                }
            }
            Container::List => {
                let value = match each(&field.value, scope) {
                    Some(each) => quote!(&wire::List(&self.#member, #each)),
                    None => quote!(&self.#member),
                };
                quote!(object.serialize_field(#key, #value)?;)
            }
            Container::Map(_) => {
                let each = each(&field.value, scope).unwrap_or_else(|| quote!(|value| value));
                quote!(object.serialize_field(#key, &wire::Map(&self.#member, #each))?;)
            }
        }
    });
    let entries: Vec<TokenStream> = entries.collect();
    // A message without fields writes `{}`: nothing is added to the object.
    let binding = match entries.is_empty() {
        true => quote!(object),
        false => quote!(mut object),
    };
    quote! {
        let #binding = serializer.serialize_struct(#name, #count)?;
        #(#entries)*
        object.end()
    }
}

/// The serializable form of a value whose serde form is not its canonical
/// JSON, given the value by reference and by copy; `None` when it is.
fn wrap(
    value: &JsonValue,
    scope: &super::Scope,
    reference: TokenStream,
    copy: TokenStream,
) -> Option<TokenStream> {
    Some(match value {
        JsonValue::String | JsonValue::Bool | JsonValue::Int32 | JsonValue::Uint32 => return None,
        JsonValue::Int64 | JsonValue::Uint64 => quote!(wire::Text(#copy)),
        JsonValue::Float | JsonValue::Double => quote!(wire::Float(#copy)),
        JsonValue::Bytes => quote!(wire::Bytes(#reference)),
        JsonValue::Enum(path) => {
            let ty = scope.path(path);
            quote!(wire::Enum::of(#copy, #ty::as_str_name))
        }
        JsonValue::Message(_) => quote!(wire::Message(#reference)),
        JsonValue::Timestamp => quote!(wire::Timestamp(#reference)),
        JsonValue::FieldMask => quote!(wire::FieldMask(#reference)),
    })
}

/// A function writing one element of a list or map, `None` when elements
/// serialize as they are.
fn each(value: &JsonValue, scope: &super::Scope) -> Option<TokenStream> {
    match value {
        JsonValue::Message(_) => Some(quote!(wire::Message)),
        JsonValue::Timestamp => Some(quote!(wire::Timestamp)),
        JsonValue::FieldMask => Some(quote!(wire::FieldMask)),
        _ => wrap(value, scope, quote!(value), quote!(*value)).map(|each| quote!(|value| #each)),
    }
}

fn decode_fields(fields: &[JsonField], scope: &super::Scope) -> TokenStream {
    if fields.is_empty() {
        return quote!(object.is_empty().then(Self::default));
    }
    let arms = fields.iter().map(|field| {
        let key = &field.json_name;
        let member = super::ident(&field.rust_name);
        let value = match &field.container {
            Container::Single => read(&field.value, scope),
            Container::Optional { boxed: false } => {
                let read = read(&field.value, scope);
                quote!(Some(#read))
            }
            Container::Optional { boxed: true } => {
                let read = read(&field.value, scope);
                quote!(Some(Box::new(#read)))
            }
            Container::Present => {
                let read = read(&field.value, scope);
                quote!(Some(#read))
            }
            Container::Member { member, boxed } => {
                // A second member of the same oneof is for the reflective
                // decoder to refuse.
                let (place, variant) = scope.member(member);
                let mut read = read(&field.value, scope);
                if *boxed {
                    read = quote!(Box::new(#read));
                }
                return quote! {
                    #key => {
                        if message.#place.is_some() {
                            return None;
                        }
                        message.#place = Some(#variant(#read));
                    }
                };
            }
            Container::List => {
                let each = reader(&field.value, scope);
                quote!(wire::list(value, #each)?)
            }
            Container::Map(_) => {
                let each = reader(&field.value, scope);
                quote!(wire::map(value, wire::key, #each)?)
            }
        };
        quote!(#key => message.#member = #value,)
    });
    quote! {
        let mut message = Self::default();
        for (key, value) in object {
            match key.as_str() {
                #(#arms)*
                _ => return None,
            }
        }
        Some(message)
    }
}

/// Reads `value` as one value of this kind, returning `None` from the
/// decoder when it is not in canonical form.
fn read(value: &JsonValue, scope: &super::Scope) -> TokenStream {
    match value {
        JsonValue::Enum(path) => {
            let ty = scope.path(path);
            quote!(wire::enumeration(value, #ty::from_str_name)?)
        }
        _ => {
            let reader = reader(value, scope);
            quote!(#reader(value)?)
        }
    }
}

/// A function reading one value of this kind (for elements and map values).
fn reader(value: &JsonValue, scope: &super::Scope) -> TokenStream {
    match value {
        JsonValue::String => quote!(wire::string),
        JsonValue::Bool => quote!(wire::boolean),
        JsonValue::Int32 | JsonValue::Uint32 | JsonValue::Int64 | JsonValue::Uint64 => {
            quote!(wire::integer)
        }
        JsonValue::Float => quote!(wire::float),
        JsonValue::Double => quote!(wire::double),
        JsonValue::Bytes => quote!(wire::bytes),
        JsonValue::Enum(path) => {
            let ty = scope.path(path);
            quote!(|value| wire::enumeration(value, #ty::from_str_name))
        }
        JsonValue::Message(_) => quote!(wire::message),
        JsonValue::Timestamp => quote!(wire::timestamp),
        JsonValue::FieldMask => quote!(wire::field_mask),
    }
}

/// `json_field`: each field under its JSON and proto names.
fn json_field(fields: &[NamedField], scope: &super::Scope) -> TokenStream {
    if fields.is_empty() {
        // Named in full: a file of such messages does not import `wire`.
        return quote! {
            fn json_field(_: &str) -> Option<::protoapi_runtime::__private::json::wire::Field> {
                None
            }
        };
    }
    let mut seen = std::collections::HashSet::new();
    let arms = fields.iter().filter_map(|field| {
        let names: Vec<&str> = [field.json_name.as_str(), field.name.as_str()]
            .into_iter()
            .filter(|name| seen.insert(*name))
            .collect();
        if names.is_empty() {
            return None;
        }
        let json_name = &field.json_name;
        let mut described = match &field.kind {
            QueryKind::Text => quote!(wire::Field::text(#json_name)),
            QueryKind::Bool => quote!(wire::Field::boolean(#json_name)),
            QueryKind::Enum => quote!(wire::Field::enumeration(#json_name)),
            QueryKind::FieldMask => quote!(wire::Field::field_mask(#json_name)),
            QueryKind::Map => quote!(wire::Field::map(#json_name)),
            QueryKind::Message(path) => {
                let ty = scope.path(path);
                quote!(wire::Field::message(#json_name, #ty::json_field))
            }
        };
        if field.repeated {
            described = quote!(#described.repeated());
        }
        Some(quote!(#(#names)|* => #described,))
    });
    quote! {
        fn json_field(name: &str) -> Option<wire::Field> {
            let field = match name {
                #(#arms)*
                _ => return None,
            };
            Some(field)
        }
    }
}
