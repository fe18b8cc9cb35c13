//! The API template a REST answer came from, for metrics and access lines.
//!
//! axum knows the path it routed a request by (`/v1/{*path}`), which for
//! a binding served under a wildcard or matched at run time is not the
//! API's template. Generated routes wrap each binding's handler in a
//! [`RouteTemplate`] layer, which puts the template (`/v1/{name=shelves/*}`)
//! in the answer's extensions, where the access layer reads it.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::extract::Request;
use axum::response::Response;
use tower::{Layer, Service};

/// A binding's template as the API declares it (`/v1/{name=shelves/*}`),
/// in the extensions of the answers of its handler; as a layer, what puts
/// it there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteTemplate(pub &'static str);

impl<S> Layer<S> for RouteTemplate {
    type Service = Templated<S>;

    fn layer(&self, inner: S) -> Templated<S> {
        Templated {
            inner,
            template: *self,
        }
    }
}

/// A handler whose answers carry its [`RouteTemplate`].
#[derive(Clone, Debug)]
pub struct Templated<S> {
    inner: S,
    template: RouteTemplate,
}

impl<S> Service<Request> for Templated<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Answer<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        Answer {
            inner: self.inner.call(request),
            template: self.template,
        }
    }
}

pin_project_lite::pin_project! {
    /// The answer of a [`Templated`] handler.
    pub struct Answer<F> {
        #[pin]
        inner: F,
        template: RouteTemplate,
    }
}

impl<F> Future for Answer<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut output = ready!(this.inner.poll(cx));
        if let Ok(response) = &mut output {
            response.extensions_mut().insert(*this.template);
        }
        Poll::Ready(output)
    }
}
