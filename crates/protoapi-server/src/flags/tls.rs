//! Serving over TLS.

use std::path::PathBuf;

use crate::tls::CertFiles;

/// Serve over TLS (HTTPS and gRPC over TLS on the one port).
#[derive(Debug, Clone, clap::Args)]
pub struct TlsFlags {
    /// The server's certificate chain (PEM, the server's certificate first).
    /// With `--tls-key`, the server speaks TLS only; the pair is re-read when
    /// the files change (checked at most once a second), no restart needed.
    #[arg(long, value_name = "FILE", requires = "tls_key", global = true)]
    pub tls_cert: Option<PathBuf>,
    /// The private key of `--tls-cert` (PEM), readable by the server only.
    #[arg(long, value_name = "FILE", requires = "tls_cert", global = true)]
    pub tls_key: Option<PathBuf>,
}

impl TlsFlags {
    /// The certificate and key files, when both are given.
    pub fn files(&self) -> Option<CertFiles> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(CertFiles::new(cert, key)),
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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Flags {
        #[command(flatten)]
        tls: TlsFlags,
    }

    fn parse(args: &[&str]) -> Result<Flags, clap::Error> {
        Flags::try_parse_from(std::iter::once("server").chain(args.iter().copied()))
    }

    #[test]
    fn a_certificate_and_its_key_come_together() {
        let plain = parse(&[]).unwrap();
        assert_eq!((plain.tls.files(), plain.tls.scheme()), (None, "http"));
        let tls = parse(&["--tls-cert", "c.pem", "--tls-key", "k.pem"]).unwrap();
        assert_eq!(tls.tls.files(), Some(CertFiles::new("c.pem", "k.pem")));
        assert_eq!(tls.tls.scheme(), "https");
        for alone in [["--tls-cert", "c.pem"], ["--tls-key", "k.pem"]] {
            let error = parse(&alone).unwrap_err();
            assert_eq!(
                error.kind(),
                clap::error::ErrorKind::MissingRequiredArgument
            );
        }
    }
}
