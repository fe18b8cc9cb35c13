//! Per-caller rate limits (feature `ratelimit`): a layer any generated API
//! can add with `Services::layer`.
//!
//! Each caller has a bucket of `burst` requests refilled one per
//! `interval` (GCRA, `governor`'s keyed limiter). The key is the authenticated
//! identity ([`Caller::Identity`]); any other caller (anonymous, or
//! presenting a token for a method to verify) is keyed by its peer
//! address, an IPv6 address by its /64 prefix (one host holds a whole /64).
//! Trusted local access ([`Caller::System`]) is not limited. Over the
//! limit a request is answered `RESOURCE_EXHAUSTED` (REST: 429 with a
//! `Retry-After` header) with ErrorInfo reason `RATE_LIMITED` and a
//! `RetryInfo` holding the wait, before any handler (and so any storage)
//! runs.
//!
//! **Where it goes.** Add the layer so that it runs *after* authentication
//! (add it before the authentication layer: layers added later run
//! first), so that it sees the caller. Requests without credentials cost
//! authentication nothing and reach it at once; requests with a token cost
//! one signature check before it, the same cost as refusing a bad token,
//! so limiting floods by address before authentication would save nothing
//! worth a second layer. Refusals of authentication are not counted.
//!
//! **Memory.** An attacker can present many addresses (not identities:
//! those need tokens the API signed). Keys whose buckets are full again
//! are forgotten every [`SWEEP_EVERY`] checks, and when the table holds
//! [`RateLimit::max_keys`] keys (at most once a second); while it is still
//! full, callers keyed by address share one bucket (identities keep their
//! own), so memory stays bounded and the flood limits itself.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota};

use protoapi_core::context::Caller;
use protoapi_core::error::{Code, Error};

/// Forget idle keys after this many checks.
pub const SWEEP_EVERY: u64 = 4096;

/// How many requests a caller may make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimit {
    /// One request more is allowed each `interval` (sustained rate).
    pub interval: Duration,
    /// Requests a caller may make at once after being idle.
    pub burst: NonZeroU32,
    /// Most callers tracked separately (see the [module docs](self)).
    pub max_keys: usize,
}

impl RateLimit {
    /// `per_second` sustained, `burst` at once, up to 100,000 callers tracked.
    pub fn per_second(per_second: NonZeroU32, burst: NonZeroU32) -> Self {
        RateLimit {
            interval: Duration::from_secs(1) / per_second.get(),
            burst,
            max_keys: 100_000,
        }
    }
}

/// Whose bucket a request takes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Identity(String),
    Address(IpAddr),
    /// Callers keyed by address while the table is full, or without one.
    Shared,
}

/// The limiter; clones share its buckets. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct RateLimiter {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    buckets: DefaultKeyedRateLimiter<Key>,
    max_keys: usize,
    checks: AtomicU64,
    /// When the table was last swept because it was full, in milliseconds
    /// since `created`.
    swept_full: AtomicU64,
    created: Instant,
}

impl RateLimiter {
    /// A limiter of `limit`, with no caller seen yet.
    pub fn new(limit: RateLimit) -> Self {
        let interval = limit.interval.max(Duration::from_nanos(1));
        let quota = Quota::with_period(interval)
            .expect("the interval is not zero")
            .allow_burst(limit.burst);
        RateLimiter {
            inner: Arc::new(Inner {
                buckets: DefaultKeyedRateLimiter::keyed(quota),
                max_keys: limit.max_keys.max(1),
                checks: AtomicU64::new(0),
                swept_full: AtomicU64::new(0),
                created: Instant::now(),
            }),
        }
    }

    /// How many callers are tracked now.
    pub fn tracked(&self) -> usize {
        self.inner.buckets.len()
    }

    /// Takes one request from the bucket of `caller` (from `peer`): `Err`
    /// with the wait when it is empty; `Ok` for callers not limited.
    pub fn check(&self, caller: &Caller, peer: Option<IpAddr>) -> Result<(), Duration> {
        let key = match caller {
            Caller::System => return Ok(()),
            Caller::Identity { uid, .. } => Key::Identity(uid.clone()),
            _ => peer.map_or(Key::Shared, |ip| Key::Address(prefix(ip))),
        };
        let key = match (key, self.sweep()) {
            (Key::Address(_), true) => Key::Shared,
            (key, _) => key,
        };
        let buckets = &self.inner.buckets;
        buckets
            .check_key(&key)
            .map_err(|not_until| not_until.wait_time_from(buckets.clock().now()))
    }

    /// Forgets idle keys when it is time to; answers whether the table is
    /// (still) full.
    fn sweep(&self) -> bool {
        let inner = &self.inner;
        let checks = inner.checks.fetch_add(1, Ordering::Relaxed) + 1;
        let full = || inner.buckets.len() >= inner.max_keys;
        if checks.is_multiple_of(SWEEP_EVERY) {
            inner.buckets.retain_recent();
            inner.buckets.shrink_to_fit();
        } else if full() {
            let now = u64::try_from(inner.created.elapsed().as_millis()).unwrap_or(u64::MAX);
            let last = inner.swept_full.load(Ordering::Relaxed);
            if now.saturating_sub(last) >= 1000
                && inner
                    .swept_full
                    .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok()
            {
                inner.buckets.retain_recent();
                inner.buckets.shrink_to_fit();
            }
        }
        full()
    }
}

/// The address a caller is keyed by: IPv4 as is (IPv4-mapped IPv6
/// included), IPv6 by its /64 prefix.
fn prefix(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

/// The answer over the limit: RESOURCE_EXHAUSTED with RetryInfo.
pub fn rate_limited(wait: Duration) -> Error {
    Error::new(
        Code::ResourceExhausted,
        "RATE_LIMITED",
        format!(
            "too many requests from this caller: try again in {} ms",
            wait.as_millis().max(1)
        ),
    )
    .with_retry_delay(wait)
}

/// Has `next` answer the request, or refuses it when its caller (see
/// [`RateLimiter::check`]) is over the limit.
pub(crate) async fn limit<F: Future<Output = Response>>(
    limiter: &RateLimiter,
    request: Request,
    next: impl FnOnce(Request) -> F,
) -> Response {
    let caller = Caller::from_extensions(request.extensions());
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(address)| address.ip());
    let Err(wait) = limiter.check(&caller, peer) else {
        return next(request).await;
    };
    // REST answers carry `Retry-After` too (`Error`'s response).
    let grpc = protoapi_http::rest::is_grpc(request.headers());
    protoapi_http::rest::error_response(rate_limited(wait), grpc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(burst: u32, max_keys: usize) -> RateLimiter {
        RateLimiter::new(RateLimit {
            interval: Duration::from_secs(60),
            burst: NonZeroU32::new(burst).unwrap(),
            max_keys,
        })
    }

    fn identity(uid: &str) -> Caller {
        Caller::Identity {
            uid: uid.to_owned(),
            admin: false,
        }
    }

    #[test]
    fn each_caller_has_its_own_burst() {
        let limiter = limiter(2, 100);
        let a = identity("a");
        assert!(limiter.check(&a, None).is_ok());
        assert!(limiter.check(&a, None).is_ok());
        let wait = limiter.check(&a, None).unwrap_err();
        assert!(wait > Duration::ZERO && wait <= Duration::from_secs(60));
        assert!(limiter.check(&identity("b"), None).is_ok());
        assert!(limiter.check(&Caller::System, None).is_ok());
    }

    #[test]
    fn addresses_of_one_ipv6_prefix_share_a_bucket() {
        let limiter = limiter(1, 100);
        let one: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let other: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        assert!(limiter.check(&Caller::Anonymous, Some(one)).is_ok());
        assert!(limiter.check(&Caller::Anonymous, Some(other)).is_err());
        let v4: IpAddr = "192.0.2.1".parse().unwrap();
        assert!(limiter.check(&Caller::Anonymous, Some(v4)).is_ok());
    }

    #[test]
    fn a_full_table_shares_one_bucket_among_addresses() {
        let limiter = limiter(1, 2);
        for last in 1..=2u8 {
            let ip = IpAddr::from([192, 0, 2, last]);
            assert!(limiter.check(&Caller::Anonymous, Some(ip)).is_ok());
        }
        // Full of recent keys: new addresses take from the shared bucket.
        let first = IpAddr::from([198, 51, 100, 1]);
        let second = IpAddr::from([198, 51, 100, 2]);
        assert!(limiter.check(&Caller::Anonymous, Some(first)).is_ok());
        assert!(limiter.check(&Caller::Anonymous, Some(second)).is_err());
        assert!(limiter.tracked() <= 3);
        // Identities keep their own buckets.
        assert!(limiter.check(&identity("a"), Some(second)).is_ok());
    }

    #[test]
    fn the_error_says_when_to_retry() {
        let error = rate_limited(Duration::from_millis(1500));
        assert_eq!(error.code(), Code::ResourceExhausted);
        assert_eq!(error.reason(), "RATE_LIMITED");
        assert_eq!(error.retry_delay(), Some(Duration::from_millis(1500)));
        let json = error.to_json();
        assert!(
            json.to_string().contains("\"retryDelay\":\"1.500s\""),
            "{json}"
        );
        let status = tonic::Status::from(error);
        let back = Error::from_status(&status).unwrap();
        assert_eq!(back.retry_delay(), Some(Duration::from_millis(1500)));
    }
}
