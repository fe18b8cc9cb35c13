//! `google.cloud.certificatemanager.v1.CertificateManager`: every method is
//! standard, its writes long-running operations; nothing is hand-written.

use std::sync::Arc;

use protoapi_runtime::sql::SqlStore;

/// Every service on `store`, `google.longrunning.Operations` included.
pub async fn serve(services: crate::Services, store: Arc<SqlStore>) -> crate::Services {
    services.store(store)
}
