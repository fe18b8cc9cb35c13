//! Which registries the Docker credential helper answers for, and at which
//! API it gets their tokens.
//!
//! Docker asks the helper for the credentials of whatever registry host an
//! image names, so the host on stdin is an attacker's choice
//! (`docker pull evil.example/x`). The helper therefore never derives the
//! API from it: the API is configured (`--server`/`PLATFORMCTL_SERVER`,
//! else the server `platformctl auth configure-docker` recorded, else the
//! one `platformctl auth login` logged in to), and the helper answers only
//! for the registry hosts configured for that API: the API's own host (the
//! server serves its registry), `--registry`/`PLATFORMCTL_REGISTRIES`, and
//! the hosts `configure-docker` recorded for that same server. Hosts are
//! compared exactly after [normalisation](RegistryHost::parse); any other
//! host gets "credentials not found" without a network call.

use std::net::Ipv6Addr;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::credentials;

/// The file `platformctl auth configure-docker` writes in the config dir.
const FILE: &str = "docker.json";

/// A registry as Docker names it, normalised: the host in lower case (an
/// IPv6 address in its canonical form, in brackets) and the port, 443
/// unless given (80 for an `http://` URL).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistryHost {
    host: String,
    port: u16,
}

impl RegistryHost {
    /// Parses `host`, `host:port`, `[v6]:port`, or a URL `https://host[:port][/path]`
    /// (a path is ignored: Docker sends credentials to the host). Anything
    /// else is `None`: user information (`good.example@evil.example`), a
    /// query, percent-encoding, characters no host name has, an empty
    /// label, a port that is not 1–65535 in digits.
    pub fn parse(text: &str) -> Option<RegistryHost> {
        let text = text.trim();
        let (default_port, rest) = match text.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => (443, rest),
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => (80, rest),
            Some(_) => return None,
            None => (443, text),
        };
        let authority = rest.split('/').next().unwrap_or_default();
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (address, after) = v6.split_once(']')?;
                let address: Ipv6Addr = address.parse().ok()?;
                (format!("[{address}]"), after)
            }
            None => {
                let name = authority.split(':').next().unwrap_or_default();
                if !is_host_name(name) {
                    return None;
                }
                (name.to_ascii_lowercase(), &authority[name.len()..])
            }
        };
        let port = match port {
            "" => default_port,
            port => parse_port(port.strip_prefix(':')?)?,
        };
        Some(RegistryHost { host, port })
    }

    /// `host:port`, as Docker's `credHelpers` keys name it (the port left
    /// out when it is 443).
    pub fn docker_name(&self) -> String {
        if self.port == 443 {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Dot-separated labels of ASCII letters, digits and hyphens.
fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

fn parse_port(digits: &str) -> Option<u16> {
    if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|port| *port != 0)
}

/// What `platformctl auth configure-docker` records: the API, and the
/// registry hosts whose credentials are that API's tokens.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct DockerConfig {
    pub server: String,
    pub registries: Vec<String>,
}

impl DockerConfig {
    /// The recorded configuration in `dir`, if there is one (an unreadable
    /// one counts as none: the helper then answers for nothing it records).
    pub fn load(dir: &Path) -> Option<DockerConfig> {
        let text = std::fs::read(dir.join(FILE)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    pub fn save(&self, dir: &Path) -> Result<(), protoapi_runtime::Error> {
        let text = serde_json::to_vec_pretty(self).expect("the configuration serializes");
        credentials::write_private(dir, FILE, &text)
    }
}

/// The API the helper uses, and the registry hosts it answers for.
#[derive(Debug)]
pub struct Binding {
    pub server: String,
    registries: Vec<RegistryHost>,
}

impl Binding {
    /// The configured API and its registries: `server` (from `--server`),
    /// else the server `recorded` by `configure-docker`, else the one
    /// `logged_in` to; `None` when none is configured. The registries are
    /// the API's own host, `registries` (from `--registry`), and those
    /// recorded for the same server.
    pub fn new(
        server: Option<&str>,
        registries: &[String],
        recorded: Option<DockerConfig>,
        logged_in: Option<String>,
    ) -> Option<Binding> {
        let server = match (server, &recorded) {
            (Some(server), _) => server.to_owned(),
            (None, Some(recorded)) if !recorded.server.is_empty() => recorded.server.clone(),
            (None, _) => logged_in?,
        };
        let server = server.trim_end_matches('/').to_owned();
        let recorded = recorded
            .filter(|r| r.server.trim_end_matches('/') == server)
            .map(|r| r.registries)
            .unwrap_or_default();
        let registries = std::iter::once(server.as_str())
            .chain(registries.iter().map(String::as_str))
            .chain(recorded.iter().map(String::as_str))
            .filter_map(RegistryHost::parse)
            .collect();
        Some(Binding { server, registries })
    }

    /// Whether the helper answers for the registry Docker names `host`.
    pub fn serves(&self, host: &str) -> bool {
        RegistryHost::parse(host).is_some_and(|host| self.registries.contains(&host))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(text: &str) -> Option<(String, u16)> {
        RegistryHost::parse(text).map(|h| (h.host, h.port))
    }

    #[test]
    fn hosts_are_normalised() {
        let expected = Some(("registry.example".to_owned(), 443));
        for same in [
            "registry.example",
            "REGISTRY.Example",
            "registry.example:443",
            "https://registry.example",
            "HTTPS://registry.example:443/v2/",
            " registry.example\n",
        ] {
            assert_eq!(host(same), expected, "{same}");
        }
        assert_eq!(host("http://Api.Example"), Some(("api.example".into(), 80)));
        assert_eq!(host("127.0.0.1:8080"), Some(("127.0.0.1".into(), 8080)));
        assert_eq!(host("[::1]:5000"), Some(("[::1]".into(), 5000)));
        assert_eq!(
            host("[0:0::1]"),
            Some(("[::1]".into(), 443)),
            "IPv6 in canonical form"
        );
    }

    #[test]
    fn tricks_are_not_hosts() {
        for bad in [
            "",
            "good.example@evil.example",
            "https://good.example@evil.example/",
            "good.example:443@evil.example",
            "good.example%2eevil",
            "good.example?x=1",
            "good.example#x",
            "good..example",
            ".good.example",
            "good.example.",
            "good.example:",
            "good.example:0",
            "good.example:+443",
            "good.example:65536",
            "good.example:443:443",
            "good example",
            "ftp://good.example",
            "[::1",
            "[not-v6]:80",
            "good.example\\evil.example",
            "gооd.example",
        ] {
            assert_eq!(host(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_helper_answers_only_for_configured_hosts() {
        let recorded = DockerConfig {
            server: "https://api.example/".into(),
            registries: vec!["registry.example".into()],
        };
        let binding = Binding::new(
            None,
            &["mirror.example:5000".into()],
            Some(recorded),
            Some("http://other.example".into()),
        )
        .unwrap();
        assert_eq!(binding.server, "https://api.example");
        for yes in ["api.example", "registry.example", "mirror.example:5000"] {
            assert!(binding.serves(yes), "{yes}");
        }
        for no in [
            "other.example",
            "mirror.example",
            "registry.example.evil.example",
            "evil-registry.example",
            "registry.example@evil.example",
            "evil.example/registry.example",
            "api.example:8443",
        ] {
            assert!(!binding.serves(no), "{no}");
        }
    }

    #[test]
    fn recorded_registries_belong_to_their_server() {
        let recorded = || DockerConfig {
            server: "https://api.example".into(),
            registries: vec!["registry.example".into()],
        };
        let other = Binding::new(Some("https://other.example"), &[], Some(recorded()), None);
        let other = other.unwrap();
        assert!(other.serves("other.example"));
        assert!(!other.serves("registry.example"));
        let logged_in = Binding::new(None, &[], None, Some("http://127.0.0.1:8080".into()));
        assert!(logged_in.unwrap().serves("127.0.0.1:8080"));
        assert!(Binding::new(None, &["registry.example".into()], None, None).is_none());
    }
}
