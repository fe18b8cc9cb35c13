//! How the binaries reach servers: the certificate authorities trusted for
//! `https://` URLs, and whether plain HTTP may go to hosts other than this
//! machine. The same settings serve the API connection, the token exchange
//! (also the credential helper's) and the browser login's requests to the
//! issuer.
//!
//! A binary sets them once from its flags ([`TransportFlags`],
//! [`configure`]); the token sources of [`crate::tokens`] use them too, so a
//! program using those with a private CA calls [`configure`] first.
//! Unconfigured, the operating system's roots are trusted and plain HTTP
//! goes to loopback hosts only.

use std::path::PathBuf;
use std::sync::OnceLock;

use protoapi_runtime::client::{Connection, Tls};

/// The transport flags every binary takes.
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Global options")]
pub struct TransportFlags {
    /// Trust the certificate authorities in this PEM file for `https://`
    /// servers and issuers (instead of the system's roots).
    #[arg(long, env = "PLATFORMCTL_CA_FILE", value_name = "FILE", global = true)]
    pub ca_file: Option<PathBuf>,
    /// Allow plain `http://` to hosts other than this machine: the token then
    /// crosses the network unencrypted (loopback hosts are always allowed).
    #[arg(long, env = "PLATFORMCTL_ALLOW_INSECURE_HTTP", global = true)]
    pub allow_insecure_http: bool,
}

impl TransportFlags {
    /// The TLS settings these flags ask for (the CA file read and checked).
    pub fn tls(&self) -> Result<Tls, protoapi_runtime::Error> {
        let tls = Tls::new().allow_insecure_http(self.allow_insecure_http);
        match &self.ca_file {
            Some(file) => tls.ca_file(file),
            None => Ok(tls),
        }
    }
}

static SETTINGS: OnceLock<Tls> = OnceLock::new();

/// Sets this process's TLS settings; the first call wins.
pub fn configure(tls: Tls) {
    let _ = SETTINGS.set(tls);
}

/// This process's TLS settings (the defaults until [`configure`]d).
pub fn tls() -> Tls {
    SETTINGS.get().cloned().unwrap_or_default()
}

/// Whether `url` may be used: `https://`, or `http://` to a loopback host
/// or with `--allow-insecure-http`. Checked before anything is connected.
pub fn check_url(url: &str) -> Result<(), protoapi_runtime::Error> {
    tls().check_url(url).map_err(|error| {
        if url.starts_with("http://") && error.code() == protoapi_runtime::Code::InvalidArgument {
            protoapi_runtime::Error::invalid_field(
                "url",
                format!(
                    "`{url}` is plain HTTP to a host that is not this machine: the token would \
                     cross the network unencrypted. Use https://, or pass --allow-insecure-http"
                ),
            )
        } else {
            error
        }
    })
}

/// A REST/JSON connection to `server` under these settings.
pub fn rest(server: &str) -> Result<Connection, protoapi_runtime::Error> {
    check_url(server)?;
    Connection::rest_with(server, &tls())
}

/// A gRPC connection to `server` under these settings.
pub fn grpc(server: &str) -> Result<Connection, protoapi_runtime::Error> {
    check_url(server)?;
    Connection::grpc_with(server, &tls())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        transport: TransportFlags,
    }

    fn tls(args: &[&str]) -> Result<Tls, protoapi_runtime::Error> {
        Flags::try_parse_from(std::iter::once("platformctl").chain(args.iter().copied()))
            .unwrap()
            .transport
            .tls()
    }

    #[test]
    fn the_flags_make_the_policy() {
        let remote = "http://api.example:8080";
        assert!(tls(&[]).unwrap().check_url(remote).is_err());
        assert!(tls(&[]).unwrap().check_url("http://127.0.0.1:8080").is_ok());
        let insecure = tls(&["--allow-insecure-http"]).unwrap();
        assert!(insecure.check_url(remote).is_ok());
        let missing = tls(&["--ca-file", "/nonexistent/ca.pem"]).unwrap_err();
        assert_eq!(missing.code(), protoapi_runtime::Code::InvalidArgument);
        assert!(
            missing.message().contains("/nonexistent/ca.pem"),
            "{missing}"
        );
    }
}
