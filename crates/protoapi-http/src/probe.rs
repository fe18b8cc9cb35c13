//! Health and readiness probes any API can serve, outside authentication:
//!
//! - `GET /healthz`: 200 while the process serves requests; it touches
//!   nothing else.
//! - `GET /readyz`: 200 when the [`Readiness`] check passes (for a SQL
//!   store: the database answers `SELECT 1` in time), else 503
//!   `UNAVAILABLE` with the error model and a `RetryInfo`; ready again as
//!   soon as the check passes again.
//!
//! The probes cannot be used to load what they check: at most one check
//! runs at a time, each bounded by a timeout ([`Probes::timeout`]), and its
//! answer is kept for a short time ([`Probes::cache_for`]) for every probe
//! arriving meanwhile, so however often `/readyz` is asked, the storage is
//! asked at most about once per that time.
//!
//! `ApiRouter::probes` (and the generated `Services::probes`) mounts them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::response::{IntoResponse, Response};
use futures_util::future::BoxFuture;
use serde_json::json;

use protoapi_core::error::{Code, Error, STORAGE_RETRY_DELAY};

/// The path of the liveness probe.
pub const HEALTHZ: &str = "/healthz";
/// The path of the readiness probe.
pub const READYZ: &str = "/readyz";

/// Whether what a server depends on (its storage) answers.
pub trait Readiness: Send + Sync + 'static {
    /// `Ok` when ready; the error says why not (its cause logged, not shown).
    fn check(&self) -> BoxFuture<'_, Result<(), Error>>;
}

impl<R: Readiness + ?Sized> Readiness for Arc<R> {
    fn check(&self) -> BoxFuture<'_, Result<(), Error>> {
        (**self).check()
    }
}

/// The probes of one server; see the [module docs](self).
pub struct Probes {
    check: Box<dyn Readiness>,
    timeout: Duration,
    cache_for: Duration,
    /// The last answer and when it was found; the lock is held while a
    /// check runs, so checks never overlap.
    last: tokio::sync::Mutex<Option<(Instant, Result<(), Error>)>>,
}

impl std::fmt::Debug for Probes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Probes")
            .field("timeout", &self.timeout)
            .field("cache_for", &self.cache_for)
            .finish_non_exhaustive()
    }
}

impl Probes {
    /// The default bound on one readiness check.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
    /// How long a readiness answer is reused by default.
    pub const DEFAULT_CACHE_FOR: Duration = Duration::from_millis(500);

    /// Probes whose readiness is `check`'s.
    pub fn new(check: impl Readiness) -> Self {
        Probes {
            check: Box::new(check),
            timeout: Self::DEFAULT_TIMEOUT,
            cache_for: Self::DEFAULT_CACHE_FOR,
            last: tokio::sync::Mutex::new(None),
        }
    }

    /// Bounds each check: one taking longer is not ready.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Reuses an answer for this long.
    pub fn cache_for(mut self, cache_for: Duration) -> Self {
        self.cache_for = cache_for;
        self
    }

    /// Whether the server is ready: the last answer if it is fresh, else a
    /// new check's (waiting for one already running, rather than starting
    /// another).
    pub async fn ready(&self) -> Result<(), Error> {
        let mut last = self.last.lock().await;
        if let Some((at, answer)) = last.as_ref()
            && at.elapsed() < self.cache_for
        {
            return answer.clone();
        }
        let answer = match tokio::time::timeout(self.timeout, self.check.check()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) if error.code() == Code::Unavailable => Err(error),
            Ok(Err(error)) => Err(not_ready(&error)),
            Err(_) => Err(not_ready(&format!(
                "the readiness check took longer than {:?}",
                self.timeout
            ))),
        };
        *last = Some((Instant::now(), answer.clone()));
        answer
    }

    /// `GET /healthz` and `GET /readyz`.
    pub fn routes(self) -> Router {
        let probes = Arc::new(self);
        Router::new()
            .route(HEALTHZ, axum::routing::get(|| async { ok("serving") }))
            .route(
                READYZ,
                axum::routing::get(move || async move {
                    match probes.ready().await {
                        Ok(()) => ok("ready"),
                        Err(error) => error.into_response(),
                    }
                }),
            )
    }
}

fn ok(status: &str) -> Response {
    axum::Json(json!({ "status": status })).into_response()
}

/// `UNAVAILABLE` for a check that failed otherwise (the cause logged).
fn not_ready(cause: &dyn std::fmt::Display) -> Error {
    tracing::warn!(error = %cause, "not ready");
    Error::new(
        Code::Unavailable,
        "NOT_READY",
        "the server is not ready; retry later",
    )
    .with_retry_delay(STORAGE_RETRY_DELAY)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::*;

    #[derive(Default)]
    struct Flaky {
        down: AtomicBool,
        checks: AtomicUsize,
    }

    impl Readiness for Flaky {
        fn check(&self) -> BoxFuture<'_, Result<(), Error>> {
            Box::pin(async move {
                self.checks.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
                match self.down.load(Ordering::SeqCst) {
                    true => Err(Error::storage_unavailable("db.internal refused")),
                    false => Ok(()),
                }
            })
        }
    }

    #[tokio::test]
    async fn concurrent_probes_share_one_check() {
        let flaky = Arc::new(Flaky::default());
        let probes = Probes::new(Arc::clone(&flaky)).cache_for(Duration::from_secs(3600));
        let answers = futures_util::future::join_all((0..50).map(|_| probes.ready())).await;
        assert!(answers.iter().all(Result::is_ok));
        assert_eq!(flaky.checks.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn readiness_follows_the_check() {
        let flaky = Arc::new(Flaky::default());
        let probes = Probes::new(Arc::clone(&flaky)).cache_for(Duration::ZERO);
        assert!(probes.ready().await.is_ok());
        flaky.down.store(true, Ordering::SeqCst);
        let error = probes.ready().await.unwrap_err();
        assert_eq!(error.code(), Code::Unavailable);
        assert!(error.retry_delay().is_some());
        flaky.down.store(false, Ordering::SeqCst);
        assert!(probes.ready().await.is_ok());
    }

    #[tokio::test]
    async fn a_check_that_hangs_is_not_ready() {
        struct Hangs;
        impl Readiness for Hangs {
            fn check(&self) -> BoxFuture<'_, Result<(), Error>> {
                Box::pin(std::future::pending())
            }
        }
        let probes = Probes::new(Hangs).timeout(Duration::from_millis(10));
        let error = probes.ready().await.unwrap_err();
        assert_eq!(
            (error.code(), error.reason()),
            (Code::Unavailable, "NOT_READY")
        );
    }
}
