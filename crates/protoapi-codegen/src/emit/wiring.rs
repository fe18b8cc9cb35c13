//! The server wiring (`services.rs`, included by the crate root): `Services`,
//! a builder that serves every service of the API on one router, and the
//! constants it reads.
//!
//! - `CAPABILITIES`: every capability a method requires, sorted.
//! - `API`: the descriptors, the OpenAPI document, the error domain and every
//!   service with the builder call that serves it, for
//!   `protoapi_runtime::router::ApiRouter`, which does the generic work (reflection,
//!   health, `/openapi.json`, fallbacks, layers).
//! - `Stores`: every storage trait of the API in one bound.
//! - `tables()`: every table of the API for the SQL store ([`super::rows`]).
//! - `Services`: `store(Arc<S: Stores>)` serves every service that only
//!   needs storage; a service with custom methods gets a method of its own
//!   (`loan_service(Arc<H: LoanServiceHandler>)`), and the declared token
//!   exchange `token_exchange(Arc<S: XStore>, TokenExchange)`; `build()`
//!   returns the router, or names each service still without a handler.

use heck::{ToShoutySnakeCase, ToSnakeCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::shared::{StoreMethods, has_custom_methods, service_domain, trait_path};
use super::shared::{api_name, store_bounds};
use crate::model::{Api, Service, package_module};

/// The file the crate root includes.
pub const FILE: &str = "services.rs";

/// The builder method serving all storage-only services.
const STORE_METHOD: &str = "store";
/// The builder method serving the declared token exchange.
const EXCHANGE_METHOD: &str = "token_exchange";
/// Names `Services` uses itself.
const RESERVED: &[&str] = &[
    "new",
    STORE_METHOD,
    EXCHANGE_METHOD,
    "layer",
    "probes",
    "cors",
    "routes",
    "console",
    "build",
];

/// How one service is served.
struct Served<'a> {
    service: &'a Service,
    /// `crate::library::v1`.
    module: String,
    /// The builder method serving it: [`STORE_METHOD`], or its own for a
    /// service with custom methods.
    method: String,
}

impl Served<'_> {
    fn item(&self, name: &str) -> TokenStream {
        super::path(&format!("{}::{name}", self.module))
    }

    /// `let api = XApi::new(…); self.router.serve(api.into_grpc(), x_routes(api));`
    fn serve(&self, handler: TokenStream) -> TokenStream {
        let api = self.item(&api_name(self.service).to_string());
        let routes = self.item(&format!("{}_routes", self.service.name.to_snake_case()));
        let clone = super::shared::clone_api(self.service, quote!(api));
        quote! {
            let api = #api::new(#handler, self.context.clone());
            self.router.serve(#clone.into_grpc(), #routes(api));
        }
    }
}

/// Every capability a method of `api` requires or a collection declares,
/// sorted, once each.
fn capabilities(api: &Api) -> Vec<&str> {
    let declared = api
        .packages
        .iter()
        .flat_map(|p| &p.resources)
        .flat_map(|r| &r.capabilities)
        .map(String::as_str);
    let mut capabilities: Vec<&str> = api
        .packages
        .iter()
        .flat_map(|p| &p.services)
        .flat_map(|s| &s.methods)
        .filter_map(|m| m.capability.as_deref())
        .chain(declared)
        .collect();
    capabilities.sort_unstable();
    capabilities.dedup();
    capabilities
}

/// `services.rs`; `beside` is what the file holds besides the wiring (the
/// tables of the SQL store, the console's schema), written by their own
/// emitters.
pub fn emit(api: &Api, beside: &[TokenStream]) -> TokenStream {
    let services = served(api);
    let capabilities = capabilities(api);
    // Only services read the context: an API of messages alone has none.
    let unread = services.is_empty().then(|| quote!(#[allow(dead_code)]));
    let slots = services.iter().map(|served| {
        let name = &served.service.full_name;
        let method = &served.method;
        quote!(::protoapi_runtime::__private::router::ServiceSlot { name: #name, served_by: #method })
    });

    let stored: Vec<&Served> = services
        .iter()
        .filter(|s| s.method == STORE_METHOD)
        .collect();
    let stores = (!stored.is_empty()).then(|| emit_store(api, &stored));
    let handled = services
        .iter()
        .filter(|s| s.method != STORE_METHOD)
        .map(|s| match s.method.as_str() {
            EXCHANGE_METHOD => emit_exchange(api, s),
            _ => emit_handled(api, s),
        });

    let visitor = emit_visitor(api);
    let exchange_slot = emit_exchange_slot(api);
    let access_rules = api.declares_access_rules();

    quote! {
        #visitor

        /// Every capability a method of the API requires or a collection
        /// declares for the application to check (annotation
        /// `capabilities`), sorted.
        pub const CAPABILITIES: &[&str] = &[#(#capabilities),*];

        /// The API as [`Services`] serves it: descriptors, OpenAPI document,
        /// error domain, and every service with the call that serves it.
        pub const API: ::protoapi_runtime::__private::router::Api = ::protoapi_runtime::__private::router::Api {
            descriptor_set: FILE_DESCRIPTOR_SET,
            openapi_json: OPENAPI_JSON,
            error_domain: ERROR_DOMAIN,
            services: &[#(#slots),*],
            token_exchange: #exchange_slot,
            access_rules: #access_rules,
        };

        /// Every service of the API on one router, with gRPC reflection and
        /// health, `/openapi.json` and the error model's fallbacks (see
        /// `protoapi_runtime::router`).
        ///
        /// [`build`](Services::build) names every service still without a
        /// handler instead of serving a router without it.
        #[derive(Debug)]
        #[must_use]
        pub struct Services {
            #unread
            context: ::protoapi_runtime::__private::standard::ApiContext,
            router: ::protoapi_runtime::__private::router::ApiRouter,
        }

        impl Services {
            /// No service served yet; every service will share `context`
            /// (page tokens, authorization).
            pub fn new(context: ::protoapi_runtime::__private::standard::ApiContext) -> Self {
                Services { context, router: ::protoapi_runtime::__private::router::ApiRouter::new(API) }
            }

            #(#handled)*

            /// Adds `layer`: the access log, authentication or the rate
            /// limit, which run at the router's edge in that order, or a
            /// tower layer run around every route, the fallbacks, reflection
            /// and health included (layers added later run first); see
            /// `protoapi_runtime::router`.
            pub fn layer(mut self, layer: impl ::protoapi_runtime::__private::router::RouteLayer) -> Self {
                self.router.layer(layer);
                self
            }

            /// Serves `GET /healthz` and `GET /readyz` outside every layer
            /// (no authentication); `/readyz` answers from `probes`'
            /// readiness check (`protoapi_runtime::probe`).
            pub fn probes(mut self, probes: ::protoapi_runtime::__private::probe::Probes) -> Self {
                self.router.probes(probes);
                self
            }

            /// Lets browsers on the origins `cors` allows call the API
            /// (REST and gRPC-Web); none by default.
            pub fn cors(mut self, cors: ::protoapi_runtime::__private::web::Cors) -> Self {
                self.router.cors(cors);
                self
            }

            /// Serves `routes` of the application's own beside the API's,
            /// behind the same layers.
            pub fn routes(mut self, routes: ::protoapi_runtime::__private::axum::Router) -> Self {
                self.router.routes(routes);
                self
            }

            /// The router, or every service left without a handler.
            pub fn build(
                self,
            ) -> Result<::protoapi_runtime::__private::axum::Router, ::protoapi_runtime::__private::router::MissingHandlers> {
                self.router.build()
            }
        }

        #stores

        #(#beside)*
    }
}

/// `visit_messages`, which names every message type of the API.
fn emit_visitor(api: &Api) -> TokenStream {
    let messages = api.messages.iter().map(|message| {
        let ty = super::path(&message.rust_path);
        quote!(visitor.visit::<#ty>();)
    });
    // An API of no messages of its own visits none.
    let unused = api.messages.is_empty().then(|| quote!(let _ = visitor;));
    quote! {
        /// Calls `visitor` with every message type of the API (tests check
        /// each: `protoapi_runtime::json::conformance`).
        pub fn visit_messages(visitor: &mut impl ::protoapi_runtime::__private::json::MessageVisitor) {
            #unused
            #(#messages)*
        }
    }
}

/// The `Stores` trait and `Services::store`.
fn emit_store(api: &Api, stored: &[&Served]) -> TokenStream {
    let resources: Vec<_> = api.packages.iter().flat_map(|p| &p.resources).collect();
    let mut traits: Vec<TokenStream> = resources
        .iter()
        .map(|resource| super::path(&trait_path(resource)))
        .collect();
    let kept = resources
        .iter()
        .zip(&traits)
        .map(|(resource, store_trait)| {
            let keeps = StoreMethods::of(resource).keeps;
            let resource_type = &resource.type_name;
            quote!((#store_trait::#keeps(&*store), #resource_type))
        })
        .collect::<Vec<_>>();
    // Operations (AIP-151) are kept beside the resources.
    let operations = (api.packages.iter().flat_map(|p| &p.services))
        .flat_map(|s| &s.methods)
        .any(|m| m.long_running.is_some());
    if operations {
        traits.push(quote!(
            ::protoapi_runtime::__private::operation::OperationStore
        ));
    }
    let names = stored
        .iter()
        .map(|s| format!(" - `{}`", s.service.full_name));
    let serve = stored
        .iter()
        .map(|s| s.serve(quote!(std::sync::Arc::clone(&store))));
    let method = format_ident!("{STORE_METHOD}");
    quote! {
        /// The storage of every resource of the API, which
        /// [`Services::store`] serves.
        pub trait Stores
        where
            Self: #(#traits)+*,
        {
        }

        impl<S> Stores for S where S: #(#traits)+* {}

        impl Services {
            /// Serves every service that needs only storage from `store`:
            ///
            #(#[doc = #names])*
            ///
            /// A resource type `store` does not keep (a SQL store without its
            /// table) is named by [`Services::build`].
            pub fn #method<S: Stores>(mut self, store: std::sync::Arc<S>) -> Self {
                let kept = [#(#kept),*];
                for (kept, resource_type) in kept {
                    if !kept {
                        self.router.unkept(resource_type);
                    }
                }
                #(#serve)*
                self
            }
        }
    }
}

/// `Services::x_service`, serving one service with custom methods.
fn emit_handled(api: &Api, served: &Served) -> TokenStream {
    // No package: every path stays qualified.
    let root = super::Scope::new("");
    let bounds = store_bounds(&root, api, served.service);
    let method = super::ident(&served.method);
    let doc = format!(
        " Serves `{}` with `handler`, which implements its custom methods.",
        served.service.full_name
    );
    let serve = served.serve(quote!(handler));
    quote! {
        #[doc = #doc]
        pub fn #method<H: #bounds>(mut self, handler: std::sync::Arc<H>) -> Self {
            #serve
            self
        }
    }
}

/// `Some(ExchangeSlot { .. })` naming the declared token exchange's route
/// and domain, or `None`.
fn emit_exchange_slot(api: &Api) -> TokenStream {
    let Some(exchange) = &api.token_exchange else {
        return quote!(None);
    };
    let service = api
        .packages
        .iter()
        .flat_map(|p| p.services.iter().map(move |s| (p, s)))
        .find(|(_, s)| s.full_name == exchange.service);
    let Some((package, service)) = service else {
        return quote!(None);
    };
    let route = super::path(&format!(
        "{}::client::{}",
        package_module(&package.name),
        service.name
    ));
    let constant = format_ident!("{}", exchange.method.to_shouty_snake_case());
    let domain = service_domain(api, service);
    let (audience, subject, token) = (
        &exchange.audience_field.json,
        &exchange.subject_field.json,
        &exchange.token_field.json,
    );
    quote! {
        Some(::protoapi_runtime::__private::router::ExchangeSlot {
            route: #route::#constant,
            domain: #domain,
            audience_field: #audience,
            subject_field: #subject,
            token_field: #token,
        })
    }
}

/// `Services::token_exchange`, serving the declared exchange's service from
/// the store of its subjects.
fn emit_exchange(api: &Api, served: &Served) -> TokenStream {
    let exchange = api
        .token_exchange
        .as_ref()
        .expect("only the declared exchange is served by it");
    let resource = api
        .resource(&exchange.resource)
        .expect("the exchange's resource is in the model");
    let store = super::path(&trait_path(resource));
    let method = format_ident!("{EXCHANGE_METHOD}");
    let doc = format!(
        " Serves `{}`, the API's token exchange: identity tokens of the issuers \
         `exchange` trusts traded for its API tokens of the `{}` items of `store` \
         whose `{}` holds their issuer and subject.",
        served.service.full_name, resource.full_name, exchange.claim_field
    );
    let serve = served.serve(quote!(handler));
    quote! {
        #[doc = #doc]
        pub fn #method<S: #store>(
            mut self,
            store: std::sync::Arc<S>,
            exchange: ::protoapi_runtime::__private::auth::TokenExchange,
        ) -> Self {
            let handler = std::sync::Arc::new(::protoapi_runtime::__private::auth::StoredExchange { store, exchange });
            #serve
            self
        }
    }
}

/// Every service, sorted by full name, with the builder method serving it.
fn served(api: &Api) -> Vec<Served<'_>> {
    let mut services: Vec<Served> = api
        .packages
        .iter()
        .flat_map(|package| {
            let module = package_module(&package.name);
            package.services.iter().map(move |service| Served {
                service,
                module: module.clone(),
                method: if is_exchange(api, service) {
                    EXCHANGE_METHOD.to_owned()
                } else if has_custom_methods(service) {
                    service.name.to_snake_case()
                } else {
                    STORE_METHOD.to_owned()
                },
            })
        })
        .collect();
    // Two services with custom methods of one name (or one named like a
    // method of `Services`) are told apart by their packages.
    let clashes: Vec<bool> = services
        .iter()
        .map(|s| {
            s.method != STORE_METHOD
                && !is_exchange(api, s.service)
                && (RESERVED.contains(&s.method.as_str())
                    || services.iter().filter(|o| o.method == s.method).count() > 1)
        })
        .collect();
    for (served, clash) in services.iter_mut().zip(clashes) {
        if clash {
            served.method = served.service.full_name.replace('.', "_").to_snake_case();
        }
    }
    services.sort_by(|a, b| a.service.full_name.cmp(&b.service.full_name));
    services
}

fn is_exchange(api: &Api, service: &Service) -> bool {
    api.token_exchange
        .as_ref()
        .is_some_and(|e| e.service == service.full_name)
}
