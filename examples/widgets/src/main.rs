//! Serves the widgets API on 127.0.0.1:8090 (or `--listen ADDR`), in
//! memory, or in a SQLite file that keeps them across restarts with
//! `--sqlite PATH` (or in the database at `--database-url`); its web console
//! at `/console/` (sign in with an empty token: every request acts with full
//! local access). Every other flag is the server crate's
//! (`protoapi_runtime::flags`, each also read from `WIDGETS_<FLAG>`): TLS, timeouts
//! and limits, browser origins, logs and metrics, rate limits.
//!
//! ```text
//! cargo run -p widgets -- --sqlite widgets.db
//! curl -s -XPOST localhost:8090/v1/widgets/$(printf 'a%.0s' {1..40}) -d '{"name":"gear","colour":"red"}'
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::flags::{ConsoleFlags, Env, RateLimitFlags, ServeFlags, Telemetry};
use protoapi_runtime::observe::{Build, Observe};
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::ratelimit::RateLimiter;
use protoapi_runtime::sql::{SqlOptions, StorageFlags};
use protoapi_runtime::standard::ApiContext;

/// What the server's metrics say of it (`widgets_build_info`, the series' prefix).
const BUILD: Build = Build {
    name: "widgets",
    version: env!("CARGO_PKG_VERSION"),
};

/// Serves the widgets API (REST + gRPC) on one port.
#[derive(Debug, Parser)]
struct Args {
    /// Keep widgets in the SQLite database file PATH (created if needed)
    /// instead of in memory.
    #[arg(long, value_name = "PATH", conflicts_with = "database_url")]
    sqlite: Option<PathBuf>,
    #[command(flatten)]
    serve: ServeFlags,
    #[command(flatten)]
    storage: StorageFlags,
    #[command(flatten)]
    telemetry: Telemetry,
    #[command(flatten)]
    rate: RateLimitFlags,
    #[command(flatten)]
    console: ConsoleFlags,
}

fn env() -> Env {
    Env::prefix("WIDGETS").default("listen", "127.0.0.1:8090")
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Args = env().parse();
    let telemetry = args.telemetry.clone();
    telemetry.run("widgets", serve(args)).await
}

async fn serve(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut context = ApiContext::new(PageTokens::random(), Authorizer::allow_all())
        .with_list_budget(args.serve.list_budget);
    if let Some(log) = args.telemetry.audit_log()? {
        context = context.with_audit(log);
    }
    let services = widgets::Services::new(context)
        .drawing_service(Arc::new(widgets::Drawings::default()))
        .cors(args.serve.cors.cors()?);
    let options = args.storage.options(SqlOptions::new(widgets::tables()));
    let mut services = match (&args.sqlite, &args.storage.database_url) {
        (Some(path), _) => services.store(Arc::new(
            widgets::SqlStore::open_sqlite(path, options).await?,
        )),
        (None, Some(url)) => services.store(Arc::new(widgets::SqlStore::open(url, options).await?)),
        (None, None) => services.store(Arc::new(widgets::MemoryStore::default())),
    };
    let base_url = args.serve.base_url();
    let tls = args.serve.tls.files().is_some();
    if let Some(console) = args
        .console
        .settings()?
        .console(&widgets::SCHEMA, &base_url, tls, None)
    {
        services = services.console(console);
    }
    if let Some(limit) = args.rate.rate_limit() {
        services = services.layer(RateLimiter::new(limit).layer());
    }
    let metrics = args.telemetry.metrics(BUILD).await?;
    services = services.layer(axum::Extension(Caller::System)).layer(
        Observe::new(&widgets::API)
            .metrics(metrics.is_some())
            .layer(),
    );
    if let Some(metrics) = metrics.filter(|_| args.telemetry.metrics_on_api_port()) {
        services = services.routes(metrics.router());
    }
    let listener = args.serve.bind().await?;
    let server = args
        .serve
        .server(listener, services.build()?)?
        .error_domain(widgets::ERROR_DOMAIN);
    tracing::info!(%base_url, "widgets listening (REST and gRPC)");
    server
        .serve(protoapi_runtime::serve::shutdown_signal())
        .await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_crates_flags_read_widgets_variables() {
        let command = env().command::<Args>();
        let arg = |id: &str| command.get_arguments().find(|a| a.get_id() == id).unwrap();
        assert_eq!(arg("listen").get_env().unwrap(), "WIDGETS_LISTEN");
        assert_eq!(arg("sqlite").get_env().unwrap(), "WIDGETS_SQLITE");
        assert_eq!(
            arg("listen").get_default_values(),
            [std::ffi::OsStr::new("127.0.0.1:8090")]
        );
    }
}
