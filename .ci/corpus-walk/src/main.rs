//! Serves one corpus API on SQLite or PostgreSQL (the database URL is the
//! first argument), REST and gRPC on one port, every request acting as the
//! system caller; prints `http://127.0.0.1:<port>` once it listens.

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

#[cfg(feature = "library")]
#[path = "library.rs"]
mod api;
#[cfg(feature = "scheduler")]
#[path = "scheduler.rs"]
mod api;
#[cfg(feature = "essentialcontacts")]
#[path = "essentialcontacts.rs"]
mod api;
#[cfg(feature = "recommender")]
#[path = "recommender.rs"]
mod api;
#[cfg(feature = "certificatemanager")]
#[path = "certificatemanager.rs"]
mod api;
#[cfg(feature = "apphub")]
#[path = "apphub.rs"]
mod api;

use std::sync::Arc;

use protoapi_runtime::Caller;
use protoapi_runtime::auth::Authorizer;
use protoapi_runtime::paging::PageTokens;
use protoapi_runtime::sql::{SqlOptions, SqlStore};
use protoapi_runtime::standard::ApiContext;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: corpus-walk DATABASE_URL")?;
    let store = Arc::new(SqlStore::open(&url, SqlOptions::new(tables())).await?);
    let context = ApiContext::new(PageTokens::new([7; 32]), Authorizer::allow_all());
    let services = api::serve(Services::new(context), store).await;
    let router = services.layer(axum::Extension(Caller::System)).build()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("http://{}", listener.local_addr()?);
    axum::serve(listener, router).await?;
    Ok(())
}
