//! Requests per caller.

use std::num::NonZeroU32;

use crate::ratelimit::RateLimit;

/// The per-caller rate limit; unlimited unless `--rate-limit` is given.
#[derive(Debug, Clone, clap::Args)]
pub struct RateLimitFlags {
    /// Requests per second each caller (an identity, or an address for
    /// callers without one) may make; unlimited when not given. Over it:
    /// 429 / RESOURCE_EXHAUSTED with the time to wait.
    #[arg(long, value_name = "REQUESTS_PER_SECOND")]
    pub rate_limit: Option<NonZeroU32>,
    /// Requests a caller may make at once (default: one second's worth).
    #[arg(long, value_name = "N", requires = "rate_limit")]
    pub rate_burst: Option<NonZeroU32>,
}

impl RateLimitFlags {
    /// The rate limit of `--rate-limit` and `--rate-burst`.
    pub fn rate_limit(&self) -> Option<RateLimit> {
        self.rate_limit
            .map(|rate| RateLimit::per_second(rate, self.rate_burst.unwrap_or(rate)))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Args {
        #[command(flatten)]
        limit: RateLimitFlags,
    }

    #[test]
    fn unlimited_by_default_and_a_burst_needs_a_rate() {
        assert!(Args::parse_from(["server"]).limit.rate_limit().is_none());
        let args = Args::parse_from(["server", "--rate-limit", "20", "--rate-burst", "50"]);
        let limit = args.limit.rate_limit().unwrap();
        assert_eq!(
            (limit.interval, limit.burst.get()),
            (Duration::from_millis(50), 50)
        );
        for wrong in [
            &["server", "--rate-burst", "5"][..],
            &["server", "--rate-limit", "0"],
        ] {
            assert!(Args::try_parse_from(wrong).is_err(), "{wrong:?}");
        }
    }
}
