//! Names and bounds several emitters spell alike: a resource's storage trait
//! and its methods, a service's API type, handler trait and storage bounds.

use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

mod calls;
mod derived;
pub mod shapes;

pub use calls::{
    Etags, accessors, answer_type, has_client, method_names, request_type, runtime_template,
};
pub use derived::derived_value;

use crate::model::{Api, Method, Resource, Service, Standard, package_module};

/// The trait name for a resource, e.g. `GroupStore`.
pub fn trait_name(resource: &Resource) -> syn::Ident {
    format_ident!("{}Store", resource.name.to_upper_camel_case())
}

/// The trait's path from the crate root, beside the resource's message.
pub fn trait_path(resource: &Resource) -> String {
    let (module, _) = resource
        .rust_path
        .rsplit_once("::")
        .expect("a qualified path");
    format!("{module}::{}", trait_name(resource))
}

/// Method names: `(insert_group, get_group, list_groups, update_group, delete_group)`.
pub struct StoreMethods {
    pub insert: syn::Ident,
    pub get: syn::Ident,
    pub list: syn::Ident,
    pub update: syn::Ident,
    pub delete: syn::Ident,
    /// `keeps_groups`: whether the backend stores the resource at all.
    pub keeps: syn::Ident,
    /// `recorded_group_write`: what a write under an AIP-155 request id
    /// recorded.
    pub recorded: syn::Ident,
    /// `dry_runs_groups`: whether writes under a dry run change nothing.
    pub dry_runs: syn::Ident,
    /// The storage trait as the calling service names it, and the methods
    /// another trait bounding the service's store also has: its handler
    /// trait (a custom `UpdateDataAgent` beside the store's
    /// `update_data_agent`) or another resource's storage trait (two
    /// resources of one pattern share a plural). Calls of those name the
    /// trait.
    shared: Option<(TokenStream, Vec<syn::Ident>)>,
}

impl StoreMethods {
    pub fn of(resource: &Resource) -> Self {
        let singular = resource.name.to_snake_case();
        let plural = if resource.plural.is_empty() {
            format!("{singular}s")
        } else {
            resource.plural.to_snake_case()
        };
        StoreMethods {
            insert: format_ident!("insert_{singular}"),
            get: format_ident!("get_{singular}"),
            list: format_ident!("list_{plural}"),
            update: format_ident!("update_{singular}"),
            delete: format_ident!("delete_{singular}"),
            keeps: format_ident!("keeps_{plural}"),
            recorded: format_ident!("recorded_{singular}_write"),
            dry_runs: format_ident!("dry_runs_{plural}"),
            shared: None,
        }
    }

    /// The methods as `service`'s generated code, in `scope`, calls them.
    pub fn called_by(
        scope: &super::Scope,
        api: &Api,
        resource: &Resource,
        service: &Service,
    ) -> Self {
        let mut methods = Self::of(resource);
        let handled = service
            .methods
            .iter()
            .filter(|m| matches!(m.standard, Standard::Custom))
            .map(|m| m.rust_name());
        let stored = api
            .resources()
            .filter(|other| other.type_name != resource.type_name)
            .flat_map(|other| Self::of(other).standard().map(ToString::to_string));
        let taken: Vec<String> = handled.chain(stored).collect();
        let shared: Vec<syn::Ident> = (methods.standard().into_iter())
            .filter(|name| taken.contains(&name.to_string()))
            .cloned()
            .collect();
        if !shared.is_empty() {
            methods.shared = Some((scope.path(&trait_path(resource)), shared));
        }
        methods
    }

    /// The methods the standard methods call.
    fn standard(&self) -> [&syn::Ident; 7] {
        [
            &self.insert,
            &self.get,
            &self.list,
            &self.update,
            &self.delete,
            &self.recorded,
            &self.dry_runs,
        ]
    }

    /// A call of the store's `method` on the service's `self.store`.
    pub fn call(&self, method: &syn::Ident, args: TokenStream) -> TokenStream {
        match &self.shared {
            Some((store, shared)) if shared.contains(method) => {
                quote!(#store::#method(&*self.store, #args))
            }
            _ => quote!(self.store.#method(#args)),
        }
    }
}

/// What `method` needs of its caller: `Need::Capability("groups.get")`,
/// `Need::Token` (no access rules), or `Need::Nothing` (anonymous).
pub fn need(method: &Method) -> TokenStream {
    match (&method.capability, method.anonymous) {
        (_, true) => quote!(Need::Nothing),
        (Some(capability), false) => quote!(Need::Capability(#capability)),
        (None, false) => quote!(Need::Token),
    }
}

/// The struct name, e.g. `GroupServiceApi`.
pub fn api_name(service: &Service) -> syn::Ident {
    format_ident!("{}Api", service.name)
}

/// A clone of `api`, the service's struct: `api.clone()`, or with the trait
/// named when an RPC `Clone` gives the struct a method `clone` of its own.
pub fn clone_api(service: &Service, api: TokenStream) -> TokenStream {
    let shadowed = service
        .methods
        .iter()
        .any(|method| method.name.to_snake_case() == "clone");
    match shadowed {
        true => quote!(::core::clone::Clone::clone(&#api)),
        false => quote!(#api.clone()),
    }
}

/// The handler trait of a service's custom methods, e.g. `TokenServiceHandler`.
pub fn handler_name(service: &Service) -> syn::Ident {
    format_ident!("{}Handler", service.name)
}

/// The `ErrorInfo` domain of a service's errors: its resource type's
/// service name (`library.example.com` of `library.example.com/Shelf`), or
/// for a service of custom methods alone, its package's second and first
/// segments (`loans.library` of `library.loans.v1.LoanService`).
pub fn service_domain(api: &Api, service: &Service) -> String {
    service
        .methods
        .iter()
        .find_map(|m| api.resource(m.standard.resource()?))
        .map(|r| r.type_name.split('/').next().unwrap_or_default().to_owned())
        .unwrap_or_else(
            || match service.full_name.split('.').collect::<Vec<_>>()[..] {
                [root, domain, ..] => format!("{domain}.{root}"),
                _ => service.full_name.clone(),
            },
        )
}

pub fn has_custom_methods(service: &Service) -> bool {
    service
        .methods
        .iter()
        .any(|m| matches!(m.standard, Standard::Custom))
}

/// The trait bounds on `S`: one storage trait per resource served, plus the
/// handler trait when the service has custom methods (as named from `scope`);
/// `Send + Sync + 'static` for a service of neither.
pub fn store_bounds(scope: &super::Scope, api: &Api, service: &Service) -> TokenStream {
    // The resources served, and those their reference fields name (whose
    // existence creates check).
    let mut resources: Vec<&str> = service
        .methods
        .iter()
        .filter_map(|m| m.standard.resource())
        .collect();
    // Policies are read from and written to the bindings, under their holder.
    if service
        .methods
        .iter()
        .any(|m| matches!(m.standard, Standard::Policy(_)))
        && let Ok(bindings) = api.policy_bindings()
    {
        resources
            .extend([&bindings.binding.full_name, &bindings.holder.full_name].map(String::as_str));
    }
    let referenced: Vec<&str> = resources
        .iter()
        .filter_map(|name| api.resource(name))
        .flat_map(|resource| resource.resolved_references())
        .map(|reference| reference.target.as_str())
        .collect();
    resources.extend(referenced);
    resources.sort_unstable();
    resources.dedup();
    let mut traits: Vec<TokenStream> = resources
        .iter()
        .filter_map(|name| api.resource(name))
        .map(|resource| scope.path(&trait_path(resource)))
        .collect();
    if has_custom_methods(service) {
        let package = service.full_name.rsplit_once('.').map_or("", |(p, _)| p);
        traits.push(scope.path(&format!(
            "{}::{}",
            package_module(package),
            handler_name(service)
        )));
    }
    let operations = service
        .methods
        .iter()
        .any(|m| m.long_running.is_some() || matches!(m.standard, Standard::Operations));
    if operations {
        traits.push(quote!(
            ::protoapi_runtime::__private::operation::OperationStore
        ));
    }
    if traits.is_empty() {
        // A service of no methods: tonic's trait still needs a shareable `S`.
        return quote!(::core::marker::Send + ::core::marker::Sync + 'static);
    }
    quote!(#(#traits)+*)
}

/// `delete_forced_book`, for a resource keyed by resource names: what a
/// Delete with `force` (AIP-135) calls.
pub fn forced_delete_name(resource: &Resource) -> Option<syn::Ident> {
    resource
        .names
        .as_ref()
        .map(|_| format_ident!("delete_forced_{}", resource.name.to_snake_case()))
}
