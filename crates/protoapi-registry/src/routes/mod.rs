//! Every endpoint under `/v2/`, dispatched by path and method after the
//! caller's credentials are read and its access to the repository checked.

mod blobs;
mod manifests;
mod reply;
mod uploads;

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderValue, Method, StatusCode};

use crate::access::Actions;
use crate::error::{API_VERSION, Code, RegistryError, Result};
use crate::path::{self, Endpoint};
use crate::registry::Registry;
use crate::token::Presented;
use reply::{reply, unsupported};

const PULL: Actions = Actions {
    pull: true,
    push: false,
    delete: false,
};
const PUSH: Actions = Actions {
    pull: false,
    push: true,
    delete: false,
};
const DELETE: Actions = Actions {
    pull: false,
    push: false,
    delete: true,
};

/// Answers a request under `/v2/`.
pub(crate) async fn serve(State(registry): State<Arc<Registry>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let mut response = match answer(&registry, &parts, body).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    };
    response
        .headers_mut()
        .insert(API_VERSION.0, HeaderValue::from_static(API_VERSION.1));
    response
}

async fn answer(registry: &Registry, parts: &Parts, body: Body) -> Result<Response> {
    let rest = parts.uri.path().strip_prefix("/v2").unwrap_or_default();
    let rest = rest.strip_prefix('/').unwrap_or(rest);
    let endpoint = path::parse(rest)?.ok_or_else(|| {
        RegistryError::new(
            Code::NameUnknown,
            "no endpoint of the registry has this path",
        )
    })?;
    let presented = registry.presented(&parts.headers)?;
    let query: HashMap<String, String> = parts
        .uri
        .query()
        .map(|query| {
            form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default();
    let method = &parts.method;
    let head = method == Method::HEAD;
    let needed = match (&endpoint, method) {
        (Endpoint::Base, _) => return base(registry, &presented),
        (_, &Method::DELETE) => DELETE,
        (Endpoint::Uploads { .. } | Endpoint::Upload { .. }, _)
        | (Endpoint::Manifest { .. }, &Method::PUT) => PUSH,
        _ => PULL,
    };
    if let Some(name) = endpoint.name() {
        registry.require(&presented, name, needed).await?;
    }
    match (endpoint, method) {
        (Endpoint::Blob { name, digest }, &Method::GET | &Method::HEAD) => {
            blobs::get(registry, name, &digest, &parts.headers, head).await
        }
        (Endpoint::Blob { name, digest }, &Method::DELETE) => {
            blobs::delete(registry, name, &digest).await
        }
        (Endpoint::Uploads { name }, &Method::POST) => {
            uploads::start(registry, &presented, name, &query, body).await
        }
        (Endpoint::Upload { name, id }, &Method::GET) => uploads::status(registry, name, id).await,
        (Endpoint::Upload { name, id }, &Method::PATCH) => {
            uploads::patch(registry, name, id, &parts.headers, body).await
        }
        (Endpoint::Upload { name, id }, &Method::PUT) => {
            uploads::finish(registry, name, id, &query, body).await
        }
        (Endpoint::Upload { name, id }, &Method::DELETE) => {
            uploads::cancel(registry, name, id).await
        }
        (Endpoint::Manifest { name, reference }, &Method::GET | &Method::HEAD) => {
            manifests::get(registry, name, &reference, head).await
        }
        (Endpoint::Manifest { name, reference }, &Method::PUT) => {
            manifests::put(registry, name, &reference, &parts.headers, body).await
        }
        (Endpoint::Manifest { name, reference }, &Method::DELETE) => {
            manifests::delete(registry, name, &reference).await
        }
        (Endpoint::Tags { name }, &Method::GET) => manifests::tags(registry, name, &query).await,
        (Endpoint::Referrers { name, digest }, &Method::GET) => {
            manifests::referrers(registry, name, &digest, &query).await
        }
        _ => Err(unsupported()),
    }
}

/// `/v2/`: `200 {}` for a caller with credentials; a challenge for one
/// without, so that clients log in before anything else.
fn base(registry: &Registry, presented: &Presented) -> Result<Response> {
    match presented {
        Presented::Anonymous => Err(registry.refusal("authentication required")),
        _ => reply(
            StatusCode::OK,
            &[("content-type", "application/json")],
            Body::from("{}"),
        ),
    }
}
