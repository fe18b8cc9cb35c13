//! Serves the widgets API on 127.0.0.1:8090, in memory, or in a SQLite file
//! that keeps them across restarts with `--sqlite PATH`.
//!
//! ```text
//! cargo run -p widgets -- --sqlite widgets.db
//! curl -s -XPOST localhost:8090/v1/widgets/$(printf 'a%.0s' {1..40}) -d '{"name":"gear","colour":"red"}'
//! ```

use std::sync::Arc;

use runtime::Caller;
use runtime::auth::Authorizer;
use runtime::paging::PageTokens;
use runtime::standard::ApiContext;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let context = ApiContext::new(PageTokens::random(), Authorizer::allow_all());
    let services =
        widgets::Services::new(context).drawing_service(Arc::new(widgets::Drawings::default()));
    let services = match std::env::args().skip_while(|arg| arg != "--sqlite").nth(1) {
        Some(path) => services.store(Arc::new(widgets::open_sqlite(path.as_ref()).await?)),
        None => services.store(Arc::new(widgets::MemoryStore::default())),
    };
    let app = services.layer(axum::Extension(Caller::System)).build()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:8090").await?;
    println!("widgets on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
