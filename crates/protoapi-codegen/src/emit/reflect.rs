//! `prost_reflect::ReflectMessage` for every message, so the runtime can
//! encode and decode canonical JSON from the embedded descriptors.

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::Message;

pub fn emit(scope: &super::Scope, messages: &[&Message]) -> TokenStream {
    let impls = messages.iter().map(|message| {
        let ty = scope.path(&message.rust_path);
        let full_name = &message.full_name;
        quote! {
            impl ::protoapi_runtime::__private::prost_reflect::ReflectMessage for #ty {
                fn descriptor(&self) -> ::protoapi_runtime::__private::prost_reflect::MessageDescriptor {
                    crate::DESCRIPTOR_POOL
                        .get_message_by_name(#full_name)
                        .expect("the embedded descriptor set declares every generated message")
                }
            }
        }
    });
    quote!(#(#impls)*)
}
