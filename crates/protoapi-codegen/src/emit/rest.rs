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
//! (`protoapi_runtime::rest::conditional`): Get, Create and Update answer with the
//! resource's `ETag`, Get honours `If-None-Match` and `If-Match`, Update and
//! Delete take `If-Match` as the request's etag, and routes of earlier
//! versions (views without an etag) refuse `If-Match`.

mod media;

use std::collections::BTreeMap;

use heck::{ToLowerCamelCase, ToSnakeCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::shared::{Etags, api_name, store_bounds};
use crate::model::{Api, HttpRule, Method, Service};

pub fn emit(scope: &super::Scope, api: &Api, service: &Service) -> TokenStream {
    let api_type = api_name(service);
    let bounds = store_bounds(scope, api, service);
    let routes_fn = format_ident!("{}_routes", service.name.to_snake_case());
    let module = format_ident!("{}_rest", service.name.to_snake_case());

    let [route_lets, route_calls, matched_calls] = route_calls(service, &module);
    let bindings: Vec<(&Method, usize, &HttpRule, Etags)> = service
        .methods
        .iter()
        .flat_map(|method| {
            method.bindings().enumerate().map(move |(index, binding)| {
                (method, index, binding, Etags::of_binding(method, binding))
            })
        })
        .collect();
    // The handlers live in a module of their own, one level down.
    let inner = scope.nested();
    let handlers = bindings.iter().map(|(method, index, binding, etags)| {
        let name = handler_name(method, *index);
        if method.media.is_plain() {
            emit_handler(&inner, (&api_type, &bounds), method, (binding, etags), name)
        } else {
            media::emit_handler(&inner, (&api_type, &bounds), method, binding, name)
        }
    });
    let extractors = extractors(&bindings);
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
    // The router takes the last handle on `api` unless bindings follow.
    let api_clone = super::shared::clone_api(service, quote!(api));
    let routes = if matched_calls.is_empty() {
        quote! {
            axum::Router::new()
                #(#route_calls)*
                .with_state(api)
                .into()
        }
    } else if route_calls.is_empty() {
        // Every binding is matched at run time: no axum router to build.
        quote! {
            ::protoapi_runtime::__private::rest::ServiceRoutes::default()
                #(#matched_calls)*
        }
    } else {
        quote! {
            let router = axum::Router::new()
                #(#route_calls)*
                .with_state(#api_clone);
            ::protoapi_runtime::__private::rest::ServiceRoutes::new(router)
                #(#matched_calls)*
        }
    };
    let matched_imports = (!matched_calls.is_empty()).then(|| {
        let variables = service
            .methods
            .iter()
            .flat_map(|m| m.bindings())
            .any(|b| b.matched_prefix.is_some() && !b.template.variables.is_empty());
        let variable = variables.then(|| quote!(, Variable));
        quote! {
            use ::protoapi_runtime::__private::rest::template::{Binding, Segment, Template #variable};
        }
    });
    let routing_import = (!route_calls.is_empty()).then(|| {
        quote!(
            use axum::routing;
        )
    });
    // Each handler's answers name its binding's template (`RouteTemplate`).
    let handler_import = (!bindings.is_empty()).then(|| {
        quote!(
            use axum::handler::Handler as _;
            use ::protoapi_runtime::__private::rest::RouteTemplate;
        )
    });
    // A service whose methods are all gRPC-only has no handlers.
    let handlers_module = (!bindings.is_empty()).then(|| {
        quote! {
            mod #module {
                use super::*;
                use axum::extract::{RawQuery, State};
                #media_imports
                use ::protoapi_runtime::__private::rest::{#(#extractors),*};

                #(#handlers)*
            }
        }
    });
    quote! {
        #[doc = #doc]
        pub fn #routes_fn<S: #bounds>(api: #api_type<S>) -> ::protoapi_runtime::__private::rest::ServiceRoutes {
            #handler_import
            #routing_import
            #matched_imports
            #(#route_lets)*
            #routes
        }

        #handlers_module
    }
}

/// The method routers bound before the router (`let under_0 = …;`), the
/// router's `.route` calls (axum routes: literal prefix, then `{segment}`
/// or `{*path}`) and the `.matched` calls of the bindings matched at run
/// time under the prefix `model::routes` chose.
fn route_calls(service: &Service, module: &syn::Ident) -> [Vec<TokenStream>; 3] {
    // axum path -> handlers (verb routing fn, handler name, template), in a
    // stable order.
    let mut routes: BTreeMap<String, Vec<(&str, syn::Ident, &str)>> = BTreeMap::new();
    // A trailing `{x=**}` may match nothing: the bare collection path is the
    // same request (`POST /v1/shelves` creates at the root), unless another
    // method of the same verb owns that path.
    let mut bare = Vec::new();
    let mut matched = Vec::new();
    for method in &service.methods {
        for (index, binding) in method.bindings().enumerate() {
            let handler = handler_name(method, index);
            let template = &binding.template;
            let source = template.source.as_str();
            if let Some(prefix) = &binding.matched_prefix {
                let verb = binding.verb.method();
                let template = super::shared::runtime_template(template, quote!());
                matched.push((prefix, verb, template, handler, source));
                continue;
            }
            let verb = binding.verb.routing_fn();
            let prefix = template.prefix();
            let mut paths = Vec::new();
            match template.axum_shape() {
                None | Some(None) => paths.push(prefix),
                Some(Some((_, true))) => {
                    paths.push(format!("{prefix}/"));
                    paths.push(format!("{prefix}/{{*path}}"));
                    bare.push((prefix, verb, handler.clone(), source));
                }
                Some(Some((_, false))) => paths.push(format!("{prefix}/{{segment}}")),
            }
            for path in paths {
                routes
                    .entry(path)
                    .or_default()
                    .push((verb, handler.clone(), source));
            }
        }
    }
    for (path, verb, handler, source) in bare {
        let handlers = routes.entry(path).or_default();
        if !handlers.iter().any(|(taken, ..)| *taken == verb) {
            handlers.push((verb, handler, source));
        }
    }
    let method_router = |handlers: &[(&str, syn::Ident, &str)]| {
        let mut chain = handlers.iter().map(|(verb, handler, source)| {
            let verb = format_ident!("{}", verb);
            quote!(#verb(#module::#handler::<S>.layer(RouteTemplate(#source))))
        });
        let first = chain.next().expect("a route has a handler");
        quote!(routing::#first #(.#chain)*)
    };
    // `/x/` and `/x/{*path}` serve the same handlers (axum's wildcard
    // matches no empty tail): one method router, bound once, serves both.
    let mut lets = Vec::new();
    let mut names = Vec::new();
    let mut route_calls = Vec::new();
    for (path, handlers) in &routes {
        if let Some(slash) = path.strip_suffix("{*path}")
            && routes.get(slash) == Some(handlers)
        {
            let name = under_name(slash, &names);
            names.push(name.to_string());
            let router = method_router(handlers);
            lets.push(quote!(let #name = #router;));
            // `/x/` sorts before `/x/{*path}`: its call is already made.
            let slash_call = route_calls
                .iter_mut()
                .rev()
                .find(|(taken, _)| *taken == slash)
                .expect("the slash route comes first");
            slash_call.1 = quote!(.route(#slash, #name.clone()));
            route_calls.push((path.as_str(), quote!(.route(#path, #name))));
        } else {
            let router = method_router(handlers);
            route_calls.push((path.as_str(), quote!(.route(#path, #router))));
        }
    }
    let route_calls = route_calls.into_iter().map(|(_, call)| call).collect();
    // The last binding takes the last handle on `api`.
    let last = matched.len().saturating_sub(1);
    let matched = matched
        .into_iter()
        .enumerate()
        .map(|(index, (prefix, verb, template, handler, source))| {
            let api = if index == last {
                quote!(api)
            } else {
                super::shared::clone_api(service, quote!(api))
            };
            quote! {
                .matched(
                    #prefix,
                    Binding { method: #verb, template: #template },
                    #module::#handler::<S>.layer(RouteTemplate(#source)).with_state(#api),
                )
            }
        })
        .collect();
    [lets, route_calls, matched]
}

/// The name of the method router of the paths under `slash` (`/v1/shelves/`
/// → `under_shelves`), numbered when one of `taken` has it.
fn under_name(slash: &str, taken: &[String]) -> syn::Ident {
    let last = slash
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let stem: String = (last.to_snake_case().chars())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let name = format!("under_{stem}");
    if taken.contains(&name) {
        format_ident!("{name}_{}", taken.len())
    } else {
        format_ident!("{name}")
    }
}

/// What the handlers of `bindings` import from `protoapi_runtime::rest`.
fn extractors(bindings: &[(&Method, usize, &HttpRule, Etags)]) -> Vec<TokenStream> {
    let mut extractors = vec![quote!(RestRequest)];
    let answers = |(method, _, binding, etags): &&(&Method, usize, &HttpRule, Etags)| {
        method.output != "()" && binding.response_body.is_none() && !etags.tags_answer()
    };
    if bindings.iter().any(|b| answers(&b)) {
        extractors.insert(0, quote!(Json));
    }
    if bindings.iter().any(|(_, _, b, _)| b.body.is_some()) {
        extractors.insert(0, quote!(Body));
    }
    if bindings.iter().any(|(_, _, _, e)| e.reads_headers()) {
        extractors.push(quote!(Preconditions));
    }
    if bindings.iter().any(|(_, _, _, e)| e.tags_answer()) {
        extractors.push(quote!(Tagged));
    }
    let axum_variable =
        |b: &HttpRule| b.matched_prefix.is_none() && !b.template.variables.is_empty();
    if bindings.iter().any(|(_, _, b, _)| axum_variable(b)) {
        extractors.push(quote!(PathTail));
    }
    if bindings
        .iter()
        .any(|(_, _, b, _)| b.matched_prefix.is_some())
    {
        extractors.push(quote!(PathVars));
    }
    if bindings
        .iter()
        .any(|(m, _, b, _)| m.output != "()" && b.response_body.is_some())
    {
        extractors.push(quote!(ResponseField));
    }
    extractors
}

/// The handler of a method's binding `index` (0: its rule itself).
fn handler_name(method: &Method, index: usize) -> syn::Ident {
    if index == 0 {
        format_ident!("{}", method.rust_name())
    } else {
        format_ident!("{}_binding_{index}", method.name.to_snake_case())
    }
}

fn emit_handler(
    scope: &super::Scope,
    (api_type, bounds): (&syn::Ident, &TokenStream),
    method: &Method,
    (binding, etags): (&HttpRule, &Etags),
    name: syn::Ident,
) -> TokenStream {
    let call = format_ident!("{}", method.rust_name());
    let input = scope.path(&method.input);
    let (output, answer) = if method.output == "()" {
        (
            quote!(::protoapi_runtime::__private::rest::Empty),
            quote!(.map(|()| ::protoapi_runtime::__private::rest::Empty)),
        )
    } else {
        let output = scope.path(&method.output);
        match (etags, &binding.response_body) {
            (_, Some(field)) => (
                quote!(ResponseField<#output>),
                quote!(.map(|answer| ResponseField(answer, #field))),
            ),
            (Etags::Answer, None) => (
                quote!(Tagged<#output>),
                // The preconditions' own refusal (412) is the service's too.
                quote!(.and_then(|item| {
                    preconditions
                        .answer(item)
                        .map_err(|error| error.in_domain(#api_type::<S>::DOMAIN))
                })),
            ),
            _ if etags.tags_answer() => (quote!(Tagged<#output>), quote!(.map(Tagged::new))),
            _ => (quote!(Json<#output>), quote!(.map(Json))),
        }
    };
    let mut extractors = vec![
        quote!(State(api): State<#api_type<S>>),
        quote!(caller: Caller),
    ];
    let mut steps = vec![media::query_step(method, binding)];
    let matched = binding.matched_prefix.is_some();
    if matched {
        extractors.push(quote!(path: PathVars));
    } else if let Some(Some((variable, _))) = binding.template.axum_shape() {
        extractors.push(quote!(PathTail(path): PathTail));
        let field = &variable.field;
        steps.push(quote!(.path(#field, path)));
    }
    extractors.push(quote!(RawQuery(query): RawQuery));
    if etags.reads_headers() {
        extractors.push(quote!(preconditions: Preconditions));
    }
    if let Some(body) = &binding.body {
        extractors.push(quote!(Body(body): Body));
        let body = if body == "*" {
            body.clone()
        } else {
            body.to_lower_camel_case()
        };
        steps.push(quote!(.body(#body, &body)));
    }
    if matched {
        // After the body: what the path names, the body does not redirect.
        steps.push(quote!(.path_vars(path)));
    }
    match etags {
        Etags::IfMatch { etag_field, .. } => {
            steps.push(quote!(.if_match(&preconditions, #etag_field)));
        }
        Etags::Refuse => steps.push(quote!(.without_etags(&preconditions))),
        Etags::None | Etags::Answer | Etags::Tag => {}
    }
    let doc = format!(" `{} {}`", binding.verb.method(), binding.template.source);
    quote! {
        #[doc = #doc]
        pub(super) async fn #name<S: #bounds>(#(#extractors),*) -> Result<#output, Error> {
            let request: #input = RestRequest::new::<#input>()
                #(#steps)*
                .decode()
                .map_err(|error| error.in_domain(#api_type::<S>::DOMAIN))?;
            api.#call(&caller, request).await #answer
        }
    }
}
