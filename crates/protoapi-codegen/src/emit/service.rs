//! The service implementation both transports call.
//!
//! For each service, `XApi<S>` holds the storage and the `protoapi_runtime::standard::ApiContext`
//! (page tokens, authorization) and implements every RPC as an inherent
//! `async fn(&self, &Caller, Request) -> Result<Response, Error>`: standard
//! methods check the annotated capability, then run the runtime's
//! standard-method flow over the generated storage trait; custom methods
//! delegate to a generated handler trait `XHandler` that `S` implements. The
//! tonic server trait is implemented by delegating to the inherent methods,
//! and the REST router calls the very same ones.

use heck::{ToLowerCamelCase, ToSnakeCase, ToUpperCamelCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::shared::{
    StoreMethods, api_name, handler_name, has_custom_methods, need, service_domain, store_bounds,
};

mod audit;
mod names;
mod operations;
mod policies;
use super::shared::{answer_type, request_type};
use crate::model::{Api, LIST_FILTERS, Method, Paging, Resource, Service, Standard, View};

pub fn emit(scope: &super::Scope, api: &Api, service: &Service) -> TokenStream {
    let name = api_name(service);
    let bounds = store_bounds(scope, api, service);
    let server_module = format_ident!("{}_server", service.name.to_snake_case());
    // As tonic names them: `IAMPolicy` serves through `IamPolicyServer`.
    let tonic_name = service.name.to_upper_camel_case();
    let server_trait = format_ident!("{tonic_name}");
    let server_struct = format_ident!("{tonic_name}Server");
    let domain = service_domain(api, service);
    let doc = format!(
        " Serves `{}` over `S`, for gRPC (through `{server_module}::{server_trait}`) \
         and REST (through [`{}_routes`]) alike.",
        service.full_name,
        service.name.to_snake_case()
    );
    let methods = service
        .methods
        .iter()
        .map(|method| emit_method(scope, api, service, method));
    let grpc_methods = service.methods.iter().map(|method| {
        if method.media.server_streaming {
            return emit_grpc_stream(scope, &name, method);
        }
        if method.media.client_streaming {
            return emit_grpc_client_stream(scope, &name, method);
        }
        let rust_name = format_ident!("{}", method.rust_name());
        let input = scope.path(&method.input);
        let output = scope.path(&method.output);
        quote! {
            async fn #rust_name(
                &self,
                request: tonic::Request<#input>,
            ) -> Result<tonic::Response<#output>, tonic::Status> {
                let caller = Caller::from_extensions(request.extensions());
                let response = #name::#rust_name(self, &caller, request.into_inner()).await?;
                Ok(tonic::Response::new(response))
            }
        }
    });
    let handler = has_custom_methods(service).then(|| emit_handler_trait(scope, service));
    let readers = service
        .methods
        .iter()
        .any(|m| matches!(m.standard, Standard::Operations))
        .then(|| operations::authorize(api));
    let mut capabilities: Vec<&str> = service
        .methods
        .iter()
        .filter_map(|m| m.capability.as_deref())
        .collect();
    capabilities.dedup();
    let service_doc = super::docs(&service.comments);
    quote! {
        #handler

        #service_doc
        #[doc = ""]
        #[doc = #doc]
        #[derive(Debug)]
        pub struct #name<S> {
            store: std::sync::Arc<S>,
            context: ApiContext,
        }

        impl<S> Clone for #name<S> {
            fn clone(&self) -> Self {
                #name {
                    store: std::sync::Arc::clone(&self.store),
                    context: self.context.clone(),
                }
            }
        }

        impl<S: #bounds> #name<S> {
            /// The `ErrorInfo` domain of this service's errors.
            pub const DOMAIN: &'static str = #domain;

            /// The capabilities this service's methods require.
            pub const CAPABILITIES: &'static [&'static str] = &[#(#capabilities),*];

            /// Serves `store` with `context` (page tokens, authorization).
            pub fn new(store: std::sync::Arc<S>, context: ApiContext) -> Self {
                #name { store, context }
            }

            /// The tonic service for a gRPC server, refusing messages over
            /// [`protoapi_runtime::rest::MAX_BODY_BYTES`] like the REST routes.
            pub fn into_grpc(self) -> super::#server_module::#server_struct<Self> {
                super::#server_module::#server_struct::new(self)
                    .max_decoding_message_size(::protoapi_runtime::__private::rest::MAX_BODY_BYTES)
            }

            #(#methods)*

            #readers
        }

        #[tonic::async_trait]
        impl<S: #bounds> super::#server_module::#server_trait for #name<S> {
            #(#grpc_methods)*
        }
    }
}

/// The tonic trait's client-streaming method: the requests as a message
/// stream, one answer.
fn emit_grpc_client_stream(
    scope: &super::Scope,
    api_type: &syn::Ident,
    method: &Method,
) -> TokenStream {
    let rust_name = format_ident!("{}", method.rust_name());
    let input = scope.path(&method.input);
    let output = scope.path(&method.output);
    quote! {
        async fn #rust_name(
            &self,
            request: tonic::Request<tonic::Streaming<#input>>,
        ) -> Result<tonic::Response<#output>, tonic::Status> {
            let caller = Caller::from_extensions(request.extensions());
            let requests = ::protoapi_runtime::__private::stream::from_grpc(request.into_inner());
            let response = #api_type::#rust_name(self, &caller, requests).await?;
            Ok(tonic::Response::new(response))
        }
    }
}

/// The tonic trait's server-streaming method (bidirectional too): the
/// stream the service method answers, ended by its first error as the
/// call's status.
fn emit_grpc_stream(scope: &super::Scope, api_type: &syn::Ident, method: &Method) -> TokenStream {
    let rust_name = format_ident!("{}", method.rust_name());
    let stream_type = format_ident!("{}Stream", method.name);
    let input = scope.path(&method.input);
    let (request, read) = match method.media.client_streaming {
        true => (
            quote!(tonic::Streaming<#input>),
            quote!(::protoapi_runtime::__private::stream::from_grpc(
                request.into_inner()
            )),
        ),
        false => (input, quote!(request.into_inner())),
    };
    let output = scope.path(&method.output);
    quote! {
        type #stream_type = ::protoapi_runtime::__private::stream::GrpcStream<#output>;

        async fn #rust_name(
            &self,
            request: tonic::Request<#request>,
        ) -> Result<tonic::Response<Self::#stream_type>, tonic::Status> {
            let caller = Caller::from_extensions(request.extensions());
            let stream = #api_type::#rust_name(self, &caller, #read).await?;
            Ok(tonic::Response::new(::protoapi_runtime::__private::stream::grpc(stream, Self::DOMAIN)))
        }
    }
}

/// `library.loans.v1.LoanService` -> `loans.library`.
fn emit_handler_trait(scope: &super::Scope, service: &Service) -> TokenStream {
    let name = handler_name(service);
    let doc = format!(
        " The custom methods of `{}`, implemented by hand: the generated service \
         decodes requests, then calls these with the caller.",
        service.full_name
    );
    let methods = service
        .methods
        .iter()
        .filter(|m| matches!(m.standard, Standard::Custom))
        .map(|method| {
            let rust_name = format_ident!("{}", method.rust_name());
            let input = request_type(scope, method);
            let output = answer_type(scope, method);
            let doc = super::docs(&method.comments);
            quote! {
                #doc
                fn #rust_name(
                    &self,
                    caller: &Caller,
                    request: #input,
                ) -> impl Future<Output = Result<#output, Error>> + Send;
            }
        });
    quote! {
        #[doc = #doc]
        pub trait #name: Send + Sync + 'static {
            #(#methods)*
        }
    }
}

fn emit_method(scope: &super::Scope, api: &Api, service: &Service, method: &Method) -> TokenStream {
    let rust_name = format_ident!("{}", method.rust_name());
    let input = request_type(scope, method);
    let output = scope.path(&method.output);
    let answer = answer_type(scope, method);
    let doc = super::docs(&method_comments(api, method));
    // Writes are audited: started before the body, finished with its answer.
    let audit = audit::audit(scope, api, service, method).unwrap_or_default();
    let body = match method
        .standard
        .resource()
        .and_then(|name| api.resource(name))
    {
        Some(resource) => {
            let flow = Flow::new(scope, api, service, method, resource);
            let body = flow.scoped(flow.body(&method.standard, &output));
            if let Some(long_running) = &method.long_running {
                let dry_runs = flow.store.call(&flow.store.dry_runs, quote!());
                let methods = operations::long_running_methods(
                    scope,
                    method,
                    resource,
                    long_running,
                    ([body, dry_runs], flow.request_id()),
                    audit,
                );
                return quote!(#doc #methods);
            }
            body
        }
        None if matches!(method.standard, Standard::Operations) => {
            operations::operations_body(scope, method)
        }
        None if let Standard::Policy(verb) = method.standard => {
            policies::policy_body(scope, api, service, method, verb)
        }
        // The handler reads the caller; nobody reaches it without
        // credentials (a presented token is the handler's to verify). Named
        // through its trait: a store method may have the same name (an
        // `UpdateX` answering an operation is the handler's, `update_x` the
        // store's).
        None => {
            let handler = handler_name(service);
            quote! {
                if caller.is_anonymous() {
                    return Err(::protoapi_runtime::__private::auth::token_required());
                }
                #handler::#rust_name(&*self.store, caller, request).await
            }
        }
    };
    // The one place the service's errors take its domain, whichever
    // transport called.
    let [start, finish] = audit;
    quote! {
        #doc
        pub async fn #rust_name(&self, caller: &Caller, request: #input) -> Result<#answer, Error> {
            #start
            let answer: Result<#answer, Error> = async { #body }.await;
            #finish
            answer.map_err(|error| error.in_domain(Self::DOMAIN))
        }
    }
}

/// The method's proto comments, then who may call it.
fn method_comments(api: &Api, method: &Method) -> String {
    let mut comments = method.comments.clone();
    match (&method.capability, method.anonymous) {
        (_, true) => comments.push_str("\n\nNeeds no token."),
        (Some(capability), false) => {
            comments.push_str(&format!("\n\nRequires the `{capability}` capability."));
        }
        (None, false) => comments.push_str("\n\nNeeds a token."),
    }
    if let Some(rule) = api.public_reads(method).filter(|_| !method.anonymous) {
        comments.push_str(&format!(" {}", rule.describe()));
    }
    comments
}

/// How a method's messages show its resource: as the resource itself, or as
/// the message of a legacy version, converted on the way in and on the way
/// out. Every difference between a current and a legacy method is here.
struct Edge<'a> {
    /// The legacy view and its Rust path, for a method of a legacy version.
    view: Option<(&'a View, TokenStream)>,
}

impl<'a> Edge<'a> {
    fn of(scope: &super::Scope, api: &'a Api, method: &Method) -> Self {
        let view = method.view.as_deref().and_then(|name| api.view(name));
        Edge {
            view: view.map(|view| (view, scope.path(&view.rust_path))),
        }
    }

    /// Whether requests and responses hold the resource itself.
    fn is_current(&self) -> bool {
        self.view.is_none()
    }

    /// `let uid = …;`, read from the request field holding it (a legacy
    /// message may name it otherwise, e.g. `id`).
    fn let_uid(&self, ty: &TokenStream) -> TokenStream {
        let uid = self.parse_uid(ty);
        quote!(let uid = #uid;)
    }

    /// `let uid = …;` for an Update, whose legacy request the conversion
    /// consumes: the uid is copied out of it first.
    fn let_uid_of_update(&self, ty: &TokenStream) -> TokenStream {
        let uid = self.parse_uid(ty);
        match self.view {
            Some(_) => quote!(let uid = &*#uid.to_owned();),
            None => quote!(let uid = #uid;),
        }
    }

    fn parse_uid(&self, ty: &TokenStream) -> TokenStream {
        let label = self.view.as_ref().map_or("uid", |(view, _)| &view.id_field);
        let id = super::ident(label);
        quote!(standard::parse_uid::<#ty>(#label, &request.#id)?)
    }

    /// The resource in the request's `field` (an `Option`), converted from
    /// the legacy message; `body_field` names it in violations.
    fn received(&self, field: &Option<syn::Ident>, body_field: &str) -> TokenStream {
        match self.view {
            Some(_) => quote! {
                request
                    .#field
                    .map(|body| ::protoapi_runtime::__private::legacy::View::to_current(body, #body_field))
                    .transpose()?
            },
            None => quote!(request.#field),
        }
    }

    /// The update mask and the resource an Update reads from the request; a
    /// legacy request that is the message itself replaces what it shows.
    fn update_input(&self, field: &Option<syn::Ident>, body_field: &str) -> [TokenStream; 2] {
        match &self.view {
            Some((_, view)) if body_field.is_empty() => [
                quote!(Some(&<#view as ::protoapi_runtime::__private::legacy::View>::replacement_mask())),
                quote!(::protoapi_runtime::__private::legacy::View::to_current(
                    request, ""
                )?),
            ],
            _ => {
                let received = self.received(field, body_field);
                [
                    quote!(request.update_mask.as_ref()),
                    quote!(#received.unwrap_or_default()),
                ]
            }
        }
    }

    /// `value`, a resource, as the method answers it.
    fn shown(&self, value: TokenStream) -> TokenStream {
        match &self.view {
            Some((_, view)) => {
                quote!(<#view as ::protoapi_runtime::__private::legacy::View>::from_current(#value))
            }
            None => value,
        }
    }

    /// The items of a list response (in its field `field`), from the
    /// resources listed.
    fn shown_items(&self, field: &str) -> TokenStream {
        let field = super::ident(field);
        match &self.view {
            Some((_, view)) => {
                quote!(#field: items.into_iter().map(<#view as ::protoapi_runtime::__private::legacy::View>::from_current).collect())
            }
            None if field == "items" => quote!(items),
            None => quote!(#field: items),
        }
    }

    /// The filters a list accepts.
    fn filters(&self, ty: &TokenStream) -> TokenStream {
        match &self.view {
            Some((view, _)) => {
                let filters = &view.filters;
                quote!(&[#(#filters),*])
            }
            None => quote!(<#ty as ::protoapi_runtime::__private::resource::Resource>::FILTERS),
        }
    }

    /// The etag a delete must match, if any: legacy versions predate etags.
    fn etag(&self, shape: &crate::model::DeleteShape) -> TokenStream {
        match self.view {
            Some(_) => quote!(None),
            None => super::shared::shapes::delete_etag(shape),
        }
    }
}

/// One standard method of a resource: what its body is built from.
struct Flow<'a> {
    scope: &'a super::Scope,
    api: &'a Api,
    service: &'a Service,
    resource: &'a Resource,
    /// The resource's Rust type.
    ty: TokenStream,
    store: StoreMethods,
    /// What the method needs of its caller: `Need::Capability("groups.get")`,
    /// `Need::Token` (no access rules), or `Need::Nothing` (anonymous).
    capability: TokenStream,
    edge: Edge<'a>,
    /// The method, for its AIP shape (`super::shapes`).
    method: &'a Method,
}

impl<'a> Flow<'a> {
    fn new(
        scope: &'a super::Scope,
        api: &'a Api,
        service: &'a Service,
        method: &'a Method,
        resource: &'a Resource,
    ) -> Self {
        let capability = need(method);
        Flow {
            scope,
            api,
            service,
            resource,
            ty: scope.path(&resource.rust_path),
            store: StoreMethods::called_by(scope, api, resource, service),
            capability,
            edge: Edge::of(scope, api, method),
            method,
        }
    }

    fn body(&self, standard: &Standard, output: &TokenStream) -> TokenStream {
        // Resources keyed by names (AIP-122) have flows of their own.
        if let Some(body) = self.named(standard) {
            return body;
        }
        match standard {
            Standard::Create {
                body_field,
                parent_required,
                ..
            } => self.create(body_field, *parent_required),
            Standard::Get { .. } => self.get(),
            Standard::List {
                filters, paging, ..
            } => self.list(filters, *paging, output),
            Standard::Update { body_field, .. } => self.update(body_field),
            Standard::Delete { .. } => self.delete(),
            Standard::Undelete { .. } => self.undelete(),
            Standard::BatchGet { .. } => self.batch_get(standard, output),
            Standard::Operations | Standard::Policy(_) | Standard::Custom => {
                unreachable!("operations, policies and custom methods have no resource")
            }
        }
    }

    fn create(&self, body_field: &str, parent_required: bool) -> TokenStream {
        let Flow {
            ty,
            capability,
            resource,
            ..
        } = self;
        let field = Some(super::ident(body_field));
        // Violations name fields as JSON does: `bookCopy.shelf`.
        let body_field = body_field.to_lower_camel_case();
        let insert = self.store.call(&self.store.insert, quote!(&resource));
        let references = check_references(self.scope, self.api, self.service, resource);
        let must_hold = resource.has_must_hold().then(|| {
            quote! {
                self.context.require_held(caller, &request.parent, resource.must_hold()).await?;
            }
        });
        let body = self.edge.received(&field, &body_field);
        let created = self.edge.shown(quote!(resource));
        let dry_run = self.dry_create(&created);
        let recall = self.recall(Some(self.edge.shown(quote!(item))));
        let shared = self.shared_write(quote!(&request.parent));
        // UIDPs in the body longer than the API allows are refused
        // before authorization, alike with or without a token.
        let (uid_lengths, body) = match resource.has_uidp_fields() {
            true => (
                Some(quote! {
                    let body = #body;
                    standard::check_uid_lengths::<#ty>(body.as_ref(), #body_field)?;
                }),
                quote!(body),
            ),
            false => (None, body),
        };
        quote! {
            standard::parse_parent::<#ty>(&request.parent, #parent_required)?;
            #uid_lengths
            self.context.authorize(caller, #capability, &request.parent).await?;
            #shared
            #recall
            let resource = standard::prepare_create(caller, &request.parent, #body, #body_field)?;
            #references
            #must_hold
            #dry_run
            #insert
                .await
                .map_err(|error| standard::store_error::<#ty>(error, &resource.uid, &request.parent))?;
            Ok(#created)
        }
    }

    fn get(&self) -> TokenStream {
        let Flow { ty, capability, .. } = self;
        let read = self.store.call(&self.store.get, quote!(uid));
        let uid = self.edge.let_uid(ty);
        let found = self.edge.shown(quote!(item));
        quote! {
            #uid
            let item = standard::get(&self.context, caller, #capability, uid, #read).await?;
            Ok(#found)
        }
    }

    fn list(&self, filters: &[String], paging: Paging, output: &TokenStream) -> TokenStream {
        let Flow { ty, capability, .. } = self;
        let fetch = self.store.call(&self.store.list, quote!(&plan.query));
        let shape = self.method.list_shape();
        let arguments = list_arguments(filters, paging, &shape);
        let within = self.within_parent();
        let arguments = quote!(#arguments #within);
        let declared = self.edge.filters(ty);
        let items = self.edge.shown_items(&shape.items);
        let tail = super::shared::shapes::list_response_tail(&shape);
        let unused_total = super::shared::shapes::unused_total(&shape);
        let fetch = quote! {
            let page = #fetch
                .await
                .map_err(|error| standard::store_error::<#ty>(error, "", ""))?;
        };
        match paging {
            Paging::Token => quote! {
                #arguments
                let plan = ListPlan::with_filters::<#ty>(&self.context, caller, #capability, #declared, list).await?;
                #fetch
                let (items, next_page_token, total_count) = plan.finish(&self.context, page);
                #unused_total
                Ok(#output {
                    #items,
                    #tail
                })
            },
            Paging::Offset => quote! {
                #arguments
                let Some(plan) = ListPlan::full::<#ty>(
                    &self.context, caller, #capability, #declared, list, request.offset, request.limit,
                )
                .await?
                else {
                    return Ok(#output { items: Vec::new() });
                };
                #fetch
                let items = plan.finish_full(&self.context, page)?;
                Ok(#output {
                    #items,
                })
            },
        }
    }

    fn update(&self, body_field: &str) -> TokenStream {
        let Flow { ty, capability, .. } = self;
        // Empty for a full replacement, whose request is the resource.
        let field = (!body_field.is_empty()).then(|| super::ident(body_field));
        let body_field = body_field.to_lower_camel_case();
        let apply = super::shared::shapes::apply_update(ty, &self.store, &self.method.writes);
        let uid = self.edge.let_uid_of_update(ty);
        let [mask, patch] = self.edge.update_input(&field, &body_field);
        let shape = self.method.update_shape();
        // A request without a mask (a full replacement) changes every field
        // it sets (AIP-134).
        let mask = match shape.has_mask || !self.edge.is_current() {
            true => mask,
            false => quote!(None),
        };
        let required_mask = super::shared::shapes::required_mask(&shape);
        let updated = self.edge.shown(quote!(updated));
        let recall = self.recall(Some(self.edge.shown(quote!(item))));
        let shared = self.shared_write(quote!(
            ::protoapi_runtime::__private::uidp::parent(uid).unwrap_or_default()
        ));
        let uid_lengths = match &field {
            Some(field) if self.edge.is_current() && self.resource.has_uidp_fields() => {
                Some(quote! {
                    standard::check_uid_lengths::<#ty>(request.#field.as_ref(), #body_field)?;
                })
            }
            _ => None,
        };
        quote! {
            #uid
            #uid_lengths
            #required_mask
            self.context.authorize(caller, #capability, uid).await?;
            #shared
            #recall
            let update = standard::plan_update(
                &self.context, caller, uid, #mask, #patch, #body_field,
            )
            .await?;
            let updated = #apply?;
            Ok(#updated)
        }
    }

    fn delete(&self) -> TokenStream {
        let Flow { ty, capability, .. } = self;
        let delete = self.store.call(&self.store.delete, quote!(uid, etag));
        let uid = self.edge.let_uid(ty);
        let shape = self.method.delete_shape();
        let etag = self.edge.etag(&shape);
        let read = super::shared::shapes::read_before_delete(&shape, ty, &self.store);
        let answer = match shape.returns_resource {
            true => self.edge.shown(quote!(item)),
            false => quote!(()),
        };
        let recall = self.recall(
            shape
                .returns_resource
                .then(|| self.edge.shown(quote!(item))),
        );
        let shared = self.shared_write(quote!(
            ::protoapi_runtime::__private::uidp::parent(uid).unwrap_or_default()
        ));
        let writes = &self.method.writes;
        let finish = super::shared::shapes::finish_delete(
            ty,
            &self.store,
            writes,
            quote!(#delete.await),
            answer.clone(),
        );
        if shape.soft {
            let answer = shape.returns_resource.then_some(answer);
            let rest =
                super::shared::shapes::lifecycle(ty, &self.store, writes, (etag, false), answer);
            return quote! {
                #uid
                self.context.authorize(caller, #capability, uid).await?;
                #shared
                #recall
                #rest
            };
        }
        quote! {
            #uid
            self.context.authorize(caller, #capability, uid).await?;
            #shared
            #recall
            let etag = #etag;
            #read
            #finish
        }
    }

    /// `Undelete<X>` (AIP-164) of a UIDP-keyed resource.
    fn undelete(&self) -> TokenStream {
        let Flow { ty, capability, .. } = self;
        let uid = self.edge.let_uid(ty);
        let etag = self.edge.etag(&self.method.delete_shape());
        let answer = Some(self.edge.shown(quote!(item)));
        let recall = self.recall(answer.clone());
        let shared = self.shared_write(quote!(
            ::protoapi_runtime::__private::uidp::parent(uid).unwrap_or_default()
        ));
        let rest = super::shared::shapes::lifecycle(
            ty,
            &self.store,
            &self.method.writes,
            (etag, true),
            answer,
        );
        quote! {
            #uid
            self.context.authorize(caller, #capability, uid).await?;
            #shared
            #recall
            #rest
        }
    }

    fn batch_get(&self, standard: &Standard, output: &TokenStream) -> TokenStream {
        let Standard::BatchGet { items_field, .. } = standard else {
            unreachable!("a batch get")
        };
        let shown = self.edge.shown_items(items_field);
        let (ty, capability) = (&self.ty, &self.capability);
        super::shared::shapes::batch_get(standard, ty, capability, &self.store, output, shown)
    }

    /// `body` with the write options storage reads while it runs: a dry
    /// run (AIP-163 `validate_only`, when the store can check a write
    /// without making it) and the request id (AIP-155).
    fn scoped(&self, body: TokenStream) -> TokenStream {
        let writes = &self.method.writes;
        let body = match writes.validate_only {
            true => {
                let dry_runs = self.store.call(&self.store.dry_runs, quote!());
                quote! {
                    let dry_run = request.validate_only && #dry_runs;
                    standard::DryRun::scope(dry_run, async { #body }).await
                }
            }
            false => body,
        };
        match self.request_id() {
            Some(request_id) => quote! {
                let request_id = #request_id;
                standard::RequestId::scope(request_id, async { #body }).await
            },
            None => body,
        }
    }

    /// The request's AIP-155 request id (`Option<RequestId>`), when the
    /// method takes one.
    pub(super) fn request_id(&self) -> Option<TokenStream> {
        let writes = &self.method.writes;
        if !writes.request_id {
            return None;
        }
        let full_name = format!("{}/{}", self.service.full_name, self.method.name);
        let uuid = writes.request_id_uuid;
        Some(quote! {
            self.context.request_id(caller, #full_name, &request.request_id, #uuid, &request)?
        })
    }

    /// A retry's early answer (AIP-155), once authorized: what the first
    /// request under its `request_id` wrote, as `answer` shows `item`
    /// (`None`: the method answers `Empty`).
    pub(super) fn recall(&self, answer: Option<TokenStream>) -> Option<TokenStream> {
        let ty = &self.ty;
        let recorded = self.store.call(&self.store.recorded, quote!(&key));
        let (item, answer) = match answer {
            Some(answer) => (quote!(item), answer),
            None => (quote!(_item), quote!(())),
        };
        self.method.writes.request_id.then(|| {
            quote! {
                if let Some(#item) = standard::recall::<#ty, _>(|key| async move { #recorded.await }).await? {
                    return Ok(#answer);
                }
            }
        })
    }

    /// A Create's early answer when the request asks `validate_only`
    /// (AIP-163): every check has run, nothing is written.
    fn dry_create(&self, created: &TokenStream) -> Option<TokenStream> {
        self.method
            .writes
            .validate_only
            .then(|| quote!(if request.validate_only && !standard::DryRun::current() { return Ok(#created); }))
    }

    /// The administrator-only check of a write under a shared scope, for
    /// resources annotated `shared`; `parent` is where the item lives.
    fn shared_write(&self, parent: TokenStream) -> Option<TokenStream> {
        let ty = &self.ty;
        self.resource
            .shared
            .then(|| quote!(self.context.require_shared_write::<#ty>(caller, #parent)?;))
    }
}

/// `let list = ListRequest { .. }` from the filter fields the request has.
fn list_arguments(
    filters: &[String],
    paging: Paging,
    shape: &crate::model::ListShape,
) -> TokenStream {
    let mut fields = Vec::new();
    let mut uidp = false;
    // Each filter the request carries, read from its field (`LIST_FILTERS`).
    for (filter, path) in LIST_FILTERS
        .iter()
        .filter(|(f, _)| filters.iter().any(|g| g == f))
    {
        let name = format_ident!("{}", filter);
        let (source, field) = match path.strip_prefix("uidp.") {
            Some(field) => {
                uidp = true;
                (quote!(uidp), super::ident(field))
            }
            None => (quote!(request), super::ident(path)),
        };
        // `in_root` is a bool; the others are read by reference.
        fields.push(if *filter == "in_root" {
            quote!(#name: #source.#field,)
        } else {
            quote!(#name: &#source.#field,)
        });
    }
    if paging == Paging::Token {
        fields.push(super::shared::shapes::list_paging(shape));
    }
    let uidp = uidp.then(|| quote!(let uidp = request.uidp.unwrap_or_default();));
    quote! {
        #uidp
        let list = ListRequest {
            #(#fields)*
            ..Default::default()
        };
    }
}

/// Resolves every reference field of a new item, reporting all unusable ones
/// together; then, for references that confer capabilities (a binding's
/// role), requires the caller to hold them at the item's group.
fn check_references(
    scope: &super::Scope,
    api: &Api,
    service: &Service,
    resource: &Resource,
) -> Option<TokenStream> {
    if resource.references.is_empty() {
        return None;
    }
    let ty = scope.path(&resource.rust_path);
    let resolved = resource
        .references
        .iter()
        .enumerate()
        .map(|(index, reference)| {
            let field = super::ident(&reference.field);
            let target = api
                .resource(&reference.target)
                .expect("references are resolved in the model");
            let store = StoreMethods::called_by(scope, api, target, service);
            let read = store.call(&store.get, quote!(&resource.#field));
            let index = proc_macro2::Literal::usize_unsuffixed(index);
            let resolve = quote! {
                standard::resolve_reference(
                    &self.context,
                    &request.parent,
                    &<#ty as Resource>::REFERENCES[#index],
                    &resource.#field,
                    #read,
                )
                .await?
            };
            match &reference.grants {
                // The target is needed afterwards, for the capabilities it confers.
                Some(_) => quote! {
                    let #field = match #resolve {
                        Ok(target) => Some(target),
                        Err(violation) => {
                            violations.push(violation);
                            None
                        }
                    };
                },
                None => quote! {
                    if let Err(violation) = #resolve {
                        violations.push(violation);
                    }
                },
            }
        });
    let grants = resource.references.iter().filter_map(|reference| {
        let field = super::ident(&reference.field);
        let granted = super::ident(reference.grants.as_ref()?);
        Some(quote! {
            if let Some(#field) = &#field {
                self.context
                    .require_held(caller, &request.parent, #field.#granted.iter().map(String::as_str))
                    .await?;
            }
        })
    });
    Some(quote! {
        let mut violations = Vec::new();
        #(#resolved)*
        if !violations.is_empty() {
            return Err(Error::invalid_fields(violations));
        }
        #(#grants)*
    })
}
