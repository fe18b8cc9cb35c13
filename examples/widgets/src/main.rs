//! Serves the widgets API on 127.0.0.1:8090 (or `--listen ADDR`), in
//! memory, or in a SQLite file that keeps them across restarts with
//! `--sqlite PATH`; its web console at `/console/` (sign in with an empty
//! token: every request acts with full local access).
//!
//! ```text
//! cargo run -p widgets -- --sqlite widgets.db
//! curl -s -XPOST localhost:8090/v1/widgets/$(printf 'a%.0s' {1..40}) -d '{"name":"gear","colour":"red"}'
//! ```

use std::sync::Arc;

use runtime::Caller;
use runtime::auth::Authorizer;
use runtime::console::Console;
use runtime::paging::PageTokens;
use runtime::standard::ApiContext;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let context = ApiContext::new(PageTokens::random(), Authorizer::allow_all());
    let services =
        widgets::Services::new(context).drawing_service(Arc::new(widgets::Drawings::default()));
    let flag = |name: &str| std::env::args().skip_while(|arg| arg != name).nth(1);
    let services = match flag("--sqlite") {
        Some(path) => services.store(Arc::new(widgets::open_sqlite(path.as_ref()).await?)),
        None => services.store(Arc::new(widgets::MemoryStore::default())),
    };
    let app = services
        .console(Console::new(&widgets::CONSOLE))
        .layer(axum::Extension(Caller::System))
        .build()?;
    let listen = flag("--listen").unwrap_or_else(|| "127.0.0.1:8090".to_owned());
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("widgets on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
