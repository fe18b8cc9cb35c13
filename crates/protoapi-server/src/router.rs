//! One router for a whole generated API: every service's REST routes and
//! gRPC service, and what every API serves besides them.
//!
//! A generated crate's `Services` builder adds its services here (one
//! [`ApiRouter::serve`] each) and [`ApiRouter::build`] assembles the router:
//!
//! - the gRPC services, gRPC reflection (`grpc.reflection.v1` and `v1alpha`)
//!   over the API's descriptor set, and `grpc.health.v1.Health` reporting
//!   every service served as `SERVING`;
//! - the REST routes of every service, and `GET /openapi.json`;
//! - a route that does not exist answers 404 (`ROUTE_NOT_FOUND`; gRPC:
//!   `UNIMPLEMENTED`) and a route served with other methods 405
//!   (`METHOD_NOT_ALLOWED`), both with the error body ([`rest::fallback`],
//!   [`rest::method_not_allowed`]);
//! - gRPC requests that fail before a handler runs, oversized messages
//!   included, get the error model ([`grpc::request_errors`]; REST bodies
//!   are limited where handlers read them), and a panicking handler is
//!   answered `INTERNAL` ([`rest::catch_panic`]).
//!
//! Every request passes the router's edge first: one service that runs the
//! cross-cutting work as plain calls, each a branch when not configured (no
//! future or service clone per concern), in this order: the API's error
//! domain, CORS ([`ApiRouter::cors`]), gRPC-Web translated into gRPC
//! ([`web`](crate::web)), panics caught, the HTTP probes
//! ([`ApiRouter::probes`]: `/healthz`, `/readyz`, answered here, so they
//! need no credentials), the console's session, then the concerns given to
//! [`ApiRouter::layer`]: the access log (`Observe::layer`), authentication
//! ([`Authentication::layer`](crate::authenticate::Authentication::layer)),
//! the rate limit (`RateLimiter::layer`), in that order whatever the order
//! they were added in; then the error model of gRPC requests that fail
//! before a handler, and the routes. Other tower layers given to
//! [`ApiRouter::layer`] wrap every route and the fallbacks (reflection,
//! health and the OpenAPI document included), inside the edge; layers added
//! later run first.
//!
//! A service of the API that nothing serves is an error of [`build`]
//! ([`MissingHandlers`]), naming the service and the builder call that
//! serves it, rather than a router that silently answers 404 for it.
//!
//! [`build`]: ApiRouter::build
//! [`rest::fallback`]: protoapi_http::rest::fallback
//! [`rest::method_not_allowed`]: protoapi_http::rest::method_not_allowed
//! [`rest::catch_panic`]: protoapi_http::rest::catch_panic
//! [`grpc::request_errors`]: crate::grpc::request_errors

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt;

use axum::Router;
use axum::response::IntoResponse;
use futures_util::FutureExt;
use tonic::server::NamedService;
use tonic::service::Routes;
use tower::Service;

use protoapi_http::rest::ServiceRoutes;

pub use crate::api::{Api, ExchangeSlot, ServiceSlot};
pub use crate::edge::{Layers, RouteLayer};

type AddGrpc = Box<dyn FnOnce(Routes) -> Routes + Send>;

/// Collects the services of an API, then [builds](ApiRouter::build) its
/// router; see the [module docs](self).
#[must_use]
pub struct ApiRouter {
    api: Api,
    /// By full service name: serving a service again replaces it.
    services: BTreeMap<&'static str, (AddGrpc, ServiceRoutes)>,
    /// Resource types a served store does not keep.
    unkept: Vec<&'static str>,
    layers: Layers,
    /// Routes of the application's own, served beside the API's.
    extra: Router,
    /// `/healthz` and `/readyz`, outside the layers.
    probes: Option<protoapi_http::probe::Probes>,
    cors: crate::web::Cors,
    /// The web console and the authorizer its pages ask.
    console: Option<(protoapi_console::Console, protoapi_core::auth::Authorizer)>,
}

impl fmt::Debug for ApiRouter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiRouter")
            .field("services", &self.services.keys().collect::<Vec<_>>())
            .field("layers", &self.layers)
            .finish_non_exhaustive()
    }
}

impl ApiRouter {
    /// No service served yet.
    pub fn new(api: Api) -> Self {
        ApiRouter {
            api,
            services: BTreeMap::new(),
            unkept: Vec::new(),
            layers: Layers::default(),
            extra: Router::new(),
            probes: None,
            cors: crate::web::Cors::none(),
            console: None,
        }
    }

    /// Lets browsers on the origins `cors` allows call the API (none by
    /// default: no CORS header is sent).
    pub fn cors(&mut self, cors: crate::web::Cors) -> &mut Self {
        self.cors = cors;
        self
    }

    /// Serves the web console at `/console/` ([`protoapi_console`]): its pages
    /// behind the same layers as the API (they see the caller authentication
    /// names), its sessions outside them, its calls through the built router.
    /// `authorizer` (the services' own) decides which actions pages offer.
    pub fn console(
        &mut self,
        console: protoapi_console::Console,
        authorizer: protoapi_core::auth::Authorizer,
    ) -> &mut Self {
        self.console = Some((console, authorizer));
        self
    }

    /// Serves `routes` of the application's own beside the API's, behind
    /// the same layers (authentication, the error model, panic catching).
    pub fn routes(&mut self, routes: Router) -> &mut Self {
        self.extra = std::mem::take(&mut self.extra).merge(routes);
        self
    }

    /// Serves one service: its tonic service (named by
    /// [`NamedService::NAME`]) and its REST routes (an axum router, or a
    /// generated `x_routes` function's [`ServiceRoutes`], whose
    /// runtime-matched bindings are mounted with every other service's).
    pub fn serve<G>(&mut self, grpc: G, rest: impl Into<ServiceRoutes>) -> &mut Self
    where
        G: Service<http::Request<tonic::body::Body>, Error = Infallible>
            + NamedService
            + Clone
            + Send
            + Sync
            + 'static,
        G::Response: IntoResponse,
        G::Future: Send + 'static,
    {
        let add: AddGrpc = Box::new(move |routes: Routes| routes.add_service(grpc));
        self.services.insert(G::NAME, (add, rest.into()));
        self
    }

    /// Notes that the store serving `resource_type` does not keep it (a SQL
    /// store without its table): [`ApiRouter::build`] then refuses, naming it.
    pub fn unkept(&mut self, resource_type: &'static str) -> &mut Self {
        if !self.unkept.contains(&resource_type) {
            self.unkept.push(resource_type);
        }
        self
    }

    /// Serves `GET /healthz` and `GET /readyz` ([`protoapi_http::probe`]) outside
    /// every layer: no authentication, cheap, and bounded to one readiness
    /// check at a time. Other methods on these paths answer 405 with the
    /// error model; the API's own routes must not use them.
    pub fn probes(&mut self, probes: protoapi_http::probe::Probes) -> &mut Self {
        self.probes = Some(probes);
        self
    }

    /// Adds `layer`: a concern of the edge (the access log, authentication,
    /// the rate limit; see the [module docs](self)), or a tower layer run
    /// around every route, where layers added later run first.
    pub fn layer(&mut self, layer: impl RouteLayer) -> &mut Self {
        layer.add_to(&mut self.layers);
        self
    }

    /// The names of the services served so far.
    pub fn served(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.services.keys().copied()
    }

    /// The services of the API not served yet.
    pub fn missing(&self) -> Vec<ServiceSlot> {
        self.api
            .services
            .iter()
            .filter(|slot| !self.services.contains_key(slot.name))
            .copied()
            .collect()
    }

    /// The router, or the services of the API left without a handler.
    ///
    /// Every request runs in the scope of the API's error domain
    /// ([`scoped_domain`](protoapi_core::error::scoped_domain)): errors
    /// outside every service (unknown routes, authentication, limits) name it.
    pub fn build(self) -> Result<Router, MissingHandlers> {
        let missing = self.missing();
        if !missing.is_empty() || !self.unkept.is_empty() {
            let mut unkept = self.unkept;
            unkept.sort_unstable();
            return Err(MissingHandlers {
                services: missing,
                unkept,
            });
        }
        if !self.api.access_rules {
            tracing::warn!(
                "the API declares no access rule: every caller the server authenticates may call \
                 every method"
            );
        }
        let ApiRouter {
            api,
            services,
            mut layers,
            extra,
            probes,
            cors,
            console,
            unkept: _,
        } = self;
        let (extra, console) = match console {
            Some((console, authorizer)) => {
                let (pages, gate, handle) = console.into_parts(authorizer);
                (extra.merge(pages), Some((gate, handle)))
            }
            None => (extra, None),
        };

        let (health, health_service) = tonic_health::server::health_reporter();
        // Health is reflected too, so that a client resolving methods by
        // reflection alone (grpcurl) can call `grpc.health.v1.Health/Check`.
        let reflection = || {
            tonic_reflection::server::Builder::configure()
                .register_encoded_file_descriptor_set(api.descriptor_set)
                .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        };
        let mut grpc = Routes::new(health_service)
            .add_service(
                reflection()
                    .build_v1()
                    .expect("the embedded descriptor set is valid"),
            )
            .add_service(
                reflection()
                    .build_v1alpha()
                    .expect("the embedded descriptor set is valid"),
            );
        let mut rest = ServiceRoutes::from(extra);
        for (name, (add_grpc, routes)) in services {
            // The reporter is new and not shared yet: its lock is free.
            health
                .set_service_status(name, tonic_health::ServingStatus::Serving)
                .now_or_never()
                .expect("a new health reporter is not locked");
            grpc = add_grpc(grpc);
            rest = rest.merge(routes);
        }
        let openapi = api.openapi_json;
        let mut routes = grpc.into_axum_router().merge(rest.into_router()).route(
            "/openapi.json",
            axum::routing::get(move || async move {
                ([(http::header::CONTENT_TYPE, "application/json")], openapi)
            }),
        );
        routes = reference(routes, openapi);
        routes = match console {
            Some(_) => routes.fallback(console_front_door),
            None => routes.fallback(protoapi_http::rest::fallback),
        }
        .method_not_allowed_fallback(protoapi_http::rest::method_not_allowed);
        if layers.concerns.needs_templates() {
            routes = routes.layer(crate::edge::NoteTemplate);
        }
        routes = layers.wrap(routes);
        let probes = probes.map(|probes| {
            (probes.routes()).method_not_allowed_fallback(protoapi_http::rest::method_not_allowed)
        });
        let (gate, handle) = console.unzip();
        let edge = crate::edge::Edge::new(crate::edge::Stages {
            domain: api.error_domain,
            cors: cors.middleware(),
            probes,
            console: gate,
            concerns: layers.concerns,
            routes,
        });
        let router = Router::new().fallback_service(edge);
        if let Some(handle) = handle {
            handle.set(router.clone());
        }
        Ok(router)
    }
}

/// Services of an API that [`ApiRouter::build`] found without a handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingHandlers {
    /// Each service left unserved, with the builder call that serves it.
    pub services: Vec<ServiceSlot>,
    /// Resource types of served services that their store does not keep
    /// (`Backend::keeps`), e.g. a SQL store opened without their table.
    pub unkept: Vec<&'static str>,
}

impl fmt::Display for MissingHandlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.services.is_empty() {
            f.write_str("services without a handler:")?;
            for (i, slot) in self.services.iter().enumerate() {
                let separator = if i == 0 { " " } else { ", " };
                write!(f, "{separator}{} (`.{}(…)`)", slot.name, slot.served_by)?;
            }
        }
        if !self.unkept.is_empty() {
            if !self.services.is_empty() {
                f.write_str("; ")?;
            }
            write!(
                f,
                "resource types the store does not keep: {}",
                self.unkept.join(", ")
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for MissingHandlers {}

/// The fallback of a router serving the console: a browser's `GET /` (or
/// `HEAD /`) is sent to the console's home page; anything else no route
/// matched is [`fallback`](protoapi_http::rest::fallback)'s.
async fn console_front_door(request: axum::extract::Request) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let front = request.uri().path() == "/"
        && matches!(*request.method(), http::Method::GET | http::Method::HEAD)
        && !protoapi_http::rest::is_grpc(request.headers());
    if front {
        return axum::response::Redirect::to(protoapi_console::PREFIX).into_response();
    }
    protoapi_http::rest::fallback(request).await
}

/// The human API reference at `/docs` (and its stylesheet), rendered once
/// from the OpenAPI document; no token needed, as for the document itself.
fn reference(routes: axum::Router, openapi: &str) -> axum::Router {
    use http::header::{
        CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS,
    };
    let page = match protoapi_console::docs::page(openapi) {
        Ok(page) => bytes::Bytes::from(page),
        Err(error) => {
            tracing::warn!(%error, "the OpenAPI document cannot be read: no /docs page");
            return routes;
        }
    };
    let policy = [
        (CONTENT_SECURITY_POLICY, protoapi_console::docs::POLICY),
        (X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (CACHE_CONTROL, "no-cache"),
    ];
    routes
        .route(
            "/docs",
            axum::routing::get(move || {
                let page = page.clone();
                async move {
                    let html = [(CONTENT_TYPE, "text/html; charset=utf-8")];
                    (html, policy, page)
                }
            }),
        )
        .route(
            protoapi_console::docs::STYLESHEET_PATH,
            axum::routing::get(|| async {
                let css = [(CONTENT_TYPE, "text/css; charset=utf-8")];
                (css, protoapi_console::docs::STYLESHEET)
            }),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::extract::Request;

    const HEALTH: &str = "grpc.health.v1.Health";

    fn api() -> Api {
        Api {
            descriptor_set: tonic_health::pb::FILE_DESCRIPTOR_SET,
            openapi_json: "{}",
            error_domain: "example",
            services: &[
                ServiceSlot {
                    name: HEALTH,
                    served_by: "store",
                },
                ServiceSlot {
                    name: "example.v1.LoanService",
                    served_by: "loan_service",
                },
            ],
            token_exchange: None,
            access_rules: true,
        }
    }

    #[test]
    fn build_names_every_service_without_a_handler() {
        let error = ApiRouter::new(api()).build().unwrap_err();
        assert_eq!(error.services, api().services);
        assert_eq!(
            error.to_string(),
            "services without a handler: grpc.health.v1.Health (`.store(…)`), \
             example.v1.LoanService (`.loan_service(…)`)"
        );

        let mut router = ApiRouter::new(api());
        router.serve(tonic_health::server::health_reporter().1, Router::new());
        assert_eq!(router.served().collect::<Vec<_>>(), [HEALTH]);
        let error = router.build().unwrap_err();
        assert_eq!(error.services, &api().services[1..]);
    }

    #[tokio::test]
    async fn routes_of_the_application_run_behind_the_layers() {
        use tower::ServiceExt;
        let api = Api {
            services: &[],
            ..api()
        };
        let mut router = ApiRouter::new(api);
        router
            .routes(Router::new().route("/own", axum::routing::get(|| async { "own" })))
            .layer(axum::middleware::from_fn(
                |request: Request, next: axum::middleware::Next| async move {
                    let mut response = next.run(request).await;
                    response
                        .headers_mut()
                        .insert("x-layer", http::HeaderValue::from_static("ran"));
                    response
                },
            ));
        let response = router
            .build()
            .unwrap()
            .oneshot(
                Request::get("/own")
                    .body(axum::body::Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(response.status(), http::StatusCode::OK);
        assert_eq!(response.headers()["x-layer"], "ran");
    }

    #[tokio::test]
    async fn two_apis_in_one_process_each_name_their_own_domain() {
        use http_body_util::BodyExt as _;
        use tower::ServiceExt as _;
        let router = |error_domain| {
            let api = Api {
                services: &[],
                error_domain,
                ..api()
            };
            ApiRouter::new(api).build().unwrap()
        };
        let (first, second) = (router("first"), router("second"));
        for (router, domain) in [(second, "second"), (first, "first")] {
            let request = Request::get("/nowhere").body(axum::body::Body::empty());
            let response = router.oneshot(request.unwrap()).await.unwrap();
            assert_eq!(response.status(), http::StatusCode::NOT_FOUND);
            let body = response.into_body().collect().await.unwrap().to_bytes();
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let info = &body["error"]["details"][0];
            assert_eq!(info["domain"], domain, "{body}");
        }
        let outside = protoapi_core::Error::new(protoapi_core::Code::NotFound, "R", "m");
        assert_eq!(outside.domain(), protoapi_core::error::DEFAULT_DOMAIN);
    }
}
