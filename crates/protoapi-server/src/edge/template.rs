//! Answers that carry their route's template, for the access line.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::extract::{MatchedPath, Request};
use axum::response::Response;
use tower::{Layer, Service};

/// A layer for every route: its answers carry its template
/// ([`MatchedPath`]) in their extensions.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NoteTemplate;

impl<S> Layer<S> for NoteTemplate {
    type Service = Noting<S>;

    fn layer(&self, inner: S) -> Noting<S> {
        Noting(inner)
    }
}

/// A route whose answers carry its template; see [`NoteTemplate`].
#[derive(Clone, Debug)]
pub struct Noting<S>(S);

impl<S> Service<Request> for Noting<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Noted<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let template = request.extensions().get::<MatchedPath>().cloned();
        Noted {
            inner: self.0.call(request),
            template,
        }
    }
}

pin_project_lite::pin_project! {
    /// The answer of a [`Noting`] route.
    pub struct Noted<F> {
        #[pin]
        inner: F,
        template: Option<MatchedPath>,
    }
}

impl<F, E> Future for Noted<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut output = ready!(this.inner.poll(cx));
        if let (Ok(response), Some(template)) = (&mut output, this.template.take()) {
            response.extensions_mut().insert(template);
        }
        Poll::Ready(output)
    }
}
