//! The token exchange an API declares (annotation `token_exchange`): its
//! service's handler trait implemented for the runtime's
//! `protoapi_runtime::auth::StoredExchange` over the subjects' storage
//! trait, so that `Services::token_exchange` serves it from a store alone.
//!
//! The handler reads the subject's key from the request, looks the item up
//! (a missing or soft-deleted item is unknown), and lets the runtime's
//! `TokenExchange` verify the identity token against the item's claim and
//! issue the API token.

use heck::ToSnakeCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::shared::{StoreMethods, handler_name, trait_path};
use super::{Scope, ident};
use crate::model::{Api, Service, TokenExchange};

/// The handler of `service`, if it is the API's token exchange.
pub fn emit(scope: &Scope, api: &Api, service: &Service) -> Option<TokenStream> {
    let exchange = api
        .token_exchange
        .as_ref()
        .filter(|e| e.service == service.full_name)?;
    let resource = api
        .resource(&exchange.resource)
        .expect("the exchange's resource is in the model");
    let method = service
        .methods
        .iter()
        .find(|m| m.name == exchange.method)
        .expect("the exchange's method is in its service");
    let handler = handler_name(service);
    let store = super::path(&trait_path(resource));
    let rust_name = format_ident!("{}", method.rust_name());
    let input = scope.path(&method.input);
    let output = scope.path(&method.output);
    let key = parse_key(scope, resource, &exchange.subject_field.proto);
    let get = StoreMethods::of(resource).get;
    let claim = field(&exchange.claim_field);
    let deleted = resource
        .soft_delete
        .then(|| quote!(Some(item) if item.delete_time.is_some() => Subject::Unknown,));
    let (audience_name, audience) = (
        &exchange.audience_field.proto,
        field(&exchange.audience_field.proto),
    );
    let token = field(&exchange.token_field.proto);
    let rest = exchange
        .response_has_more
        .then(|| quote!(..Default::default()));
    let doc = doc(exchange, service);
    // The exchange serves tokens: it exists in the server build only.
    Some(quote! {
        #[doc = #doc]
        #[cfg(feature = "server")]
        impl<S: #store> #handler for ::protoapi_runtime::__private::auth::StoredExchange<S> {
            async fn #rust_name(&self, caller: &Caller, request: #input) -> Result<#output, Error> {
                use ::protoapi_runtime::__private::auth::{IdentityClaims, Subject};
                #key
                let lookup = async {
                    let subject = match self.store.#get(key).await? {
                        None => Subject::Unknown,
                        #deleted
                        Some(item) => Subject::Claiming(item.#claim.map(|claim| IdentityClaims {
                            iss: claim.issuer,
                            sub: claim.subject,
                        })),
                    };
                    Ok(subject)
                };
                let #token = self
                    .exchange
                    .exchange(caller, (#audience_name, &request.#audience), key, lookup)
                    .await?;
                Ok(#output { #token, #rest })
            }
        }
    })
}

fn field(proto_name: &str) -> syn::Ident {
    ident(&proto_name.to_snake_case())
}

/// `let key = …;`: the subject field checked as a uid of the resource's
/// API (the model refuses exchanges for name-keyed collections).
fn parse_key(scope: &Scope, resource: &crate::model::Resource, subject: &str) -> TokenStream {
    let ty = scope.path(&resource.rust_path);
    let value = field(subject);
    quote! {
        let key = ::protoapi_runtime::__private::standard::parse_uid::<#ty>(#subject, &request.#value)?;
    }
}

fn doc(exchange: &TokenExchange, service: &Service) -> String {
    format!(
        " `{}.{}` as the annotations declare it: trades an identity token of a \
         trusted issuer for an API token of the `{}` its `{}` names, whose `{}` \
         holds the token's issuer and subject.",
        service.full_name,
        exchange.method,
        exchange.resource,
        exchange.subject_field.proto,
        exchange.claim_field
    )
}
