//! TLS and plain HTTP for client connections: [`Tls`].

use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use protoapi_core::error::{Code, Error};

/// The largest CA file read.
const MAX_CA_BYTES: u64 = 1 << 20;

/// How a client connection is secured: which servers it trusts, and where it
/// may go without TLS. The default trusts the operating system's roots and
/// allows plain HTTP to loopback hosts only.
///
/// - `https://` URLs are verified against the operating system's root
///   certificates (`rustls-native-certs`, read once per process), or, when
///   a private certificate authority is given ([`Tls::ca_file`],
///   [`Tls::ca_pem`]), against that authority only, as `curl --cacert` does.
///   A certificate the client does not trust fails the call at once with
///   `FAILED_PRECONDITION` (reason `UNTRUSTED_CERTIFICATE`), and is not
///   retried.
/// - `http://` URLs are allowed to loopback hosts only (`localhost`,
///   `127.0.0.0/8`, `::1`): a bearer token sent in plain HTTP can be read by
///   anyone on the way. Any other `http://` URL is refused with
///   `INVALID_ARGUMENT` before anything is connected, unless the caller opts
///   in with [`Tls::allow_insecure_http`] (a trusted network, a proxy
///   beside the client).
///
/// ```no_run
/// # async fn example() -> Result<(), protoapi_core::Error> {
/// use protoapi_client::client::{Connection, Tls};
/// let tls = Tls::new().ca_file("/etc/api/ca.pem")?;
/// let connection = Connection::grpc_with("https://api.internal:8443", &tls)?;
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct Tls {
    /// Private certificate authorities; when any, the only ones trusted.
    authorities: Vec<CertificateDer<'static>>,
    allow_insecure_http: bool,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("private_authorities", &self.authorities.len())
            .field("allow_insecure_http", &self.allow_insecure_http)
            .finish()
    }
}

/// What a URL's scheme asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scheme {
    Http,
    Https,
}

impl Tls {
    /// The default: the operating system's roots, plain HTTP to loopback only.
    pub fn new() -> Self {
        Tls::default()
    }

    /// Trusts the certificate authorities in `pem` (one or more PEM
    /// `CERTIFICATE` blocks) instead of the operating system's roots; may
    /// be called again to add more.
    pub fn ca_pem(mut self, pem: &[u8]) -> Result<Self, Error> {
        self.authorities
            .extend(authorities(pem).map_err(invalid_ca)?);
        Ok(self)
    }

    /// [`Tls::ca_pem`] with the contents of the file at `path`.
    pub fn ca_file(mut self, path: impl AsRef<Path>) -> Result<Self, Error> {
        use std::io::Read;
        let path = path.as_ref();
        let failed = |e: String| invalid_ca(format!("{}: {e}", path.display()));
        let mut pem = Vec::new();
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_CA_BYTES).read_to_end(&mut pem))
            .map_err(|e| failed(e.to_string()))?;
        self.authorities.extend(authorities(&pem).map_err(failed)?);
        Ok(self)
    }

    /// Allows `http://` URLs to hosts that are not loopback (default: refused).
    pub fn allow_insecure_http(mut self, allow: bool) -> Self {
        self.allow_insecure_http = allow;
        self
    }

    /// Whether `url` may be used under this policy: `https://` always,
    /// `http://` to a loopback host or with [`Tls::allow_insecure_http`].
    /// Refusals are `INVALID_ARGUMENT` naming the URL (field `url`).
    pub fn check_url(&self, url: &str) -> Result<(), Error> {
        self.scheme(url).map(drop)
    }

    pub(super) fn scheme(&self, url: &str) -> Result<Scheme, Error> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| Error::invalid_field("url", format!("`{url}` is not a URL: {e}")))?;
        let host = uri.host().unwrap_or_default();
        if host.is_empty() {
            return Err(Error::invalid_field(
                "url",
                format!("`{url}` has no host (expected `https://host:port`)"),
            ));
        }
        match uri.scheme_str() {
            Some("https") => Ok(Scheme::Https),
            Some("http") if self.allow_insecure_http || is_loopback(host) => Ok(Scheme::Http),
            Some("http") => Err(Error::invalid_field(
                "url",
                format!(
                    "`{url}` is plain HTTP to a host that is not loopback: credentials would \
                     cross the network unencrypted. Use `https://`, or allow plain HTTP \
                     explicitly (`allow_insecure_http`)"
                ),
            )),
            _ => Err(Error::invalid_field(
                "url",
                format!("`{url}`: the scheme is `https://` (or `http://` to a loopback host)"),
            )),
        }
    }

    /// The certificate authorities trusted: the private ones, else the
    /// operating system's.
    pub(super) fn roots(&self) -> Result<Arc<RootCertStore>, Error> {
        if self.authorities.is_empty() {
            return native_roots();
        }
        let mut store = RootCertStore::empty();
        let (_, ignored) = store.add_parsable_certificates(self.authorities.iter().cloned());
        debug_assert_eq!(ignored, 0, "checked when added");
        Ok(Arc::new(store))
    }

    /// An HTTPS connector for a hyper client (HTTP/1.1 and HTTP/2 by
    /// ALPN), trusting the CA given, else the system's roots. It connects `http://` URLs too: check
    /// each URL with [`Tls::check_url`] first.
    pub fn connector(&self) -> Result<HttpsConnector, Error> {
        Ok(connector(self.roots()?))
    }

    /// The connector for URLs of `scheme`: plain HTTP needs no roots (and
    /// does not read the system's).
    pub(super) fn connector_for(&self, scheme: Scheme) -> Result<HttpsConnector, Error> {
        match scheme {
            Scheme::Https => self.connector(),
            Scheme::Http => Ok(connector(Arc::new(RootCertStore::empty()))),
        }
    }
}

fn connector(roots: Arc<RootCertStore>) -> HttpsConnector {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_or_http()
        .enable_all_versions()
        .build()
}

/// The connector [`Tls::connector`] makes.
pub type HttpsConnector =
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;

/// Whether `host` (a URI's host: a name, an IPv4 address or a bracketed
/// IPv6 address) is this machine's loopback. Only `localhost` itself: the
/// resolver answers it from the hosts file, but sends the fully qualified
/// `localhost.` to the network's DNS, which may answer anything.
pub fn is_loopback(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    let literal = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    match literal.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) => v4.is_loopback(),
        Ok(IpAddr::V6(v6)) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Err(_) => false,
    }
}

/// The operating system's root certificates, read once per process.
fn native_roots() -> Result<Arc<RootCertStore>, Error> {
    static ROOTS: OnceLock<Result<Arc<RootCertStore>, String>> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let found = rustls_native_certs::load_native_certs();
            if !found.errors.is_empty() {
                tracing::debug!(errors = ?found.errors, "some system root certificates were not read");
            }
            let mut store = RootCertStore::empty();
            store.add_parsable_certificates(found.certs);
            if store.is_empty() {
                return Err("no root certificates were found on this system: \
                            give the server's certificate authority (a CA file)"
                    .to_owned());
            }
            Ok(Arc::new(store))
        })
        .clone()
        .map_err(|message| Error::new(Code::FailedPrecondition, "NO_ROOT_CERTIFICATES", message))
}

/// The certificates of `pem`, each usable as a trust anchor.
fn authorities(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certificates = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("not a PEM certificate: {e}"))?;
    if certificates.is_empty() {
        return Err("no PEM `CERTIFICATE` block in the CA certificates".to_owned());
    }
    let mut store = RootCertStore::empty();
    for certificate in &certificates {
        store
            .add(certificate.clone())
            .map_err(|e| format!("not a usable CA certificate: {e}"))?;
    }
    Ok(certificates)
}

fn invalid_ca(message: String) -> Error {
    Error::invalid_field("ca", message)
}

/// The failure to reach `url` described by `error` and its causes: an
/// untrusted server certificate is `FAILED_PRECONDITION` (reason
/// `UNTRUSTED_CERTIFICATE`, not retried), anything else `UNAVAILABLE`.
pub(super) fn connect_error(url: &str, error: &(dyn std::error::Error + 'static)) -> Error {
    let mut text = error.to_string();
    let mut certificate = None;
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = cause {
        if let Some(rustls::Error::InvalidCertificate(why)) = current.downcast_ref() {
            certificate = Some(why.clone());
        }
        if !std::ptr::addr_eq(current, error) {
            let more = current.to_string();
            if !text.contains(&more) {
                text.push_str(": ");
                text.push_str(&more);
            }
        }
        // An `io::Error`'s `source` skips the error it wraps.
        cause = match current.downcast_ref::<std::io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => current.source(),
        };
    }
    match certificate {
        Some(why) => untrusted(url, &format!("{why:?}")),
        None => super::call::unavailable(format!("cannot reach {url}: {text}")),
    }
}

/// The error of a failed gRPC call to `url`. tonic reports a failed
/// connection as `UNAVAILABLE` with the cause's message only, so an
/// untrusted certificate is recognised by rustls' wording of it.
pub(super) fn grpc_error(url: &str, status: &tonic::Status) -> Error {
    const UNTRUSTED: &str = "invalid peer certificate: ";
    if status.code() == tonic::Code::Unavailable
        && let Some(at) = status.message().find(UNTRUSTED)
    {
        let why = &status.message()[at + UNTRUSTED.len()..];
        return untrusted(url, why);
    }
    Error::from_grpc_status(status)
}

fn untrusted(url: &str, why: &str) -> Error {
    let hint = if why.contains("CaUsedAsEndEntity") {
        "the server presents a CA certificate as its own (a self-signed certificate made \
         with `CA:TRUE`): give the server a certificate of its own, issued by the CA, or \
         self-signed with `basicConstraints=CA:FALSE`"
    } else {
        "if the server's certificate authority is a private one, give it as a CA file"
    };
    Error::new(
        Code::FailedPrecondition,
        "UNTRUSTED_CERTIFICATE",
        format!("the certificate of {url} is not trusted ({why}): {hint}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_names_and_addresses_of_this_machine() {
        for host in [
            "localhost",
            "LOCALHOST",
            "127.0.0.1",
            "127.4.5.6",
            "[::1]",
            "[::ffff:127.0.0.1]",
        ] {
            assert!(is_loopback(host), "{host}");
        }
        for host in [
            "example.com",
            "localhost.",
            "LOCALHOST.",
            "localhost.example.com",
            "evil-localhost",
            "10.0.0.1",
            "0.0.0.0",
            "[::]",
            "[2001:db8::1]",
            "128.0.0.1",
            "",
        ] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[test]
    fn plain_http_goes_to_loopback_only_unless_allowed() {
        let tls = Tls::new();
        assert_eq!(tls.scheme("https://api.example").unwrap(), Scheme::Https);
        assert_eq!(tls.scheme("http://127.0.0.1:8080").unwrap(), Scheme::Http);
        assert_eq!(tls.scheme("http://[::1]:8080/").unwrap(), Scheme::Http);
        let refused = tls.scheme("http://api.example:8080").unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument);
        assert!(
            refused.field_violations()[0]
                .description
                .contains("`http://api.example:8080`")
        );
        assert!(
            refused.field_violations()[0]
                .description
                .contains("allow_insecure_http")
        );
        let allowed = Tls::new().allow_insecure_http(true);
        assert_eq!(
            allowed.scheme("http://api.example:8080").unwrap(),
            Scheme::Http
        );
        for bad in [
            "ftp://api.example",
            "api.example:8080",
            "https://",
            "not a url",
        ] {
            assert_eq!(
                tls.scheme(bad).unwrap_err().code(),
                Code::InvalidArgument,
                "{bad}"
            );
        }
    }

    #[test]
    fn an_untrusted_certificate_is_told_apart_from_an_unreachable_server() {
        let status = tonic::Status::unavailable("invalid peer certificate: UnknownIssuer");
        let error = grpc_error("https://api.example", &status);
        assert_eq!(
            (error.code(), error.reason()),
            (Code::FailedPrecondition, "UNTRUSTED_CERTIFICATE")
        );
        assert!(error.message().contains("https://api.example"), "{error}");
        assert!(error.message().contains("give it as a CA file"), "{error}");
        let ca =
            rustls::Error::InvalidCertificate(rustls::CertificateError::Other(rustls::OtherError(
                std::sync::Arc::new(std::io::Error::other("CaUsedAsEndEntity")),
            )));
        let wrapped = std::io::Error::new(std::io::ErrorKind::InvalidData, ca);
        let error = connect_error("https://api.example", &wrapped);
        assert_eq!(error.reason(), "UNTRUSTED_CERTIFICATE", "{error}");
        assert!(error.message().contains("CA:FALSE"), "{error}");
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let error = connect_error("https://api.example", &refused);
        assert_eq!(error.code(), Code::Unavailable, "{error}");
        let status = tonic::Status::unavailable("tcp connect error");
        assert_eq!(
            grpc_error("https://api.example", &status).code(),
            Code::Unavailable
        );
    }

    #[test]
    fn a_ca_must_be_pem_certificates() {
        let ca = rcgen::generate_simple_self_signed(vec!["ca.test".to_owned()]).unwrap();
        let tls = Tls::new().ca_pem(ca.cert.pem().as_bytes()).unwrap();
        assert_eq!(tls.roots().unwrap().len(), 1);
        let key_only = Tls::new().ca_pem(ca.signing_key.serialize_pem().as_bytes());
        assert_eq!(key_only.unwrap_err().code(), Code::InvalidArgument);
        let missing = Tls::new().ca_file("/nonexistent/ca.pem").unwrap_err();
        assert!(
            missing.field_violations()[0]
                .description
                .contains("/nonexistent/ca.pem")
        );
    }
}
