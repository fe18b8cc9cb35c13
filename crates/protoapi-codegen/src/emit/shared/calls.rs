//! How generated code calls and answers a method: its answer type, the
//! client's method and accessor names, the runtime's path templates, and
//! what a REST handler does with entity-tags.

use std::collections::BTreeMap;

use heck::{ToLowerCamelCase, ToSnakeCase};
use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Api, HttpRule, Method, Service, Standard};
use crate::template::{PathTemplate, Segment};

/// What a method answers its caller: the response, or for a server-streaming
/// method a `protoapi_runtime::stream::MessageStream` of responses.
pub fn answer_type(scope: &crate::emit::Scope, method: &Method) -> TokenStream {
    let output = scope.path(&method.output);
    if method.media.server_streaming {
        quote!(::protoapi_runtime::__private::stream::MessageStream<#output>)
    } else {
        output
    }
}

/// What a method's handler is called with: its request, or for a client-
/// or bidirectional-streaming method the stream of its requests.
pub fn request_type(scope: &crate::emit::Scope, method: &Method) -> TokenStream {
    let input = scope.path(&method.input);
    if method.media.client_streaming {
        quote!(::protoapi_runtime::__private::stream::MessageStream<#input>)
    } else {
        input
    }
}

/// Each method's client name: the standard method's verb when no other
/// method of the service takes it, else the RPC's own name.
pub fn method_names(service: &Service) -> Vec<String> {
    let short: Vec<Option<&str>> = service
        .methods
        .iter()
        .map(|m| match m.standard {
            Standard::Create { .. } => Some("create"),
            Standard::Get { .. } => Some("get"),
            Standard::List { .. } => Some("list"),
            Standard::Update { .. } => Some("update"),
            Standard::Delete { .. } => Some("delete"),
            Standard::Undelete { .. }
            | Standard::BatchGet { .. }
            | Standard::Operations
            | Standard::Policy(_)
            | Standard::Custom => None,
        })
        .collect();
    service
        .methods
        .iter()
        .zip(&short)
        .map(|(method, verb)| match verb {
            Some(verb) if short.iter().filter(|s| *s == &Some(*verb)).count() == 1 => {
                verb.to_string()
            }
            _ => method.rust_name(),
        })
        .collect()
}

/// Whether `service` has a method the generated client calls: a service of
/// client- and bidirectional-streaming methods only is called through
/// tonic's generated client alone.
pub fn has_client(service: &Service) -> bool {
    service.methods.iter().any(|m| !m.media.client_streaming)
}

/// Accessor name → (package, service). A service is reached by the
/// collection it serves (`groups`), else by its name without `Service`.
/// When packages share a name (`v1` and `v2` groups), the latest version
/// keeps it and the others are prefixed with their version (`v1_groups`).
pub fn accessors(api: &Api) -> BTreeMap<String, (&str, &Service)> {
    let mut by_name: BTreeMap<String, Vec<(&str, &Service)>> = BTreeMap::new();
    for package in &api.packages {
        for service in package.services.iter().filter(|s| has_client(s)) {
            let name = service
                .methods
                .iter()
                .filter_map(|m| api.resource(m.standard.resource()?))
                .map(|r| r.plural.to_snake_case())
                .find(|plural| !plural.is_empty())
                .unwrap_or_else(|| {
                    let name = service.name.to_snake_case();
                    name.strip_suffix("_service").unwrap_or(&name).to_owned()
                });
            // `Client`'s own methods keep their names: `connection_service`.
            let name = match name.as_str() {
                "connection" | "new" => service.name.to_snake_case(),
                _ => name,
            };
            by_name
                .entry(name)
                .or_default()
                .push((package.name.as_str(), service));
        }
    }
    let mut accessors = BTreeMap::new();
    for (name, services) in by_name {
        // Two services of one package reached by one collection name are
        // reached by their own names (`model_service`, `model_garden_service`),
        // but for the one service that reads the collection, which keeps it
        // (`repos` beside `repo_deletion_service`).
        let reads = |service: &Service| {
            (service.methods.iter())
                .any(|m| matches!(m.standard, Standard::Get { .. } | Standard::List { .. }))
        };
        let mut kept = Vec::new();
        for (package, service) in &services {
            let siblings: Vec<&Service> = (services.iter())
                .filter(|(other, _)| other == package)
                .map(|(_, s)| *s)
                .collect();
            let readers = siblings.iter().filter(|s| reads(s)).count();
            match siblings.len() == 1 || (readers == 1 && reads(service)) {
                true => kept.push((*package, *service)),
                false => {
                    accessors.insert(service.name.to_snake_case(), (*package, *service));
                }
            }
        }
        let mut services = kept;
        if services.is_empty() {
            continue;
        }
        // Latest version last: `v10` after `v2`.
        services.sort_by_key(|(package, _)| version_key(package));
        let latest = services.pop().expect("a name has a service");
        for (package, service) in services {
            let version = package.rsplit('.').next().unwrap_or(package);
            accessors.insert(
                format!("{}_{name}", version.to_snake_case()),
                (package, service),
            );
        }
        accessors.insert(name, latest);
    }
    accessors
}

/// A parsed template as the `protoapi_runtime::rest::template::Template` constant,
/// its types named after `path` (`protoapi_runtime::rest::template::`, or nothing
/// where they are imported).
pub fn runtime_template(template: &PathTemplate, path: TokenStream) -> TokenStream {
    let segments = template.segments.iter().map(|segment| match segment {
        Segment::Literal(text) => quote!(#path Segment::Literal(#text)),
        Segment::Any => quote!(#path Segment::Any),
        Segment::Rest => quote!(#path Segment::Rest),
    });
    let variables = template.variables.iter().map(|variable| {
        let field = &variable.field;
        let start = proc_macro2::Literal::usize_unsuffixed(variable.start);
        let end = proc_macro2::Literal::usize_unsuffixed(variable.end);
        quote!(#path Variable { field: #field, start: #start, end: #end })
    });
    let verb = match &template.verb {
        Some(verb) => quote!(Some(#verb)),
        None => quote!(None),
    };
    quote! {
        #path Template {
            segments: &[#(#segments),*],
            variables: &[#(#variables),*],
            verb: #verb,
        }
    }
}

/// What a handler does with entity-tags (`protoapi_runtime::rest::conditional`).
pub enum Etags {
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
    pub fn of(method: &Method) -> Self {
        let legacy = method.view.is_some();
        match &method.standard {
            Standard::Update { .. } | Standard::Delete { .. } if legacy || !method.takes_etag() => {
                Etags::Refuse
            }
            _ if legacy => Etags::None,
            // An operation (AIP-151) is no resource to tag.
            Standard::Create { .. } if method.long_running.is_some() => Etags::None,
            Standard::Get { .. } => Etags::Answer,
            Standard::Create { .. } => Etags::Tag,
            Standard::Update { body_field, .. } if body_field.is_empty() => Etags::IfMatch {
                etag_field: "etag".to_owned(),
                tagged: method.long_running.is_none(),
            },
            Standard::Update { body_field, .. } => Etags::IfMatch {
                etag_field: format!("{}.etag", body_field.to_lower_camel_case()),
                tagged: method.long_running.is_none(),
            },
            Standard::Delete { .. } => Etags::IfMatch {
                etag_field: "etag".to_owned(),
                tagged: false,
            },
            // An Undelete's etag is a request field (AIP-164).
            Standard::List { .. }
            | Standard::BatchGet { .. }
            | Standard::Undelete { .. }
            | Standard::Operations
            | Standard::Policy(_)
            | Standard::Custom => Etags::None,
        }
    }

    /// What the handler of `binding` does: nothing when it answers only a
    /// field of the response (`response_body`), which is not the resource.
    pub fn of_binding(method: &Method, binding: &HttpRule) -> Self {
        match binding.response_body {
            Some(_) => Etags::None,
            None => Etags::of(method),
        }
    }

    /// Whether the handler reads `If-Match` (and, for Get, `If-None-Match`).
    pub fn reads_headers(&self) -> bool {
        !matches!(self, Etags::None | Etags::Tag)
    }

    /// Whether the answer carries the resource's `ETag`.
    pub fn tags_answer(&self) -> bool {
        matches!(
            self,
            Etags::Answer | Etags::Tag | Etags::IfMatch { tagged: true, .. }
        )
    }
}

fn version_key(package: &str) -> (u64, &str) {
    let last = package.rsplit('.').next().unwrap_or(package);
    let number = last
        .strip_prefix('v')
        .and_then(|v| v.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
        .unwrap_or(0);
    (number, package)
}
