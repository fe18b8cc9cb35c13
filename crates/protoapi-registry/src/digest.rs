//! Content digests (`sha256:<64 lowercase hex>`), the only algorithm this
//! registry stores under, and the hasher that checks content against one.

use sha2::{Digest as _, Sha256};

use crate::error::{Code, RegistryError};

/// A `sha256` digest, well formed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(String);

impl Digest {
    /// Parses `text`: `sha256:` and 64 lowercase hex characters. Another
    /// algorithm is UNSUPPORTED-worthy but answered DIGEST_INVALID, as the
    /// spec lets a registry refuse digests it cannot verify.
    pub fn parse(text: &str) -> Result<Digest, RegistryError> {
        let hex = text.strip_prefix("sha256:").ok_or_else(|| {
            RegistryError::new(
                Code::DigestInvalid,
                "digests are `sha256:` and 64 lowercase hex characters",
            )
        })?;
        if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(RegistryError::new(
                Code::DigestInvalid,
                "a sha256 digest is 64 lowercase hex characters",
            ));
        }
        Ok(Digest(text.to_owned()))
    }

    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        let mut hasher = Hasher::default();
        hasher.update(bytes);
        hasher.finish()
    }

    /// `sha256:<hex>`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 64 hex characters.
    pub fn hex(&self) -> &str {
        &self.0["sha256:".len()..]
    }
}

impl std::fmt::Display for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Hashes content as it streams by.
#[derive(Clone, Default)]
pub struct Hasher(Sha256);

impl Hasher {
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub fn finish(self) -> Digest {
        let hash = self.0.finalize();
        let mut text = String::with_capacity(71);
        text.push_str("sha256:");
        for byte in hash {
            text.push_str(&format!("{byte:02x}"));
        }
        Digest(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_checked_and_computed() {
        let empty = Digest::of(b"");
        assert_eq!(
            empty.as_str(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(Digest::parse(empty.as_str()).unwrap(), empty);
        for bad in [
            "sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
            "sha256:e3b0",
            "md5:d41d8cd98f00b204e9800998ecf8427e",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ] {
            assert_eq!(
                Digest::parse(bad).unwrap_err().code(),
                Code::DigestInvalid,
                "{bad}"
            );
        }
    }
}
