//! What every generated service needs besides its storage: page tokens,
//! the authorizer, the shared scopes and the list budget.

use std::sync::Arc;

use crate::audit::{Audit, AuditLog};
use crate::auth::{Authorizer, Need};
use crate::context::Caller;
use crate::error::{Code, Error};
use crate::paging::PageTokens;
use crate::resource::{Reach, Resource};
use crate::uidp;

/// Default byte budget of one list page (AIP-158: a page may end early).
pub const LIST_BUDGET_BYTES: usize = 4 << 20;

/// What every generated service needs besides its storage.
#[derive(Clone, Debug)]
pub struct ApiContext {
    /// Signs and verifies page tokens.
    pub page_tokens: PageTokens,
    /// Decides what callers may do.
    pub authorizer: Authorizer,
    /// Parents whose direct items reference fields may name from under any
    /// root (e.g. built-in items shared by everyone).
    shared_scopes: Arc<[String]>,
    /// Largest encoded size of the items of one list page.
    pub(super) list_budget: usize,
    /// How long AIP-155 request ids are remembered.
    pub(super) request_id_window: std::time::Duration,
    /// How long an AIP-151 operation's runner holds it without renewing.
    pub(super) operation_lease: std::time::Duration,
    /// Where the API's writes are recorded, if anywhere.
    audit: Option<AuditLog>,
}

impl ApiContext {
    pub fn new(page_tokens: PageTokens, authorizer: Authorizer) -> Self {
        ApiContext {
            page_tokens,
            authorizer,
            shared_scopes: Arc::new([]),
            list_budget: LIST_BUDGET_BYTES,
            request_id_window: super::REQUEST_ID_WINDOW,
            operation_lease: crate::operation::OPERATION_LEASE,
            audit: None,
        }
    }

    /// Records every write the API answers in `log` (see [`crate::audit`]).
    pub fn with_audit(mut self, log: AuditLog) -> Self {
        self.audit = Some(log);
        self
    }

    /// The audit of a write of `method` (its full name) taking `request`,
    /// when the API's writes are recorded (and the write is not a dry run).
    pub fn audit<M: prost_reflect::ReflectMessage>(
        &self,
        method: &'static str,
        request: &M,
    ) -> Option<Audit> {
        (self.audit.as_ref()).and_then(|log| Audit::start(log, method, request))
    }

    /// Lets reference fields under every root name the items directly under
    /// `parent` (e.g. built-in items), whatever their [`Reach`].
    pub fn with_shared_scope(mut self, parent: impl Into<String>) -> Self {
        let mut scopes = self.shared_scopes.to_vec();
        scopes.push(parent.into());
        self.shared_scopes = scopes.into();
        self
    }

    /// Ends list pages before their items' encoded size exceeds `bytes`
    /// (default [`LIST_BUDGET_BYTES`]); a page always holds at least one item.
    pub fn with_list_budget(mut self, bytes: usize) -> Self {
        self.list_budget = bytes;
        self
    }

    /// Remembers AIP-155 request ids for `window` (default
    /// [`REQUEST_ID_WINDOW`](super::REQUEST_ID_WINDOW)): a retry within it
    /// is answered as the first request was.
    pub fn with_request_id_window(mut self, window: std::time::Duration) -> Self {
        self.request_id_window = window;
        self
    }

    /// Holds running AIP-151 operations for `lease` between renewals
    /// (default [`OPERATION_LEASE`](crate::operation::OPERATION_LEASE)): an
    /// operation whose server stopped reads `ABORTED` once it passes.
    pub fn with_operation_lease(mut self, lease: std::time::Duration) -> Self {
        self.operation_lease = lease;
        self
    }

    /// The AIP-155 request id of `request` to `method` (its full name) by
    /// `caller`, remembered for this API's window (see
    /// [`RequestId::new`](super::RequestId::new)).
    pub fn request_id<M: crate::json::JsonMessage>(
        &self,
        caller: &Caller,
        method: &str,
        request_id: &str,
        uuid: bool,
        request: &M,
    ) -> Result<Option<super::RequestId>, Error> {
        let window = self.request_id_window;
        super::RequestId::new(window, caller, method, request_id, uuid, request)
    }

    /// PERMISSION_DENIED unless `caller` holds every one of `capabilities`
    /// on `target` (no escalation: a caller grants only what it holds).
    pub async fn require_held(
        &self,
        caller: &Caller,
        target: &str,
        capabilities: impl IntoIterator<Item = &str>,
    ) -> Result<(), Error> {
        let capabilities: Vec<&str> = capabilities.into_iter().collect();
        if capabilities.is_empty() {
            return Ok(());
        }
        self.authorizer
            .held(caller, target)
            .await?
            .require(capabilities, target)
    }

    /// Whether `parent` is a shared scope.
    pub(super) fn is_shared_scope(&self, parent: &str) -> bool {
        self.shared_scopes.iter().any(|scope| scope == parent)
    }

    /// Whether a reference from an item created under `parent` may name
    /// `target`, an item of `T`.
    pub(super) fn reaches<T: Resource>(&self, reach: Reach, parent: &str, target: &str) -> bool {
        let Some(home) = uidp::parent(target) else {
            return false;
        };
        if T::SHARED && self.is_shared_scope(home) {
            return true;
        }
        match reach {
            Reach::Ancestors => crate::auth::covers(home, parent),
            Reach::Root => uidp::root(home) == uidp::root(parent),
            Reach::Anywhere => true,
        }
    }

    /// PERMISSION_DENIED for a create, update or delete of an item of a
    /// shared collection directly under a shared scope (`parent`), unless
    /// `caller` is the administrator: items every root may reference are
    /// not any one root's to change, whatever its bindings.
    pub fn require_shared_write<R: Resource>(
        &self,
        caller: &Caller,
        parent: &str,
    ) -> Result<(), Error> {
        if !R::SHARED || !self.is_shared_scope(parent) || caller.is_admin() {
            return Ok(());
        }
        let kind = R::TYPE.rsplit('/').next().unwrap_or(R::TYPE);
        Err(Error::new(
            Code::PermissionDenied,
            "SHARED_SCOPE_READ_ONLY",
            format!("{kind} items shared with every root are changed by the administrator only"),
        )
        .in_domain(R::domain()))
    }

    /// Checks that `caller` has what the method needs on `target`.
    pub async fn authorize(
        &self,
        caller: &Caller,
        need: Need<'_>,
        target: &str,
    ) -> Result<(), Error> {
        match need {
            Need::Nothing => Ok(()),
            Need::Token => crate::auth::require_token(caller),
            Need::Capability(capability) => self.authorizer.check(caller, capability, target).await,
        }?;
        // A flow running as an operation is stored as one from here on.
        crate::operation::admitted(target).await
    }
}
