//! What generated clients call: one [`Connection`] to an API over gRPC or
//! REST/JSON, carrying the same messages either way.
//!
//! A generated client (`client::GroupService`, say) is a [`Connection`] and
//! one [`Route`] constant per RPC: the gRPC path and the `google.api.http`
//! rule. [`Connection::call`] sends a request over the transport the
//! connection was opened with, adds the bearer token of its [`TokenSource`],
//! bounds each attempt by a timeout, retries what is safe to retry (see
//! [`Retry`]) with exponential backoff or the delay the server advises, and
//! decodes failures into one [`Error`] with the Google error details of
//! either transport.
//!
//! `https://` URLs are served over TLS, verified against the operating
//! system's roots or a private certificate authority; plain `http://` is for
//! loopback hosts unless explicitly allowed ([`Tls`]).
//!
//! ```no_run
//! # async fn example() -> Result<(), protoapi_core::Error> {
//! use protoapi_client::client::{Connection, StaticToken};
//! let grpc = Connection::grpc("http://127.0.0.1:8080")?.with_tokens(StaticToken::new("…"));
//! let rest = Connection::rest("http://127.0.0.1:8080")?.with_tokens(StaticToken::new("…"));
//! let tls = protoapi_client::client::Tls::new().ca_file("ca.pem")?;
//! let remote = Connection::grpc_with("https://api.example:8443", &tls)?;
//! # Ok(()) }
//! ```

mod call;
mod pager;
mod rest;
mod tls;
mod token;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use call::unavailable;
use protoapi_core::json::JsonMessage;

use protoapi_core::error::{Code, Error};
use protoapi_core::stream::MessageStream;

pub use call::{HttpRule, RawBodies, RawBody, Retry, Route};
pub use pager::{items, pages};
pub use tls::{HttpsConnector, Tls, is_loopback};
pub use token::{RefreshingToken, StaticToken, TokenSource, jwt_expiry, jwt_subject};

/// A connection to an API over one transport, shared by every generated
/// client made from it (cloning is cheap).
#[derive(Clone)]
pub struct Connection {
    transport: Transport,
    tokens: Option<Arc<dyn TokenSource>>,
    timeout: Duration,
    retry: Retry,
}

#[derive(Clone)]
enum Transport {
    Grpc {
        channel: tonic::transport::Channel,
        url: Arc<str>,
    },
    Rest(Box<rest::Rest>),
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let transport = match &self.transport {
            Transport::Grpc { url, .. } => format!("gRPC {url}"),
            Transport::Rest(rest) => format!("REST {}", rest.base_url()),
        };
        f.debug_struct("Connection")
            .field("transport", &transport)
            .field("authenticated", &self.tokens.is_some())
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .finish()
    }
}

/// The default bound on each attempt of a call.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

impl Connection {
    /// gRPC (HTTP/2) to `url` (`https://host:port`, or `http://` to a
    /// loopback host) with the default [`Tls`]. The channel connects on
    /// first use and reconnects after failures.
    pub fn grpc(url: &str) -> Result<Self, Error> {
        Connection::grpc_with(url, &Tls::default())
    }

    /// [`Connection::grpc`] trusting the servers `tls` names, and going
    /// where it allows; a URL it refuses fails here, before any connection.
    pub fn grpc_with(url: &str, tls: &Tls) -> Result<Self, Error> {
        let scheme = tls.scheme(url)?;
        let mut endpoint = tonic::transport::Endpoint::from_shared(url.to_owned())
            .map_err(|e| Error::invalid_field("url", format!("`{url}` is not a URL: {e}")))?;
        if scheme == tls::Scheme::Https {
            let config = tonic::transport::ClientTlsConfig::new()
                .trust_anchors(tls.roots()?.roots.clone())
                .assume_http2(true);
            endpoint = endpoint.tls_config(config).map_err(|e| {
                Error::invalid_field("url", format!("`{url}`: TLS configuration: {e}"))
            })?;
        }
        Ok(Connection::over(Transport::Grpc {
            channel: endpoint.connect_lazy(),
            url: url.into(),
        }))
    }

    /// REST/JSON (HTTP/1.1, or HTTP/2 when TLS negotiates it) to the API
    /// under `base_url` (`https://host:port`, or `http://` to a loopback
    /// host) with the default [`Tls`].
    pub fn rest(base_url: &str) -> Result<Self, Error> {
        Connection::rest_with(base_url, &Tls::default())
    }

    /// [`Connection::rest`] trusting the servers `tls` names, and going
    /// where it allows; a URL it refuses fails here, before any connection.
    pub fn rest_with(base_url: &str, tls: &Tls) -> Result<Self, Error> {
        Ok(Connection::over(Transport::Rest(Box::new(
            rest::Rest::new(base_url, tls)?,
        ))))
    }

    fn over(transport: Transport) -> Self {
        Connection {
            transport,
            tokens: None,
            timeout: DEFAULT_TIMEOUT,
            retry: Retry::default(),
        }
    }

    /// Sends `Authorization: Bearer <token>` from `tokens` with every call.
    pub fn with_tokens(mut self, tokens: impl TokenSource) -> Self {
        self.tokens = Some(Arc::new(tokens));
        self
    }

    /// Bounds each attempt of a call (default [`DEFAULT_TIMEOUT`]); an attempt
    /// that takes longer fails with `DEADLINE_EXCEEDED`.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets how failures are retried (default [`Retry::default`]).
    pub fn with_retry(mut self, retry: Retry) -> Self {
        self.retry = retry;
        self
    }

    /// Whether calls go over gRPC (else REST/JSON).
    pub fn is_grpc(&self) -> bool {
        matches!(self.transport, Transport::Grpc { .. })
    }

    /// Calls `route` with `request`, retrying as configured.
    pub async fn call<Req, Resp>(&self, route: &Route, request: Req) -> Result<Resp, Error>
    where
        Req: JsonMessage + Clone + 'static,
        Resp: JsonMessage + 'static,
    {
        self.call_with(route, request, RawBodies::default()).await
    }

    /// [`Connection::call`] of a method with `google.api.HttpBody` request or
    /// response bodies, which REST sends and reads raw as `raw` says.
    pub async fn call_with<Req, Resp>(
        &self,
        route: &Route,
        request: Req,
        raw: RawBodies<Req, Resp>,
    ) -> Result<Resp, Error>
    where
        Req: JsonMessage + Clone + 'static,
        Resp: JsonMessage + 'static,
    {
        // Only an attempt that may be followed by another needs a copy.
        let mut request = Some(request);
        self.retrying(route, |last| {
            let request = match last {
                true => request.take(),
                false => request.clone(),
            };
            self.attempt(route, request.expect("the last attempt is the last"), raw)
        })
        .await
    }

    /// Runs `attempt` until it succeeds, fails in a way not retried, or
    /// the retries run out, pausing as [`Retry`] says; `attempt(true)` is
    /// the last one.
    async fn retrying<T, F, Fut>(&self, route: &Route, mut attempt: F) -> Result<T, Error>
    where
        F: FnMut(bool) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let mut tried = 1;
        while tried < self.retry.attempts {
            let result = attempt(false).await;
            let pause = match &result {
                Err(error) => self.retry.pause(tried, error),
                Ok(_) => None,
            };
            let Some(pause) = pause else {
                return result;
            };
            if let Err(error) = &result {
                tracing::debug!(route = route.grpc_path, attempt = tried, ?pause, %error, "retrying");
            }
            tokio::time::sleep(pause).await;
            tried += 1;
        }
        attempt(true).await
    }

    /// The bearer token of the next call, if the connection has tokens.
    async fn token(&self) -> Result<Option<String>, Error> {
        match &self.tokens {
            Some(tokens) => Ok(Some(tokens.token().await?)),
            None => Ok(None),
        }
    }

    /// `call` bounded by the connection's timeout.
    async fn bounded<T>(&self, call: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        tokio::time::timeout(self.timeout, call)
            .await
            .unwrap_or_else(|_| {
                Err(Error::new(
                    Code::DeadlineExceeded,
                    "CLIENT_TIMEOUT",
                    format!("no answer within {:?}", self.timeout),
                ))
            })
    }

    async fn attempt<Req, Resp>(
        &self,
        route: &Route,
        request: Req,
        raw: RawBodies<Req, Resp>,
    ) -> Result<Resp, Error>
    where
        Req: JsonMessage + 'static,
        Resp: JsonMessage + 'static,
    {
        let token = self.token().await?;
        let call = async {
            match &self.transport {
                Transport::Grpc { channel, url } => grpc(channel, url, route, request, token).await,
                Transport::Rest(rest) => rest.call(route, request, token.as_deref(), raw).await,
            }
        };
        self.bounded(call).await
    }
}

impl Connection {
    /// Calls `route` over REST with a request given as its JSON fields
    /// (`{"uid": …, "group": {…}}`, proto3 JSON's spelling), for clients
    /// that know an API from its generated `SCHEMA` rather
    /// than its message types; the JSON answer. Retried as
    /// [`Connection::call`] is. A gRPC connection answers `UNIMPLEMENTED`.
    pub async fn call_json(
        &self,
        route: &Route,
        fields: serde_json::Map<String, serde_json::Value>,
    ) -> Result<serde_json::Value, Error> {
        let Transport::Rest(rest) = &self.transport else {
            return Err(Error::new(
                Code::Unimplemented,
                "NOT_IMPLEMENTED",
                "calls by JSON go over REST: open the connection with `Connection::rest`",
            ));
        };
        let mut fields = Some(fields);
        self.retrying(route, |last| {
            let fields = match last {
                true => fields.take(),
                false => fields.clone(),
            };
            async move {
                let fields = fields.expect("the last attempt is the last");
                let token = self.token().await?;
                let call = rest.call_json(route, fields, token.as_deref());
                self.bounded(call).await
            }
        })
        .await
    }
}

impl Connection {
    /// Calls the server-streaming `route` with `request`: the messages as
    /// the server sends them (gRPC messages, or NDJSON lines over REST), up
    /// to the error that ends the stream, if any. The timeout bounds the
    /// wait for the answer to start, not the stream; a stream is not retried.
    pub async fn stream<Req, Resp>(
        &self,
        route: &Route,
        request: Req,
    ) -> Result<MessageStream<Resp>, Error>
    where
        Req: JsonMessage + 'static,
        Resp: JsonMessage + Send + 'static,
    {
        self.stream_with(route, request, RawBodies::default()).await
    }

    /// [`Connection::stream`] of a method with `google.api.HttpBody` bodies:
    /// over REST, a raw answer is read as chunks as they arrive.
    pub async fn stream_with<Req, Resp>(
        &self,
        route: &Route,
        request: Req,
        raw: RawBodies<Req, Resp>,
    ) -> Result<MessageStream<Resp>, Error>
    where
        Req: JsonMessage + 'static,
        Resp: JsonMessage + Send + 'static,
    {
        let token = self.token().await?;
        let call = async {
            match &self.transport {
                Transport::Grpc { channel, url } => {
                    grpc_stream(channel, url, route, request, token).await
                }
                Transport::Rest(rest) => rest.stream(route, request, token.as_deref(), raw).await,
            }
        };
        self.bounded(call).await
    }
}

async fn grpc<Req, Resp>(
    channel: &tonic::transport::Channel,
    url: &str,
    route: &Route,
    request: Req,
    token: Option<String>,
) -> Result<Resp, Error>
where
    Req: prost::Message + 'static,
    Resp: JsonMessage + 'static,
{
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready()
        .await
        .map_err(|e| unavailable(format!("cannot reach the server: {e}")))?;
    // The attempt's timeout is the caller's (`Connection::attempt`): when it
    // fires, the dropped call resets its HTTP/2 stream and the server stops.
    let mut request = tonic::Request::new(request);
    if let Some(token) = token {
        let value = format!("Bearer {token}")
            .parse()
            .map_err(|_| Error::invalid_field("token", "an API token is printable ASCII"))?;
        request.metadata_mut().insert("authorization", value);
    }
    let path = http::uri::PathAndQuery::from_static(route.grpc_path);
    let codec = tonic_prost::ProstCodec::<Req, Resp>::default();
    grpc.unary(request, path, codec)
        .await
        .map(tonic::Response::into_inner)
        .map_err(|status| tls::grpc_error(url, &status))
}

async fn grpc_stream<Req, Resp>(
    channel: &tonic::transport::Channel,
    url: &str,
    route: &Route,
    request: Req,
    token: Option<String>,
) -> Result<MessageStream<Resp>, Error>
where
    Req: prost::Message + 'static,
    Resp: JsonMessage + Send + 'static,
{
    use futures_util::StreamExt;
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready()
        .await
        .map_err(|e| unavailable(format!("cannot reach the server: {e}")))?;
    let request = authorized(tonic::Request::new(request), token)?;
    let path = http::uri::PathAndQuery::from_static(route.grpc_path);
    let codec = tonic_prost::ProstCodec::<Req, Resp>::default();
    let url: Arc<str> = url.into();
    let stream = grpc
        .server_streaming(request, path, codec)
        .await
        .map_err(|status| tls::grpc_error(&url, &status))?
        .into_inner()
        .map(move |item| item.map_err(|status| tls::grpc_error(&url, &status)));
    Ok(protoapi_core::stream::until_error(Box::pin(stream)))
}

/// `request` with the bearer `token`, if any.
fn authorized<T>(
    mut request: tonic::Request<T>,
    token: Option<String>,
) -> Result<tonic::Request<T>, Error> {
    if let Some(token) = token {
        let value = format!("Bearer {token}")
            .parse()
            .map_err(|_| Error::invalid_field("token", "an API token is printable ASCII"))?;
        request.metadata_mut().insert("authorization", value);
    }
    Ok(request)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{HttpRule, Retry, Route};
    use protoapi_core::error::{Code, Error};

    #[test]
    fn what_is_retried_and_how_long_it_waits() {
        let retry = Retry {
            attempts: 4,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
        };
        let unavailable = Error::new(Code::Unavailable, "X", "x");
        let pause = retry.pause(1, &unavailable).unwrap();
        assert!(pause <= Duration::from_millis(100) && pause >= Duration::from_millis(80));
        // The server's advice, when longer than the backoff, bounded by the maximum.
        let advised = unavailable
            .clone()
            .with_retry_delay(Duration::from_millis(700));
        assert_eq!(retry.pause(1, &advised), Some(Duration::from_millis(700)));
        let too_long = unavailable.with_retry_delay(Duration::from_secs(3600));
        assert_eq!(retry.pause(1, &too_long), Some(Duration::from_secs(2)));
        // RESOURCE_EXHAUSTED only with advice.
        let exhausted = Error::new(Code::ResourceExhausted, "STORAGE_FULL", "x");
        assert_eq!(retry.pause(1, &exhausted), None);
        let limited = exhausted.with_retry_delay(Duration::from_millis(300));
        assert_eq!(retry.pause(1, &limited), Some(Duration::from_millis(300)));
        for code in [
            Code::DeadlineExceeded,
            Code::Aborted,
            Code::Internal,
            Code::InvalidArgument,
            Code::FailedPrecondition,
            Code::Cancelled,
        ] {
            let error = Error::new(code, "X", "x").with_retry_delay(Duration::from_millis(1));
            assert_eq!(retry.pause(1, &error), None, "{code:?}");
        }
    }

    const fn route(template: protoapi_http::rest::template::Template) -> Route {
        Route {
            grpc_path: "/pkg.Service/Method",
            http: Some(HttpRule {
                verb: "GET",
                template,
                body: None,
                response_body: None,
            }),
        }
    }

    #[test]
    fn a_route_is_called_at_its_grpc_path_or_its_rule() {
        use protoapi_http::rest::template::{Segment, Template, Variable};
        let fixed = route(Template {
            segments: &[Segment::Literal("v1"), Segment::Literal("exchange")],
            variables: &[],
            verb: None,
        });
        assert!(fixed.is_path("/pkg.Service/Method"));
        assert!(fixed.is_path("/v1/exchange"));
        assert!(!fixed.is_path("/v1/exchange/x"));
        assert!(!fixed.is_path("/v1/exchanges"));
        let variable = route(Template {
            segments: &[
                Segment::Literal("v1"),
                Segment::Literal("shelves"),
                Segment::Rest,
            ],
            variables: &[Variable {
                field: "name",
                start: 2,
                end: 3,
            }],
            verb: None,
        });
        assert!(variable.is_path("/v1/shelves/s1"));
        assert!(!variable.is_path("/v1/shelves"));
        assert!(!variable.is_path("/v1/shelves/"));
        assert!(!variable.is_path("/v1/shelvesx"));
    }
}
