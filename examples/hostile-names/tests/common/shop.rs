//! `hostile.clash.Widgets`, whose store and handler traits share method
//! names: widgets kept in memory, each one's health read from it, and
//! `InsertWidget` answered by the handler without storing anything, so that
//! a test tells which trait each call reached.

use hostile_names::hostile::clash::{
    InsertWidgetRequest, Widget, WidgetHealth, WidgetHealthStore, WidgetStore, WidgetsHandler,
};
use protoapi_runtime::memory::MemoryStore;
use protoapi_runtime::store::{Backend, ListQuery, Page, StoreError};
use protoapi_runtime::{Caller, Error};

/// Widgets in memory; the healths' store keeps nothing of its own.
#[derive(Default)]
pub struct Shop {
    widgets: MemoryStore,
}

impl WidgetStore for Shop {
    fn insert_widget(
        &self,
        resource: &Widget,
    ) -> impl Future<Output = Result<(), StoreError>> + Send {
        self.widgets.insert(resource)
    }

    fn get_widget(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<Widget>, StoreError>> + Send {
        self.widgets.get::<Widget>(key)
    }

    fn list_widgets(
        &self,
        query: &ListQuery,
    ) -> impl Future<Output = Result<Page<Widget>, StoreError>> + Send {
        self.widgets.list::<Widget>(query)
    }
}

/// A widget is healthy when it has a purpose; `list_widgets` is left to its
/// default, which answers `Unimplemented`.
impl WidgetHealthStore for Shop {
    async fn get_widget_health(&self, key: &str) -> Result<Option<WidgetHealth>, StoreError> {
        let widget = self.widgets.get::<Widget>(key).await?;
        Ok(widget.map(|widget| WidgetHealth {
            healthy: !widget.purpose.is_empty(),
            name: widget.name,
        }))
    }
}

impl WidgetsHandler for Shop {
    async fn insert_widget(
        &self,
        _caller: &Caller,
        request: InsertWidgetRequest,
    ) -> Result<Widget, Error> {
        Ok(Widget {
            name: format!("{}/widgets/at-{}", request.parent, request.position),
            purpose: "inserted".to_owned(),
        })
    }
}
