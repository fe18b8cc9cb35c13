//! Streams of messages: what server-streaming methods answer, what
//! generated clients read back from them, and what client-streaming
//! methods read.
//!
//! A handler answers a stream of `Result<T, Error>`; the transports end it
//! at its first error, which they send in the error model of each: a gRPC
//! status with its details ([`grpc`]), a last NDJSON line or an SSE
//! `event: error` over REST. Both poll the stream only as the
//! client reads (no unbounded buffering), and drop it when the client goes
//! away, which stops its producer.

use std::pin::Pin;

use futures_util::{Stream, StreamExt};

use crate::error::Error;

/// A stream of messages or of an error ending it.
pub type MessageStream<T> = Pin<Box<dyn Stream<Item = Result<T, Error>> + Send + 'static>>;

/// The stream a generated tonic service answers.
pub type GrpcStream<T> = Pin<Box<dyn Stream<Item = Result<T, tonic::Status>> + Send + 'static>>;

/// `stream`, boxed as a [`MessageStream`].
pub fn boxed<T>(stream: impl Stream<Item = Result<T, Error>> + Send + 'static) -> MessageStream<T> {
    Box::pin(stream)
}

/// `stream` up to and including its first error: nothing follows a failure.
pub fn until_error<T: Send + 'static>(stream: MessageStream<T>) -> MessageStream<T> {
    Box::pin(futures_util::stream::unfold(
        Some(stream),
        |stream| async move {
            let mut stream = stream?;
            let item = stream.next().await?;
            let rest = item.is_ok().then_some(stream);
            Some((item, rest))
        },
    ))
}

/// `stream` for tonic: errors (in `domain` unless they name one) become the
/// status ending the call, with their details.
pub fn grpc<T: Send + 'static>(stream: MessageStream<T>, domain: &'static str) -> GrpcStream<T> {
    Box::pin(
        until_error(stream)
            .map(move |item| item.map_err(|error| tonic::Status::from(error.in_domain(domain)))),
    )
}

/// The requests of a client- or bidirectional-streaming gRPC call, as a
/// handler reads them: a broken stream (a malformed message, a reset) ends
/// them with its error.
pub fn from_grpc<T: Send + 'static>(requests: tonic::Streaming<T>) -> MessageStream<T> {
    until_error(Box::pin(requests.map(|item| {
        item.map_err(|status| Error::from_grpc_status(&status))
    })))
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::{boxed, until_error};
    use crate::error::{Code, Error};

    #[tokio::test]
    async fn a_stream_ends_at_its_first_error() {
        let items = vec![Ok(1), Err(Error::new(Code::Aborted, "X", "x")), Ok(2)];
        let seen: Vec<_> = until_error(boxed(futures_util::stream::iter(items)))
            .collect()
            .await;
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].as_ref().ok(), Some(&1));
        assert_eq!(seen[1].as_ref().unwrap_err().code(), Code::Aborted);
    }
}
