//! A service's REST routes, and the runtime-matched bindings of every service
//! mounted together.
//!
//! A generated `x_routes` function answers [`ServiceRoutes`]: the axum
//! routes of the bindings axum can route, and the bindings matched at run
//! time ([`super::template`]), each under the literal prefix the generator
//! chose for it, with its handler. Prefixes are chosen over the whole API,
//! so bindings of several services (of several packages, even) may share
//! one: `/v1/{name=shelves/*}` in one service and `/v1/{name=publishers/*}`
//! in another. [`ServiceRoutes::into_router`] mounts one dispatcher per
//! prefix for all the bindings it holds, so
//! the API's router (`ApiRouter`) merges the services' routes first
//! and mounts their bindings together.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::response::Response;
use tower::util::BoxCloneSyncService;
use tower::{Service, ServiceExt};

use super::template::{Binding, select};

/// A binding's handler with its state.
type Handler = BoxCloneSyncService<Request, Response, Infallible>;

/// One runtime-matched binding and its handler.
struct Matched {
    prefix: &'static str,
    binding: Binding,
    handler: Handler,
}

/// The REST routes of one service (or of several, [merged](Self::merge)).
#[derive(Default)]
#[must_use]
pub struct ServiceRoutes {
    router: Router,
    matched: Vec<Matched>,
}

impl std::fmt::Debug for ServiceRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceRoutes")
            .field(
                "matched",
                &self
                    .matched
                    .iter()
                    .map(|m| (m.prefix, m.binding.method))
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl From<Router> for ServiceRoutes {
    fn from(router: Router) -> Self {
        ServiceRoutes::new(router)
    }
}

impl ServiceRoutes {
    /// Routes axum matches, and no runtime-matched binding yet.
    pub fn new(router: Router) -> Self {
        ServiceRoutes {
            router,
            matched: Vec::new(),
        }
    }

    /// Adds `binding`, served by `handler` (an axum handler with its state,
    /// `handler.with_state(api)`), matched under `prefix` (`/v1`; empty
    /// for templates that start with a variable).
    pub fn matched<H>(mut self, prefix: &'static str, binding: Binding, handler: H) -> Self
    where
        H: Service<Request, Response = Response, Error = Infallible>
            + Clone
            + Send
            + Sync
            + 'static,
        H::Future: Send + 'static,
    {
        self.matched.push(Matched {
            prefix,
            binding,
            handler: BoxCloneSyncService::new(handler),
        });
        self
    }

    /// Both sets of routes; bindings under one prefix are matched together.
    pub fn merge(mut self, other: ServiceRoutes) -> Self {
        self.router = self.router.merge(other.router);
        self.matched.extend(other.matched);
        self
    }

    /// The router: the axum routes, and for each prefix one route (`/v1`,
    /// `/v1/`, `/v1/{*rest}`) whose handler tries every binding under it in
    /// precedence order ([`select`]) and calls the first that matches.
    pub fn into_router(self) -> Router {
        let mut by_prefix: BTreeMap<&str, Vec<Matched>> = BTreeMap::new();
        for matched in self.matched {
            by_prefix.entry(matched.prefix).or_default().push(matched);
        }
        let mut router = self.router;
        for (prefix, mut matched) in by_prefix {
            matched.sort_by(|a, b| {
                let key = |m: &Matched| m.binding.template.precedence();
                key(a).cmp(&key(b))
            });
            let (bindings, handlers) = matched.into_iter().map(|m| (m.binding, m.handler)).unzip();
            let table: Arc<Table> = Arc::new(Table { bindings, handlers });
            let dispatch = axum::routing::any(move |request: Request| dispatch(table, request));
            let paths = if prefix.is_empty() {
                vec!["/".to_owned(), "/{*rest}".to_owned()]
            } else {
                vec![
                    prefix.to_owned(),
                    format!("{prefix}/"),
                    format!("{prefix}/{{*rest}}"),
                ]
            };
            for path in paths {
                router = router.route(&path, dispatch.clone());
            }
        }
        router
    }
}

/// The bindings under one prefix, in precedence order, and their handlers.
struct Table {
    bindings: Vec<Binding>,
    handlers: Vec<Handler>,
}

async fn dispatch(table: Arc<Table>, mut request: Request) -> Response {
    match select(&table.bindings, &mut request) {
        Err(refused) => *refused,
        Ok(index) => match table.handlers[index].clone().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rest::template::{PathVars, Segment, Template, Variable};
    use axum::handler::Handler as _;
    use http::StatusCode;

    const fn binding(segments: &'static [Segment], verb: Option<&'static str>) -> Binding {
        Binding {
            method: "GET",
            template: Template {
                segments,
                variables: &[Variable {
                    field: "name",
                    start: 1,
                    end: 3,
                }],
                verb,
            },
        }
    }

    async fn named(label: &'static str, vars: PathVars) -> String {
        format!("{label} {}", vars.0[0].1)
    }

    async fn get(router: &Router, path: &str) -> (StatusCode, String) {
        let request = Request::get(path).body(axum::body::Body::empty()).unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn bindings_of_two_services_under_one_prefix_are_matched_together() {
        use Segment::{Any, Literal};
        let shelves = ServiceRoutes::new(Router::new()).matched(
            "/v1",
            binding(&[Literal("v1"), Literal("shelves"), Any], None),
            (|vars| named("shelf", vars)).with_state(()),
        );
        let publishers = ServiceRoutes::new(Router::new()).matched(
            "/v1",
            binding(&[Literal("v1"), Literal("publishers"), Any], None),
            (|vars| named("publisher", vars)).with_state(()),
        );
        // A `*` matches what a literal does not, whichever service holds it.
        let anything = ServiceRoutes::new(Router::new()).matched(
            "/v1",
            binding(&[Literal("v1"), Any, Any], None),
            (|vars| named("any", vars)).with_state(()),
        );
        let router = anything.merge(shelves).merge(publishers).into_router();
        assert_eq!(
            get(&router, "/v1/shelves/1").await,
            (StatusCode::OK, "shelf shelves/1".to_owned())
        );
        assert_eq!(
            get(&router, "/v1/publishers/p").await,
            (StatusCode::OK, "publisher publishers/p".to_owned())
        );
        assert_eq!(
            get(&router, "/v1/authors/a").await,
            (StatusCode::OK, "any authors/a".to_owned())
        );
        assert_eq!(get(&router, "/v1/authors").await.0, StatusCode::NOT_FOUND);
    }
}
