//! REST transcoding support for generated axum handlers.
//!
//! A generated handler collects the three parts of an HTTP request that an
//! HTTP rule maps onto the request message — path variables, query
//! parameters and the body — with [`RestRequest`], decodes the message once,
//! calls the service method gRPC also calls, and answers with [`Json`], or
//! [`Tagged`] for a resource, whose etag is also its HTTP entity-tag
//! ([`conditional`]: `ETag`, `If-Match`, `If-None-Match`).

pub mod conditional;
pub mod http_body;
pub mod route_template;
pub mod routes;
pub mod stream;
pub mod template;

pub use conditional::{Preconditions, Tagged};
pub use route_template::RouteTemplate;
pub use routes::ServiceRoutes;
pub use template::PathVars;

use std::convert::Infallible;

use axum::extract::{FromRequestParts, RawPathParams};
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::{HeaderValue, StatusCode, header};
use http_body_util::BodyExt;
use prost_reflect::MessageDescriptor;
use serde_json::{Map, Value};

use protoapi_core::error::{Code, Error, FieldViolation};
use protoapi_core::json::wire::{Field, FieldKind};
use protoapi_core::json::{self, JsonMessage};

/// Largest request body accepted (CONTRACT §5).
pub const MAX_BODY_BYTES: usize = 1 << 20;

/// Most fields a query parameter's name may follow (`a.b.c` follows 3): a
/// recursive message would otherwise let one URL nest values thousands of
/// levels deep, past what decoding can recurse through.
pub const MAX_QUERY_DEPTH: usize = 32;

/// The trailing multi-segment path variable of a route (`{x=**}`), or empty
/// when the route matched with no segments (e.g. `POST /library/v1/shelves/`).
#[derive(Debug, Default)]
pub struct PathTail(pub String);

impl<S: Send + Sync> FromRequestParts<S> for PathTail {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let tail = RawPathParams::from_request_parts(parts, state)
            .await
            .ok()
            .and_then(|params| params.iter().next().map(|(_, value)| value.to_owned()))
            .unwrap_or_default();
        Ok(PathTail(tail))
    }
}

/// Builds a request message from the parts of an HTTP request.
///
/// Every problem found (unknown query parameters, undecodable values, bad
/// JSON) is collected and reported together in one `BadRequest`. Fields are
/// found by the message's generated [`JsonMessage::json_field`], and bound
/// under their canonical JSON names, so a well-formed request decodes on the
/// generated path.
#[derive(Debug)]
pub struct RestRequest {
    field: fn(&str) -> Option<Field>,
    /// The message's descriptor, for hints at misspelt parameters.
    descriptor: fn() -> MessageDescriptor,
    fields: Map<String, Value>,
    /// Fields bound by the path (JSON names), which a `*` body cannot override.
    path_fields: Vec<&'static str>,
    violations: Vec<FieldViolation>,
    /// A problem of the request's headers, answered before its fields'.
    refused: Option<Error>,
}

/// What a query parameter naming no field of the request is.
const UNKNOWN_PARAMETER: &str = "unknown query parameter";

/// The descriptor of message type `M`.
fn descriptor_of<M: JsonMessage>() -> MessageDescriptor {
    M::default().descriptor()
}

impl RestRequest {
    /// Starts an empty request of message type `M`.
    pub fn new<M: JsonMessage>() -> Self {
        RestRequest {
            field: M::json_field,
            descriptor: descriptor_of::<M>,
            fields: Map::new(),
            path_fields: Vec::new(),
            violations: Vec::new(),
            refused: None,
        }
    }

    /// The JSON name of the request's field `name` (`name` itself when the
    /// message has no such field, for the decoder to report).
    fn json_name(&self, name: &str) -> String {
        (self.field)(name).map_or_else(|| name.to_owned(), |field| field.json_name.to_owned())
    }

    /// Binds a path variable to a top-level string field.
    pub fn path(mut self, field: &str, value: String) -> Self {
        let key = match (self.field)(field) {
            Some(bound) => {
                self.path_fields.push(bound.json_name);
                bound.json_name.to_owned()
            }
            None => field.to_owned(),
        };
        self.fields.insert(key, Value::String(value));
        self
    }

    /// Binds the values of a runtime-matched template's variables, each to
    /// its field (a dotted path through singular messages: `book.name`).
    /// Bound after the body, they win over what the body says of them.
    pub fn path_vars(mut self, vars: PathVars) -> Self {
        for (field, value) in vars.0 {
            if !field.contains('.') {
                self = self.path(field, value);
                continue;
            }
            let mut lookup = self.field;
            let mut object = &mut self.fields;
            let mut parts = field.split('.').peekable();
            while let Some(part) = parts.next() {
                let name = lookup(part).map_or_else(|| part.to_owned(), |f| f.json_name.to_owned());
                if parts.peek().is_none() {
                    object.insert(name, Value::String(value));
                    break;
                }
                if let Some(FieldKind::Message(inner)) = lookup(part).map(|f| f.kind) {
                    lookup = inner;
                }
                let entry = object
                    .entry(name)
                    .or_insert_with(|| Value::Object(Map::new()));
                if !entry.is_object() {
                    *entry = Value::Object(Map::new());
                }
                let Value::Object(inner) = entry else {
                    break;
                };
                object = inner;
            }
        }
        self
    }

    /// Binds the body to `field`, or to the whole message when `field` is `*`.
    pub fn body(mut self, field: &str, bytes: &[u8]) -> Self {
        match json::parse_body(field, bytes) {
            Ok(Value::Object(body)) if field == "*" => {
                // The path names the resource acted on; a body field naming
                // another (in either spelling) does not redirect the request.
                let bound_by_path = |key: &str| {
                    (self.field)(key).is_some_and(|f| self.path_fields.contains(&f.json_name))
                };
                let body: Vec<_> = body
                    .into_iter()
                    .filter(|(key, _)| !bound_by_path(key))
                    .collect();
                self.fields.extend(body);
            }
            Ok(body) => {
                self.fields.insert(self.json_name(field), body);
            }
            Err(error) => self
                .violations
                .extend(error.field_violations().iter().cloned()),
        }
        self
    }

    /// Refuses every query parameter: under `body: "*"` the body holds every
    /// field the path does not (`google/api/http.proto`), so a parameter
    /// would be a second, conflicting way to set one.
    pub fn no_query(mut self, query: Option<&str>) -> Self {
        for (key, _) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            self.violations.push(FieldViolation::new(
                key,
                "not a query parameter: the body holds every field the path does not",
            ));
        }
        self
    }

    /// Binds query parameters: `a.b=v` sets nested field `a.b`; repeated
    /// fields collect every occurrence. Both JSON and proto names are accepted.
    pub fn query(mut self, query: Option<&str>) -> Self {
        for (key, value) in form_urlencoded::parse(query.unwrap_or_default().as_bytes()) {
            if let Err(mut violation) = self.bind_query(&key, value.into_owned()) {
                let top = violation.description == UNKNOWN_PARAMETER && !key.contains('.');
                if top
                    && self.violations.len() < json::MAX_HINTS
                    && let Some(name) = json::meant(&(self.descriptor)(), &key)
                {
                    violation.description = format!("{UNKNOWN_PARAMETER}; did you mean `{name}`?");
                }
                self.violations.push(violation);
            }
        }
        self
    }

    fn bind_query(&mut self, key: &str, value: String) -> Result<(), FieldViolation> {
        let unknown = || FieldViolation::new(key, UNKNOWN_PARAMETER);
        if key.split('.').nth(MAX_QUERY_DEPTH).is_some() {
            return Err(FieldViolation::new(
                key,
                format!("nested more than {MAX_QUERY_DEPTH} fields deep"),
            ));
        }
        let mut lookup = self.field;
        let mut object = &mut self.fields;
        let mut segments = key.split('.').peekable();
        while let Some(segment) = segments.next() {
            let field = lookup(segment).ok_or_else(unknown)?;
            let name = field.json_name.to_owned();
            if segments.peek().is_none() {
                let value = query_value(field.kind, value)
                    .ok_or_else(|| FieldViolation::new(key, "expected `true` or `false`"))?;
                if field.repeated {
                    let list = object
                        .entry(name)
                        .or_insert_with(|| Value::Array(Vec::new()));
                    if let Value::Array(items) = list {
                        items.push(value);
                    }
                } else if let FieldKind::Map = field.kind {
                    return Err(unknown());
                } else {
                    object.insert(name, value);
                }
                return Ok(());
            }
            let FieldKind::Message(inner) = field.kind else {
                return Err(unknown());
            };
            lookup = inner;
            let entry = object
                .entry(name)
                .or_insert_with(|| Value::Object(Map::new()));
            object = match entry {
                Value::Object(map) => map,
                _ => return Err(unknown()),
            };
        }
        Err(unknown())
    }

    /// Binds the etag `If-Match` names to the request field `etag_field`
    /// (a JSON path: `etag` for the request's own, as a Delete's, or
    /// `group.etag` for the resource's in field `group`). An etag the request
    /// carries there already must be the same tag: two that differ are a
    /// violation of that field.
    pub fn if_match(mut self, preconditions: &Preconditions, etag_field: &str) -> Self {
        let Some(tag) = preconditions.if_match() else {
            return self;
        };
        let (object, key) = match etag_field.rsplit_once('.') {
            None => (&mut self.fields, etag_field),
            Some((resource, key)) => {
                let entry = self
                    .fields
                    .entry(resource)
                    .or_insert_with(|| Value::Object(Map::new()));
                let Value::Object(object) = entry else {
                    return self; // not a message: decoding reports it
                };
                (object, key)
            }
        };
        match object.get(key) {
            Some(Value::String(etag)) if !etag.is_empty() && etag != tag => {
                self.violations.push(FieldViolation::new(
                    etag_field,
                    format!(
                        "is `{etag}` but the `If-Match` header names `\"{tag}\"`: send one etag"
                    ),
                ));
            }
            None | Some(Value::String(_)) => {
                object.insert(key.to_owned(), Value::String(tag.to_owned()));
            }
            Some(_) => {} // not a string: decoding reports it
        }
        self
    }

    /// Refuses `If-Match` on a route whose answers have no entity-tag (`412`):
    /// the precondition cannot be checked, and is not silently ignored.
    pub fn without_etags(mut self, preconditions: &Preconditions) -> Self {
        if self.refused.is_none() {
            self.refused = conditional::refuse_if_match(preconditions);
        }
        self
    }

    /// Decodes the collected parts into the request message.
    pub fn decode<M: JsonMessage>(self) -> Result<M, Error> {
        if let Some(error) = self.refused {
            return Err(error);
        }
        if !self.violations.is_empty() {
            return Err(Error::invalid_fields(self.violations));
        }
        json::from_value(Value::Object(self.fields))
    }
}

/// A query value as JSON: booleans as booleans, enum numbers as numbers,
/// everything else as a string (canonical JSON parsing accepts numbers,
/// timestamps and masks as strings, and enums by name).
fn query_value(kind: FieldKind, value: String) -> Option<Value> {
    match kind {
        FieldKind::Bool => match value.as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        FieldKind::FieldMask => Some(Value::String(json::lower_camel_case(&value))),
        FieldKind::Enum => Some(match value.parse::<i32>() {
            Ok(number) => Value::from(number),
            Err(_) => Value::String(value),
        }),
        _ => Some(Value::String(value)),
    }
}

/// A successful response: the message as canonical JSON.
#[derive(Debug)]
pub struct Json<M>(pub M);

impl<M: JsonMessage> IntoResponse for Json<M> {
    fn into_response(self) -> Response {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            json::to_vec(&self.0),
        )
            .into_response()
    }
}

/// A successful response of a rule with `response_body`: only that field
/// of the message (by its JSON name), as canonical JSON.
#[derive(Debug)]
pub struct ResponseField<M>(pub M, pub &'static str);

impl<M: JsonMessage> IntoResponse for ResponseField<M> {
    fn into_response(self) -> Response {
        let field = M::json_field(self.1);
        let name = field.map_or(self.1, |field| field.json_name);
        let value = match serde_json::from_slice::<Value>(&json::to_vec(&self.0)) {
            Ok(Value::Object(mut fields)) => fields.remove(name),
            _ => None,
        };
        // Canonical JSON leaves a field at its default out: answer that
        // default (`null` for scalars, which decoding reads as the default).
        let value = value.unwrap_or_else(|| match field {
            Some(field) if field.repeated => Value::Array(Vec::new()),
            Some(Field {
                kind: FieldKind::Message(_) | FieldKind::Map,
                ..
            }) => Value::Object(Map::new()),
            Some(Field {
                kind: FieldKind::Bool,
                ..
            }) => Value::Bool(false),
            _ => Value::Null,
        });
        let body = value.to_string().into_bytes();
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response()
    }
}

/// Fallback for paths no route matches: gRPC `UNIMPLEMENTED` for gRPC
/// requests, a JSON `NOT_FOUND` otherwise.
pub async fn fallback(request: axum::extract::Request) -> Response {
    not_found(request.uri().path(), request.headers())
}

/// The answer of [`fallback`] for `path`.
pub(crate) fn not_found(path: &str, headers: &http::HeaderMap) -> Response {
    if is_grpc(headers) {
        let status: tonic::Status = Error::new(
            Code::Unimplemented,
            "UNKNOWN_METHOD",
            format!("no gRPC method `{}`", protoapi_core::error::excerpt(path)),
        )
        .into();
        return status.into_http();
    }
    Error::new(
        Code::NotFound,
        "ROUTE_NOT_FOUND",
        format!(
            "no API route matches `{}`",
            protoapi_core::error::excerpt(path)
        ),
    )
    .into_response()
}

/// Whether a request is gRPC (by its content type).
pub fn is_grpc(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/grpc"))
}

/// An error as the response its transport expects: a gRPC status for gRPC
/// requests, the JSON error body otherwise.
pub fn error_response(error: Error, grpc: bool) -> Response {
    if grpc {
        tonic::Status::from(error).into_http()
    } else {
        error.into_response()
    }
}

/// `next`'s answer to `request`, or `INTERNAL` (no detail leaks; the panic
/// is logged) when it panics, so the connection and the server keep
/// serving.
pub async fn catch_panic<F: Future<Output = Response>>(
    request: axum::extract::Request,
    next: impl FnOnce(axum::extract::Request) -> F,
) -> Response {
    use futures_util::FutureExt;
    let grpc = is_grpc(request.headers());
    match std::panic::AssertUnwindSafe(next(request))
        .catch_unwind()
        .await
    {
        Ok(response) => response,
        Err(_) => error_response(Error::internal("a request handler panicked"), grpc),
    }
}

/// Fallback for a matched path with a method it does not serve.
pub async fn method_not_allowed(method: http::Method, uri: http::Uri) -> Response {
    not_allowed(&method, uri.path())
}

/// The answer of [`method_not_allowed`].
pub(crate) fn not_allowed(method: &http::Method, path: &str) -> Response {
    let error = Error::new(
        Code::InvalidArgument,
        "METHOD_NOT_ALLOWED",
        format!(
            "`{}` is not served on `{}`",
            protoapi_core::error::excerpt(method.as_str()),
            protoapi_core::error::excerpt(path)
        ),
    )
    .with_http_status(StatusCode::METHOD_NOT_ALLOWED);
    error.into_response()
}

/// The error for a request body above [`MAX_BODY_BYTES`].
pub fn body_too_large() -> Error {
    Error::new(
        Code::ResourceExhausted,
        "BODY_TOO_LARGE",
        format!("the request body exceeds {MAX_BODY_BYTES} bytes"),
    )
    .with_http_status(StatusCode::PAYLOAD_TOO_LARGE)
}

/// Whether a body of this type is read as JSON: `application/json`,
/// `application/*+json`, and `application/x-www-form-urlencoded` (what
/// `curl -d` sends when no type is given; no method of this API takes forms).
fn is_json_content_type(value: &HeaderValue) -> bool {
    let mime = value
        .to_str()
        .ok()
        .and_then(|value| value.split(';').next())
        .map(|mime| mime.trim().to_ascii_lowercase())
        .unwrap_or_default();
    mime == "application/json"
        || mime == "application/x-www-form-urlencoded"
        || (mime.starts_with("application/") && mime.ends_with("+json"))
}

/// The raw request body, at most [`MAX_BODY_BYTES`], of a JSON content type.
#[derive(Debug, Default)]
pub struct Body(pub bytes::Bytes);

impl<S: Send + Sync> axum::extract::FromRequest<S> for Body {
    type Rejection = Error;

    async fn from_request(request: axum::extract::Request, _state: &S) -> Result<Self, Error> {
        if let Some(content_type) = request.headers().get(header::CONTENT_TYPE)
            && !is_json_content_type(content_type)
        {
            return Err(Error::new(
                Code::InvalidArgument,
                "UNSUPPORTED_CONTENT_TYPE",
                "request bodies are JSON: send `Content-Type: application/json`",
            )
            .with_http_status(StatusCode::UNSUPPORTED_MEDIA_TYPE));
        }
        Ok(Body(read_body(request).await?))
    }
}

/// Bytes past [`MAX_BODY_BYTES`] read and dropped before a body is refused
/// as too large: a client still sending a body a little too large then
/// reads the 413 (HTTP/1 keeps the connection; HTTP/2 ends the stream
/// cleanly) instead of losing it to a reset of its unfinished upload. A body
/// larger still is refused at once, by its `Content-Length` when it has one;
/// one that stops coming while it is dropped is answered at the body
/// timeout (408), like any stalled body.
pub const DISCARDED_BODY_BYTES: usize = MAX_BODY_BYTES / 2;

/// The request's body, at most [`MAX_BODY_BYTES`]: a larger one is refused
/// (see [`DISCARDED_BODY_BYTES`]).
pub(crate) async fn read_body(request: axum::extract::Request) -> Result<bytes::Bytes, Error> {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|length| length.to_str().ok()?.parse::<u64>().ok());
    let mut body = request.into_body();
    if let Some(length) = declared.filter(|length| *length > MAX_BODY_BYTES as u64) {
        if length <= (MAX_BODY_BYTES + DISCARDED_BODY_BYTES) as u64 {
            discard(&mut body, MAX_BODY_BYTES + DISCARDED_BODY_BYTES).await;
        }
        return Err(body_too_large());
    }
    match http_body_util::Limited::new(&mut body, MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => {
            discard(&mut body, DISCARDED_BODY_BYTES).await;
            Err(body_too_large())
        }
        Err(_) => Err(body_too_large()),
    }
}

/// Reads and drops the rest of `body` while it stays within `allowance`
/// bytes (the body timeout bounds how long).
async fn discard(body: &mut axum::body::Body, mut allowance: usize) {
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(data) = frame.into_data() {
            let Some(left) = allowance.checked_sub(data.len()) else {
                return;
            };
            allowance = left;
        }
    }
}

/// The response of methods returning `google.protobuf.Empty`: `{}`.
#[derive(Debug, Default)]
pub struct Empty;

impl IntoResponse for Empty {
    fn into_response(self) -> Response {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            "{}",
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::routing::get;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    async fn boom() -> &'static str {
        panic!("secret /var/lib/db.sqlite: SELECT * FROM groups")
    }

    #[tokio::test]
    async fn a_panicking_handler_becomes_internal_without_leaks() {
        let app = Router::new()
            .route("/boom", get(boom))
            .route("/ok", get(|| async { "fine" }))
            .layer(axum::middleware::from_fn(
                |request: axum::extract::Request, next: axum::middleware::Next| {
                    catch_panic(request, |request| next.run(request))
                },
            ));
        let request = || {
            http::Request::get("/boom")
                .body(axum::body::Body::empty())
                .unwrap()
        };
        let response = app.clone().oneshot(request()).await.unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["status"], "INTERNAL");
        assert_eq!(body["error"]["message"], "internal error");
        let text = body.to_string();
        assert!(
            !text.contains("secret") && !text.contains("SELECT"),
            "{text}"
        );

        let grpc = http::Request::get("/boom")
            .header(header::CONTENT_TYPE, "application/grpc")
            .body(axum::body::Body::empty())
            .unwrap();
        let response = app.clone().oneshot(grpc).await.unwrap();
        assert_eq!(response.headers()["grpc-status"], "13");

        let ok = http::Request::get("/ok")
            .body(axum::body::Body::empty())
            .unwrap();
        assert_eq!(
            app.oneshot(ok).await.unwrap().status(),
            StatusCode::OK,
            "still serving"
        );
    }

    #[test]
    fn enums_are_bound_from_the_query_by_name_or_number() {
        assert_eq!(
            query_value(FieldKind::Enum, "2".into()),
            Some(Value::from(2))
        );
        assert_eq!(
            query_value(FieldKind::Enum, "-1".into()),
            Some(Value::from(-1))
        );
        assert_eq!(
            query_value(FieldKind::Enum, "PYPI".into()),
            Some(Value::String("PYPI".into()))
        );
        // Not an `i32`: left to decoding, which reports the field.
        assert_eq!(
            query_value(FieldKind::Enum, "99999999999".into()),
            Some(Value::String("99999999999".into()))
        );
        assert_eq!(query_value(FieldKind::Bool, "yes".into()), None);
    }

    #[test]
    fn masks_are_spelled_in_camel_case() {
        assert_eq!(
            json::lower_camel_case("resource_limits.clusters,name"),
            "resourceLimits.clusters,name"
        );
        assert_eq!(json::lower_camel_case("*"), "*");
    }

    #[tokio::test]
    async fn refusals_of_unknown_paths_quote_an_excerpt_of_them() {
        let path = format!("/{}", "a".repeat(60_000));
        let method = http::Method::from_bytes("X".repeat(10_000).as_bytes()).unwrap();
        let mut grpc = http::HeaderMap::new();
        grpc.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/grpc"),
        );
        for response in [
            not_found(&path, &http::HeaderMap::new()),
            not_allowed(&method, &path),
        ] {
            let body = response.into_body().collect().await.unwrap().to_bytes();
            assert!(body.len() < 2048, "an answer of {} bytes", body.len());
        }
        let status = not_found(&path, &grpc);
        let message = status.headers()["grpc-message"].len();
        assert!(message < 1024, "a grpc-message of {message} bytes");
    }
}
