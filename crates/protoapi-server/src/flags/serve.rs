//! Where and how a server listens: its address and base URL, connection
//! timeouts and limits, the list page budget, TLS and browser origins.

use std::net::SocketAddr;
use std::time::Duration;

use clap::builder::TypedValueParser as _;
use protoapi_core::time::parse_duration;
use tokio::net::TcpListener;

use super::{CorsFlags, TlsFlags};
use crate::serve::{Limits, Server, Timeouts};
use crate::tls::{ServerTls, TlsError};

/// The listening flags of a server.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeFlags {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", global = true)]
    pub listen: SocketAddr,
    /// Base URL of the API (the audience of its tokens); `http://<listen>` by
    /// default, `https://<listen>` with TLS.
    #[arg(long, global = true)]
    pub base_url: Option<String>,
    /// Close a connection whose request head takes longer than this (e.g. `10s`, `500ms`).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub header_timeout: Duration,
    /// Answer 408 / DEADLINE_EXCEEDED when a whole request body takes longer than
    /// this to arrive (REST and gRPC alike, client streams included).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub body_timeout: Duration,
    /// Close a connection whose client does not read its response for this long.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub write_timeout: Duration,
    /// End a request still in progress after this long, long-lived gRPC streams
    /// (health Watch, reflection) included: DEADLINE_EXCEEDED.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub stream_timeout: Duration,
    /// Close a connection after this long without a request in progress.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub idle_timeout: Duration,
    /// On SIGINT/SIGTERM, give in-flight requests this long to finish.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub drain_timeout: Duration,
    /// Most connections open at once; further clients wait until one closes
    /// (idle connections are closed first).
    #[arg(
        long,
        value_name = "COUNT",
        default_value_t = Limits::default().max_connections,
        value_parser = clap::value_parser!(u32).range(1..).map(|n| n as usize)
    )]
    pub max_connections: usize,
    /// Most requests in progress at once on one HTTP/2 connection.
    #[arg(
        long,
        value_name = "COUNT",
        default_value_t = Limits::default().max_concurrent_streams,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub max_streams: u32,
    /// Largest encoded size of the items of one list page, in bytes; a page
    /// ends early (with a `nextPageToken`) rather than exceed it.
    #[arg(long, value_name = "BYTES", default_value_t = protoapi_core::standard::LIST_BUDGET_BYTES)]
    pub list_budget: usize,
    /// How long a long-running operation's server holds it between
    /// renewals: one whose server stopped reads `ABORTED` once it passes.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "30s",
        value_parser = parse_duration
    )]
    pub operation_lease: Duration,
    #[command(flatten)]
    pub tls: TlsFlags,
    #[command(flatten)]
    pub cors: CorsFlags,
}

impl ServeFlags {
    /// The connection timeouts.
    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            header: self.header_timeout,
            body: self.body_timeout,
            write: self.write_timeout,
            stream: self.stream_timeout,
            idle: self.idle_timeout,
            drain: self.drain_timeout,
        }
    }

    /// The connection limits.
    pub fn limits(&self) -> Limits {
        Limits {
            max_connections: self.max_connections,
            max_concurrent_streams: self.max_streams,
        }
    }

    /// `--base-url`, or the scheme (`https` with TLS) and the listening address.
    pub fn base_url(&self) -> String {
        self.base_url
            .clone()
            .unwrap_or_else(|| format!("{}://{}", self.tls.scheme(), self.listen))
    }

    /// Binds the listening address.
    pub async fn bind(&self) -> Result<TcpListener, String> {
        TcpListener::bind(self.listen)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", self.listen))
    }

    /// A server of `router` on `listener` with these timeouts and limits,
    /// over TLS when its files are given (and load).
    pub fn server(&self, listener: TcpListener, router: axum::Router) -> Result<Server, TlsError> {
        let server = Server::new(listener, router)
            .timeouts(self.timeouts())
            .limits(self.limits());
        match self.tls.files() {
            Some(files) => Ok(server.tls(ServerTls::load(&files)?)),
            None => Ok(server),
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Args {
        #[command(flatten)]
        serve: ServeFlags,
    }

    fn parse(args: &[&str]) -> Result<ServeFlags, clap::Error> {
        Args::try_parse_from(std::iter::once("server").chain(args.iter().copied())).map(|a| a.serve)
    }

    #[test]
    fn defaults_are_the_serving_defaults() {
        let flags = parse(&[]).unwrap();
        assert_eq!(flags.timeouts(), Timeouts::default());
        assert_eq!(flags.limits(), Limits::default());
        assert_eq!(
            flags.list_budget,
            protoapi_core::standard::LIST_BUDGET_BYTES
        );
        assert_eq!(
            flags.operation_lease,
            protoapi_core::operation::OPERATION_LEASE
        );
        assert_eq!(flags.base_url(), "http://127.0.0.1:8080");
    }

    #[test]
    fn limits_are_at_least_one() {
        let flags = parse(&["--max-connections", "3", "--max-streams", "7"]).unwrap();
        assert_eq!((flags.max_connections, flags.max_streams), (3, 7));
        for flag in ["--max-connections", "--max-streams"] {
            assert!(parse(&[flag, "0"]).is_err());
        }
    }

    #[test]
    fn timeouts_take_units() {
        let flags = parse(&["--header-timeout", "250ms", "--drain-timeout", "2m"]).unwrap();
        assert_eq!(flags.timeouts().header, Duration::from_millis(250));
        assert_eq!(flags.timeouts().drain, Duration::from_secs(120));
        assert_eq!(
            parse(&["--idle-timeout", "1h"]).unwrap().timeouts().idle,
            Duration::from_secs(3600)
        );
        assert!(parse(&["--idle-timeout", "1d"]).is_err());
    }

    #[test]
    fn the_base_url_follows_tls_unless_given() {
        let tls = parse(&[
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
            "--listen",
            "0.0.0.0:443",
        ])
        .unwrap();
        assert_eq!(tls.base_url(), "https://0.0.0.0:443");
        let given = parse(&["--base-url", "https://api.example"]).unwrap();
        assert_eq!(given.base_url(), "https://api.example");
    }
}
