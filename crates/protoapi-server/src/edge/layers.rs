//! What `ApiRouter::layer` takes: the
//! concerns of the edge, each with its `layer` method, and tower layers.

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::response::IntoResponse;
use axum::routing::Route;
use tower::{Layer, Service};

use crate::authenticate::Authentication;

type AddLayer = Box<dyn FnOnce(Router) -> Router + Send>;

/// The layers of a router being built: the concerns of its edge, and the
/// tower layers around its routes (see [`RouteLayer`]).
#[derive(Default)]
pub struct Layers {
    wrap: Vec<AddLayer>,
    pub(crate) concerns: Concerns,
}

impl fmt::Debug for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Layers")
            .field("wrap", &self.wrap.len())
            .field("concerns", &self.concerns)
            .finish()
    }
}

impl Layers {
    /// `routes` inside every tower layer added, the last added outermost.
    pub(crate) fn wrap(&mut self, routes: Router) -> Router {
        self.wrap
            .drain(..)
            .fold(routes, |routes, wrap| wrap(routes))
    }
}

/// What `ApiRouter::layer` takes: a
/// concern of the router's edge (the access log, authentication, the rate
/// limit; see the `router` module),
/// or a tower layer that [`axum::Router::layer`] accepts, such as
/// `axum::middleware::from_fn(authenticate)` or `axum::Extension(value)`.
pub trait RouteLayer: Send + 'static {
    /// Adds itself to the layers of the router being built.
    fn add_to(self, layers: &mut Layers);
}

impl<L> RouteLayer for L
where
    L: Layer<Route> + Clone + Send + Sync + 'static,
    L::Service: Service<Request> + Clone + Send + Sync + 'static,
    <L::Service as Service<Request>>::Response: IntoResponse + 'static,
    <L::Service as Service<Request>>::Error: Into<Infallible> + 'static,
    <L::Service as Service<Request>>::Future: Send + 'static,
{
    fn add_to(self, layers: &mut Layers) {
        layers
            .wrap
            .push(Box::new(move |router: Router| router.layer(self)));
    }
}

/// The concerns of the edge that `ApiRouter::layer`
/// configures, each optional.
#[derive(Clone, Debug, Default)]
pub(crate) struct Concerns {
    pub(super) authentication: Option<Arc<Authentication>>,
    #[cfg(feature = "observe")]
    pub(super) observe: Option<crate::observe::Observe>,
    #[cfg(feature = "ratelimit")]
    pub(super) limit: Option<crate::ratelimit::RateLimiter>,
}

impl Concerns {
    /// Whether answers need their route's template (for the access log).
    pub(crate) fn needs_templates(&self) -> bool {
        #[cfg(feature = "observe")]
        return self.observe.is_some();
        #[cfg(not(feature = "observe"))]
        false
    }
}

impl Authentication {
    /// Authentication for `Services::layer` / `ApiRouter::layer`:
    /// it runs at the router's edge (see the `router` module), after the
    /// access log's start and before the rate limit.
    pub fn layer(self) -> impl RouteLayer {
        Authenticate(Arc::new(self))
    }
}

/// Authentication at the edge ([`Authentication::layer`]).
struct Authenticate(Arc<Authentication>);

impl RouteLayer for Authenticate {
    fn add_to(self, layers: &mut Layers) {
        layers.concerns.authentication = Some(self.0);
    }
}

#[cfg(feature = "observe")]
impl crate::observe::Observe {
    /// The layer, for `Services::layer` / `ApiRouter::layer`:
    /// it runs at the router's edge (see the `router` module), before
    /// authentication, so that it sees every answer.
    pub fn layer(self) -> impl RouteLayer {
        Access(self)
    }
}

/// The access log at the edge ([`Observe::layer`](crate::observe::Observe::layer)).
#[cfg(feature = "observe")]
struct Access(crate::observe::Observe);

#[cfg(feature = "observe")]
impl RouteLayer for Access {
    fn add_to(self, layers: &mut Layers) {
        layers.concerns.observe = Some(self.0);
    }
}

#[cfg(feature = "ratelimit")]
impl crate::ratelimit::RateLimiter {
    /// The limit, for `Services::layer` / `ApiRouter::layer`:
    /// it runs at the router's edge (see the `router` module), after
    /// authentication.
    pub fn layer(self) -> impl RouteLayer {
        Limit(self)
    }
}

/// The rate limit at the edge ([`RateLimiter::layer`](crate::ratelimit::RateLimiter::layer)).
#[cfg(feature = "ratelimit")]
struct Limit(crate::ratelimit::RateLimiter);

#[cfg(feature = "ratelimit")]
impl RouteLayer for Limit {
    fn add_to(self, layers: &mut Layers) {
        layers.concerns.limit = Some(self.0);
    }
}
