//! The service implementation both transports call.
//!
//! For each service, `XApi<S>` holds the storage and implements every RPC as
//! an inherent `async fn(&self, &Caller, Request) -> Result<Response, Error>`
//! built on the runtime's standard-method flows; the tonic server trait is
//! implemented by delegating to those methods, and the REST router calls the
//! very same ones.

use heck::ToSnakeCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::store::{StoreMethods, trait_name};
use crate::model::{Api, Method, Service, Standard};

/// The struct name, e.g. `GroupServiceApi`.
pub fn api_name(service: &Service) -> syn::Ident {
    format_ident!("{}Api", service.name)
}

/// The trait bounds on the store: one storage trait per resource served.
pub fn store_bounds(scope: &super::Scope, api: &Api, service: &Service) -> TokenStream {
    let mut resources: Vec<&str> = service
        .methods
        .iter()
        .map(|m| m.standard.resource())
        .collect();
    resources.sort_unstable();
    resources.dedup();
    let traits = resources
        .iter()
        .filter_map(|name| api.resource(name))
        .map(|resource| {
            let (module, _) = resource
                .rust_path
                .rsplit_once("::")
                .expect("a qualified path");
            scope.path(&format!("{module}::{}", trait_name(resource)))
        });
    quote!(#(#traits)+*)
}

pub fn emit(scope: &super::Scope, api: &Api, service: &Service) -> TokenStream {
    let name = api_name(service);
    let bounds = store_bounds(scope, api, service);
    let server_module = format_ident!("{}_server", service.name.to_snake_case());
    let server_trait = format_ident!("{}", service.name);
    let server_struct = format_ident!("{}Server", service.name);
    let domain = service
        .methods
        .first()
        .and_then(|m| api.resource(m.standard.resource()))
        .map(|r| r.type_name.split('/').next().unwrap_or_default().to_owned())
        .unwrap_or_default();
    let doc = format!(
        " Serves `{}` over storage `S`, for gRPC (through `{server_module}::{server_trait}`) \
         and REST (through [`{}_routes`]) alike.",
        service.full_name,
        service.name.to_snake_case()
    );
    let methods = service
        .methods
        .iter()
        .map(|method| emit_method(scope, api, method));
    let grpc_methods = service.methods.iter().map(|method| {
        let rust_name = format_ident!("{}", method.rust_name());
        let input = scope.path(&method.input);
        let output = scope.path(&method.output);
        quote! {
            async fn #rust_name(
                &self,
                request: tonic::Request<#input>,
            ) -> Result<tonic::Response<#output>, tonic::Status> {
                let caller = Caller::from_extensions(request.extensions());
                let response = #name::#rust_name(self, &caller, request.into_inner())
                    .await
                    .map_err(|error| error.in_domain(Self::DOMAIN))?;
                Ok(tonic::Response::new(response))
            }
        }
    });
    let service_doc = super::docs(&service.comments);
    quote! {
        #service_doc
        #[doc = ""]
        #[doc = #doc]
        #[derive(Debug)]
        pub struct #name<S> {
            store: std::sync::Arc<S>,
            page_tokens: PageTokens,
        }

        impl<S> Clone for #name<S> {
            fn clone(&self) -> Self {
                #name {
                    store: std::sync::Arc::clone(&self.store),
                    page_tokens: self.page_tokens.clone(),
                }
            }
        }

        impl<S: #bounds> #name<S> {
            /// The `ErrorInfo` domain of this service's errors.
            pub const DOMAIN: &'static str = #domain;

            /// Serves `store`, signing page tokens with `page_tokens`.
            pub fn new(store: std::sync::Arc<S>, page_tokens: PageTokens) -> Self {
                #name { store, page_tokens }
            }

            /// The tonic service for a gRPC server.
            pub fn into_grpc(self) -> super::#server_module::#server_struct<Self> {
                super::#server_module::#server_struct::new(self)
            }

            #(#methods)*
        }

        #[tonic::async_trait]
        impl<S: #bounds> super::#server_module::#server_trait for #name<S> {
            #(#grpc_methods)*
        }
    }
}

fn emit_method(scope: &super::Scope, api: &Api, method: &Method) -> TokenStream {
    let rust_name = format_ident!("{}", method.rust_name());
    let input = scope.path(&method.input);
    let output = scope.path(&method.output);
    let mut comments = method.comments.clone();
    if let Some(capability) = &method.capability {
        comments.push_str(&format!("\n\nRequires the `{capability}` capability."));
    }
    let doc = super::docs(&comments);
    let resource = api
        .resource(method.standard.resource())
        .expect("the model checked that standard methods name a resource");
    let ty = scope.path(&resource.rust_path);
    let store = StoreMethods::of(resource);
    let body = match &method.standard {
        Standard::Create {
            body_field,
            parent_required,
            ..
        } => {
            let field = format_ident!("{}", body_field);
            let insert = store.insert;
            let parent = if *parent_required {
                quote!(uidp::parse("parent", &request.parent)?;)
            } else {
                quote!()
            };
            quote! {
                #parent
                let resource = standard::prepare_create(caller, &request.parent, request.#field, #body_field)?;
                self.store
                    .#insert(&resource)
                    .await
                    .map_err(|error| standard::store_error::<#ty>(error, &resource.uid, &request.parent))?;
                Ok(resource)
            }
        }
        Standard::Get { .. } => {
            let get = store.get;
            quote! {
                let _ = caller;
                let uid = uidp::parse("uid", &request.uid)?;
                self.store
                    .#get(uid)
                    .await
                    .map_err(|error| standard::store_error::<#ty>(error, uid, ""))?
                    .ok_or_else(|| standard::not_found::<#ty>(uid))
            }
        }
        Standard::List { .. } => {
            let list = store.list;
            quote! {
                let _ = caller;
                let uidp = request.uidp.unwrap_or_default();
                let plan = ListPlan::new::<#ty>(
                    &self.page_tokens,
                    ListRequest {
                        descendants_of: &uidp.descendants_of,
                        children_of: &uidp.children_of,
                        page_size: request.page_size,
                        page_token: &request.page_token,
                        skip: request.skip,
                        order_by: &request.order_by,
                    },
                )?;
                let page = self
                    .store
                    .#list(&plan.query)
                    .await
                    .map_err(|error| standard::store_error::<#ty>(error, "", ""))?;
                let (items, next_page_token, total_count) = plan.finish(&self.page_tokens, page);
                Ok(#output {
                    items,
                    next_page_token,
                    total_count: i32::try_from(total_count).unwrap_or(i32::MAX),
                })
            }
        }
        Standard::Update { body_field, .. } => {
            let field = format_ident!("{}", body_field);
            let update = store.update;
            quote! {
                let _ = caller;
                let uid = uidp::parse("uid", &request.uid)?;
                let update = Update::plan(
                    request.update_mask.as_ref(),
                    request.#field.unwrap_or_default(),
                    #body_field,
                )?;
                self.store
                    .#update(uid, &update)
                    .await
                    .map_err(|error| standard::store_error::<#ty>(error, uid, ""))?
                    .ok_or_else(|| standard::not_found::<#ty>(uid))
            }
        }
        Standard::Delete { .. } => {
            let delete = store.delete;
            quote! {
                let _ = caller;
                let uid = uidp::parse("uid", &request.uid)?;
                let etag = Some(request.etag.as_str()).filter(|etag| !etag.is_empty());
                let deleted = self
                    .store
                    .#delete(uid, etag)
                    .await
                    .map_err(|error| standard::store_error::<#ty>(error, uid, ""))?;
                if deleted { Ok(()) } else { Err(standard::not_found::<#ty>(uid)) }
            }
        }
    };
    quote! {
        #doc
        pub async fn #rust_name(&self, caller: &Caller, request: #input) -> Result<#output, Error> {
            #body
        }
    }
}
