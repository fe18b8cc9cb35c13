//! What every handler of the console reads.

use http::HeaderValue;
use prost_reflect::DescriptorPool;
use protoapi_core::auth::Authorizer;

use crate::{call, oidc, session};
use protoapi_client::schema::Schema;

/// What every handler reads.
pub(crate) struct Shared {
    /// The Content-Security-Policy of every page.
    pub(crate) policy: HeaderValue,
    pub(crate) schema: &'static Schema,
    pub(crate) pool: &'static DescriptorPool,
    pub(crate) api: call::ApiHandle,
    pub(crate) sessions: session::Sessions,
    pub(crate) authorizer: Authorizer,
    pub(crate) oidc: Option<oidc::Flow>,
}
