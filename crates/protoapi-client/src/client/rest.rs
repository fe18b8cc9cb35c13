//! The REST/JSON transport: a request message becomes the path, query and
//! body its `google.api.http` rule describes (the reverse of
//! [`protoapi_http::rest::RestRequest`]), and the canonical JSON answer becomes the
//! response message.

use std::borrow::Cow;

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Map, Value};

use super::call::{HttpRule, RawBodies, Route, unavailable};
use super::tls::{HttpsConnector, Tls};
use protoapi_core::error::{Code, Error};
use protoapi_core::json::wire::FieldKind;
use protoapi_core::json::{self, JsonMessage};
use protoapi_core::stream::MessageStream;

/// The largest answer read, as the gRPC transport's (tonic's default decoding
/// limit): a server cannot make the client buffer without bound.
const MAX_RESPONSE_BYTES: usize = 4 << 20;

const JSON: &str = "application/json";

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
        raw: RawBodies<Req, Resp>,
    ) -> Result<Resp, Error>
    where
        Req: JsonMessage,
        Resp: JsonMessage,
    {
        let accept = match raw.response {
            Some(_) => "*/*",
            None => "application/json",
        };
        let response = self.send(route, request, token, accept, raw).await?;
        let status = response.status();
        let content_type = content_type(response.headers());
        let bytes = self.read(response.into_body()).await?;
        if !status.is_success() {
            return Err(Error::from_json(status, &bytes));
        }
        match raw.response {
            Some(build) => Ok(build(content_type, bytes.to_vec())),
            None => decode(&bytes, route.http()?.response_body),
        }
    }

    /// Calls `route` with a request whose JSON fields are `fields` (proto
    /// field names spelled as proto3 JSON spells them by default); the JSON
    /// answer, `{}` for an empty one.
    pub(super) async fn call_json(
        &self,
        route: &Route,
        fields: Map<String, Value>,
        token: Option<&str>,
    ) -> Result<Value, Error> {
        let rule = route.http()?;
        let (path_and_query, body) = encode_fields(rule, fields, None);
        let response = self
            .send_parts(
                rule.verb,
                &path_and_query,
                body.map(|json| (Cow::Borrowed(JSON), json)),
                token,
                JSON,
            )
            .await?;
        let status = response.status();
        let bytes = self.read(response.into_body()).await?;
        if !status.is_success() {
            return Err(Error::from_json(status, &bytes));
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Object(Map::new()));
        }
        serde_json::from_slice(&bytes).map_err(|e| {
            Error::new(
                Code::Internal,
                "UNDECODABLE_RESPONSE",
                format!("the answer is not JSON: {e}"),
            )
        })
    }

    /// Sends `request` by `route`, accepting `accept`; the answer's head.
    async fn send<Req: JsonMessage, Resp>(
        &self,
        route: &Route,
        mut request: Req,
        token: Option<&str>,
        accept: &'static str,
        raw: RawBodies<Req, Resp>,
    ) -> Result<http::Response<hyper::body::Incoming>, Error> {
        let rule = route.http()?;
        let raw_body = raw.request.and_then(|take| take(&mut request));
        let (path_and_query, body) = encode(rule, &request)?;
        let body = match raw_body {
            Some((content_type, data)) if content_type.is_empty() => Some((
                Cow::Borrowed(protoapi_http::rest::http_body::DEFAULT_CONTENT_TYPE),
                data,
            )),
            Some((content_type, data)) => Some((Cow::Owned(content_type), data)),
            None => body.map(|json| (Cow::Borrowed(JSON), json)),
        };
        self.send_parts(rule.verb, &path_and_query, body, token, accept)
            .await
    }

    /// Sends `verb path_and_query` with `body` (and its content type),
    /// accepting `accept`; the answer's head.
    async fn send_parts(
        &self,
        verb: &str,
        path_and_query: &str,
        body: Option<(Cow<'_, str>, Vec<u8>)>,
        token: Option<&str>,
        accept: &'static str,
    ) -> Result<http::Response<hyper::body::Incoming>, Error> {
        let mut builder = http::Request::builder()
            .method(verb)
            .uri(format!("{}{path_and_query}", self.base_url))
            .header(http::header::ACCEPT, accept);
        if let Some(token) = token {
            builder = builder.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let body = match body {
            Some((content_type, data)) => {
                let value = http::HeaderValue::from_str(&content_type)
                    .map_err(|_| Error::invalid_field("contentType", "not an HTTP header value"))?;
                builder = builder.header(http::header::CONTENT_TYPE, value);
                Full::new(Bytes::from(data))
            }
            None => Full::default(),
        };
        let request = builder
            .body(body)
            .map_err(|e| Error::invalid_field("token", format!("not a valid header: {e}")))?;
        self.http
            .request(request)
            .await
            .map_err(|e| super::tls::connect_error(&self.base_url, &e))
    }

    /// A whole answer, at most [`MAX_RESPONSE_BYTES`].
    async fn read(&self, body: hyper::body::Incoming) -> Result<Bytes, Error> {
        Ok(Limited::new(body, MAX_RESPONSE_BYTES)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<LengthLimitError>() {
                    self.too_large()
                } else {
                    self.broke_off(e)
                }
            })?
            .to_bytes())
    }

    fn too_large(&self) -> Error {
        Error::new(
            Code::ResourceExhausted,
            "RESPONSE_TOO_LARGE",
            format!(
                "the answer from {} is over {MAX_RESPONSE_BYTES} bytes",
                self.base_url
            ),
        )
    }

    fn broke_off(&self, e: impl std::fmt::Display) -> Error {
        unavailable(format!("the answer from {} broke off: {e}", self.base_url))
    }

    /// Calls the server-streaming `route`: each NDJSON line of the answer
    /// decoded as it arrives, a `{"error": …}` line as the error ending it.
    pub(super) async fn stream<Req, Resp>(
        &self,
        route: &Route,
        request: Req,
        token: Option<&str>,
        raw: RawBodies<Req, Resp>,
    ) -> Result<MessageStream<Resp>, Error>
    where
        Req: JsonMessage,
        Resp: JsonMessage + Send + 'static,
    {
        let accept = match raw.response {
            Some(_) => "*/*",
            None => protoapi_http::rest::stream::NDJSON,
        };
        let response = self.send(route, request, token, accept, raw).await?;
        let status = response.status();
        if !status.is_success() {
            let bytes = self.read(response.into_body()).await?;
            return Err(Error::from_json(status, &bytes));
        }
        if let Some(build) = raw.response {
            return Ok(self.chunks(response, build));
        }
        let lines = Lines::new(self.clone(), response.into_body());
        let stream = futures_util::stream::unfold(lines, |mut lines| async move {
            let line = lines.next_line().await?;
            Some((line.and_then(|line| decode_line(&line)), lines))
        });
        Ok(protoapi_core::stream::until_error(Box::pin(stream)))
    }
}

impl Rest {
    /// A raw streamed answer as chunks as they arrive, the first with the
    /// answer's content type.
    fn chunks<Resp: Send + 'static>(
        &self,
        response: http::Response<hyper::body::Incoming>,
        build: fn(String, Vec<u8>) -> Resp,
    ) -> MessageStream<Resp> {
        let content_type = Some(content_type(response.headers()));
        let state = (self.clone(), response.into_body(), content_type);
        let chunks = futures_util::stream::unfold(state, move |mut state| async move {
            loop {
                let frame = match state.1.frame().await? {
                    Ok(frame) => frame,
                    Err(e) => return Some((Err(state.0.broke_off(e)), state)),
                };
                if let Ok(data) = frame.into_data() {
                    let content_type = state.2.take().unwrap_or_default();
                    return Some((Ok(build(content_type, data.to_vec())), state));
                }
            }
        });
        protoapi_core::stream::until_error(Box::pin(chunks))
    }
}

/// The `Content-Type` of an answer, empty without one.
fn content_type(headers: &http::HeaderMap) -> String {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The lines of a streamed answer, each at most [`MAX_RESPONSE_BYTES`].
struct Lines {
    rest: Rest,
    body: hyper::body::Incoming,
    buffer: LineBuffer,
    ended: bool,
}

impl Lines {
    fn new(rest: Rest, body: hyper::body::Incoming) -> Self {
        Lines {
            rest,
            body,
            buffer: LineBuffer::default(),
            ended: false,
        }
    }

    /// The next non-empty line, an error, or `None` at the end.
    async fn next_line(&mut self) -> Option<Result<Bytes, Error>> {
        loop {
            if let Some(line) = self.buffer.next_line() {
                return Some(Ok(line));
            }
            if self.buffer.pending() > MAX_RESPONSE_BYTES {
                return Some(Err(self.rest.too_large()));
            }
            if self.ended {
                return self.buffer.last_line().map(Ok);
            }
            match self.body.frame().await {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.buffer.push(&data);
                    }
                }
                Some(Err(e)) => return Some(Err(self.rest.broke_off(e))),
                None => self.ended = true,
            }
        }
    }
}

/// Bytes received and not yet split into lines.
///
/// Each byte is looked at once whatever the frames' sizes (the search for
/// the next `\n` resumes where the last one stopped), and a line is split
/// off the front without moving what follows it, so a hostile server's
/// many small frames or many lines cost time linear in what it sends.
#[derive(Debug, Default)]
struct LineBuffer {
    bytes: BytesMut,
    /// Leading bytes of `bytes` known to hold no `\n`.
    scanned: usize,
    /// Bytes looked at for a `\n`, in all.
    inspected: usize,
}

impl LineBuffer {
    fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
    }

    fn pending(&self) -> usize {
        self.bytes.len()
    }

    /// The next complete non-empty line.
    fn next_line(&mut self) -> Option<Bytes> {
        loop {
            let unscanned = &self.bytes[self.scanned..];
            let found = unscanned.iter().position(|b| *b == b'\n');
            self.inspected += found.map_or(unscanned.len(), |at| at + 1);
            let Some(at) = found else {
                self.scanned = self.bytes.len();
                return None;
            };
            let line = self.bytes.split_to(self.scanned + at + 1).freeze();
            self.scanned = 0;
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Some(line);
            }
        }
    }

    /// What is left at the end of the answer, unless blank.
    fn last_line(&mut self) -> Option<Bytes> {
        let rest = self.bytes.split().freeze();
        (!rest.iter().all(u8::is_ascii_whitespace)).then_some(rest)
    }
}

/// One NDJSON line: a message, or the error ending the stream.
fn decode_line<Resp: JsonMessage>(line: &[u8]) -> Result<Resp, Error> {
    if let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(line)
        && object.len() == 1
        && object.get("error").is_some_and(Value::is_object)
    {
        return Err(Error::from_json(http::StatusCode::OK, line));
    }
    decode(line, None)
}

/// The path with its query, and the JSON body, of `request` sent by `rule`.
fn encode<Req: JsonMessage>(
    rule: &HttpRule,
    request: &Req,
) -> Result<(String, Option<Vec<u8>>), Error> {
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
    Ok(encode_fields(rule, fields, Some(Req::json_field)))
}

/// The path with its query, and the JSON body, of a request whose JSON
/// fields are `fields`, sent by `rule`.
fn encode_fields(
    rule: &HttpRule,
    mut fields: Map<String, Value>,
    names: Names,
) -> (String, Option<Vec<u8>>) {
    let mut path = rule
        .template
        .expand(|field| take_path_value(&mut fields, field, names));
    let body = match rule.body {
        Some("*") => Some(Value::Object(std::mem::take(&mut fields))),
        Some(field) => {
            let name = names.and_then(|lookup| lookup(field)).map_or_else(
                || protoapi_core::json::lower_camel_case(field),
                |f| f.json_name.to_owned(),
            );
            Some(
                fields
                    .remove(&name)
                    .unwrap_or_else(|| Value::Object(Map::new())),
            )
        }
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
    (path, body)
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

/// How the proto field names of a request's path variables are spelled in
/// its JSON: as its message declares (`None`: lowerCamelCase, the spelling
/// proto3 JSON gives every field without a `json_name` option).
type Names = Option<fn(&str) -> Option<protoapi_core::json::wire::Field>>;

/// Removes the string at `field` (a proto field path, `book.name`) from
/// the request's JSON, for the path: what the path carries is not sent again.
fn take_path_value(fields: &mut Map<String, Value>, field: &str, mut names: Names) -> String {
    let mut object = fields;
    let mut parts = field.split('.').peekable();
    while let Some(part) = parts.next() {
        let found = names.and_then(|lookup| lookup(part));
        let name = match found {
            Some(found) => found.json_name.to_owned(),
            None => protoapi_core::json::lower_camel_case(part),
        };
        if parts.peek().is_none() {
            // Canonical JSON writes 64-bit integers and enums as strings,
            // other numbers as numbers: a path holds their text.
            return match object.remove(&name) {
                Some(Value::String(value)) => value,
                Some(Value::Number(number)) => number.to_string(),
                _ => String::new(),
            };
        }
        names = match found.map(|f| f.kind) {
            Some(FieldKind::Message(inner)) => Some(inner),
            _ => None,
        };
        match object.get_mut(&name) {
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
        // Without declared names, proto3 JSON's default spelling.
        assert_eq!(take_path_value(&mut fields, "book.name", None), "shelves/1");
        assert_eq!(
            Value::Object(fields),
            serde_json::json!({"book":{"x":1},"y":2})
        );
    }

    #[test]
    fn numbers_bound_by_a_path_are_written_as_text() {
        let mut fields: Map<String, Value> =
            serde_json::from_str(r#"{"chunkBytes":4,"id":"9007199254740993"}"#).unwrap();
        assert_eq!(take_path_value(&mut fields, "chunkBytes", None), "4");
        assert_eq!(take_path_value(&mut fields, "id", None), "9007199254740993");
        assert!(fields.is_empty());
    }

    #[test]
    fn a_hostile_servers_frames_and_lines_are_read_in_linear_time() {
        // One long line in one-byte frames: each byte is looked at once.
        let mut buffer = LineBuffer::default();
        let line = 20_000;
        for _ in 0..line {
            buffer.push(b"x");
            assert_eq!(buffer.next_line(), None);
        }
        buffer.push(b"\n");
        assert_eq!(buffer.next_line().map(|l| l.len()), Some(line + 1));
        assert_eq!(buffer.inspected, line + 1);

        // Many short lines in one frame: none moves the others.
        let mut buffer = LineBuffer::default();
        buffer.push(&b"{}\n\n".repeat(10_000));
        let lines = std::iter::from_fn(|| buffer.next_line()).count();
        assert_eq!(
            (lines, buffer.inspected, buffer.pending()),
            (10_000, 40_000, 0)
        );

        buffer.push(b"{\"a\":1}");
        assert_eq!(buffer.next_line(), None);
        assert_eq!(buffer.last_line().as_deref(), Some(&b"{\"a\":1}"[..]));
        buffer.push(b"  ");
        assert_eq!(buffer.last_line(), None, "a blank end is no line");
    }
}
