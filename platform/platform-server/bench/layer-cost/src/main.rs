//! `layer-cost LAYERS PORT [from-fn|chain]`: serves `GET /` ("hello")
//! behind LAYERS middleware that only pass the request on, as axum
//! `from_fn` layers (the default) or as a chain.
//!
//! A `from_fn` layer, per request, clones the service inside it (every
//! layer below, one by one), boxes it and boxes two futures. A link of the
//! chain clones one `Arc` (the rest of the chain) and boxes one future.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::extract::Request;
use axum::response::Response;
use axum::routing::get;
use tower::{Service, ServiceExt};

type Answer = Pin<Box<dyn Future<Output = Response> + Send>>;

/// What a link of the chain calls: the next link, or the router.
trait Handle: Send + Sync + 'static {
    fn handle(&self, request: Request) -> Answer;
}

/// The rest of the chain, as a middleware sees it.
#[derive(Clone)]
struct Next(Arc<dyn Handle>);

impl Next {
    fn run(self, request: Request) -> Answer {
        self.0.handle(request)
    }
}

/// A middleware function in front of `next`.
struct Link<F> {
    middleware: F,
    next: Next,
}

impl<F, A> Handle for Link<F>
where
    F: Fn(Request, Next) -> A + Send + Sync + 'static,
    A: Future<Output = Response> + Send + 'static,
{
    fn handle(&self, request: Request) -> Answer {
        Box::pin((self.middleware)(request, self.next.clone()))
    }
}

impl Handle for Router {
    fn handle(&self, request: Request) -> Answer {
        let router = self.clone();
        Box::pin(async move {
            let Ok(response) = router.oneshot(request).await;
            response
        })
    }
}

/// The chain as the tower service the server runs.
#[derive(Clone)]
struct Chain(Next);

impl Service<Request> for Chain {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let answer = self.0.clone().run(request);
        Box::pin(async move { Ok(answer.await) })
    }
}

async fn pass(request: Request, next: axum::middleware::Next) -> Response {
    next.run(request).await
}

async fn pass_on(request: Request, next: Next) -> Response {
    next.run(request).await
}

fn router(layers: usize, chain: bool) -> Router {
    let hello = Router::new().route("/", get(|| async { "hello" }));
    if !chain {
        return (0..layers).fold(hello, |router, _| {
            router.layer(axum::middleware::from_fn(pass))
        });
    }
    let next = (0..layers).fold(Next(Arc::new(hello)), |next, _| {
        Next(Arc::new(Link {
            middleware: pass_on,
            next,
        }))
    });
    Router::new().fallback_service(Chain(next))
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(layers), Some(port)) = (args.next(), args.next()) else {
        eprintln!("usage: layer-cost LAYERS PORT [from-fn|chain]");
        std::process::exit(2);
    };
    let layers: usize = layers.parse().expect("LAYERS is a number");
    let port: u16 = port.parse().expect("PORT is a port");
    let chain = args.next().as_deref() == Some("chain");
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("the port is free");
    axum::serve(listener, router(layers, chain))
        .await
        .expect("serves");
}
