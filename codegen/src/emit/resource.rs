//! `runtime::resource::Resource` for every resource message: the field
//! behaviours from `google.api.field_behavior`, typed field copying and
//! comparison for update masks, and sort keys for `order_by`.

use proc_macro2::TokenStream;
use quote::quote;

use super::ident;
use crate::model::{Behavior, Field, FieldKind, Resource};

/// Fields the standard flows manage themselves, never named in a mask.
const MANAGED: &[&str] = &["etag"];

pub fn emit(scope: &super::Scope, resource: &Resource) -> TokenStream {
    let ty = scope.path(&resource.rust_path);
    let type_name = &resource.type_name;
    let fields: Vec<&Field> = resource
        .fields
        .iter()
        .filter(|f| !MANAGED.contains(&f.path().as_str()))
        .collect();
    let specs = fields.iter().map(|field| {
        let path = field.path();
        let json_path = field.json_path();
        let behavior = match field.behavior {
            Behavior::Optional => quote!(Optional),
            Behavior::Required => quote!(Required),
            Behavior::OutputOnly => quote!(OutputOnly),
            Behavior::Immutable => quote!(Immutable),
        };
        let has_children = field.has_children;
        quote! {
            FieldSpec {
                path: #path,
                json_path: #json_path,
                behavior: Behavior::#behavior,
                has_children: #has_children,
            }
        }
    });
    let order_by = &resource.order_by;
    let copy_arms = fields.iter().map(|f| copy_arm(f));
    let has_arms = fields.iter().map(|f| has_arm(f));
    let eq_arms = fields.iter().map(|f| eq_arm(f));
    let sort_arms = resource.order_by.iter().filter_map(|json| {
        let field = resource.fields.iter().find(|f| f.parent.is_none() && &f.json_name == json)?;
        let name = ident(&field.name);
        let value = match field.kind {
            FieldKind::Timestamp => quote! {
                SortValue::Int(self.#name.as_ref().map(::runtime::time::to_micros).unwrap_or_default())
            },
            FieldKind::Number => quote!(SortValue::Int(i64::from(self.#name))),
            FieldKind::Float => quote!(SortValue::Text(format!("{:020.6}", self.#name))),
            FieldKind::Bool => quote!(SortValue::Int(i64::from(self.#name))),
            _ => quote!(SortValue::Text(self.#name.clone())),
        };
        Some(quote!(#json => #value,))
    });
    quote! {
        impl ::runtime::resource::Resource for #ty {
            const TYPE: &'static str = #type_name;
            const FIELDS: &'static [::runtime::resource::FieldSpec] = {
                use ::runtime::resource::{Behavior, FieldSpec};
                &[#(#specs),*]
            };
            const ORDER_BY: &'static [&'static str] = &[#(#order_by),*];

            fn uid(&self) -> &str {
                &self.uid
            }

            fn set_uid(&mut self, uid: String) {
                self.uid = uid;
            }

            fn create_time(&self) -> Option<&::prost_types::Timestamp> {
                self.create_time.as_ref()
            }

            fn set_create_time(&mut self, time: ::prost_types::Timestamp) {
                self.create_time = Some(time);
            }

            fn update_time(&self) -> Option<&::prost_types::Timestamp> {
                self.update_time.as_ref()
            }

            fn set_update_time(&mut self, time: ::prost_types::Timestamp) {
                self.update_time = Some(time);
            }

            fn etag(&self) -> &str {
                &self.etag
            }

            fn set_etag(&mut self, etag: String) {
                self.etag = etag;
            }

            fn copy_field(&mut self, source: &Self, path: &str) {
                match path {
                    #(#copy_arms)*
                    _ => {}
                }
            }

            fn has_field(&self, path: &str) -> bool {
                match path {
                    #(#has_arms)*
                    _ => false,
                }
            }

            fn field_eq(&self, other: &Self, path: &str) -> bool {
                match path {
                    #(#eq_arms)*
                    _ => true,
                }
            }

            fn sort_value(&self, field: &str) -> ::runtime::resource::SortValue {
                use ::runtime::resource::SortValue;
                match field {
                    #(#sort_arms)*
                    _ => SortValue::Text(self.uid.clone()),
                }
            }
        }
    }
}

fn copy_arm(field: &Field) -> TokenStream {
    let path = field.path();
    let name = ident(&field.name);
    let copy = matches!(
        field.kind,
        FieldKind::Bool | FieldKind::Number | FieldKind::Float
    );
    match &field.parent {
        None if copy => quote!(#path => self.#name = source.#name,),
        None => quote!(#path => self.#name.clone_from(&source.#name),),
        Some((parent, _)) => {
            let parent = ident(parent);
            let value = if copy {
                quote!(source.#parent.as_ref().map(|m| m.#name).unwrap_or_default())
            } else {
                quote!(source.#parent.as_ref().map(|m| m.#name.clone()).unwrap_or_default())
            };
            quote!(#path => self.#parent.get_or_insert_default().#name = #value,)
        }
    }
}

fn has_arm(field: &Field) -> TokenStream {
    let path = field.path();
    let name = ident(&field.name);
    let test = |value: TokenStream| match field.kind {
        FieldKind::Text | FieldKind::Repeated => quote!(!#value.is_empty()),
        FieldKind::Bool => quote!(#value),
        FieldKind::Number => quote!(#value != 0),
        FieldKind::Float => quote!(#value != 0.0),
        FieldKind::Timestamp | FieldKind::Message => quote!(#value.is_some()),
    };
    match &field.parent {
        None => {
            let test = test(quote!(self.#name));
            quote!(#path => #test,)
        }
        Some((parent, _)) => {
            let parent = ident(parent);
            let test = test(quote!(m.#name));
            quote!(#path => self.#parent.as_ref().is_some_and(|m| #test),)
        }
    }
}

fn eq_arm(field: &Field) -> TokenStream {
    let path = field.path();
    let name = ident(&field.name);
    match &field.parent {
        None => quote!(#path => self.#name == other.#name,),
        Some((parent, _)) => {
            let parent = ident(parent);
            quote! {
                #path => self.#parent.as_ref().map(|m| &m.#name) == other.#parent.as_ref().map(|m| &m.#name),
            }
        }
    }
}
