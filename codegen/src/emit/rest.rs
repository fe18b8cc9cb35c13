//! The axum router of each service: every `google.api.http` rule becomes a
//! route whose handler assembles the request message from the path, the query
//! and the body, and calls the same service method gRPC calls.
//!
//! Rules whose templates share a literal prefix share one axum route (axum
//! does not allow two capture names at one position), with one method router
//! per verb. A trailing `{x=**}` also matches no segments at all, so its
//! prefix with a trailing slash is routed too.
//!
//! Handlers of a resource's standard methods speak entity-tags
//! (`runtime::rest::conditional`): Get, Create and Update answer with the
//! resource's `ETag`, Get honours `If-None-Match` and `If-Match`, Update and
//! Delete take `If-Match` as the request's etag, and routes of earlier
//! versions (views without an etag) refuse `If-Match`.

use std::collections::BTreeMap;

use heck::{ToLowerCamelCase, ToSnakeCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::service::{api_name, store_bounds};
use crate::model::{Api, Method, Service, Standard};

pub fn emit(scope: &super::Scope, api: &Api, service: &Service) -> TokenStream {
    let api_type = api_name(service);
    let bounds = store_bounds(scope, api, service);
    let routes_fn = format_ident!("{}_routes", service.name.to_snake_case());
    let module = format_ident!("{}_rest", service.name.to_snake_case());

    // axum path -> handlers (verb routing fn, handler name), in a stable order.
    let mut routes: BTreeMap<String, Vec<(&str, syn::Ident)>> = BTreeMap::new();
    // A trailing `{x=**}` may match nothing: the bare collection path is the
    // same request (`POST /v1/shelves` creates at the root), unless another
    // method of the same verb owns that path.
    let mut bare = Vec::new();
    for method in &service.methods {
        let template = &method.http.template;
        let handler = format_ident!("{}", method.rust_name());
        let verb = method.http.verb.routing_fn();
        let prefix = template.prefix();
        let mut paths = Vec::new();
        match &template.variable {
            None => paths.push(prefix),
            Some(variable) if variable.multi_segment => {
                paths.push(format!("{prefix}/"));
                paths.push(format!("{prefix}/{{*path}}"));
                bare.push((prefix, verb, handler.clone()));
            }
            Some(_) => paths.push(format!("{prefix}/{{segment}}")),
        }
        for path in paths {
            routes
                .entry(path)
                .or_default()
                .push((verb, handler.clone()));
        }
    }
    for (path, verb, handler) in bare {
        let handlers = routes.entry(path).or_default();
        if !handlers.iter().any(|(taken, _)| *taken == verb) {
            handlers.push((verb, handler));
        }
    }
    let route_calls = routes.iter().map(|(path, handlers)| {
        let mut chain = handlers.iter().map(|(verb, handler)| {
            let verb = format_ident!("{}", verb);
            quote!(#verb(#module::#handler::<S>))
        });
        let first = chain.next().expect("a route has a handler");
        quote!(.route(#path, routing::#first #(.#chain)*))
    });
    let handlers = service.methods.iter().map(|method| {
        if method.media.is_plain() {
            emit_handler(scope, &api_type, &bounds, method)
        } else {
            super::rest_media::emit_handler(scope, &api_type, &bounds, method)
        }
    });
    let etags: Vec<Etags> = service.methods.iter().map(Etags::of).collect();
    let mut extractors = vec![quote!(RestRequest)];
    let untagged =
        |(method, etags): (&Method, &Etags)| method.output != "()" && !etags.tags_answer();
    if service.methods.iter().zip(&etags).any(untagged) {
        extractors.insert(0, quote!(Json));
    }
    if service.methods.iter().any(|m| m.http.body.is_some()) {
        extractors.insert(0, quote!(Body));
    }
    if etags.iter().any(Etags::reads_headers) {
        extractors.push(quote!(Preconditions));
    }
    if etags.iter().any(Etags::tags_answer) {
        extractors.push(quote!(Tagged));
    }
    if service
        .methods
        .iter()
        .any(|m| m.http.template.variable.is_some())
    {
        extractors.push(quote!(PathTail));
    }
    // Streaming and raw handlers (`rest_media`) name what they use in full.
    let media_imports = service
        .methods
        .iter()
        .any(|m| !m.media.is_plain())
        .then(|| quote!(#[allow(unused_imports)]));
    let doc = format!(
        " REST routes of `{}`, one per `google.api.http` rule, calling `api`.",
        service.full_name
    );
    quote! {
        #[doc = #doc]
        pub fn #routes_fn<S: #bounds>(api: #api_type<S>) -> axum::Router {
            use axum::routing;
            axum::Router::new()
                #(#route_calls)*
                .with_state(api)
        }

        mod #module {
            use super::*;
            use axum::extract::{RawQuery, State};
            #media_imports
            use runtime::rest::{#(#extractors),*};

            #(#handlers)*
        }
    }
}

/// What a handler does with entity-tags (`runtime::rest::conditional`).
pub(super) enum Etags {
    /// Nothing: the method answers no resource (List, custom methods).
    None,
    /// Get: `If-Match` / `If-None-Match` decide the answer, tagged.
    Answer,
    /// Create: the answer is tagged.
    Tag,
    /// Update and Delete (no answer to tag): `If-Match` is the request's
    /// etag, the field at this JSON path (`group.etag`, or `etag` when the
    /// request is the resource or a Delete's).
    IfMatch { etag_field: String, tagged: bool },
    /// A view of an earlier version, or a resource or Delete request
    /// without an etag: `If-Match` is refused.
    Refuse,
}

impl Etags {
    pub(super) fn of(method: &Method) -> Self {
        let legacy = method.view.is_some();
        match &method.standard {
            Standard::Update { .. } | Standard::Delete { .. } if legacy || !method.takes_etag() => {
                Etags::Refuse
            }
            _ if legacy => Etags::None,
            Standard::Get { .. } => Etags::Answer,
            Standard::Create { .. } => Etags::Tag,
            Standard::Update { body_field, .. } if body_field.is_empty() => Etags::IfMatch {
                etag_field: "etag".to_owned(),
                tagged: true,
            },
            Standard::Update { body_field, .. } => Etags::IfMatch {
                etag_field: format!("{}.etag", body_field.to_lower_camel_case()),
                tagged: true,
            },
            Standard::Delete { .. } => Etags::IfMatch {
                etag_field: "etag".to_owned(),
                tagged: false,
            },
            Standard::List { .. } | Standard::BatchGet { .. } | Standard::Custom => Etags::None,
        }
    }

    /// Whether the handler reads `If-Match` (and, for Get, `If-None-Match`).
    pub(super) fn reads_headers(&self) -> bool {
        !matches!(self, Etags::None | Etags::Tag)
    }

    /// Whether the answer carries the resource's `ETag`.
    pub(super) fn tags_answer(&self) -> bool {
        matches!(
            self,
            Etags::Answer | Etags::Tag | Etags::IfMatch { tagged: true, .. }
        )
    }
}

fn emit_handler(
    scope: &super::Scope,
    api_type: &syn::Ident,
    bounds: &TokenStream,
    method: &Method,
) -> TokenStream {
    let name = format_ident!("{}", method.rust_name());
    let input = scope.path(&method.input);
    let etags = Etags::of(method);
    let (output, answer) = if method.output == "()" {
        (
            quote!(runtime::rest::Empty),
            quote!(.map(|()| runtime::rest::Empty)),
        )
    } else {
        let output = scope.path(&method.output);
        match etags {
            Etags::Answer => (
                quote!(Tagged<#output>),
                quote!(.and_then(|item| preconditions.answer(item))),
            ),
            _ if etags.tags_answer() => (quote!(Tagged<#output>), quote!(.map(Tagged::new))),
            _ => (quote!(Json<#output>), quote!(.map(Json))),
        }
    };
    let mut extractors = vec![
        quote!(State(api): State<#api_type<S>>),
        quote!(caller: Caller),
    ];
    let mut steps = vec![quote!(.query(query.as_deref()))];
    if let Some(variable) = &method.http.template.variable {
        extractors.push(quote!(PathTail(path): PathTail));
        let field = &variable.field;
        steps.push(quote!(.path(#field, path)));
    }
    extractors.push(quote!(RawQuery(query): RawQuery));
    if etags.reads_headers() {
        extractors.push(quote!(preconditions: Preconditions));
    }
    if let Some(body) = &method.http.body {
        extractors.push(quote!(Body(body): Body));
        let body = if body == "*" {
            body.clone()
        } else {
            body.to_lower_camel_case()
        };
        steps.push(quote!(.body(#body, &body)));
    }
    match &etags {
        Etags::IfMatch { etag_field, .. } => {
            steps.push(quote!(.if_match(&preconditions, #etag_field)));
        }
        Etags::Refuse => steps.push(quote!(.without_etags(&preconditions))),
        Etags::None | Etags::Answer | Etags::Tag => {}
    }
    let doc = format!(
        " `{} {}`",
        format!("{:?}", method.http.verb).to_uppercase(),
        method.http.template.source
    );
    quote! {
        #[doc = #doc]
        pub(super) async fn #name<S: #bounds>(#(#extractors),*) -> Result<#output, Error> {
            let request: #input = RestRequest::new::<#input>()
                #(#steps)*
                .decode()
                .map_err(|error| error.in_domain(#api_type::<S>::DOMAIN))?;
            api.#name(&caller, request)
                .await
                #answer
                .map_err(|error| error.in_domain(#api_type::<S>::DOMAIN))
        }
    }
}
