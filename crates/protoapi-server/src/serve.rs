//! Serving a router on a TCP listener with connection limits, transport
//! timeouts and a bounded graceful drain.
//!
//! [`Server`] replaces `axum::serve`: HTTP/1.1 and HTTP/2 (prior knowledge,
//! which gRPC uses) on one port, every request going to the same router.
//!
//! What the server holds at once is bounded by [`Limits`]:
//!
//! - **max_connections**: open connections. At the limit the server stops
//!   accepting: new clients wait in the listen backlog (their TCP handshake
//!   completes, nothing is read or answered) until a connection closes, and
//!   are then served in order. While the server waits, connections that are
//!   idle (keep-alive, no request in progress) are closed as if their idle
//!   timeout had passed, so idle clients do not keep waiting ones out.
//!   Connections that are still sending their first request head are not
//!   closed early: the header timeout bounds them.
//! - **max_concurrent_streams**: requests in progress at once on one HTTP/2
//!   connection (advertised in the server's SETTINGS; a client opening more
//!   has them refused with `REFUSED_STREAM`).
//!
//! Each connection and request is watched for the timeouts in [`Timeouts`]:
//!
//! - **header**: a request head must arrive completely within this time,
//!   counted from the connection's accept for the first request and from
//!   the first byte of each later HTTP/1 request. An HTTP/2 connection must
//!   send its preface and its first request's head within this time. A
//!   connection that misses it is closed without an answer.
//! - **body**: a request body must arrive completely within this time after
//!   the request head, REST and gRPC alike. The deadline is for the body as a
//!   whole: a body that trickles in one byte at a time is cut off like one
//!   that stalls. A client-streaming or bidirectional gRPC call is a request
//!   body too, so its request stream may stay open no longer than this
//!   (reflection streams included). A request whose body is too slow is
//!   answered with `DEADLINE_EXCEEDED` (HTTP 408, reason
//!   `REQUEST_BODY_TIMEOUT`) when its handler has not answered yet, and an
//!   HTTP/1 connection is then closed.
//! - **write**: if the connection cannot hand its response to the client for
//!   this long, the connection is closed. That is the case while a socket
//!   write waits for the client to read (its receive window is full), and
//!   while a response waits for the connection to take its next chunk and
//!   no bytes have gone out since (an HTTP/2 flow-control window the client
//!   does not reopen). A client that reads slowly but steadily is not cut
//!   off, and neither is the time a response itself takes to produce its
//!   next chunk (a handler that is working, a health `Watch` waiting for a
//!   change). An HTTP/2 response is handed over 16 KiB at a time; once its
//!   last part is handed over, what the client has not taken of it keeps the
//!   connection open only until the idle timeout and the drain time have
//!   passed. On an HTTP/2 connection that still sends other responses, one
//!   whose stream the client does not read is bounded by the stream timeout.
//! - **stream**: a request may be in progress no longer than this, from its
//!   head until the last byte of its response is handed to the connection;
//!   this bounds long-lived server streams (health `Watch`, reflection). A
//!   handler that has not answered by then is cancelled and the request is
//!   answered with `DEADLINE_EXCEEDED` (reason `STREAM_TIMEOUT`); a response
//!   already under way is ended: a gRPC response with `DEADLINE_EXCEEDED`
//!   trailers, any other response by aborting it (HTTP/1 closes the
//!   connection, HTTP/2 resets the stream). A streaming client reconnects.
//! - **idle**: a connection with no request in progress for this long is shut
//!   down gracefully (an HTTP/2 connection gets a GOAWAY). Pings and other
//!   frames that carry no request do not keep a connection open.
//! - **drain**: when the shutdown future completes the server stops
//!   accepting, lets in-flight requests finish and closes each connection
//!   once it is idle; connections still open after this time are dropped.
//!   A connection shut down for being idle gets the same time to close.
//!
//! With [`Server::tls`] the same is served over TLS ([`crate::tls`]): the
//! handshake runs in the connection's task under the header timeout, which
//! it shares with the first request head.
//!
//! hyper's own HTTP/1 header read timeout is not used: it also runs while a
//! keep-alive connection waits for its next request, so it would cut idle
//! connections at the header timeout instead of the idle timeout.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response, Version, header};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep, sleep_until};
use tower::ServiceExt;

use crate::tls::{ServerTls, Stream};
use protoapi_core::error::{Code, Error};

/// How long the server waits for clients; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Time allowed to receive a request head (and an HTTP/2 preface).
    pub header: Duration,
    /// Time allowed to receive a whole request body (REST and gRPC alike,
    /// client streams included).
    pub body: Duration,
    /// Time the connection may go without handing any of a response to a
    /// client that does not read; the connection is then closed.
    pub write: Duration,
    /// Time a request may be in progress, from its head until its response
    /// is sent (long-lived server streams included).
    pub stream: Duration,
    /// Time a connection with no request in progress is kept open.
    pub idle: Duration,
    /// Time in-flight requests get to finish after shutdown begins.
    pub drain: Duration,
}

impl Default for Timeouts {
    /// Header 10 s, body 30 s, write 30 s, stream 10 min, idle 60 s, drain 30 s.
    fn default() -> Self {
        Timeouts {
            header: Duration::from_secs(10),
            body: Duration::from_secs(30),
            write: Duration::from_secs(30),
            stream: Duration::from_secs(600),
            idle: Duration::from_secs(60),
            drain: Duration::from_secs(30),
        }
    }
}

/// How much the server holds at once; see the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Open connections (at least 1). At the limit, new connections wait
    /// in the listen backlog until one closes.
    pub max_connections: usize,
    /// Requests in progress at once on one HTTP/2 connection (at least 1).
    pub max_concurrent_streams: u32,
}

impl Default for Limits {
    /// 1024 connections, 100 streams per HTTP/2 connection.
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            max_concurrent_streams: 100,
        }
    }
}

/// A router served on a listener; see the [module docs](self).
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    router: Router,
    timeouts: Timeouts,
    limits: Limits,
    tls: Option<ServerTls>,
    error_domain: &'static str,
    uploads: Option<&'static str>,
}

/// What serves each request: the router, the ErrorInfo domain of the
/// answers given outside it (the timeouts'), and where uploads are.
#[derive(Clone)]
struct App {
    router: Router,
    error_domain: &'static str,
    uploads: Option<&'static str>,
}

impl Server {
    /// Serves `router` on `listener` with the default [`Timeouts`] and
    /// [`Limits`].
    pub fn new(listener: TcpListener, router: Router) -> Self {
        Server {
            listener,
            router,
            timeouts: Timeouts::default(),
            limits: Limits::default(),
            tls: None,
            error_domain: protoapi_core::error::DEFAULT_DOMAIN,
            uploads: None,
        }
    }

    /// Lets requests whose path starts with `prefix` (a registry's, whose
    /// layers may take minutes to arrive) send their bodies for as long as
    /// the stream timeout, rather than the body timeout, allows.
    pub fn uploads_under(mut self, prefix: &'static str) -> Self {
        self.uploads = Some(prefix);
        self
    }

    /// Names `domain` (the generated crate's `ERROR_DOMAIN`) in the
    /// answers the server gives outside the router (the stream and body
    /// timeouts', a response stream's included), as the router does in its own.
    pub fn error_domain(mut self, domain: &'static str) -> Self {
        self.error_domain = domain;
        self
    }

    /// Serves over TLS only, with this certificate; see [`crate::tls`].
    pub fn tls(mut self, tls: ServerTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Uses these timeouts.
    pub fn timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Uses these limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
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
            limits,
            tls,
            error_domain,
            uploads,
        } = self;
        let app = App {
            router,
            error_domain,
            uploads,
        };
        let limits = Limits {
            max_connections: limits.max_connections.clamp(1, Semaphore::MAX_PERMITS),
            max_concurrent_streams: limits.max_concurrent_streams.max(1),
        };
        let (stop, stopping) = watch::channel(false);
        // True while the server waits for a connection to close before it
        // accepts another: idle connections then close.
        let (full, pressure) = watch::channel(false);
        let slots = Arc::new(Semaphore::new(limits.max_connections));
        let mut connections = JoinSet::new();
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            while connections.try_join_next().is_some() {}
            let slot = match Arc::clone(&slots).try_acquire_owned() {
                Ok(slot) => slot,
                Err(_) => {
                    tracing::debug!(
                        max_connections = limits.max_connections,
                        "connection limit reached: waiting for a connection to close"
                    );
                    full.send_replace(true);
                    let slot = tokio::select! {
                        () = &mut shutdown => break,
                        slot = Arc::clone(&slots).acquire_owned() => slot,
                    };
                    full.send_replace(false);
                    slot.expect("the semaphore is never closed")
                }
            };
            tokio::select! {
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        connections.spawn(connection(
                            (stream, peer),
                            tls.clone(),
                            app.clone(),
                            timeouts,
                            limits,
                            Watchers {
                                stopping: stopping.clone(),
                                pressure: pressure.clone(),
                            },
                            slot,
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

/// What a connection hears from the server.
struct Watchers {
    /// True once the server is shutting down.
    stopping: watch::Receiver<bool>,
    /// True while the server is at its connection limit.
    pressure: watch::Receiver<bool>,
}

/// Serves one connection until it closes, watching its timeouts. `_slot`
/// is its place under the connection limit, given back when it closes.
async fn connection(
    (stream, peer): (TcpStream, SocketAddr),
    tls: Option<ServerTls>,
    app: App,
    timeouts: Timeouts,
    limits: Limits,
    watchers: Watchers,
    _slot: OwnedSemaphorePermit,
) {
    let Watchers {
        mut stopping,
        mut pressure,
    } = watchers;
    // Small messages (gRPC, JSON) should not wait for Nagle's algorithm.
    stream.set_nodelay(true).ok();
    let activity = Arc::new(Activity::new(timeouts));
    // The handshake counts against the first request head's time.
    let stream = match tls {
        Some(tls) => match tls
            .accept(stream, activity.accepted + timeouts.header)
            .await
        {
            Some(stream) => stream,
            None => return,
        },
        None => Stream::Plain(stream),
    };
    let io = TokioIo::new(Watched {
        inner: stream,
        activity: Arc::clone(&activity),
        write_blocked: false,
    });
    let service = service(app, peer, timeouts, Arc::clone(&activity));
    let builder = http_builder(limits);
    let connection = builder.serve_connection(io, service);
    let mut connection = std::pin::pin!(connection);

    // Set once the connection is shutting down gracefully (idle, or the
    // server is draining); `close_at` bounds how long that may take when
    // the connection itself started it.
    let mut graceful = false;
    let mut close_at: Option<Instant> = None;
    let mut draining = false;
    let mut pressure_open = true;
    loop {
        if !draining && *stopping.borrow() {
            draining = true;
            if !graceful {
                graceful = true;
                connection.as_mut().graceful_shutdown();
            }
        }
        let pressed = pressure_open && *pressure.borrow();
        let idle = activity.is_idle_under(pressed);
        if !graceful && pressed && idle {
            tracing::debug!("connection limit reached: closing an idle connection");
            graceful = true;
            connection.as_mut().graceful_shutdown();
            close_at = Some(Instant::now() + timeouts.drain);
        }
        let next = activity.next_deadline(close_at);
        let timer = tokio::time::sleep_until(next.0);
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
            changed = pressure.changed(), if pressure_open && !graceful => {
                // Looked at at the top of the loop.
                if changed.is_err() {
                    pressure_open = false;
                }
            }
            () = timer => {
                // The state may have changed while the timer fired.
                if activity.next_deadline(close_at) != next {
                    continue;
                }
                let (_, expiry) = next;
                if expiry == Expiry::Recheck {
                    continue;
                }
                if expiry.drops_connection() {
                    return;
                }
                // Idle: closed gracefully, within the drain time.
                if !graceful {
                    graceful = true;
                    connection.as_mut().graceful_shutdown();
                }
                close_at = Some(Instant::now() + timeouts.drain);
            }
        }
    }
}

/// The connection's requests, each handed to the router with the peer's
/// address (for per-address policies such as rate limits) and watched.
fn service(
    app: App,
    peer: SocketAddr,
    timeouts: Timeouts,
    activity: Arc<Activity>,
) -> impl hyper::service::Service<
    Request<Incoming>,
    Response = Response<Tracked>,
    Error = Infallible,
    Future = impl Future<Output = Result<Response<Tracked>, Infallible>> + Send,
> + Clone {
    hyper::service::service_fn(move |mut request: Request<Incoming>| {
        request
            .extensions_mut()
            .insert(axum::extract::ConnectInfo(peer));
        handle(request, app.clone(), timeouts, Arc::clone(&activity))
    })
}

/// HTTP/1.1 and HTTP/2 on one connection, with the server's stream limit;
/// the connection's own timers, not hyper's, bound reading a request head.
fn http_builder(limits: Limits) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(None);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.max_concurrent_streams);
    builder
}

/// Which timeout a connection's next deadline belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expiry {
    Header,
    Write,
    Idle,
    Close,
    /// No deadline this soon: the connection looks again.
    Recheck,
}

impl Expiry {
    /// Logs why the deadline closes the connection; true when it is
    /// dropped at once, false for an idle one (closed gracefully).
    fn drops_connection(self) -> bool {
        let why = match self {
            Expiry::Header => "request head not received in time: closing the connection",
            Expiry::Write => "client does not read its response: closing the connection",
            Expiry::Close => "connection did not close in time: dropping it",
            Expiry::Recheck => return false,
            Expiry::Idle => {
                tracing::debug!("connection idle: closing it");
                return false;
            }
        };
        tracing::debug!("{why}");
        true
    }
}

/// The HTTP/2 connection preface.
const H2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What a connection is doing, updated by its IO and its requests.
///
/// The connection's task waits for the next deadline, and at least every
/// `recheck` (the shortest of the header, write and idle timeouts) looks
/// again. A deadline that an event sets is then never earlier than the one
/// the task waits for, so serving a request wakes the task for no
/// deadline: only a connection going idle while the server is at its
/// connection limit does (see [`Activity::is_idle_under`]).
#[derive(Debug)]
struct Activity {
    state: Mutex<State>,
    timeouts: Timeouts,
    /// How long the connection's task waits at most before it looks again.
    recheck: Duration,
    /// When the connection was accepted.
    accepted: Instant,
    /// When a socket write last sent bytes, in nanoseconds since `accepted`.
    written: AtomicU64,
    /// Woken when a deadline comes before the one the connection's task
    /// waits for, and when the connection turns idle under pressure.
    changed: Notify,
}

#[derive(Debug)]
struct State {
    phase: Phase,
    in_flight: usize,
    /// Bytes of the HTTP/2 preface matched so far; `None` once the protocol is known.
    preface: Option<usize>,
    http2: bool,
    /// Since when a socket write has been waiting for the client to read.
    write_blocked: Option<Instant>,
    /// Responses that handed the connection a chunk which it has not taken
    /// up since (asked for the next), with the instant, by request.
    unsent: HashMap<u64, Instant>,
    next_request: u64,
    /// The deadline the connection currently waits for (its accept, until
    /// its task first looks).
    armed: Instant,
    /// Whether the server is at its connection limit, as the connection's
    /// task last saw it: the connection is then woken when it turns idle.
    pressure: bool,
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
    fn new(timeouts: Timeouts) -> Self {
        let accepted = Instant::now();
        Activity {
            state: Mutex::new(State {
                phase: Phase::Head(Instant::now()),
                in_flight: 0,
                preface: Some(0),
                http2: false,
                write_blocked: None,
                unsent: HashMap::new(),
                next_request: 0,
                armed: accepted,
                pressure: false,
            }),
            timeouts,
            recheck: timeouts
                .header
                .min(timeouts.write)
                .min(timeouts.idle)
                .max(Duration::from_millis(1)),
            accepted,
            written: AtomicU64::new(0),
            changed: Notify::new(),
        }
    }

    /// When a socket write last sent bytes (the accept, if none has).
    fn last_written(&self) -> Instant {
        self.accepted + Duration::from_nanos(self.written.load(Ordering::Relaxed))
    }

    /// A socket write sent bytes.
    fn wrote(&self) {
        let nanos = u64::try_from(self.accepted.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.written.store(nanos, Ordering::Relaxed);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The next deadline and what it is for: the write timeout, and the
    /// header or idle timeout, or once the connection is closing,
    /// `close_at`; a recheck when none comes within `recheck`.
    fn next_deadline(&self, close_at: Option<Instant>) -> (Instant, Expiry) {
        let mut state = self.state();
        let phase = match (close_at, state.phase) {
            (Some(at), _) => Some((at, Expiry::Close)),
            (None, Phase::Head(since)) => Some((since + self.timeouts.header, Expiry::Header)),
            (None, Phase::Idle(since)) => Some((since + self.timeouts.idle, Expiry::Idle)),
            (None, Phase::Busy) => None,
        };
        // The client stopped reading when a socket write started waiting for
        // it, or when a response waiting to be asked for more saw no bytes
        // sent since: a response may wait behind buffered bytes (of its own
        // or of other requests) while a slow client still reads them.
        let unsent = state
            .unsent
            .values()
            .min()
            .map(|&since| since.max(self.last_written()));
        let write = [state.write_blocked, unsent]
            .into_iter()
            .flatten()
            .min()
            .map(|since| (since + self.timeouts.write, Expiry::Write));
        let recheck = Instant::now() + self.recheck;
        let next = [phase, write]
            .into_iter()
            .flatten()
            .min_by_key(|&(at, _)| at)
            .filter(|&(at, _)| at <= recheck)
            .unwrap_or((recheck, Expiry::Recheck));
        state.armed = next.0;
        next
    }

    /// Whether no request is in progress on a connection that has sent one;
    /// records `pressure` (the server is at its connection limit), under
    /// which the connection's task is woken when it turns idle.
    fn is_idle_under(&self, pressure: bool) -> bool {
        let mut state = self.state();
        state.pressure = pressure;
        matches!(state.phase, Phase::Idle(_))
    }

    /// Wakes the connection when `at` comes before the deadline it waits for.
    fn arm(&self, state: MutexGuard<'_, State>, at: Instant) {
        let earlier = at < state.armed;
        drop(state);
        if earlier {
            self.changed.notify_one();
        }
    }

    /// Bytes arrived from the client.
    fn read(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut state = self.state();
        if let Some(matched) = state.preface {
            let take = bytes.len().min(H2_PREFACE.len() - matched);
            if bytes[..take] != H2_PREFACE[matched..matched + take] {
                state.preface = None;
            } else if matched + take == H2_PREFACE.len() {
                // An HTTP/2 connection: from now on only requests count.
                // Its first request head is still due by the header timeout,
                // and until it comes the connection is not idle: over TLS the
                // preface and the first request often arrive in separate
                // reads, and a server at its connection limit must not take
                // a new client for an idle one in between.
                state.preface = None;
                state.http2 = true;
            } else {
                state.preface = Some(matched + take);
            }
        }
        // The first byte of a new HTTP/1 request starts its header timeout.
        if !state.http2 && matches!(state.phase, Phase::Idle(_)) {
            let now = Instant::now();
            state.phase = Phase::Head(now);
            self.arm(state, now + self.timeouts.header);
        }
    }

    /// A socket write started (`true`) or stopped (`false`) waiting for the
    /// client to read.
    fn write_blocked(&self, blocked: bool) {
        let mut state = self.state();
        if blocked {
            let now = Instant::now();
            state.write_blocked = Some(now);
            self.arm(state, now + self.timeouts.write);
        } else {
            state.write_blocked = None;
        }
    }

    fn request_started(self: &Arc<Self>) -> InFlight {
        let mut state = self.state();
        state.in_flight += 1;
        state.phase = Phase::Busy;
        let id = state.next_request;
        state.next_request += 1;
        drop(state);
        InFlight {
            activity: Arc::clone(self),
            id,
        }
    }
}

/// A request in progress, from its head until its response body is done.
#[derive(Debug)]
struct InFlight {
    activity: Arc<Activity>,
    id: u64,
}

impl InFlight {
    /// The response handed the connection a chunk (or, at first, itself):
    /// the connection owes it a poll for the next one.
    fn handed(&self) {
        let mut state = self.activity.state();
        let now = Instant::now();
        state.unsent.insert(self.id, now);
        self.activity.arm(state, now + self.activity.timeouts.write);
    }

    /// The connection asked the response for its next chunk.
    fn taken(&self) {
        self.activity.state().unsent.remove(&self.id);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self.activity.state();
        state.unsent.remove(&self.id);
        state.in_flight -= 1;
        let mut wake = false;
        if state.in_flight == 0 {
            state.phase = Phase::Idle(Instant::now());
            wake = state.pressure;
        }
        drop(state);
        if wake {
            self.activity.changed.notify_one();
        }
    }
}

/// The connection's socket, reporting what it reads and when its writes
/// wait for the client.
struct Watched {
    inner: Stream,
    activity: Arc<Activity>,
    /// Whether the last write (or flush) was left pending.
    write_blocked: bool,
}

impl Watched {
    /// Records whether a write is waiting for the client (shared only on a
    /// change) and when bytes were last sent.
    fn wrote<T>(
        &mut self,
        poll: Poll<std::io::Result<T>>,
        sent: fn(&T) -> bool,
    ) -> Poll<std::io::Result<T>> {
        let blocked = poll.is_pending();
        if blocked != self.write_blocked {
            self.write_blocked = blocked;
            self.activity.write_blocked(blocked);
        }
        if let Poll::Ready(Ok(value)) = &poll
            && sent(value)
        {
            self.activity.wrote();
        }
        poll
    }
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
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(poll, |&n| n > 0)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(poll, |&n| n > 0)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_flush(cx);
        self.wrote(poll, |()| false)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.wrote(poll, |()| false)
    }
}

/// Serves one request: its body under the body timeout, the whole exchange
/// under the stream timeout, its response tracked until the last byte.
async fn handle(
    request: Request<Incoming>,
    app: App,
    timeouts: Timeouts,
    activity: Arc<Activity>,
) -> Result<Response<Tracked>, Infallible> {
    let in_flight = activity.request_started();
    let ends = Instant::now() + timeouts.stream;
    let http1 = request.version() < Version::HTTP_2;
    let grpc = protoapi_http::rest::is_grpc(request.headers());
    let expired = Arc::new(AtomicBool::new(false));
    let upload = app
        .uploads
        .is_some_and(|prefix| request.uri().path().starts_with(prefix));
    let body_timeout = if upload {
        timeouts.stream
    } else {
        timeouts.body
    };
    let request = request.map(|body| TimedBody {
        sleep: Box::pin(tokio::time::sleep(body_timeout)),
        inner: body,
        expired: Arc::clone(&expired),
    });
    let mut close = false;
    let mut response = match tokio::time::timeout_at(ends, app.router.oneshot(request)).await {
        Ok(Ok(response)) => response,
        Err(_) => {
            tracing::debug!("request not answered within the stream timeout");
            close = true;
            protoapi_http::rest::error_response(
                stream_timeout_error(timeouts.stream, app.error_domain),
                grpc,
            )
        }
    };
    if expired.load(Ordering::Acquire) {
        response = protoapi_http::rest::error_response(
            body_timeout_error(body_timeout, app.error_domain),
            grpc,
        );
        close = true;
    }
    if close && http1 {
        // The rest of the body is not read: the connection cannot be reused.
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    in_flight.handed();
    Ok(response.map(|body| Tracked {
        inner: body,
        in_flight: Some(in_flight),
        ends,
        timer: None,
        grpc,
        timeout: timeouts.stream,
        error_domain: app.error_domain,
        split: !http1,
        rest: Bytes::new(),
    }))
}

fn body_timeout_error(timeout: Duration, domain: &str) -> Error {
    Error::new(
        Code::DeadlineExceeded,
        "REQUEST_BODY_TIMEOUT",
        format!(
            "the request body was not received within {} ms",
            timeout.as_millis()
        ),
    )
    .with_http_status(http::StatusCode::REQUEST_TIMEOUT)
    .in_domain(domain)
}

fn stream_timeout_error(timeout: Duration, domain: &str) -> Error {
    Error::new(
        Code::DeadlineExceeded,
        "STREAM_TIMEOUT",
        format!(
            "the request was not completed within {} ms",
            timeout.as_millis()
        ),
    )
    .in_domain(domain)
}

/// Why a body ended early.
#[derive(Debug)]
enum Cut {
    /// The request body did not arrive within the body timeout.
    Body,
    /// The response was still under way at the stream timeout.
    Stream,
}

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Cut::Body => "the request body was not received in time",
            Cut::Stream => "the response was not completed in time",
        })
    }
}

impl std::error::Error for Cut {}

/// A request body with a deadline for the whole body.
struct TimedBody {
    inner: Incoming,
    sleep: Pin<Box<Sleep>>,
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
            return Poll::Ready(Some(Err(Cut::Body.into())));
        }
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        ready!(this.sleep.as_mut().poll(cx));
        this.expired.store(true, Ordering::Release);
        Poll::Ready(Some(Err(Cut::Body.into())))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Largest chunk an HTTP/2 response hands the connection at once (the
/// protocol's default frame size). hyper takes a whole chunk into the
/// stream's send buffer even when the client's flow-control window has no
/// room for it, and asks for the next one only once there is room: smaller
/// chunks keep a response that the client does not read waiting on the
/// connection, where the write timeout sees it, instead of in that buffer.
const HTTP2_CHUNK: usize = 16 * 1024;

/// A response body that ends its request's [`InFlight`] when it is done,
/// tells the connection when it waits to be asked for more (write timeout)
/// and ends at the stream timeout.
struct Tracked {
    inner: axum::body::Body,
    /// `None` once the body has ended.
    in_flight: Option<InFlight>,
    /// The stream timeout's deadline.
    ends: Instant,
    /// A timer for `ends`, set only once `inner` keeps the response waiting:
    /// a response ready at once (most) never touches the timer wheel.
    timer: Option<Pin<Box<Sleep>>>,
    grpc: bool,
    timeout: Duration,
    error_domain: &'static str,
    /// Whether chunks are handed over at most [`HTTP2_CHUNK`] at a time.
    split: bool,
    /// What is left of a chunk of `inner` handed over in parts.
    rest: Bytes,
}

impl Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        let Some(in_flight) = &this.in_flight else {
            return Poll::Ready(None);
        };
        in_flight.taken();
        // A chunk handed over in parts is finished first: it may hold the
        // end of a gRPC message.
        if !this.rest.is_empty() {
            let part = this.rest.split_to(this.rest.len().min(HTTP2_CHUNK));
            in_flight.handed();
            return Poll::Ready(Some(Ok(Frame::data(part))));
        }
        if !this.inner.is_end_stream() && Instant::now() >= this.ends {
            return Poll::Ready(Some(this.cut()));
        }
        let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) else {
            let timer = (this.timer).get_or_insert_with(|| Box::pin(sleep_until(this.ends)));
            ready!(timer.as_mut().poll(cx));
            return Poll::Ready(Some(this.cut()));
        };
        match frame {
            Some(Ok(frame)) => {
                in_flight.handed();
                match frame.into_data() {
                    Ok(mut data) if this.split && data.len() > HTTP2_CHUNK => {
                        this.rest = data.split_off(HTTP2_CHUNK);
                        Poll::Ready(Some(Ok(Frame::data(data))))
                    }
                    Ok(data) => Poll::Ready(Some(Ok(Frame::data(data)))),
                    Err(frame) => Poll::Ready(Some(Ok(frame))),
                }
            }
            Some(Err(error)) => {
                this.in_flight = None;
                Poll::Ready(Some(Err(error)))
            }
            None => {
                this.in_flight = None;
                Poll::Ready(None)
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.in_flight.is_none() || (self.rest.is_empty() && self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        if self.in_flight.is_none() {
            return SizeHint::with_exact(0);
        }
        let inner = self.inner.size_hint();
        let rest = self.rest.len() as u64;
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower().saturating_add(rest));
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper.saturating_add(rest));
        }
        hint
    }
}

impl Tracked {
    /// Ends the response at the stream timeout: with an error status in
    /// gRPC trailers, else by cutting the body.
    fn cut(&mut self) -> Result<Frame<Bytes>, axum::Error> {
        tracing::debug!("response stream open at the stream timeout: ending it");
        self.in_flight = None;
        if self.grpc {
            let error = stream_timeout_error(self.timeout, self.error_domain);
            return Ok(Frame::trailers(grpc_status(error)));
        }
        Err(axum::Error::new(Cut::Stream))
    }
}

/// The trailers of a gRPC response ending with `error`.
fn grpc_status(error: Error) -> HeaderMap {
    let mut trailers = HeaderMap::new();
    if tonic::Status::from(error)
        .add_header(&mut trailers)
        .is_err()
    {
        trailers.clear();
        trailers.insert("grpc-status", HeaderValue::from_static("4"));
    }
    trailers
}

/// Completes on SIGINT or SIGTERM: the `shutdown` to pass to
/// [`Server::serve`] in a server binary.
pub async fn shutdown_signal() {
    let interrupt = async {
        tokio::signal::ctrl_c().await.ok();
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut signal) = signal(SignalKind::terminate()) {
            signal.recv().await;
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}
