//! The custom methods of `google.cloud.essentialcontacts.v1.EssentialContactsService`,
//! over the generated storage of contacts.

use std::sync::Arc;

use protoapi_runtime::sql::SqlStore;
use protoapi_runtime::{Caller, Error};

use crate::google::cloud::essentialcontacts::v1::{
    ComputeContactsRequest, ComputeContactsResponse, ContactStore, EssentialContactsServiceHandler,
    SendTestMessageRequest,
};

/// Every service on `store`: `EssentialContactsService` has custom methods.
pub async fn serve(services: crate::Services, store: Arc<SqlStore>) -> crate::Services {
    services.essential_contacts_service(store)
}

impl EssentialContactsServiceHandler for SqlStore {
    /// Not served by this walk: it would resolve contacts up the resource
    /// hierarchy, which the walk has none of.
    async fn compute_contacts(
        &self,
        _: &Caller,
        _: ComputeContactsRequest,
    ) -> Result<ComputeContactsResponse, Error> {
        Err(Error::unimplemented("ComputeContacts"))
    }

    /// Sends nothing; refuses a contact that is not under `resource`.
    async fn send_test_message(
        &self,
        _: &Caller,
        request: SendTestMessageRequest,
    ) -> Result<(), Error> {
        for contact in &request.contacts {
            let under = contact
                .strip_prefix(&request.resource)
                .is_some_and(|rest| rest.starts_with("/contacts/"));
            if !under || self.get_contact(contact).await?.is_none() {
                return Err(Error::not_found(
                    "essentialcontacts.googleapis.com/Contact",
                    contact,
                ));
            }
        }
        Ok(())
    }
}
