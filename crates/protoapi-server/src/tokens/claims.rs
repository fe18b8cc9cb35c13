//! What an API token says, and when it holds.

use serde::{Deserialize, Serialize};

/// Clock skew tolerated on `exp` and `nbf`.
pub const LEEWAY_SECS: u64 = 30;

/// Claims of an API token.
#[derive(Debug, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub aud: String,
    pub sub: String,
    pub iat: u64,
    pub nbf: u64,
    pub exp: u64,
}

impl Claims {
    /// Whether `now` is within `nbf..=exp`, give or take the leeway, as
    /// verification checks them.
    pub(super) fn is_current(&self, now: u64) -> bool {
        self.nbf <= now + LEEWAY_SECS && now <= self.exp + LEEWAY_SECS
    }
}
