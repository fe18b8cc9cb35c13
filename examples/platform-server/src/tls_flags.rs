//! The TLS flags of `platform-server`.

use std::path::PathBuf;

/// Serve over TLS (HTTPS and gRPC over TLS on the one port).
#[derive(Debug, clap::Args)]
pub struct TlsFlags {
    /// The server's certificate chain (PEM, the server's certificate first).
    /// With `--tls-key`, the server speaks TLS only; the pair is re-read when
    /// the files change (checked at most once a second), no restart needed.
    #[arg(
        long,
        env = "PLATFORM_TLS_CERT",
        value_name = "FILE",
        requires = "tls_key",
        global = true
    )]
    pub tls_cert: Option<PathBuf>,
    /// The private key of `--tls-cert` (PEM), readable by the server only.
    #[arg(
        long,
        env = "PLATFORM_TLS_KEY",
        value_name = "FILE",
        requires = "tls_cert",
        global = true
    )]
    pub tls_key: Option<PathBuf>,
}

impl TlsFlags {
    /// The certificate and key files, when both are given.
    pub fn files(&self) -> Option<runtime::tls::CertFiles> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(runtime::tls::CertFiles::new(cert, key)),
            _ => None,
        }
    }

    /// The scheme of the default base URL.
    pub fn scheme(&self) -> &'static str {
        if self.files().is_some() {
            "https"
        } else {
            "http"
        }
    }
}
