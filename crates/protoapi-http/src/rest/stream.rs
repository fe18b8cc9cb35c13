//! Server-streaming methods over REST: one canonical-JSON message per line
//! (`application/x-ndjson`), or Server-Sent Events (`data: <json>` per
//! message) when the client's `Accept` asks for `text/event-stream`.
//!
//! An error before the first message is an ordinary error response (status
//! code and `{"error": …}` body); an error after it ends the stream with
//! that body as its last NDJSON line, or as an `event: error`. The body is
//! produced as the client reads it, and dropped (with the handler's stream)
//! when the client goes away. A stream of `google.api.HttpBody` chunks is
//! one body of the first chunk's content type ([`respond_raw`]).

use std::convert::Infallible;

use axum::response::Response;
use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderMap, HeaderValue, header};

use protoapi_core::error::Error;
use protoapi_core::json::{self, JsonMessage};
use protoapi_core::stream::{MessageStream, until_error};

/// The NDJSON media type.
pub const NDJSON: &str = "application/x-ndjson";
/// The Server-Sent Events media type.
pub const EVENT_STREAM: &str = "text/event-stream";

/// How a stream of messages is written in one response body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// One JSON message per line; an error is a last `{"error": …}` line.
    Ndjson,
    /// `data: <json>` events; an error is an `event: error`.
    EventStream,
}

impl Framing {
    /// Server-Sent Events when `Accept` names `text/event-stream`, else NDJSON.
    pub fn of(headers: &HeaderMap) -> Framing {
        let asks_events = headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|media| {
                let media = media.split(';').next().unwrap_or_default().trim();
                media.eq_ignore_ascii_case(EVENT_STREAM)
            });
        if asks_events {
            Framing::EventStream
        } else {
            Framing::Ndjson
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Framing::Ndjson => NDJSON,
            Framing::EventStream => EVENT_STREAM,
        }
    }

    /// One message, or the error ending the stream, as bytes of the body;
    /// whether it ends the stream. A message that has no canonical JSON (an
    /// `Any` of a type the descriptors do not hold) ends it with `INTERNAL`.
    pub fn frame<T: JsonMessage>(self, item: Result<T, Error>) -> (Bytes, bool) {
        let message = item.and_then(|message| {
            serde_json::to_vec(&json::wire::Message(&message))
                .map_err(|e| Error::internal(format!("a streamed message has no JSON: {e}")))
        });
        let (event, json) = match message {
            Ok(json) => (None, json),
            Err(error) => (
                Some("error"),
                serde_json::to_vec(&error.to_json()).expect("error JSON always serializes"),
            ),
        };
        let mut out = Vec::with_capacity(json.len() + 24);
        match self {
            Framing::Ndjson => {
                out.extend_from_slice(&json);
                out.push(b'\n');
            }
            Framing::EventStream => {
                if let Some(event) = event {
                    out.extend_from_slice(format!("event: {event}\n").as_bytes());
                }
                // Compact JSON holds no newline: one `data:` line per event.
                out.extend_from_slice(b"data: ");
                out.extend_from_slice(&json);
                out.extend_from_slice(b"\n\n");
            }
        }
        (Bytes::from(out), event.is_some())
    }
}

/// The response streaming `stream` as `headers`' `Accept` asks, or the
/// error (in `domain`) it starts with.
pub async fn respond<T: JsonMessage + Send + 'static>(
    headers: &HeaderMap,
    stream: MessageStream<T>,
    domain: &'static str,
) -> Result<Response, Error> {
    let framing = Framing::of(headers);
    let mut stream = until_error(stream);
    let first = match stream.next().await {
        Some(Err(error)) => return Err(error.in_domain(domain)),
        first => first,
    };
    let frames = futures_util::stream::iter(first).chain(stream);
    let body = futures_util::stream::unfold(Some(frames), move |frames| async move {
        let mut frames = frames?;
        let item = frames.next().await?;
        let (bytes, ended) = framing.frame(item.map_err(|e| e.in_domain(domain)));
        Some((Ok::<_, Infallible>(bytes), (!ended).then_some(frames)))
    });
    Ok(streaming_response(
        HeaderValue::from_static(framing.content_type()),
        axum::body::Body::from_stream(body),
    ))
}

/// The response of a stream of raw chunks (`google.api.HttpBody`: content
/// type, data): one body of the first chunk's content type, or the error
/// the stream starts with. A later error cannot be told in a raw body: the
/// body is cut short, which the client sees as a broken transfer.
pub async fn respond_raw(
    stream: MessageStream<(String, Vec<u8>)>,
    domain: &'static str,
) -> Result<Response, Error> {
    let mut stream = until_error(stream);
    let (content_type, first) = match stream.next().await {
        Some(Err(error)) => return Err(error.in_domain(domain)),
        Some(Ok((content_type, data))) => (content_type, Some(data)),
        None => (String::new(), None),
    };
    let content_type = super::http_body::content_type(&content_type)?;
    // The content type is the first chunk's: later ones give only data.
    let body = futures_util::stream::iter(first.map(Ok))
        .chain(stream.map(|item| item.map(|(_, data)| data)))
        .map(|item| match item {
            Ok(data) => Ok(Bytes::from(data)),
            Err(error) => {
                tracing::warn!(%error, "a raw stream failed after its first chunk");
                Err(std::io::Error::other(error.message().to_owned()))
            }
        });
    Ok(super::http_body::sandboxed(streaming_response(
        content_type,
        axum::body::Body::from_stream(body),
    )))
}

fn streaming_response(content_type: HeaderValue, body: axum::body::Body) -> Response {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, content_type);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures_util::StreamExt;
    use http::{HeaderMap, HeaderValue, header};
    use http_body_util::BodyExt;

    use super::{Framing, respond};
    use protoapi_core::error::{Code, Error};
    use protoapi_core::stream::boxed;

    /// Counts the messages produced, and says when the producer is dropped.
    struct Producer {
        produced: Arc<AtomicUsize>,
        _dropped: tokio::sync::oneshot::Sender<()>,
    }

    #[tokio::test]
    async fn the_body_is_produced_as_read_and_a_client_gone_drops_the_producer() {
        let produced = Arc::new(AtomicUsize::new(0));
        let (dropped, gone) = tokio::sync::oneshot::channel();
        let producer = Producer {
            produced: Arc::clone(&produced),
            _dropped: dropped,
        };
        // An endless stream of `{}`.
        let endless = futures_util::stream::repeat(()).map(move |()| {
            // The whole producer (not only its counter) lives in the stream.
            let producer = &producer;
            producer.produced.fetch_add(1, Ordering::SeqCst);
            Ok(())
        });
        let response = respond(&HeaderMap::new(), boxed(endless), "test")
            .await
            .unwrap();
        let mut body = response.into_body();
        for _ in 0..3 {
            let frame = body.frame().await.unwrap().unwrap();
            assert_eq!(frame.into_data().unwrap(), "{}\n");
        }
        // Nothing is produced ahead of what is read (one message in hand).
        assert!(produced.load(Ordering::SeqCst) <= 4);
        drop(body);
        assert!(gone.await.is_err(), "the producer is dropped");
    }

    #[tokio::test]
    async fn an_error_first_is_an_error_response_and_later_one_ends_the_stream() {
        let aborted = || Error::new(Code::Aborted, "X", "x");
        let first = boxed(futures_util::stream::iter(vec![Err::<(), _>(aborted())]));
        let error = respond(&HeaderMap::new(), first, "test").await.unwrap_err();
        assert_eq!(error.domain(), "test");
        let items = vec![Ok(()), Err(aborted()), Ok(())];
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        let response = respond(&headers, boxed(futures_util::stream::iter(items)), "test")
            .await
            .unwrap();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let body = std::str::from_utf8(&body).unwrap();
        let events: Vec<&str> = body.split_terminator("\n\n").collect();
        assert_eq!(events.len(), 2, "{body}");
        assert_eq!(events[0], "data: {}");
        assert!(
            events[1].starts_with("event: error\ndata: {\"error\":"),
            "{body}"
        );
    }

    #[test]
    fn events_only_when_asked_for() {
        let mut headers = HeaderMap::new();
        assert_eq!(Framing::of(&headers), Framing::Ndjson);
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream;q=0.9"),
        );
        assert_eq!(Framing::of(&headers), Framing::EventStream);
        headers.insert(header::ACCEPT, HeaderValue::from_static("*/*"));
        assert_eq!(Framing::of(&headers), Framing::Ndjson);
    }
}
