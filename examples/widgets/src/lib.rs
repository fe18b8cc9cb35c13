//! A small API of its own — widgets — generated from `proto/` in `build.rs`
//! and served over an in-memory store. Everything between the wire and the
//! store is generated, the store included; this file is the wiring.
//!
//! Run it: `cargo run -p widgets` (serves on 127.0.0.1:8090, every request
//! acting with full local access).

use std::sync::Arc;

use runtime::standard::ApiContext;

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

use crate::widgets::v0;
use crate::widgets::v1::{
    PartServiceApi, WidgetServiceApi, part_service_routes, widget_service_routes,
};

/// Widgets and their parts in memory: the generated crate implements their
/// storage traits for it, with the annotation files' rules (a widget with
/// parts cannot be deleted).
pub use runtime::memory::MemoryStore;

/// REST and gRPC for widgets and parts on one router, and v0 of widgets
/// (declared in `proto/widgets/v0`) beside v1 over the same store.
pub fn app(store: Arc<MemoryStore>, context: ApiContext) -> axum::Router {
    let widgets = WidgetServiceApi::new(Arc::clone(&store), context.clone());
    let widgets_v0 = v0::WidgetServiceApi::new(Arc::clone(&store), context.clone());
    let parts = PartServiceApi::new(store, context);
    tonic::service::Routes::new(widgets.clone().into_grpc())
        .add_service(widgets_v0.clone().into_grpc())
        .add_service(parts.clone().into_grpc())
        .into_axum_router()
        .merge(widget_service_routes(widgets))
        .merge(v0::widget_service_routes(widgets_v0))
        .merge(part_service_routes(parts))
        .fallback(runtime::rest::fallback)
}
