//! The API as generic clients see it (`SCHEMA` in `client.rs`): for each
//! resource served by standard methods (not through a legacy view), its
//! collection as `protoapi_runtime::schema::Collection`: what
//! `protoapi_runtime::resource::Resource` declares (fields and behaviours, `order_by`,
//! references, page sizes, parent), plus the route (the generated client's
//! `Route` constant), capability and shape of each standard method. The
//! runtime's console renders every page from it, and the infrastructure
//! provider every resource. `Services::console` (in `services.rs`) serves the console.

use heck::ToLowerCamelCase;
use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{
    Api, LIST_FILTERS, Method, Package, Resource, Shape, Standard, Total, package_module,
};

/// Hierarchy filters the console sets itself (the parent it shows, the
/// home page's top level) or cannot offer as one text box.
const NOT_OFFERED: &[&str] = &["children_of", "in_root", "ids"];

pub fn emit(api: &Api) -> TokenStream {
    let title = api
        .packages
        .iter()
        .find(|p| !p.resources.is_empty())
        .and_then(|p| p.name.split('.').next())
        .unwrap_or_default()
        .to_owned();
    let collections = api
        .packages
        .iter()
        .flat_map(|package| package.resources.iter().map(move |r| (package, r)))
        .filter_map(|(_, resource)| collection(api, resource));
    // The operations' list, for the running operations an item's page shows.
    let listed = api.packages.iter().find_map(|package| {
        let service = package.services.iter().find(|s| {
            s.methods
                .iter()
                .any(|m| matches!(m.standard, Standard::Operations))
        })?;
        let method = service
            .methods
            .iter()
            .find(|m| m.name == "ListOperations" && m.http.is_some())?;
        Some(route(package, &service.name, method))
    });
    let operations = option_tokens(listed.map(|route| quote!(&#route)));
    let access = option_tokens(access(api));
    quote! {
        /// The API as generic clients see it (`protoapi_runtime::schema`):
        /// every resource's collection and the routes of its standard
        /// methods. The web console ([`Services::console`]) and the
        /// infrastructure provider are built from it.
        pub static SCHEMA: ::protoapi_runtime::__private::schema::Schema = ::protoapi_runtime::__private::schema::Schema {
            title: #title,
            descriptors: || &DESCRIPTOR_POOL,
            collections: &[#(#collections),*],
            operations: #operations,
            access: #access,
        };
    }
}

/// The access model: the collection whose items grant a member the
/// capabilities of a role (its one reference with `grants`, and exactly one
/// other, the member), when the console shows it.
fn access(api: &Api) -> Option<TokenStream> {
    let bindings = api.resources().find(|resource| {
        resource.references.iter().any(|r| r.grants.is_some())
            && collection(api, resource).is_some()
    })?;
    let role = bindings.references.iter().find(|r| r.grants.is_some())?;
    let mut members = bindings.references.iter().filter(|r| r.grants.is_none());
    let (Some(member), None) = (members.next(), members.next()) else {
        return None;
    };
    let id = &bindings.plural;
    let (role, member) = (&role.json_name, &member.json_name);
    Some(
        quote!(::protoapi_runtime::__private::schema::Access { bindings: #id, role: #role, member: #member }),
    )
}

fn option_tokens(tokens: Option<TokenStream>) -> TokenStream {
    match tokens {
        Some(tokens) => quote!(Some(#tokens)),
        None => quote!(None),
    }
}

/// `Services::console`, which serves the web console over [`emit`]'s `SCHEMA`.
pub fn emit_console() -> TokenStream {
    quote! {
        impl Services {
            /// Serves the web console at `/console/` ([`SCHEMA`], see
            /// `protoapi_runtime::console`), e.g.
            /// `.console(protoapi_runtime::console::Console::new(&SCHEMA))`: its pages
            /// act as the signed-in caller through this router, and offer
            /// only what the services' authorizer lets that caller do.
            pub fn console(mut self, console: ::protoapi_runtime::__private::console::Console) -> Self {
                self.router.console(console, self.context.authorizer.clone());
                self
            }
        }
    }
}

/// The standard methods of `resource` (served as declared, not as a view),
/// with the package of each.
fn methods<'a>(
    api: &'a Api,
    resource: &'a Resource,
) -> impl Iterator<Item = (&'a Package, &'a str, &'a Method)> {
    api.packages.iter().flat_map(move |package| {
        package.services.iter().flat_map(move |service| {
            service
                .methods
                .iter()
                // The console calls the API over REST: methods served over
                // gRPC only have no page.
                .filter(move |m| {
                    m.view.is_none()
                        && m.http.is_some()
                        && m.standard.resource() == Some(resource.full_name.as_str())
                })
                .map(move |m| (package, service.name.as_str(), m))
        })
    })
}

fn collection(api: &Api, resource: &Resource) -> Option<TokenStream> {
    let found: Vec<_> = methods(api, resource).collect();
    // A resource no method of the API reads is not shown.
    found
        .iter()
        .find(|(_, _, m)| matches!(m.standard, Standard::Get { .. }))?;
    let ty = super::path(&resource.rust_path);
    let id = &resource.plural;
    let singular = &resource.singular;
    let message = &resource.full_name;
    let mut parts = Vec::new();
    // The console shows one method of each kind: the first declared (an API
    // may declare two Gets of one resource, `GetPolicy` and `GetEffectivePolicy`).
    let mut shown = Vec::new();
    for (package, service, method) in &found {
        let kind = std::mem::discriminant(&method.standard);
        if shown.contains(&kind) {
            continue;
        }
        shown.push(kind);
        let action = action(package, service, method);
        let part = match &method.standard {
            Standard::Get { .. } => quote!(get: Some(#action)),
            Standard::List { filters, .. } => list(action, method, filters, resource),
            Standard::Create { body_field, .. } => {
                let body = body_field.to_lower_camel_case();
                let id = option(
                    method
                        .names
                        .id_field(resource)
                        .map(|f| f.to_lower_camel_case()),
                );
                quote!(create: Some(::protoapi_runtime::__private::schema::Create { action: #action, body: #body, id: #id }))
            }
            Standard::Update { body_field, .. } => {
                let body = body_field.to_lower_camel_case();
                let mask = matches!(method.shape, Shape::Update(shape) if shape.has_mask);
                quote!(update: Some(::protoapi_runtime::__private::schema::Update { action: #action, body: #body, mask: #mask }))
            }
            Standard::Delete { .. } => {
                let etag = matches!(method.shape, Shape::Delete(shape) if shape.etag);
                quote!(delete: Some(::protoapi_runtime::__private::schema::Delete { action: #action, etag: #etag }))
            }
            _ => continue,
        };
        parts.push(part);
    }
    if found
        .iter()
        .any(|(_, _, method)| method.long_running.is_some())
    {
        parts.push(quote!(long_running: true));
    }
    if let Some(name) = &resource.display_name {
        parts.push(quote!(display_name: Some(#name)));
    }
    if !resource.field_names.is_empty() {
        let names = resource
            .field_names
            .iter()
            .map(|(field, name)| quote!((#field, #name)));
        parts.push(quote!(field_names: &[#(#names),*]));
    }
    Some(quote! {
        ::protoapi_runtime::__private::schema::Collection {
            #(#parts,)*
            ..::protoapi_runtime::__private::schema::Collection::of::<#ty>(#id, #singular, #message)
        }
    })
}

/// `<client>::<METHOD>`: the route of `method`.
fn route(package: &Package, service: &str, method: &Method) -> TokenStream {
    super::path(&format!(
        "{}::client::{service}::{}",
        package_module(&package.name),
        heck::ToShoutySnakeCase::to_shouty_snake_case(method.name.as_str())
    ))
}

/// `Action { route: &<client>::<METHOD>, capability }`.
fn action(package: &Package, service: &str, method: &Method) -> TokenStream {
    let route = route(package, service, method);
    let capability = option(method.capability.clone());
    quote!(::protoapi_runtime::__private::schema::Action { route: &#route, capability: #capability })
}

fn list(
    action: TokenStream,
    method: &Method,
    filters: &[String],
    resource: &Resource,
) -> TokenStream {
    let shape = method.list_shape();
    // The request's filter fields the resource accepts.
    let filters: Vec<String> = filters
        .iter()
        .filter(|f| resource.filters.contains(f))
        .cloned()
        .collect();
    let items = shape.items.to_lower_camel_case();
    let total = option(match shape.total {
        Total::None => None,
        Total::Size => Some("totalSize".to_owned()),
        Total::Count => Some("totalCount".to_owned()),
    });
    let query = |filter: &str| {
        LIST_FILTERS
            .iter()
            .find(|(name, _)| *name == filter)
            .map(|(_, query)| *query)
    };
    let parent_query = option(
        (resource.names.is_none() && filters.iter().any(|f| f == "children_of"))
            .then(|| query("children_of").map(str::to_owned))
            .flatten(),
    );
    let offered = filters
        .iter()
        .filter(|f| !NOT_OFFERED.contains(&f.as_str()))
        .filter_map(|f| query(f));
    let in_root = filters.iter().any(|f| f == "in_root");
    let order_by = shape.order_by;
    let filter = shape.filter;
    quote! {
        list: Some(::protoapi_runtime::__private::schema::List {
            action: #action,
            items: #items,
            total: #total,
            parent_query: #parent_query,
            order_by: #order_by,
            filters: &[#(#offered),*],
            in_root: #in_root,
            filter: #filter,
        })
    }
}

fn option(value: Option<String>) -> TokenStream {
    match value {
        Some(value) => quote!(Some(#value)),
        None => quote!(None),
    }
}
