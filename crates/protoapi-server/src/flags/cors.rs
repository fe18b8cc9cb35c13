//! Which web origins may call the API from a browser.

use crate::web::{Cors, InvalidOrigin};

/// Browser access (CORS).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CorsFlags {
    /// Let browsers on ORIGIN (`scheme://host[:port]`, exactly as they send
    /// it) call the API, REST and gRPC-Web (repeatable; comma-separated in
    /// the environment). `*` alone allows every origin, without cookies.
    /// None by default: no CORS header is sent.
    #[arg(
        long = "cors-origin",
        value_name = "ORIGIN",
        value_delimiter = ',',
        value_parser = parse_origin
    )]
    pub cors_origins: Vec<String>,
}

impl CorsFlags {
    /// The CORS configuration of these origins.
    pub fn cors(&self) -> Result<Cors, InvalidOrigin> {
        Cors::allow(&self.cors_origins)
    }
}

fn parse_origin(value: &str) -> Result<String, String> {
    Cors::allow([value])
        .map(|_| value.to_owned())
        .map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use http::HeaderValue;

    use super::*;

    #[derive(Debug, Parser)]
    struct Args {
        #[command(flatten)]
        cors: CorsFlags,
    }

    #[test]
    fn origins_are_repeatable_and_checked() {
        let args = Args::parse_from([
            "server",
            "--cors-origin",
            "https://app.example",
            "--cors-origin",
            "http://localhost:3000",
        ]);
        let cors = args.cors.cors().unwrap();
        assert!(cors.allows(&HeaderValue::from_static("http://localhost:3000")));
        assert!(Args::parse_from(["server"]).cors.cors().unwrap().is_none());
        assert!(Args::try_parse_from(["server", "--cors-origin", "https://app.example/"]).is_err());
        let mixed = Args::parse_from([
            "server",
            "--cors-origin",
            "*",
            "--cors-origin",
            "https://a.example",
        ]);
        assert!(mixed.cors.cors().is_err());
    }
}
