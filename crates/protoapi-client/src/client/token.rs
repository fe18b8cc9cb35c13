//! Where a connection's bearer tokens come from.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use tokio::sync::Mutex;

use protoapi_core::error::Error;

/// A boxed future of a token, what [`TokenSource::token`] returns.
pub type TokenFuture<'a> = Pin<Box<dyn Future<Output = Result<String, Error>> + Send + 'a>>;

/// Gives the token for the next call. Implementations cache: it is asked
/// once per call.
pub trait TokenSource: Send + Sync + 'static {
    fn token(&self) -> TokenFuture<'_>;
}

/// The same token for every call.
#[derive(Clone)]
pub struct StaticToken(String);

impl StaticToken {
    pub fn new(token: impl Into<String>) -> Self {
        StaticToken(token.into())
    }
}

impl std::fmt::Debug for StaticToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StaticToken(…)")
    }
}

impl TokenSource for StaticToken {
    fn token(&self) -> TokenFuture<'_> {
        let token = self.0.clone();
        Box::pin(async move { Ok(token) })
    }
}

type Fetch = Box<dyn Fn() -> TokenFuture<'static> + Send + Sync>;

/// A token obtained by `fetch` (an exchange, a file, a login cache) and kept
/// until shortly before it expires, then obtained again. The expiry is read
/// from the token's JWT `exp` claim; a token without one is fetched again
/// after [`RefreshingToken::UNKNOWN_LIFETIME`].
pub struct RefreshingToken {
    fetch: Fetch,
    margin: Duration,
    cached: Mutex<Option<(String, SystemTime)>>,
}

impl std::fmt::Debug for RefreshingToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefreshingToken")
            .field("margin", &self.margin)
            .finish_non_exhaustive()
    }
}

impl RefreshingToken {
    /// How long a token without an `exp` claim is used.
    pub const UNKNOWN_LIFETIME: Duration = Duration::from_secs(60);

    /// Tokens are replaced this long before they expire (default five minutes).
    pub const DEFAULT_MARGIN: Duration = Duration::from_secs(300);

    pub fn new<F, Fut>(fetch: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, Error>> + Send + 'static,
    {
        RefreshingToken {
            fetch: Box::new(move || Box::pin(fetch())),
            margin: Self::DEFAULT_MARGIN,
            cached: Mutex::new(None),
        }
    }

    /// Replaces tokens `margin` before they expire.
    pub fn with_margin(mut self, margin: Duration) -> Self {
        self.margin = margin;
        self
    }
}

impl TokenSource for RefreshingToken {
    fn token(&self) -> TokenFuture<'_> {
        Box::pin(async move {
            // One fetch at a time: concurrent calls wait for it instead of
            // each exchanging a token of its own.
            let mut cached = self.cached.lock().await;
            if let Some((token, expires)) = cached.as_ref()
                && SystemTime::now() + self.margin < *expires
            {
                return Ok(token.clone());
            }
            let token = (self.fetch)().await?;
            let expires = jwt_expiry(&token)
                .unwrap_or_else(|| SystemTime::now() + self.margin + Self::UNKNOWN_LIFETIME);
            *cached = Some((token.clone(), expires));
            Ok(token)
        })
    }
}

/// The `exp` claim of a JWT, read without verifying it (the server does).
pub fn jwt_expiry(token: &str) -> Option<SystemTime> {
    let claims = jwt_claims(token)?;
    Some(UNIX_EPOCH + Duration::from_secs(claims["exp"].as_u64()?))
}

/// The `sub` claim of a JWT, read without verifying it (for display: the
/// server verifies).
pub fn jwt_subject(token: &str) -> Option<String> {
    Some(jwt_claims(token)?["sub"].as_str()?.to_owned())
}

fn jwt_claims(token: &str) -> Option<serde_json::Value> {
    let payload = token.split('.').nth(1)?;
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    fn jwt(exp: SystemTime) -> String {
        let exp = exp.duration_since(UNIX_EPOCH).unwrap().as_secs();
        let claims = URL_SAFE_NO_PAD.encode(format!(r#"{{"sub":"x","exp":{exp}}}"#));
        format!("e30.{claims}.sig")
    }

    fn counting(lifetime: Duration) -> (RefreshingToken, Arc<AtomicU32>) {
        let fetched = Arc::new(AtomicU32::new(0));
        let counter = fetched.clone();
        let source = RefreshingToken::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            let token = jwt(SystemTime::now() + lifetime);
            async move { Ok(token) }
        });
        (source, fetched)
    }

    #[tokio::test]
    async fn a_token_is_kept_until_its_expiry_nears() {
        let (source, fetched) = counting(Duration::from_secs(3600));
        let first = source.token().await.unwrap();
        assert_eq!(source.token().await.unwrap(), first);
        assert_eq!(fetched.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_token_within_the_margin_of_expiry_is_replaced() {
        let (source, fetched) = counting(Duration::from_secs(120));
        source.token().await.unwrap();
        source.token().await.unwrap();
        assert_eq!(fetched.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn expiry_is_read_from_the_exp_claim() {
        let at = UNIX_EPOCH + Duration::from_secs(1_900_000_000);
        assert_eq!(jwt_expiry(&jwt(at)), Some(at));
        assert_eq!(jwt_expiry("not a jwt"), None);
        assert_eq!(jwt_subject(&jwt(at)).as_deref(), Some("x"));
        assert_eq!(jwt_subject("not a jwt"), None);
    }
}
