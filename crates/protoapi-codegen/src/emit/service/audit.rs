//! What a method's wrapper adds to have its writes audited
//! (`protoapi_runtime::audit`): the audit started before the method runs
//! (with the item as it was, for the access model's updates and deletes by
//! a caller with credentials), and finished with its answer.

use proc_macro2::TokenStream;
use quote::quote;

use super::StoreMethods;
use crate::model::{Api, Method, PolicyVerb, Service, Standard, Verb};

/// The statements before and after a method's body, when it writes.
pub(super) fn audit(
    scope: &crate::emit::Scope,
    api: &Api,
    service: &Service,
    method: &Method,
) -> Option<[TokenStream; 2]> {
    if !writes(method) || !method.media.is_plain() {
        return None;
    }
    let full_name = format!("{}/{}", service.full_name, method.name);
    let resource = method
        .standard
        .resource()
        .and_then(|name| api.resource(name));
    let access = resource.is_some_and(|resource| resource.is_access_model());
    let before = match (&method.standard, resource) {
        (Standard::Update { .. } | Standard::Delete { .. }, Some(resource)) if access => {
            let store = StoreMethods::called_by(scope, api, resource, service);
            let read = store.call(&store.get, quote!(audit.key()));
            quote! {
                let audit = match audit {
                    Some(audit) if !caller.is_anonymous() => {
                        let before = #read.await;
                        Some(audit.before(before))
                    }
                    audit => audit,
                };
            }
        }
        _ => quote!(),
    };
    let after = access && !matches!(method.standard, Standard::Delete { .. });
    Some([
        quote! {
            let audit = self.context.audit(#full_name, &request);
            #before
        },
        quote! {
            if let Some(audit) = audit {
                audit.finish(caller, &answer, #after);
            }
        },
    ])
}

/// Whether `method` writes: the standard writes, setting a policy,
/// forgetting or cancelling an operation, and custom methods but those
/// bound to `GET`.
fn writes(method: &Method) -> bool {
    match &method.standard {
        Standard::Create { .. }
        | Standard::Update { .. }
        | Standard::Delete { .. }
        | Standard::Undelete { .. } => true,
        Standard::Get { .. } | Standard::List { .. } | Standard::BatchGet { .. } => false,
        Standard::Policy(verb) => *verb == PolicyVerb::Set,
        Standard::Operations => {
            matches!(method.name.as_str(), "DeleteOperation" | "CancelOperation")
        }
        Standard::Custom => !method.bindings().any(|binding| binding.verb == Verb::Get),
    }
}
