//! TLS for the server of `serve` (`Server::tls`): a certificate chain and private key
//! read from PEM files, reloaded when the files change.
//!
//! ```no_run
//! # async fn example(listener: tokio::net::TcpListener, router: axum::Router) -> Result<(), protoapi_server::tls::TlsError> {
//! use protoapi_server::tls::{CertFiles, ServerTls};
//! let tls = ServerTls::load(&CertFiles::new("server.crt", "server.key"))?;
//! protoapi_server::serve::Server::new(listener, router).tls(tls).serve(std::future::pending()).await;
//! # Ok(()) }
//! ```
//!
//! - **One port, every protocol.** ALPN offers `h2` and `http/1.1`; REST over
//!   either and gRPC (HTTP/2) are served on the one TLS port, as they are on
//!   a plain one.
//! - **The handshake is part of the request head.** It runs in the
//!   connection's own task, so a client that never finishes it blocks no
//!   other, and it shares the header timeout with the first request head:
//!   a client that opens a connection and stalls in the handshake is closed
//!   like one that stalls in its request head. The connection limit counts
//!   connections in their handshake, so a handshake flood holds at most
//!   `max_connections` slots for at most the header timeout each; rustls
//!   bounds what a hello may make it buffer.
//! - **Certificates are reloaded without a restart.** At most once a second,
//!   on the first handshake after that second has passed, the length,
//!   modification time and inode of both files are compared with those of
//!   the pair in use (two `stat` calls; no timer, no signal). When either
//!   changed, the pair is read again; new connections get it, open ones keep
//!   theirs. A pair that does not load (a file missing or half written, a
//!   key that does not match the certificate) is reported in the log and
//!   the previous pair stays in use; it is tried again once the files
//!   change again. Replacing the files by renaming complete ones into place
//!   avoids the window altogether.
//! - **Start-up is strict.** [`ServerTls::load`] fails, naming the file and
//!   the reason, when a file is missing, holds no certificate or key, or
//!   the key is not the certificate's. A key file that its group or others
//!   may read is reported with a warning.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How often, at most, the files are looked at for a change.
const CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// The largest certificate or key file read: a few certificates are a few
/// KiB; a path pointing at something endless is refused, not read forever.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The protocols offered in ALPN, preferred first.
const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// Where a server's certificate chain and private key are kept (PEM).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertFiles {
    /// The certificate chain: the server's certificate first, then the
    /// intermediates, if any.
    pub cert: PathBuf,
    /// The private key of the first certificate (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

impl CertFiles {
    pub fn new(cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> Self {
        CertFiles {
            cert: cert.into(),
            key: key.into(),
        }
    }
}

/// Why TLS cannot be served: the file and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TlsError(String);

/// The TLS side of a server: what `serve::Server::tls` takes.
/// Cloning is cheap; clones share the certificate in use.
#[derive(Clone)]
pub struct ServerTls {
    acceptor: TlsAcceptor,
    resolver: Arc<Reloading>,
}

impl fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerTls")
            .field("files", &self.resolver.files)
            .finish_non_exhaustive()
    }
}

impl ServerTls {
    /// Reads and checks the pair in `files`; see the [module docs](self).
    pub fn load(files: &CertFiles) -> Result<Self, TlsError> {
        warn_if_key_readable(&files.key);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let stamp = Stamp::of(files);
        let key = load_pair(files, &provider).map_err(TlsError)?;
        let resolver = Arc::new(Reloading {
            files: files.clone(),
            provider: Arc::clone(&provider),
            state: Mutex::new(InUse {
                key,
                stamp,
                checked: Instant::now(),
            }),
        });
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError(format!("TLS configuration: {e}")))?
            .with_no_client_auth()
            .with_cert_resolver(Arc::clone(&resolver) as Arc<dyn ResolvesServerCert>);
        config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
        Ok(ServerTls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            resolver,
        })
    }

    /// The files the certificate is read from.
    pub fn files(&self) -> &CertFiles {
        &self.resolver.files
    }

    /// Completes the handshake on `stream` by `deadline`; `None` (logged)
    /// when it fails or takes longer.
    pub(crate) async fn accept(
        &self,
        stream: TcpStream,
        deadline: tokio::time::Instant,
    ) -> Option<Stream> {
        match tokio::time::timeout_at(deadline, self.acceptor.accept(stream)).await {
            Ok(Ok(stream)) => Some(Stream::Tls(Box::new(stream))),
            Ok(Err(error)) => {
                tracing::debug!(%error, "TLS handshake failed");
                None
            }
            Err(_) => {
                tracing::debug!("TLS handshake not completed in time: closing the connection");
                None
            }
        }
    }
}

/// The resolver that hands out the pair in use, and looks for a new one.
#[derive(Debug)]
struct Reloading {
    files: CertFiles,
    provider: Arc<CryptoProvider>,
    state: Mutex<InUse>,
}

#[derive(Debug)]
struct InUse {
    key: Arc<CertifiedKey>,
    /// The files as they were when last looked at.
    stamp: Stamp,
    checked: Instant,
}

impl Reloading {
    /// The pair for a new connection, read again first if the files changed.
    fn current(&self) -> Arc<CertifiedKey> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.checked.elapsed() >= CHECK_INTERVAL {
            state.checked = Instant::now();
            let stamp = Stamp::of(&self.files);
            if stamp != state.stamp {
                state.stamp = stamp;
                match load_pair(&self.files, &self.provider) {
                    Ok(key) => {
                        tracing::info!(cert = %self.files.cert.display(), "TLS certificate reloaded");
                        warn_if_key_readable(&self.files.key);
                        state.key = key;
                    }
                    Err(error) => tracing::error!(
                        "TLS certificate not reloaded, the previous one stays in use: {error}"
                    ),
                }
            }
        }
        Arc::clone(&state.key)
    }
}

impl ResolvesServerCert for Reloading {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

/// What identifies a version of a file without reading it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

/// Both files' stamps (`None` for a file that cannot be looked at).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stamp([Option<FileStamp>; 2]);

impl Stamp {
    fn of(files: &CertFiles) -> Self {
        Stamp([file_stamp(&files.cert), file_stamp(&files.key)])
    }
}

fn file_stamp(path: &Path) -> Option<FileStamp> {
    let metadata = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&metadata);
    #[cfg(not(unix))]
    let inode = 0;
    Some(FileStamp {
        len: metadata.len(),
        modified: metadata.modified().ok(),
        inode,
    })
}

/// Reads the chain and the key and checks that they belong together.
fn load_pair(files: &CertFiles, provider: &CryptoProvider) -> Result<Arc<CertifiedKey>, String> {
    let cert_pem = read_bounded(&files.cert)?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: not a PEM certificate chain: {e}", files.cert.display()))?;
    if chain.is_empty() {
        return Err(format!(
            "{}: no certificate (a PEM `CERTIFICATE` block) in it",
            files.cert.display()
        ));
    }
    let key_pem = read_bounded(&files.key)?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| format!("{}: no PEM private key in it: {e}", files.key.display()))?;
    let certified = CertifiedKey::from_der(chain, key, provider).map_err(|e| {
        format!(
            "{} and {} are not a certificate and its key: {e}",
            files.cert.display(),
            files.key.display()
        )
    })?;
    Ok(Arc::new(certified))
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "{}: larger than {MAX_FILE_BYTES} bytes",
            path.display()
        ));
    }
    Ok(bytes)
}

/// A private key others may read is as good as published: said, not refused
/// (a mounted secret's mode is not always the server's to choose).
fn warn_if_key_readable(path: &Path) {
    #[cfg(unix)]
    if let Ok(metadata) = std::fs::metadata(path) {
        use std::os::unix::fs::PermissionsExt;
        let mode = metadata.permissions().mode();
        if mode & 0o077 != 0 {
            tracing::warn!(
                key = %path.display(),
                mode = format!("{:o}", mode & 0o777),
                "the TLS private key is readable by its group or others: restrict it to the server (chmod 600)"
            );
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// A served connection's byte stream, with or without TLS.
pub(crate) enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
            Stream::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_write(cx, buf),
            Stream::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_write_vectored(cx, bufs),
            Stream::Tls(stream) => Pin::new(stream.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(stream) => stream.is_write_vectored(),
            Stream::Tls(stream) => stream.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_flush(cx),
            Stream::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
            Stream::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed pair for `localhost`, PEM.
    fn pair() -> (String, String) {
        let issued = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        (issued.cert.pem(), issued.signing_key.serialize_pem())
    }

    fn write(files: &CertFiles, (cert, key): &(String, String)) {
        std::fs::write(&files.cert, cert).unwrap();
        std::fs::write(&files.key, key).unwrap();
    }

    fn files(dir: &Path) -> CertFiles {
        CertFiles::new(dir.join("server.crt"), dir.join("server.key"))
    }

    /// The certificate new connections get, after a look at the files.
    fn served(tls: &ServerTls) -> Vec<u8> {
        let mut state = tls.resolver.state.lock().unwrap();
        state.checked = Instant::now().checked_sub(CHECK_INTERVAL).unwrap();
        drop(state);
        tls.resolver.current().cert[0].to_vec()
    }

    fn der((cert, _): &(String, String)) -> Vec<u8> {
        CertificateDer::from_pem_slice(cert.as_bytes())
            .unwrap()
            .to_vec()
    }

    #[test]
    fn a_server_does_not_start_on_a_bad_pair() {
        let dir = tempfile::tempdir().unwrap();
        let files = files(dir.path());
        let missing = ServerTls::load(&files).unwrap_err().to_string();
        assert!(missing.contains("server.crt"), "{missing}");

        let (cert, key) = pair();
        write(&files, &("not a certificate".to_owned(), key.clone()));
        let garbage = ServerTls::load(&files).unwrap_err().to_string();
        assert!(garbage.contains("no certificate"), "{garbage}");

        write(&files, &(cert.clone(), "not a key".to_owned()));
        let no_key = ServerTls::load(&files).unwrap_err().to_string();
        assert!(
            no_key.contains("server.key: no PEM private key"),
            "{no_key}"
        );

        let (_, other_key) = pair();
        write(&files, &(cert.clone(), other_key));
        let mismatched = ServerTls::load(&files).unwrap_err().to_string();
        assert!(
            mismatched.contains("are not a certificate and its key"),
            "{mismatched}"
        );

        write(&files, &(cert, key));
        ServerTls::load(&files).unwrap();
    }

    #[test]
    fn a_changed_pair_is_served_and_a_bad_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let files = files(dir.path());
        let first = pair();
        write(&files, &first);
        let tls = ServerTls::load(&files).unwrap();
        assert_eq!(served(&tls), der(&first), "unchanged files");

        let second = pair();
        write(&files, &second);
        assert_eq!(served(&tls), der(&second), "a new pair is picked up");

        // Half of a certificate, then a certificate without its key: the
        // pair in use stays.
        let half = second.0[..second.0.len() / 2].to_owned();
        std::fs::write(&files.cert, half).unwrap();
        assert_eq!(served(&tls), der(&second), "a half-written certificate");
        let third = pair();
        std::fs::write(&files.cert, &third.0).unwrap();
        assert_eq!(served(&tls), der(&second), "a certificate without its key");
        std::fs::remove_file(&files.key).unwrap();
        assert_eq!(served(&tls), der(&second), "a missing key");

        // Once the key follows, the new pair is served.
        std::fs::write(&files.key, &third.1).unwrap();
        assert_eq!(served(&tls), der(&third), "the completed pair");
    }
}
