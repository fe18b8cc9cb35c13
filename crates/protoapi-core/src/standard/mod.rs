//! The standard methods (AIP-131..135), written once for every resource.
//!
//! Generated service methods call these to validate a request and shape what
//! storage receives; storage only runs queries.

mod batch;
mod context;
mod create;
mod delete;
mod errors;
mod filters;
mod get;
mod ids;
mod list;
pub mod names;
mod operations;
mod policies;
mod request_ids;
mod update;

pub use crate::dry_run::DryRun;
pub use crate::request_id::{REQUEST_ID_WINDOW, Recorded, RequestId};
pub use batch::{MAX_BATCH_GET, batch_uids};
pub use context::{ApiContext, LIST_BUDGET_BYTES};
pub use create::{prepare_create, resolve_reference};
pub use delete::{delete_error, dry_delete};
pub use errors::{not_found, store_error};
pub use filters::{ListRequest, MAX_IDS};
pub use get::get;
pub use ids::{check_uid_lengths, parse_parent, parse_uid};
pub use list::{LIST_BUDGET_TRUNCATIONS, ListPlan};
pub use operations::{
    Launch, OPERATION_FILTERABLE, OPERATIONS_PAGE, Progress, authorize_operation, cancel_operation,
    delete_operation, list_operations, read_operation, start_operation, wait_operation,
};
pub use policies::{
    MAX_POLICY_MEMBERS, MAX_TESTED_PERMISSIONS, PolicyRequest, PolicyShape, check_policy_version,
    policy_bindings, tested_permissions,
};
pub use request_ids::recall;
pub use update::{dry_update, plan_update, require_mask, updated};

// Resource facts generated code has always named here.
pub use crate::resource::{PageSizes, etag};
