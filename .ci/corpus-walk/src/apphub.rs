//! The custom methods of `google.cloud.apphub.v1.AppHub`, over the
//! generated storage; its standard writes are long-running operations,
//! served with `google.longrunning.Operations` by the generated code.

use std::sync::Arc;

use protoapi_runtime::sql::SqlStore;
use protoapi_runtime::{Caller, Error};

use crate::google::cloud::apphub::v1::{
    AppHubHandler, DetachServiceProjectAttachmentRequest, DetachServiceProjectAttachmentResponse,
    LookupDiscoveredServiceRequest, LookupDiscoveredServiceResponse,
    LookupDiscoveredWorkloadRequest, LookupDiscoveredWorkloadResponse,
    LookupServiceProjectAttachmentRequest, LookupServiceProjectAttachmentResponse,
};

/// Every service on `store`: `AppHub` has custom methods.
pub async fn serve(services: crate::Services, store: Arc<SqlStore>) -> crate::Services {
    services.app_hub(store.clone()).store(store)
}

impl AppHubHandler for SqlStore {
    /// Not served by this walk: it would look attachments up by their
    /// service project, which storage does not index.
    async fn lookup_service_project_attachment(
        &self,
        _: &Caller,
        _: LookupServiceProjectAttachmentRequest,
    ) -> Result<LookupServiceProjectAttachmentResponse, Error> {
        Err(Error::unimplemented("LookupServiceProjectAttachment"))
    }

    /// Not served by this walk: it would detach from a host the walk has
    /// no model of.
    async fn detach_service_project_attachment(
        &self,
        _: &Caller,
        _: DetachServiceProjectAttachmentRequest,
    ) -> Result<DetachServiceProjectAttachmentResponse, Error> {
        Err(Error::unimplemented("DetachServiceProjectAttachment"))
    }

    /// Not served by this walk: discovered services come from discovery.
    async fn lookup_discovered_service(
        &self,
        _: &Caller,
        _: LookupDiscoveredServiceRequest,
    ) -> Result<LookupDiscoveredServiceResponse, Error> {
        Err(Error::unimplemented("LookupDiscoveredService"))
    }

    /// Not served by this walk: discovered workloads come from discovery.
    async fn lookup_discovered_workload(
        &self,
        _: &Caller,
        _: LookupDiscoveredWorkloadRequest,
    ) -> Result<LookupDiscoveredWorkloadResponse, Error> {
        Err(Error::unimplemented("LookupDiscoveredWorkload"))
    }
}
