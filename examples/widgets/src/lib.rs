//! A small API of its own — widgets — generated from `proto/` in `build.rs`
//! and served over an in-memory store. Everything between the wire and the
//! store is generated; this file is the store and the wiring.
//!
//! Run it: `cargo run -p widgets` (serves on 127.0.0.1:8090, every request
//! acting with full local access).

use std::sync::Arc;

use runtime::mask::Update;
use runtime::memory::MemoryCollection;
use runtime::standard::ApiContext;
use runtime::store::{ListQuery, Page, StoreError};

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

use crate::widgets::v0;
use crate::widgets::v1::{
    Part, PartServiceApi, PartStore, Widget, WidgetServiceApi, WidgetStore, part_service_routes,
    widget_service_routes,
};

/// Widgets and their parts in memory.
#[derive(Debug, Default)]
pub struct MemoryStore {
    widgets: MemoryCollection<Widget>,
    parts: MemoryCollection<Part>,
}

impl WidgetStore for MemoryStore {
    async fn insert_widget(&self, widget: &Widget) -> Result<(), StoreError> {
        // Widgets live in workshops this example does not store: any UIDP will do.
        self.widgets.insert(widget, true)
    }

    async fn get_widget(&self, uid: &str) -> Result<Option<Widget>, StoreError> {
        self.widgets.get(uid)
    }

    async fn list_widgets(&self, query: &ListQuery) -> Result<Page<Widget>, StoreError> {
        self.widgets.list(query)
    }

    async fn update_widget(
        &self,
        uid: &str,
        update: &Update<Widget>,
    ) -> Result<Option<Widget>, StoreError> {
        self.widgets.update(uid, update)
    }

    async fn delete_widget(&self, uid: &str, etag: Option<&str>) -> Result<bool, StoreError> {
        self.widgets
            .delete(uid, etag, self.parts.referring("widget", uid))
    }
}

impl PartStore for MemoryStore {
    async fn insert_part(&self, part: &Part) -> Result<(), StoreError> {
        self.parts.insert(part, true)
    }

    async fn get_part(&self, uid: &str) -> Result<Option<Part>, StoreError> {
        self.parts.get(uid)
    }

    async fn list_parts(&self, query: &ListQuery) -> Result<Page<Part>, StoreError> {
        self.parts.list(query)
    }

    async fn delete_part(&self, uid: &str, etag: Option<&str>) -> Result<bool, StoreError> {
        self.parts.delete(uid, etag, Vec::new())
    }
}

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
