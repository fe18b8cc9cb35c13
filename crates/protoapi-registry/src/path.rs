//! What a path under `/v2/` asks for. Repository names hold `/`, so the
//! endpoint is found from the right: the last `/blobs/uploads/`,
//! `/blobs/`, `/manifests/`, `/referrers/` or a final `/tags/list`.

use crate::digest::Digest;
use crate::error::{Code, RegistryError};

/// The longest repository name served.
pub const MAX_NAME_LEN: usize = 255;

/// An endpoint of the Distribution Spec.
#[derive(Debug, PartialEq, Eq)]
pub enum Endpoint<'a> {
    /// `/v2/`: the base check.
    Base,
    /// `/v2/<name>/blobs/<digest>`.
    Blob { name: &'a str, digest: Digest },
    /// `/v2/<name>/blobs/uploads/`: starting an upload.
    Uploads { name: &'a str },
    /// `/v2/<name>/blobs/uploads/<id>`: an upload in progress.
    Upload { name: &'a str, id: &'a str },
    /// `/v2/<name>/manifests/<reference>`.
    Manifest { name: &'a str, reference: Reference },
    /// `/v2/<name>/tags/list`.
    Tags { name: &'a str },
    /// `/v2/<name>/referrers/<digest>`.
    Referrers { name: &'a str, digest: Digest },
}

impl Endpoint<'_> {
    /// The repository the endpoint is in (none for the base check).
    pub fn name(&self) -> Option<&str> {
        match self {
            Endpoint::Base => None,
            Endpoint::Blob { name, .. }
            | Endpoint::Uploads { name }
            | Endpoint::Upload { name, .. }
            | Endpoint::Manifest { name, .. }
            | Endpoint::Tags { name }
            | Endpoint::Referrers { name, .. } => Some(name),
        }
    }
}

/// A manifest named by tag or by digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reference {
    Tag(String),
    Digest(Digest),
}

impl Reference {
    /// A digest (`algorithm:hex`) or a tag (`[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`).
    pub fn parse(text: &str) -> Result<Reference, RegistryError> {
        if text.contains(':') {
            return Digest::parse(text).map(Reference::Digest);
        }
        if is_tag(text) {
            return Ok(Reference::Tag(text.to_owned()));
        }
        Err(RegistryError::new(
            Code::ManifestInvalid,
            "a tag is 1–128 characters of letters, digits, `_`, `.` and `-`, not starting with `.` or `-`",
        ))
    }
}

/// Whether `text` is a tag as the spec writes them.
pub fn is_tag(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        && text.len() <= 128
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Parses the path after `/v2/`; `None` is no endpoint of the spec.
pub fn parse(rest: &str) -> Result<Option<Endpoint<'_>>, RegistryError> {
    if rest.is_empty() {
        return Ok(Some(Endpoint::Base));
    }
    let endpoint = if let Some((name, id)) = rest.rsplit_once("/blobs/uploads/") {
        match id {
            "" => Endpoint::Uploads { name },
            id => Endpoint::Upload { name, id },
        }
    } else if let Some(name) = rest.strip_suffix("/blobs/uploads") {
        Endpoint::Uploads { name }
    } else if let Some(name) = rest.strip_suffix("/tags/list") {
        Endpoint::Tags { name }
    } else if let Some((name, digest)) = rest.rsplit_once("/blobs/") {
        Endpoint::Blob {
            name,
            digest: Digest::parse(digest)?,
        }
    } else if let Some((name, reference)) = rest.rsplit_once("/manifests/") {
        Endpoint::Manifest {
            name,
            reference: Reference::parse(reference)?,
        }
    } else if let Some((name, digest)) = rest.rsplit_once("/referrers/") {
        Endpoint::Referrers {
            name,
            digest: Digest::parse(digest)?,
        }
    } else {
        return Ok(None);
    };
    let name = endpoint.name().unwrap_or_default();
    if !is_name(name) {
        return Err(RegistryError::new(
            Code::NameInvalid,
            "a repository name is path components of lowercase letters and digits, joined by `/`",
        ));
    }
    Ok(Some(endpoint))
}

/// Whether `name` is a repository name of the spec's grammar:
/// components `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*` joined by `/`, at most
/// [`MAX_NAME_LEN`] characters.
pub fn is_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME_LEN && name.split('/').all(is_component)
}

fn is_component(component: &str) -> bool {
    let bytes = component.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if !bytes.first().is_some_and(alnum) || !bytes.last().is_some_and(alnum) {
        return false;
    }
    let mut separator = String::new();
    for b in bytes {
        if alnum(b) {
            if !matches!(separator.as_str(), "" | "." | "_" | "__")
                && !separator.bytes().all(|s| s == b'-')
            {
                return false;
            }
            separator.clear();
        } else if matches!(b, b'.' | b'_' | b'-') {
            separator.push(char::from(*b));
        } else {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn endpoints_are_found_from_the_right() {
        assert_eq!(parse("").unwrap(), Some(Endpoint::Base));
        assert_eq!(
            parse("a/b/blobs/uploads/").unwrap(),
            Some(Endpoint::Uploads { name: "a/b" })
        );
        assert_eq!(
            parse("a/blobs/uploads/xyz").unwrap(),
            Some(Endpoint::Upload {
                name: "a",
                id: "xyz"
            })
        );
        assert_eq!(
            parse("a/b/tags/list").unwrap(),
            Some(Endpoint::Tags { name: "a/b" })
        );
        assert_eq!(
            parse(&format!("blobs/manifests/{DIGEST}")).unwrap(),
            Some(Endpoint::Manifest {
                name: "blobs",
                reference: Reference::Digest(Digest::parse(DIGEST).unwrap())
            })
        );
        assert_eq!(
            parse("a/manifests/v1.0").unwrap(),
            Some(Endpoint::Manifest {
                name: "a",
                reference: Reference::Tag("v1.0".into())
            })
        );
        assert_eq!(parse("a/b").unwrap(), None);
        assert_eq!(
            parse("A/manifests/v1").unwrap_err().code(),
            Code::NameInvalid
        );
        assert_eq!(
            parse("a/manifests/-v1").unwrap_err().code(),
            Code::ManifestInvalid
        );
    }

    #[test]
    fn names_follow_the_spec_grammar() {
        for good in ["a", "a0/b-c", "a__b", "a.b_c--d", &"a".repeat(MAX_NAME_LEN)] {
            assert!(is_name(good), "{good}");
        }
        for bad in [
            "",
            "a/",
            "/a",
            "a//b",
            "a___b",
            "a._b",
            "-a",
            "a-",
            "A",
            "a b",
            &"a".repeat(MAX_NAME_LEN + 1),
        ] {
            assert!(!is_name(bad), "{bad}");
        }
    }
}
