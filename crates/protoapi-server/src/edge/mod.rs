//! The router's edge: every request's cross-cutting work in one service in
//! front of the routes, as plain calls. Each concern is an `async fn` that
//! takes the rest of the way as a closure, and a request that needs none of
//! a concern's work pays a branch: no per-concern clone of the services
//! below, no boxed future per concern (what `axum::middleware::from_fn`
//! layers cost).
//!
//! The edge's future is boxed in four parts (the whole, then below the
//! browsers' concerns, below the access record and below the rate limit),
//! not one: a future is moved into its caller's state when it is first
//! awaited, and moving one copies all of it, so with each stage holding
//! the next, a request copied the sum of ten nested futures' sizes. Three
//! more allocations cost less than those copies: 39,000 instructions for
//! a request of the 404 route against 55,700 (callgrind, BENCHMARKS.md).
//!
//! In the order a request meets them:
//!
//! 1. the API's error domain, scoped around everything
//!    ([`scoped_domain`](protoapi_core::error::scoped_domain));
//! 2. CORS, when configured ([`web`](crate::web));
//! 3. gRPC-Web translated into gRPC ([`web::grpc_web`]);
//! 4. panics caught ([`catch_panic`](protoapi_http::rest::catch_panic));
//! 5. the probes (`/healthz`, `/readyz`), answered here, before anything
//!    below;
//! 6. the console's session ([`protoapi_console::session::attach`]);
//! 7. the access log, metrics and trace context ([`Observe::layer`](crate::observe::Observe::layer));
//! 8. authentication ([`Authentication::layer`]);
//! 9. the rate limit ([`RateLimiter::layer`](crate::ratelimit::RateLimiter::layer));
//! 10. the error model of gRPC requests that fail before a handler
//!     ([`grpc::request_errors`]);
//! 11. the routes, each inside the layers added with
//!     `ApiRouter::layer` that are
//!     plain tower layers.
//!
//! The routes run after the edge has started a request's access record, so
//! a route answers its template ([`MatchedPath`]) in its response's
//! extensions ([`NoteTemplate`]) for the access line to read.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::extract::Request;
use axum::response::Response;
use futures_util::future::BoxFuture;
use tower::Service;

use crate::authenticate::identify;
use crate::web::CorsState;

mod layers;
mod template;

use crate::{grpc, web};
pub(crate) use layers::Concerns;
pub use layers::{Layers, RouteLayer};
use protoapi_http::rest::catch_panic;
pub(crate) use template::NoteTemplate;

/// Everything the edge runs, and the routes behind it.
pub(crate) struct Stages {
    pub(crate) domain: &'static str,
    pub(crate) cors: Option<Arc<CorsState>>,
    pub(crate) probes: Option<Router>,
    pub(crate) console: Option<protoapi_console::session::Gate>,
    pub(crate) concerns: Concerns,
    pub(crate) routes: Router,
}

/// The edge as a service; clones share their stages.
#[derive(Clone)]
pub(crate) struct Edge(Arc<Stages>);

impl Edge {
    pub(crate) fn new(stages: Stages) -> Self {
        Edge(Arc::new(stages))
    }
}

impl Service<Request> for Edge {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let stages = Arc::clone(&self.0);
        Box::pin(async move {
            let answer = stages.serve(request);
            Ok(protoapi_core::error::scoped_domain(stages.domain, answer).await)
        })
    }
}

impl Stages {
    async fn serve(&self, request: Request) -> Response {
        match &self.cors {
            Some(cors) => web::cors(cors, request, |request| self.browsers(request)).await,
            None => self.browsers(request).await,
        }
    }

    async fn browsers(&self, request: Request) -> Response {
        web::grpc_web(request, |request| Box::pin(self.guarded(request))).await
    }

    async fn guarded(&self, request: Request) -> Response {
        catch_panic(request, |request| self.probed(request)).await
    }

    async fn probed(&self, request: Request) -> Response {
        let path = request.uri().path();
        if let Some(probes) = &self.probes
            && (path == protoapi_http::probe::HEALTHZ || path == protoapi_http::probe::READYZ)
        {
            return answer(probes, request).await;
        }
        match &self.console {
            Some(gate) => {
                let next = |request| self.observed(request);
                protoapi_console::session::attach(gate, request, next).await
            }
            None => self.observed(request).await,
        }
    }

    async fn observed(&self, request: Request) -> Response {
        #[cfg(feature = "observe")]
        if let Some(observe) = &self.concerns.observe {
            let next = |request| Box::pin(self.authenticated(request));
            return crate::observe::access::observe(observe, request, next).await;
        }
        Box::pin(self.authenticated(request)).await
    }

    async fn authenticated(&self, request: Request) -> Response {
        match &self.concerns.authentication {
            Some(auth) => identify(auth, request, |request| self.noted(request)).await,
            None => self.limited(request).await,
        }
    }

    /// Names the caller authentication found in the answer, for the access
    /// line.
    async fn noted(&self, request: Request) -> Response {
        #[cfg(feature = "observe")]
        if self.concerns.observe.is_some() {
            let caller = protoapi_core::Caller::from_extensions(request.extensions());
            let mut response = self.limited(request).await;
            if let Some(name) = crate::observe::CallerName::of(&caller) {
                response.extensions_mut().insert(name);
            }
            return response;
        }
        self.limited(request).await
    }

    async fn limited(&self, request: Request) -> Response {
        #[cfg(feature = "ratelimit")]
        if let Some(limiter) = &self.concerns.limit {
            let next = |request| Box::pin(self.routed(request));
            return crate::ratelimit::limit(limiter, request, next).await;
        }
        Box::pin(self.routed(request)).await
    }

    async fn routed(&self, request: Request) -> Response {
        grpc::request_errors(request, |request| answer(&self.routes, request)).await
    }
}

/// `router`'s answer to `request`.
async fn answer(router: &Router, request: Request) -> Response {
    let Ok(response) = router.clone().call(request).await;
    response
}

#[cfg(test)]
mod tests;
