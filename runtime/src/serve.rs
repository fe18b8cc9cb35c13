//! Serving a router on a TCP listener with transport timeouts and a bounded
//! graceful drain.
//!
//! [`Server`] replaces `axum::serve`: HTTP/1.1 and HTTP/2 (prior knowledge,
//! which gRPC uses) on one port, every request going to the same router.
//! Each connection is watched for the timeouts in [`Timeouts`]:
//!
//! - **header**: a request head must arrive completely within this time,
//!   counted from the connection's accept for the first request and from
//!   the first byte of each later HTTP/1 request. An HTTP/2 connection must
//!   send its preface within this time. A connection that misses it is
//!   closed without an answer.
//! - **body**: a REST request body must arrive completely within this time
//!   after the request head; a gRPC request stream may not pause longer than
//!   this between frames (streams can legitimately stay open longer). A
//!   request whose body is too slow is answered with `DEADLINE_EXCEEDED`
//!   (HTTP 408), and an HTTP/1 connection is then closed.
//! - **idle**: a connection with no request in progress for this long is shut
//!   down gracefully (an HTTP/2 connection gets a GOAWAY). Pings and other
//!   frames that carry no request do not keep a connection open.
//! - **drain**: when the shutdown future completes the server stops
//!   accepting, lets in-flight requests finish and closes each connection
//!   once it is idle; connections still open after this time are dropped.
//!
//! hyper's own HTTP/1 header read timeout is not used: it also runs while a
//! keep-alive connection waits for its next request, so it would cut idle
//! connections at the header timeout instead of the idle timeout.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use bytes::Bytes;
use http::{HeaderValue, Request, Response, Version, header};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

use crate::error::{Code, Error};

/// How long the server waits for clients; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Time allowed to receive a request head (and an HTTP/2 preface).
    pub header: Duration,
    /// Time allowed to receive a REST request body; longest pause within a
    /// gRPC request stream.
    pub body: Duration,
    /// Time a connection with no request in progress is kept open.
    pub idle: Duration,
    /// Time in-flight requests get to finish after shutdown begins.
    pub drain: Duration,
}

impl Default for Timeouts {
    /// Header 10 s, body 30 s, idle 60 s, drain 30 s.
    fn default() -> Self {
        Timeouts {
            header: Duration::from_secs(10),
            body: Duration::from_secs(30),
            idle: Duration::from_secs(60),
            drain: Duration::from_secs(30),
        }
    }
}

/// A router served on a listener; see the [module docs](self).
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    router: Router,
    timeouts: Timeouts,
}

impl Server {
    /// Serves `router` on `listener` with the default [`Timeouts`].
    pub fn new(listener: TcpListener, router: Router) -> Self {
        Server {
            listener,
            router,
            timeouts: Timeouts::default(),
        }
    }

    /// Uses these timeouts.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Serves until `shutdown` completes, then stops accepting and drains:
    /// returns when every connection has closed, or when the drain timeout
    /// has passed and the remaining connections have been dropped.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        let Server {
            listener,
            router,
            timeouts,
        } = self;
        let (stop, stopping) = watch::channel(false);
        let mut connections = JoinSet::new();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            while connections.try_join_next().is_some() {}
            tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        connections.spawn(connection(
                            stream,
                            router.clone(),
                            timeouts,
                            stopping.clone(),
                        ));
                    }
                    Err(error) if is_connection_error(&error) => {
                        tracing::debug!(%error, "accept failed");
                    }
                    Err(error) => {
                        // Out of file descriptors and the like: back off
                        // instead of spinning.
                        tracing::warn!(%error, "accept failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                },
            }
        }
        drop(listener);
        stop.send_replace(true);
        while connections.try_join_next().is_some() {}
        tracing::info!(connections = connections.len(), "draining");
        let drained = tokio::time::timeout(timeouts.drain, async {
            while connections.join_next().await.is_some() {}
        })
        .await
        .is_ok();
        if !drained {
            tracing::warn!(
                connections = connections.len(),
                "drain timeout passed: dropping the remaining connections"
            );
            connections.shutdown().await;
        }
    }
}

fn is_connection_error(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// Serves one connection until it closes, watching its timeouts.
async fn connection(
    stream: TcpStream,
    router: Router,
    timeouts: Timeouts,
    mut stopping: watch::Receiver<bool>,
) {
    // Small messages (gRPC, JSON) should not wait for Nagle's algorithm.
    stream.set_nodelay(true).ok();
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        inner: stream,
        activity: Arc::clone(&activity),
    });
    let service = {
        let activity = Arc::clone(&activity);
        hyper::service::service_fn(move |request| {
            handle(
                request,
                router.clone(),
                timeouts.body,
                Arc::clone(&activity),
            )
        })
    };
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(None);
    builder.http2().timer(TokioTimer::new());
    let connection = builder.serve_connection(io, service);
    let mut connection = std::pin::pin!(connection);

    // Set once the connection is shutting down gracefully (idle, or the
    // server is draining); `close_at` bounds how long that may take when
    // the connection itself started it.
    let mut graceful = false;
    let mut close_at: Option<Instant> = None;
    let mut draining = false;
    loop {
        if !draining && *stopping.borrow() {
            draining = true;
            if !graceful {
                graceful = true;
                connection.as_mut().graceful_shutdown();
            }
        }
        let (deadline, expiry) = match close_at {
            Some(at) => (Some(at), Expiry::Close),
            None => activity.deadline(&timeouts),
        };
        let timer = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(error = %error, "connection ended with an error");
                }
                return;
            }
            () = activity.changed.notified() => {}
            changed = stopping.changed(), if !draining => {
                // Drained at the top of the loop; a closed channel means the
                // server is gone, which is a drain too.
                if changed.is_err() {
                    draining = true;
                    if !graceful {
                        graceful = true;
                        connection.as_mut().graceful_shutdown();
                    }
                }
            }
            () = timer => {
                // The state may have changed while the timer fired.
                if close_at.is_none() && activity.deadline(&timeouts).0 != deadline {
                    continue;
                }
                match expiry {
                    Expiry::Header => {
                        tracing::debug!("request head not received in time: closing the connection");
                        return;
                    }
                    Expiry::Idle => {
                        tracing::debug!("connection idle: closing it");
                        if !graceful {
                            graceful = true;
                            connection.as_mut().graceful_shutdown();
                        }
                        close_at = Some(Instant::now() + timeouts.drain);
                    }
                    Expiry::Close => {
                        tracing::debug!("connection did not close in time: dropping it");
                        return;
                    }
                }
            }
        }
    }
}

/// Which timeout a connection's next deadline belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expiry {
    Header,
    Idle,
    Close,
}

/// The HTTP/2 connection preface.
const H2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What a connection is doing, updated by its IO and its requests.
#[derive(Debug)]
struct Activity {
    state: Mutex<State>,
    /// Woken whenever the connection's next deadline may have changed.
    changed: Notify,
}

#[derive(Debug)]
struct State {
    phase: Phase,
    in_flight: usize,
    /// Bytes of the HTTP/2 preface matched so far; `None` once the protocol is known.
    preface: Option<usize>,
    http2: bool,
}

#[derive(Clone, Copy, Debug)]
enum Phase {
    /// Waiting for a request head since this instant.
    Head(Instant),
    /// Serving at least one request.
    Busy,
    /// No request in progress since this instant.
    Idle(Instant),
}

impl Activity {
    fn new() -> Self {
        Activity {
            state: Mutex::new(State {
                phase: Phase::Head(Instant::now()),
                in_flight: 0,
                preface: Some(0),
                http2: false,
            }),
            changed: Notify::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The next deadline and what it is for (`None` while requests are served).
    fn deadline(&self, timeouts: &Timeouts) -> (Option<Instant>, Expiry) {
        match self.state().phase {
            Phase::Head(since) => (Some(since + timeouts.header), Expiry::Header),
            Phase::Idle(since) => (Some(since + timeouts.idle), Expiry::Idle),
            Phase::Busy => (None, Expiry::Idle),
        }
    }

    /// Bytes arrived from the client.
    fn read(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut state = self.state();
        let mut changed = false;
        if let Some(matched) = state.preface {
            let take = bytes.len().min(H2_PREFACE.len() - matched);
            if bytes[..take] != H2_PREFACE[matched..matched + take] {
                state.preface = None;
            } else if matched + take == H2_PREFACE.len() {
                // An HTTP/2 connection: from now on only requests count.
                state.preface = None;
                state.http2 = true;
                if state.in_flight == 0 {
                    state.phase = Phase::Idle(Instant::now());
                    changed = true;
                }
            } else {
                state.preface = Some(matched + take);
            }
        }
        // The first byte of a new HTTP/1 request starts its header timeout.
        if !state.http2 && matches!(state.phase, Phase::Idle(_)) {
            state.phase = Phase::Head(Instant::now());
            changed = true;
        }
        drop(state);
        if changed {
            self.changed.notify_one();
        }
    }

    fn request_started(self: &Arc<Self>) -> InFlight {
        let mut state = self.state();
        state.in_flight += 1;
        state.phase = Phase::Busy;
        drop(state);
        self.changed.notify_one();
        InFlight(Arc::clone(self))
    }
}

/// A request in progress, from its head until its response body is done.
#[derive(Debug)]
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.in_flight -= 1;
        if state.in_flight == 0 {
            state.phase = Phase::Idle(Instant::now());
        }
        drop(state);
        self.0.changed.notify_one();
    }
}

/// The connection's socket, reporting what it reads.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        self.activity.read(&buf.filled()[before..]);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Serves one request: its body under the body timeout, its response
/// tracked until the last byte.
async fn handle(
    request: Request<Incoming>,
    router: Router,
    body_timeout: Duration,
    activity: Arc<Activity>,
) -> Result<Response<Tracked>, Infallible> {
    let in_flight = activity.request_started();
    let http1 = request.version() < Version::HTTP_2;
    let grpc = crate::rest::is_grpc(request.headers());
    let expired = Arc::new(AtomicBool::new(false));
    let request = request.map(|body| TimedBody {
        sleep: Box::pin(tokio::time::sleep(body_timeout)),
        inner: body,
        timeout: body_timeout,
        between_frames: grpc,
        expired: Arc::clone(&expired),
    });
    let Ok(mut response) = router.oneshot(request).await;
    if expired.load(Ordering::Acquire) {
        response = crate::rest::error_response(body_timeout_error(body_timeout), grpc);
        if http1 {
            // The rest of the body is not read: the connection cannot be reused.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
    }
    Ok(response.map(|body| Tracked {
        inner: body,
        in_flight: Some(in_flight),
    }))
}

fn body_timeout_error(timeout: Duration) -> Error {
    Error::new(
        Code::DeadlineExceeded,
        "REQUEST_BODY_TIMEOUT",
        format!(
            "the request body was not received within {} ms",
            timeout.as_millis()
        ),
    )
    .with_http_status(http::StatusCode::REQUEST_TIMEOUT)
}

/// The error a request body yields when it arrives too slowly.
#[derive(Debug)]
struct BodyTimeout;

impl std::fmt::Display for BodyTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body was not received in time")
    }
}

impl std::error::Error for BodyTimeout {}

/// A request body with a deadline: for the whole body, or (gRPC streams)
/// for each frame.
struct TimedBody {
    inner: Incoming,
    sleep: Pin<Box<Sleep>>,
    timeout: Duration,
    between_frames: bool,
    expired: Arc<AtomicBool>,
}

impl Body for TimedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if this.expired.load(Ordering::Acquire) {
            return Poll::Ready(Some(Err(BodyTimeout.into())));
        }
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            if this.between_frames {
                this.sleep.as_mut().reset(Instant::now() + this.timeout);
            }
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        ready!(this.sleep.as_mut().poll(cx));
        this.expired.store(true, Ordering::Release);
        Poll::Ready(Some(Err(BodyTimeout.into())))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that ends its request's [`InFlight`] when it is done.
struct Tracked {
    inner: axum::body::Body,
    in_flight: Option<InFlight>,
}

impl Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if frame.is_none() {
            self.in_flight = None;
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
