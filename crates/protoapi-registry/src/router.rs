//! The registry's routes, for an application to serve beside its API.

use std::sync::Arc;

use axum::Router;
use axum::routing::{any, get};

use crate::registry::Registry;

impl Registry {
    /// `/v2/` and everything under it, with the token endpoint at
    /// `/v2/token`. Serve it where the API's authentication leaves `/v2/`
    /// to the registry (`Authentication::except("/v2/")`).
    pub fn router(self: &Arc<Self>) -> Router {
        Router::new()
            .route("/v2/token", get(crate::token::token))
            .route("/v2", any(crate::routes::serve))
            .route("/v2/", any(crate::routes::serve))
            .route("/v2/{*rest}", any(crate::routes::serve))
            .with_state(Arc::clone(self))
    }
}
