//! The REST/JSON transport: a request message becomes the path, query and
//! body its `google.api.http` rule describes (the reverse of
//! [`crate::rest::RestRequest`]), and the canonical JSON answer becomes the
//! response message.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Map, Value};

use super::tls::{HttpsConnector, Tls};
use super::{Route, unavailable};
use crate::error::{Code, Error};
use crate::json::wire::FieldKind;
use crate::json::{self, JsonMessage};

/// The largest answer read, as the gRPC transport's (tonic's default decoding
/// limit): a server cannot make the client buffer without bound.
const MAX_RESPONSE_BYTES: usize = 4 << 20;

#[derive(Clone)]
pub(super) struct Rest {
    base_url: String,
    http: Client<HttpsConnector, Full<Bytes>>,
}

impl Rest {
    pub(super) fn new(base_url: &str, tls: &Tls) -> Result<Self, Error> {
        let base_url = base_url.trim_end_matches('/').to_owned();
        let scheme = tls.scheme(&base_url)?;
        Ok(Rest {
            http: Client::builder(TokioExecutor::new()).build(tls.connector_for(scheme)?),
            base_url,
        })
    }

    pub(super) fn base_url(&self) -> &str {
        &self.base_url
    }

    pub(super) async fn call<Req, Resp>(
        &self,
        route: &Route,
        request: Req,
        token: Option<&str>,
    ) -> Result<Resp, Error>
    where
        Req: JsonMessage,
        Resp: JsonMessage,
    {
        let (path_and_query, body) = encode(route, &request)?;
        let mut builder = http::Request::builder()
            .method(route.verb)
            .uri(format!("{}{path_and_query}", self.base_url))
            .header(http::header::ACCEPT, "application/json");
        if let Some(token) = token {
            builder = builder.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let body = match body {
            Some(body) => {
                builder = builder.header(http::header::CONTENT_TYPE, "application/json");
                Full::new(Bytes::from(body))
            }
            None => Full::default(),
        };
        let request = builder
            .body(body)
            .map_err(|e| Error::invalid_field("token", format!("not a valid header: {e}")))?;
        let response = self
            .http
            .request(request)
            .await
            .map_err(|e| super::tls::connect_error(&self.base_url, &e))?;
        let status = response.status();
        let bytes = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<LengthLimitError>() {
                    Error::new(
                        Code::ResourceExhausted,
                        "RESPONSE_TOO_LARGE",
                        format!(
                            "the answer from {} is over {MAX_RESPONSE_BYTES} bytes",
                            self.base_url
                        ),
                    )
                } else {
                    unavailable(format!("the answer from {} broke off: {e}", self.base_url))
                }
            })?
            .to_bytes();
        if !status.is_success() {
            return Err(Error::from_json(status, &bytes));
        }
        decode(&bytes, route.response_body)
    }
}

/// The path with its query, and the JSON body, of `request` sent by `route`.
fn encode<Req: JsonMessage>(
    route: &Route,
    request: &Req,
) -> Result<(String, Option<Vec<u8>>), Error> {
    let json_name = |field: &str| {
        Req::json_field(field).map_or_else(|| field.to_owned(), |f| f.json_name.to_owned())
    };
    let Value::Object(mut fields) = request
        .serialize_json(serde_json::value::Serializer)
        .map_err(Error::internal)?
    else {
        return Err(Error::internal("a message serializes to a JSON object"));
    };
    // Fields left at their default are not sent: proto3 reads them the same.
    // (Canonical JSON writes them; a field with presence is written only
    // when set, so one set to its default value is kept.)
    if let Ok(Value::Object(defaults)) =
        Req::default().serialize_json(serde_json::value::Serializer)
    {
        fields.retain(|key, value| defaults.get(key) != Some(value));
    }
    let mut path = route
        .template
        .expand(|field| take_path_value::<Req>(&mut fields, field));
    let body = match route.body {
        Some("*") => Some(Value::Object(std::mem::take(&mut fields))),
        Some(field) => Some(
            fields
                .remove(&json_name(field))
                .unwrap_or_else(|| Value::Object(Map::new())),
        ),
        None => None,
    };
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (key, value) in &fields {
        append_query(&mut query, key, value);
    }
    let query = query.finish();
    if !query.is_empty() {
        path.push('?');
        path.push_str(&query);
    }
    let body = body.map(|body| serde_json::to_vec(&body).expect("JSON values serialize"));
    Ok((path, body))
}

/// Query parameters of one JSON field: nested messages as dotted names,
/// repeated fields as one parameter per item. A nested message's fields at
/// their default (`""`, `0`, `false`) are left out, as the top level's are:
/// the server reads them the same.
fn append_query(query: &mut form_urlencoded::Serializer<'_, String>, key: &str, value: &Value) {
    match value {
        Value::Object(object) => {
            for (inner, value) in object {
                let default = match value {
                    Value::String(text) => text.is_empty(),
                    Value::Bool(set) => !set,
                    Value::Number(number) => number.as_f64() == Some(0.0),
                    _ => false,
                };
                if !default {
                    append_query(query, &format!("{key}.{inner}"), value);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                append_query(query, key, item);
            }
        }
        Value::String(text) => {
            query.append_pair(key, text);
        }
        Value::Null => {}
        other => {
            query.append_pair(key, &other.to_string());
        }
    }
}

/// Removes the string at `field` (a proto field path, `book.name`) from
/// the request's JSON, for the path: what the path carries is not sent again.
fn take_path_value<Req: JsonMessage>(fields: &mut Map<String, Value>, field: &str) -> String {
    let mut lookup: fn(&str) -> Option<crate::json::wire::Field> = Req::json_field;
    let mut object = fields;
    let mut parts = field.split('.').peekable();
    while let Some(part) = parts.next() {
        let found = lookup(part);
        let name = found.map_or(part, |f| f.json_name);
        if parts.peek().is_none() {
            return match object.remove(name) {
                Some(Value::String(value)) => value,
                _ => String::new(),
            };
        }
        if let Some(FieldKind::Message(inner)) = found.map(|f| f.kind) {
            lookup = inner;
        }
        match object.get_mut(name) {
            Some(Value::Object(inner)) => object = inner,
            _ => return String::new(),
        }
    }
    String::new()
}

/// The response, read whole, or only its field `response_body` (which the
/// rule answers alone).
fn decode<Resp: JsonMessage>(bytes: &[u8], response_body: Option<&str>) -> Result<Resp, Error> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Resp::default());
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        Error::new(
            Code::Internal,
            "UNDECODABLE_RESPONSE",
            format!("the answer is not JSON: {e}"),
        )
    })?;
    let value = match response_body {
        Some(field) => {
            let name = Resp::json_field(field).map_or(field, |f| f.json_name);
            let mut whole = Map::new();
            if !value.is_null() {
                whole.insert(name.to_owned(), value);
            }
            Value::Object(whole)
        }
        None => value,
    };
    json::from_value(value).map_err(|error| {
        Error::new(
            Code::Internal,
            "UNDECODABLE_RESPONSE",
            format!("the answer does not decode: {error}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_path_values_leave_the_request() {
        let mut fields: Map<String, Value> =
            serde_json::from_str(r#"{"book":{"name":"shelves/1","x":1},"y":2}"#).unwrap();
        // An unknown message: names are taken as written.
        assert_eq!(take_path_value::<()>(&mut fields, "book.name"), "shelves/1");
        assert_eq!(
            Value::Object(fields),
            serde_json::json!({"book":{"x":1},"y":2})
        );
    }
}
