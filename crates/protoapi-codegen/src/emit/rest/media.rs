//! REST handlers of methods whose bodies are not one JSON message each
//! (`model::Media`): server streams, answered as NDJSON or Server-Sent
//! Events (`protoapi_runtime::rest::stream`), and `google.api.HttpBody` requests and
//! responses, read and answered raw (`protoapi_runtime::rest::http_body`).
//!
//! The request is bound as the JSON handlers bind it (query, path variable,
//! JSON body), except that a raw body fills the `HttpBody` field the rule's
//! `body` names, or is the whole request.

use heck::ToLowerCamelCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::{HTTP_BODY_PATH, HttpRule, Method, RawRequest};

/// How a handler (JSON or not) binds the query string: as fields, or, under `body: "*"`
/// (the body holds every field the path does not), not at all; the earlier
/// versions' routes keep accepting parameters as they did.
pub(super) fn query_step(method: &Method, binding: &HttpRule) -> TokenStream {
    match binding.body.as_deref() {
        Some("*") if method.view.is_none() => quote!(.no_query(query.as_deref())),
        _ => quote!(.query(query.as_deref())),
    }
}

/// The handler `name` of `binding` (one of `method`'s HTTP rules).
pub fn emit_handler(
    scope: &crate::emit::Scope,
    (api_type, bounds): (&syn::Ident, &TokenStream),
    method: &Method,
    binding: &HttpRule,
    name: syn::Ident,
) -> TokenStream {
    let call = format_ident!("{}", method.rust_name());
    let domain = quote!(#api_type::<S>::DOMAIN);
    let (extractors, request) = bind_request(scope, method, binding, &domain);
    let call = quote! {
        api.#call(&caller, request).await?
    };
    let answer = match method.output.as_str() {
        "()" => quote! {
            #call;
            Ok(axum::response::IntoResponse::into_response(::protoapi_runtime::__private::rest::Empty))
        },
        _ => {
            let answer = answer(method, &domain);
            quote! {
                let answer = #call;
                #answer
            }
        }
    };
    // Only a stream of messages reads `Accept` (NDJSON or events).
    let headers = (method.media.server_streaming && !method.media.raw_response)
        .then(|| quote!(headers: ::protoapi_runtime::__private::http::HeaderMap,));
    let doc = format!(" `{} {}`", binding.verb.method(), binding.template.source);
    quote! {
        #[doc = #doc]
        pub(super) async fn #name<S: #bounds>(
            State(api): State<#api_type<S>>,
            caller: Caller,
            #headers
            #(#extractors),*
        ) -> Result<axum::response::Response, Error> {
            #request
            #answer
        }
    }
}

/// The extractors after the common ones, and the statements binding
/// `request`.
fn bind_request(
    scope: &crate::emit::Scope,
    method: &Method,
    binding: &HttpRule,
    domain: &TokenStream,
) -> (Vec<TokenStream>, TokenStream) {
    let input = scope.path(&method.input);
    let http_body = scope.path(HTTP_BODY_PATH);
    let raw_body = quote!(::protoapi_runtime::__private::rest::http_body::RawBody);
    let into_http_body = quote! {
        #http_body {
            content_type: raw.content_type,
            data: raw.data.into(),
            extensions: Vec::new(),
        }
    };
    if method.media.raw_request == Some(RawRequest::Whole) {
        return (
            vec![quote!(raw: #raw_body)],
            quote!(let request: #input = #into_http_body;),
        );
    }
    let mut extractors = Vec::new();
    let mut steps = vec![query_step(method, binding)];
    let matched = binding.matched_prefix.is_some();
    if matched {
        extractors.push(quote!(path: ::protoapi_runtime::__private::rest::PathVars));
    } else if let Some(Some((variable, _))) = binding.template.axum_shape() {
        extractors.push(quote!(::protoapi_runtime::__private::rest::PathTail(path): ::protoapi_runtime::__private::rest::PathTail));
        let field = &variable.field;
        steps.push(quote!(.path(#field, path)));
    }
    extractors.push(quote!(RawQuery(query): RawQuery));
    let mut fill = None;
    match (&method.media.raw_request, &binding.body) {
        (Some(RawRequest::Field(field)), _) => {
            extractors.push(quote!(raw: #raw_body));
            let field = crate::emit::ident(field);
            fill = Some(quote!(request.#field = Some(#into_http_body);));
        }
        (_, Some(body)) => {
            extractors.push(
                quote!(::protoapi_runtime::__private::rest::Body(body): ::protoapi_runtime::__private::rest::Body),
            );
            let body = if body == "*" {
                body.clone()
            } else {
                body.to_lower_camel_case()
            };
            steps.push(quote!(.body(#body, &body)));
        }
        (_, None) => {}
    }
    if matched {
        // After the body: what the path names, the body does not redirect.
        steps.push(quote!(.path_vars(path)));
    }
    let mutable = fill.as_ref().map(|_| quote!(mut));
    let request = quote! {
        let #mutable request: #input = ::protoapi_runtime::__private::rest::RestRequest::new::<#input>()
            #(#steps)*
            .decode()
            .map_err(|error| error.in_domain(#domain))?;
        #fill
    };
    (extractors, request)
}

/// The statements answering `answer`.
fn answer(method: &Method, domain: &TokenStream) -> TokenStream {
    let media = &method.media;
    match (media.server_streaming, media.raw_response) {
        (true, true) => quote! {
            use ::protoapi_runtime::__private::futures_util::StreamExt;
            let chunks = answer.map(|chunk| chunk.map(|body| (body.content_type, body.data)));
            ::protoapi_runtime::__private::rest::stream::respond_raw(Box::pin(chunks), #domain).await
        },
        (true, false) => quote! {
            ::protoapi_runtime::__private::rest::stream::respond(&headers, answer, #domain).await
        },
        (false, true) => quote! {
            ::protoapi_runtime::__private::rest::http_body::respond(&answer.content_type, answer.data)
        },
        (false, false) => quote! {
            Ok(axum::response::IntoResponse::into_response(::protoapi_runtime::__private::rest::Json(answer)))
        },
    }
}
