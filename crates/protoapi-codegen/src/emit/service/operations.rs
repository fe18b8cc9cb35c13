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
/// `flow` (the standard method's body). With a store that checks writes
/// without making them (`dry_runs`, its call), the flow first runs as a
/// dry run, so that what is wrong with the request, storage's findings
/// included, is answered at once rather than as a failed operation. Under
/// the request's AIP-155 id (`request_id`, an `Option<RequestId>` when the
/// request has one), a
/// retry is answered with the first operation.
pub(super) fn long_running_methods(
    scope: &crate::emit::Scope,
    method: &Method,
    resource: &Resource,
    long_running: &LongRunning,
    ([flow, dry_runs], request_id): ([TokenStream; 2], Option<TokenStream>),
    [audit, audited]: [TokenStream; 2],
) -> TokenStream {
    let rust_name = format_ident!("{}", method.rust_name());
    let run = format_ident!("run_{}", method.rust_name());
    let (request_id, id) = match request_id {
        Some(request_id) => (quote!(let request_id = #request_id;), quote!(request_id)),
        None => (quote!(), quote!(None)),
    };
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
                if #dry_runs {
                    standard::DryRun::scope(true, self.#run(caller, request.clone())).await?;
                }
                #request_id
                let launch = standard::Launch::new::<#ty>(#verb, #response_type) #metadata;
                let (this, caller) = (self.clone(), caller.clone());
                let flow = async move { this.#run(&caller, request).await.map(#encode) };
                let store = std::sync::Arc::clone(&self.store);
                let body = standard::start_operation(store, &self.context, #id, launch, flow).await?;
                <#operation as ::prost::Message>::decode(body.as_slice()).map_err(Error::internal)
            }
            .await;
            answer.map_err(|error| error.in_domain(Self::DOMAIN))
        }

        #[doc = #doc]
        async fn #run(&self, caller: &Caller, request: #input) -> Result<#response, Error> {
            #audit
            let answer: Result<#response, Error> = async { #flow }.await;
            #audited
            answer.map_err(|error| error.in_domain(Self::DOMAIN))
        }
    }
}

/// The body of a method of `google.longrunning.Operations`.
pub(super) fn operations_body(scope: &crate::emit::Scope, method: &Method) -> TokenStream {
    // Reading needs the Get of what it acts on; cancelling or forgetting,
    // what the method that started it needs.
    let reading = !matches!(method.name.as_str(), "DeleteOperation" | "CancelOperation");
    let read = quote! {
        let operation = standard::read_operation(&*self.store, &request.name).await?;
        self.authorize_operation(caller, &operation, #reading).await?;
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
            let package = method
                .output
                .rsplit_once("::")
                .map_or("", |(package, _)| package);
            let operation = scope.path(&format!("{package}::Operation"));
            quote! {
                let (operations, next_page_token) = standard::list_operations::<#operation, _, _>(
                    &*self.store,
                    &request.name,
                    &request.filter,
                    request.page_size,
                    &request.page_token,
                    |operation| async move {
                        self.authorize_operation(caller, &operation, true).await.map(|()| operation)
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

/// What a caller needs on an operation's target: to read it, the Get of
/// what it acts on; to cancel or forget it, what the method that started it
/// needs. Operations of other types are nobody's.
pub(super) fn authorize(api: &Api) -> TokenStream {
    let methods = || {
        (api.packages.iter().flat_map(|p| &p.services))
            .flat_map(|s| &s.methods)
            .filter_map(|m| Some((m, api.resource(m.standard.resource()?)?)))
    };
    let long_running: Vec<&str> = methods()
        .filter(|(m, _)| m.long_running.is_some())
        .map(|(_, resource)| resource.type_name.as_str())
        .collect();
    let mut arms: Vec<(String, &str, TokenStream)> = methods()
        .filter(|(_, resource)| long_running.contains(&resource.type_name.as_str()))
        .filter_map(|(m, resource)| {
            let verb = match (&m.standard, &m.long_running) {
                (Standard::Get { .. }, _) => "",
                (Standard::Create { .. }, Some(_)) => "create",
                (Standard::Update { .. }, Some(_)) => "update",
                (Standard::Delete { .. }, Some(_)) => "delete",
                _ => return None,
            };
            Some((resource.type_name.clone(), verb, need(m)))
        })
        .collect();
    arms.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    arms.dedup_by(|a, b| (&a.0, a.1) == (&b.0, b.1));
    let arms = arms.iter().map(|(type_name, verb, need)| match *verb {
        "" => quote!((#type_name, _, true) => Some(#need),),
        verb => quote!((#type_name, #verb, false) => Some(#need),),
    });
    quote! {
        /// Checks that `caller` may read (`read`), or cancel and forget,
        /// `operation`: the Get of what it acts on, or what the method that
        /// started it needs, on its target.
        async fn authorize_operation(
            &self,
            caller: &Caller,
            operation: &::protoapi_runtime::__private::operation::StoredOperation,
            read: bool,
        ) -> Result<(), Error> {
            let kind = (operation.resource_type.as_str(), operation.verb.as_str(), read);
            let need = match kind {
                #(#arms)*
                _ => None,
            };
            standard::authorize_operation(&self.context, caller, operation, need).await
        }
    }
}
