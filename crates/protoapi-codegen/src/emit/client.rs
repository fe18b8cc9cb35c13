//! Typed clients over gRPC or REST/JSON, from the same service definitions.
//!
//! - In each package's API file, module `client`: one struct per service
//!   (`client::GroupService`) over a `protoapi_runtime::client::Connection`, one
//!   `async fn` per RPC. Standard methods take their short names (`create`,
//!   `get`, `list`, `update`, `delete`); a token-paged list also gets
//!   `list_pages` and `list_stream`, which walk `next_page_token` to the end.
//!   Each RPC's transports are one `protoapi_runtime::client::Route` constant.
//! - In the crate root ([`FILE`]): `Client`, every service of the API over
//!   one connection, reached by collection (`client.groups()`).

use heck::ToShoutySnakeCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::shared::{accessors, has_client, method_names, runtime_template};
use crate::model::{
    Api, HTTP_BODY_PATH, Method, Package, Paging, RawRequest, Service, Standard, package_module,
};

/// The file the crate root includes.
pub const FILE: &str = "client.rs";

/// The `client` module of one package's API file (empty without services).
pub fn emit_package(scope: &super::Scope, api: &Api, package: &Package) -> TokenStream {
    let served: Vec<&Service> = package.services.iter().filter(|s| has_client(s)).collect();
    if served.is_empty() {
        return TokenStream::new();
    }
    let scope = scope.nested();
    let services = served.into_iter().map(|s| emit_service(&scope, api, s));
    let doc = format!(
        " Clients of the services of `{}`, over gRPC or REST/JSON.",
        package.name
    );
    // Methods on other packages' messages only name none of this one's.
    let own_messages = api.messages.iter().any(|m| m.package == package.name);
    let allow = (!own_messages).then(|| quote!(#[allow(unused_imports)]));
    quote! {
        #[doc = #doc]
        #[cfg(feature = "client")]
        pub mod client {
            #allow
            use super::*;
            use ::protoapi_runtime::__private::client::{Connection, Route};

            #(#services)*
        }
    }
}

fn emit_service(scope: &super::Scope, api: &Api, service: &Service) -> TokenStream {
    let name = format_ident!("{}", service.name);
    let names = method_names(service);
    // Client- and bidirectional-streaming methods are called through
    // tonic's generated client (`<service>_client`).
    let methods = service
        .methods
        .iter()
        .zip(&names)
        .filter(|(method, _)| !method.media.client_streaming)
        .map(|(method, name)| emit_method(scope, api, service, method, name));
    let doc = format!(
        " A client of `{}` over the connection's transport: one method per RPC, standard methods named by their verb (`get`, `list`, ...).",
        service.full_name
    );
    let comments = super::docs(&service.comments);
    quote! {
        #[doc = #doc]
        #[doc = ""]
        #comments
        #[derive(Clone, Debug)]
        pub struct #name {
            connection: Connection,
        }

        impl #name {
            pub fn new(connection: Connection) -> Self {
                #name { connection }
            }

            #(#methods)*
        }
    }
}

/// The `Route::http` of `method`, and how it is served, for its doc.
fn http_rule(method: &Method) -> (TokenStream, String) {
    let Some(http) = &method.http else {
        return (quote!(None), "gRPC only".to_owned());
    };
    let verb = format!("{:?}", http.verb).to_uppercase();
    let served = format!("`{verb} {}`", http.template.source);
    let template = runtime_template(
        &http.template,
        quote!(::protoapi_runtime::__private::rest::template::),
    );
    let body = match &http.body {
        Some(body) => quote!(Some(#body)),
        None => quote!(None),
    };
    let response_body = match &http.response_body {
        Some(field) => quote!(Some(#field)),
        None => quote!(None),
    };
    let rule = quote! {
        Some(::protoapi_runtime::__private::client::HttpRule {
            verb: #verb,
            template: #template,
            body: #body,
            response_body: #response_body,
        })
    };
    (rule, served)
}

fn emit_method(
    scope: &super::Scope,
    api: &Api,
    service: &Service,
    method: &Method,
    name: &str,
) -> TokenStream {
    let route = format_ident!("{}", method.name.to_shouty_snake_case());
    let grpc_path = format!("/{}/{}", service.full_name, method.name);
    let input = scope.path(&method.input);
    let answer = super::shared::answer_type(scope, method);
    let call = emit_call(scope, method, &route);
    let fn_name = super::ident(name);
    let (http, served) = http_rule(method);
    let doc = format!(" `{}` ({served}).", method.name);
    let comments = super::docs(&method.comments);
    let paged = matches!(
        method.standard,
        Standard::List {
            paging: Paging::Token,
            ..
        }
    )
    .then(|| emit_pager(scope, api, method, name));
    let waiting = emit_wait(scope, method, name);
    let route_doc = format!(
        " Where `{}` is served: its gRPC path and HTTP rule.",
        method.name
    );
    quote! {
        #[doc = #route_doc]
        pub const #route: Route = Route {
            grpc_path: #grpc_path,
            http: #http,
        };

        #[doc = #doc]
        #[doc = ""]
        #comments
        pub async fn #fn_name(&self, request: #input) -> Result<#answer, ::protoapi_runtime::__private::Error> {
            #call
        }

        #paged

        #waiting
    }
}

/// `<name>_and_wait` beside a method answering an operation (AIP-151):
/// the operation polled until done, and what it made.
fn emit_wait(scope: &super::Scope, method: &Method, name: &str) -> Option<TokenStream> {
    let long_running = method.long_running.as_ref()?;
    let input = scope.path(&method.input);
    let response = scope.path(&long_running.response);
    // The operations' package: where `Operation` is, its client beside it.
    let package = method
        .output
        .rsplit_once("::")
        .map_or("", |(package, _)| package);
    let operations = scope.path(&format!("{package}::client::Operations"));
    let get = scope.path(&format!("{package}::GetOperationRequest"));
    let call = super::ident(name);
    let wait = format_ident!("{name}_and_wait");
    let doc = format!(
        " [`Self::{name}`], then its operation read again (with backoff) until done: \
         what it made, or the error it ended with."
    );
    Some(quote! {
        #[doc = #doc]
        pub async fn #wait(&self, request: #input) -> Result<#response, ::protoapi_runtime::__private::Error> {
            let operation = self.#call(request).await?;
            let operations = #operations::new(self.connection.clone());
            let get = |name| operations.get_operation(#get { name });
            let done = ::protoapi_runtime::__private::operation::wait(operation, get).await?;
            ::protoapi_runtime::__private::operation::response(done)
        }
    })
}

/// The call of `route`: a server stream is read as it arrives (gRPC
/// messages, NDJSON lines, raw chunks); `google.api.HttpBody` bodies are sent
/// and read raw over REST (`protoapi_runtime::client::RawBodies`).
fn emit_call(scope: &super::Scope, method: &Method, route: &syn::Ident) -> TokenStream {
    let media = &method.media;
    let (call, call_with) = match media.server_streaming {
        true => (quote!(stream), quote!(stream_with)),
        false => (quote!(call), quote!(call_with)),
    };
    if media.raw_request.is_none() && !media.raw_response {
        return quote!(self.connection.#call(&Self::#route, request).await);
    }
    let input = scope.path(&method.input);
    let http_body = scope.path(HTTP_BODY_PATH);
    let take = match &media.raw_request {
        Some(RawRequest::Whole) => quote! {
            Some(|request: &mut #input| {
                let body = std::mem::take(request);
                Some((body.content_type, body.data))
            })
        },
        Some(RawRequest::Field(field)) => {
            let field = super::ident(field);
            quote! {
                Some(|request: &mut #input| {
                    // REST has no absent body: none is an empty one.
                    let body = request.#field.take().unwrap_or_default();
                    Some((body.content_type, body.data))
                })
            }
        }
        None => quote!(None),
    };
    let build = match media.raw_response {
        true => quote! {
            Some(|content_type, data| #http_body { content_type, data, extensions: Vec::new() })
        },
        false => quote!(None),
    };
    quote! {
        let raw = ::protoapi_runtime::__private::client::RawBodies { request: #take, response: #build };
        self.connection.#call_with(&Self::#route, request, raw).await
    }
}

/// `list_pages` and `list_stream` beside a token-paged `list`.
fn emit_pager(scope: &super::Scope, api: &Api, method: &Method, name: &str) -> TokenStream {
    let input = scope.path(&method.input);
    let output = scope.path(&method.output);
    let resource = method
        .standard
        .resource()
        .and_then(|r| api.resource(r))
        .map(|r| scope.path(&r.rust_path))
        .expect("a list method lists a resource");
    let list = super::ident(name);
    let items = super::ident(&method.list_shape().items);
    let pages = format_ident!("{name}_pages");
    let stream = format_ident!("{name}_stream");
    let pages_doc = format!(
        " Every page of `{}`, from `request`'s page on, fetched as the stream is read.",
        method.name
    );
    let stream_doc = format!(
        " Every item of `{}`, from `request`'s page to the end, fetched page by page as the stream is read.",
        method.name
    );
    quote! {
        #[doc = #pages_doc]
        pub fn #pages(
            &self,
            request: #input,
        ) -> impl ::protoapi_runtime::__private::futures_util::Stream<Item = Result<#output, ::protoapi_runtime::__private::Error>> + '_ {
            ::protoapi_runtime::__private::client::pages(
                request,
                move |request| self.#list(request),
                |request, token| request.page_token = token,
                |page| &page.next_page_token,
            )
        }

        #[doc = #stream_doc]
        pub fn #stream(
            &self,
            request: #input,
        ) -> impl ::protoapi_runtime::__private::futures_util::Stream<Item = Result<#resource, ::protoapi_runtime::__private::Error>> + '_ {
            ::protoapi_runtime::__private::client::items(
                request,
                move |request| self.#list(request),
                |request, token| request.page_token = token,
                |page| &page.next_page_token,
                |page| page.#items,
            )
        }
    }
}

/// The crate root's `Client`.
pub fn emit_root(api: &Api) -> TokenStream {
    let accessors = accessors(api)
        .into_iter()
        .map(|(name, (package, service))| {
            let accessor = super::ident(&name);
            let module = package_module(package);
            let ty = super::path(&format!("{module}::client::{}", service.name));
            let doc = format!(" `{}`.", service.full_name);
            quote! {
                #[doc = #doc]
                pub fn #accessor(&self) -> #ty {
                    #ty::new(self.connection.clone())
                }
            }
        });
    quote! {
        /// Every service of the API over one connection (gRPC or REST/JSON),
        /// reached by the collection it serves: `client.groups().list(request)`.
        #[derive(Clone, Debug)]
        pub struct Client {
            connection: ::protoapi_runtime::__private::client::Connection,
        }

        impl Client {
            pub fn new(connection: ::protoapi_runtime::__private::client::Connection) -> Self {
                Client { connection }
            }

            /// The connection every service client shares.
            pub fn connection(&self) -> &::protoapi_runtime::__private::client::Connection {
                &self.connection
            }

            #(#accessors)*
        }
    }
}
