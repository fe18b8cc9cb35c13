//! Standard methods that run as AIP-151 operations, and the methods of
//! `google.longrunning.Operations` over the API's store.
//!
//! A long-running method is two: the standard flow as a private
//! `run_<method>` answering the resource (or `()`), and the public method
//! that hands it to `standard::start_operation` and answers the operation.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::emit::shared::need;
use crate::model::{Api, LongRunning, Method, Progress, Resource, Standard};

/// The public method starting the operation and the private one running
/// `flow` (the standard method's body), both returning through `domain`.
pub(super) fn long_running_methods(
    scope: &crate::emit::Scope,
    method: &Method,
    resource: &Resource,
    long_running: &LongRunning,
    flow: TokenStream,
) -> TokenStream {
    let rust_name = format_ident!("{}", method.rust_name());
    let run = format_ident!("run_{}", method.rust_name());
    let input = scope.path(&method.input);
    let operation = scope.path(&method.output);
    let response = scope.path(&long_running.response);
    let ty = scope.path(&resource.rust_path);
    let verb = match method.standard {
        Standard::Create { .. } => "create",
        Standard::Update { .. } => "update",
        _ => "delete",
    };
    let response_type = &long_running.response_type;
    let metadata = long_running.metadata.as_ref().map(|metadata| {
        let (type_name, path) = (&metadata.type_name, scope.path(&metadata.rust_path));
        let fills = metadata.fills.iter().map(|(field, progress)| {
            let field = format_ident!("{field}");
            let value = match progress {
                Progress::CreateTime => quote!(progress.create_time()),
                Progress::EndTime => quote!(progress.end_time()),
                Progress::Target => quote!(progress.target.to_owned()),
                Progress::Verb => quote!(progress.verb.to_owned()),
            };
            quote!(#field: #value,)
        });
        let rest = metadata.more.then(|| quote!(..Default::default()));
        quote! {
            .metadata(#type_name, |progress| {
                ::prost::Message::encode_to_vec(&#path { #(#fills)* #rest })
            })
        }
    });
    let encode = match long_running.response.as_str() {
        "()" => quote!(|()| Vec::new()),
        _ => quote!(|answer| ::prost::Message::encode_to_vec(&answer)),
    };
    let doc = format!(" Runs [`Self::{rust_name}`]'s {verb} once it is admitted as an operation.");
    quote! {
        pub async fn #rust_name(&self, caller: &Caller, request: #input) -> Result<#operation, Error> {
            let answer: Result<#operation, Error> = async {
                let launch = standard::Launch::new::<#ty>(#verb, #response_type) #metadata;
                let (this, caller) = (self.clone(), caller.clone());
                let flow = async move { this.#run(&caller, request).await.map(#encode) };
                let store = std::sync::Arc::clone(&self.store);
                let body = standard::start_operation(store, &self.context, launch, flow).await?;
                <#operation as ::prost::Message>::decode(body.as_slice()).map_err(Error::internal)
            }
            .await;
            answer.map_err(|error| error.in_domain(Self::DOMAIN))
        }

        #[doc = #doc]
        async fn #run(&self, caller: &Caller, request: #input) -> Result<#response, Error> {
            let answer: Result<#response, Error> = async { #flow }.await;
            answer.map_err(|error| error.in_domain(Self::DOMAIN))
        }
    }
}

/// The body of a method of `google.longrunning.Operations`.
pub(super) fn operations_body(scope: &crate::emit::Scope, method: &Method) -> TokenStream {
    let read = quote! {
        let operation = standard::read_operation(&*self.store, &request.name).await?;
        self.require_readable(caller, &operation).await?;
    };
    let decode =
        quote!(::prost::Message::decode(operation.body.as_slice()).map_err(Error::internal));
    match method.name.as_str() {
        "GetOperation" => quote!(#read #decode),
        "DeleteOperation" => quote! {
            #read
            standard::delete_operation(&*self.store, &operation).await
        },
        "CancelOperation" => quote! {
            #read
            standard::cancel_operation(&*self.store, &operation).await
        },
        "WaitOperation" => quote! {
            #read
            let operation = standard::wait_operation(&*self.store, operation, request.timeout).await?;
            #decode
        },
        "ListOperations" => {
            let output = scope.path(&method.output);
            quote! {
                let (operations, next_page_token) = standard::list_operations(
                    &*self.store,
                    &request.name,
                    &request.filter,
                    request.page_size,
                    &request.page_token,
                    |operation| async move {
                        self.require_readable(caller, &operation).await.map(|()| operation)
                    },
                )
                .await?;
                let operations = operations
                    .iter()
                    .map(|operation| ::prost::Message::decode(operation.body.as_slice()))
                    .collect::<Result<_, _>>()
                    .map_err(Error::internal)?;
                Ok(#output { operations, next_page_token, ..Default::default() })
            }
        }
        other => {
            let method = format!("google.longrunning.Operations/{other}");
            quote!(Err(Error::unimplemented(#method)))
        }
    }
}

/// Who may read an operation: whoever holds the Get of the resource it
/// acts on, on its target.
pub(super) fn readers(api: &Api) -> TokenStream {
    let mut arms: Vec<(String, TokenStream)> = api
        .packages
        .iter()
        .flat_map(|p| &p.services)
        .flat_map(|s| &s.methods)
        .filter_map(|m| {
            let resource = api.resource(m.standard.resource()?)?;
            let long_running = api
                .packages
                .iter()
                .flat_map(|p| &p.services)
                .flat_map(|s| &s.methods)
                .any(|other| {
                    other.long_running.is_some()
                        && other.standard.resource() == Some(&resource.full_name)
                });
            (matches!(m.standard, Standard::Get { .. }) && long_running)
                .then(|| (resource.type_name.clone(), need(m)))
        })
        .collect();
    arms.sort_by(|a, b| a.0.cmp(&b.0));
    arms.dedup_by(|a, b| a.0 == b.0);
    let arms = arms
        .iter()
        .map(|(type_name, need)| quote!(#type_name => #need,));
    quote! {
        /// PERMISSION_DENIED unless `caller` holds the Get of what
        /// `operation` acts on, on its target.
        async fn require_readable(
            &self,
            caller: &Caller,
            operation: &::protoapi_runtime::__private::operation::StoredOperation,
        ) -> Result<(), Error> {
            let need = match operation.resource_type.as_str() {
                #(#arms)*
                _ => Need::Token,
            };
            self.context.authorize(caller, need, &operation.target).await
        }
    }
}
