//! The app every test serves, and one request to it.

mod shop;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use hostile_names::hostile;
use http_body_util::BodyExt;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::standard::ApiContext;
use protoapi_runtime::{Caller, Error};
use serde_json::Value;
use tower::ServiceExt;

/// Answers `Move` with the request, `Turn` with a page after it.
pub struct Echo;

impl hostile::r#type::MatchHandler for Echo {
    async fn r#move(
        &self,
        _caller: &Caller,
        request: hostile::r#type::Ref,
    ) -> Result<hostile::r#type::Ref, Error> {
        Ok(request)
    }

    async fn turn(
        &self,
        _caller: &Caller,
        request: hostile::r#type::Ref,
    ) -> Result<hostile::r#type::Page, Error> {
        Ok(hostile::r#type::Page {
            next: request.self_,
        })
    }
}

/// Every service of the crate over one memory store, as the system caller.
pub fn app() -> axum::Router {
    let context = ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all());
    hostile_names::Services::new(context)
        .store(Arc::new(protoapi_runtime::memory::MemoryStore::default()))
        .r#match(Arc::new(Echo))
        .widgets(Arc::new(shop::Shop::default()))
        .layer(axum::Extension(Caller::System))
        .build()
        .unwrap()
}

/// `method path` with a JSON `body`: the status and the JSON answer.
pub async fn call(
    app: &axum::Router,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(body.map_or_else(Body::empty, |body| Body::from(body.to_string())))
        .unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}
