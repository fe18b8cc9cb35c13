//! Types shared by every generated storage trait.
//!
//! A storage backend receives validated, fully formed resources and answers
//! with [`StoreError`]s that say what happened in storage terms; the
//! generated service turns them into API errors with the right details.

use std::fmt;

use crate::mask::Update;
use crate::resource::{Public, Resource, SortValue};

/// Why a storage call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The parent named on create does not exist.
    ParentNotFound,
    /// A resource with the same uid already exists.
    AlreadyExists,
    /// The resource still has dependents; each entry names one (type, uid).
    HasDependents(Vec<(String, String)>),
    /// The item named by a reference field (its JSON name) does not exist.
    ReferenceNotFound(&'static str),
    /// The stored etag differs from the one the request carried.
    EtagMismatch,
    /// The update was refused by the request's own checks (run inside the
    /// storage transaction by [`crate::mask::Update::apply`]).
    Rejected(crate::Error),
    /// A write under an AIP-155 request id another write recorded first
    /// (a concurrent twin of the request): nothing was written.
    DuplicateRequest,
    /// A write ending an AIP-151 operation that ended first (cancelled, or
    /// abandoned past its lease): nothing was written.
    OperationEnded,
    /// The backend does not implement this operation.
    Unimplemented,
    /// The storage cannot be reached now (connection refused or lost, no
    /// connection free in time, the database shutting down): answered
    /// `UNAVAILABLE` with a retry delay; the cause is logged only.
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
    /// The storage refused a write for want of space: answered
    /// `RESOURCE_EXHAUSTED` (`STORAGE_FULL`); the cause is logged only.
    Full(Box<dyn std::error::Error + Send + Sync>),
    /// Anything else (SQL, corruption, bugs): logged, never shown to clients.
    Backend(Box<dyn std::error::Error + Send + Sync>),
}

impl StoreError {
    /// Wraps a backend error.
    pub fn backend(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        StoreError::Backend(Box::new(error))
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::ParentNotFound => f.write_str("parent not found"),
            StoreError::AlreadyExists => f.write_str("already exists"),
            StoreError::HasDependents(dependents) => {
                write!(f, "{} dependent resources", dependents.len())
            }
            StoreError::ReferenceNotFound(field) => write!(f, "`{field}` names no item"),
            StoreError::EtagMismatch => f.write_str("etag mismatch"),
            StoreError::Rejected(error) => write!(f, "rejected: {error}"),
            StoreError::DuplicateRequest => f.write_str("request id already recorded"),
            StoreError::OperationEnded => f.write_str("the operation ended before its write"),
            StoreError::Unimplemented => f.write_str("not implemented by this store"),
            StoreError::Unavailable(error) => write!(f, "storage unavailable: {error}"),
            StoreError::Full(error) => write!(f, "storage full: {error}"),
            StoreError::Backend(error) => write!(f, "storage backend: {error}"),
        }
    }
}

impl std::error::Error for StoreError {}

/// The API error of a storage failure outside a standard method (an
/// authorization lookup, a custom method): storage faults as
/// [`Error::storage_unavailable`](crate::Error::storage_unavailable) and
/// [`Error::storage_full`](crate::Error::storage_full), anything else
/// `INTERNAL`. The standard methods answer the other variants with
/// details of their own.
impl From<StoreError> for crate::Error {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Unavailable(_) => crate::Error::storage_unavailable(error),
            StoreError::Full(_) => crate::Error::storage_full(error),
            other => crate::Error::internal(other),
        }
    }
}

/// Which part of the uid hierarchy a list covers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Hierarchy {
    /// Every stored item.
    All,
    /// Items whose uid has exactly one more segment than this uid.
    ChildrenOf(String),
    /// Items strictly below this uid.
    DescendantsOf(String),
    /// Items that are one of these uids or below one of them (what a caller
    /// may see); empty means nothing.
    Within(Vec<String>),
}

/// One `order_by` term.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OrderBy {
    /// The JSON field name (from the resource's allow-list).
    pub field: String,
    pub descending: bool,
}

/// A validated list request, as storage sees it.
///
/// Storage returns items matching `filter`, ordered by `order_by` then by
/// `uid` ascending, strictly after `after` (when set), skipping `skip` of
/// them and returning at most `limit`.
#[derive(Clone, Debug)]
pub struct ListQuery {
    pub filter: Hierarchy,
    /// Conditions of the declared filters, on top of `filter`.
    pub matching: Matching,
    /// Never empty: ends with `uid` unless `uid` was named explicitly.
    pub order_by: Vec<OrderBy>,
    /// The sort values (one per `order_by` term) of the last item already returned.
    pub after: Option<Vec<SortValue>>,
    pub skip: u64,
    pub limit: u64,
    /// Storage may stop reading early once the items it has read exceed this
    /// many encoded bytes, provided it returns one item past that point (so
    /// a page that ends early still knows more follow). The list's byte
    /// budget is spent before `limit` is reached on large items.
    pub byte_budget: u64,
    /// How items readable without a token ([`Public`]) count.
    pub public: Option<PublicItems>,
}

/// What the declared list filters (`uidp.ids`, `uidp.ancestors_of`,
/// `uidp.in_root`, `name`) and the `filter` expression ask of every item;
/// the default asks nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Matching {
    /// Only items with one of these uids (`None`: any uid). Index-backed:
    /// the uid is the primary key.
    pub uids: Option<Vec<String>>,
    /// Only items whose `name` is exactly this.
    pub name: Option<String>,
    /// Only root-level items (those without a parent).
    pub root_only: bool,
    /// Only items that are not soft-deleted (whose
    /// [`Resource::DELETE_TIME`]
    /// is unset): what a list of a soft-deleting collection shows unless
    /// its request sets `show_deleted` (AIP-164). Storage decides it, so
    /// paging and totals count only the items shown.
    pub live_only: bool,
    /// The list's checked AIP-160 `filter`, on the columns of the fields
    /// it compares.
    pub condition: Option<crate::filter::Condition>,
}

impl Matching {
    /// Whether no condition is set.
    pub fn is_empty(&self) -> bool {
        *self == Matching::default()
    }

    /// Whether an item with this uid and name meets every condition but
    /// [`Self::live_only`], which the store checks on the item.
    pub fn matches(&self, uid: &str, name: Option<&str>) -> bool {
        self.uids
            .as_ref()
            .is_none_or(|uids| uids.iter().any(|u| u == uid))
            && self
                .name
                .as_deref()
                .is_none_or(|wanted| name == Some(wanted))
            && (!self.root_only || crate::uidp::parent(uid).is_none())
    }
}

/// Which items a list shows by the collection's [`Public`] rule: items it
/// admits are readable without a token. Storage decides [`Public::After`]
/// against its clock, once per list (items and `total_count` alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PublicItems {
    /// Only public items within the filter (anonymous callers, and callers
    /// denied the filter).
    Only(Public),
    /// The filter's items, and public items outside it too (an unfiltered
    /// list by a caller with grants).
    Also(Public),
}

/// What storage returns for a [`ListQuery`].
#[derive(Clone, Debug)]
pub struct Page<R> {
    pub items: Vec<R>,
    /// Items matching the filter, independent of paging.
    pub total_count: u64,
}

/// Storage of every resource type of an API: what the library's stores
/// (`protoapi_runtime::memory::MemoryStore` and, with the `sql` feature,
/// `protoapi_runtime::sql::SqlStore`) implement once, generically.
///
/// Items are stored under their key ([`Resource::key`]: the uid, or the
/// resource name of a name-keyed resource), which SQL tables keep in their
/// `uid` column either way.
///
/// The generated crate implements each resource's storage trait for every
/// `Backend`, so such a store serves any generated API with no code. Each
/// method keeps the rules the resource declares ([`Resource::PARENT_TYPE`],
/// [`Resource::REFERENCES`], [`Resource::DEPENDENTS`]) in the same atomic
/// step as its write.
///
/// [`Resource::PARENT_TYPE`]: crate::resource::Resource::PARENT_TYPE
/// [`Resource::REFERENCES`]: crate::resource::Resource::REFERENCES
/// [`Resource::DEPENDENTS`]: crate::resource::Resource::DEPENDENTS
pub trait Backend: Send + Sync + 'static {
    /// Whether items of `resource_type` (`Resource::TYPE`) are stored at
    /// all: a SQL store keeps only the types it has a table for. Generated
    /// wiring asks before serving them.
    fn keeps(&self, resource_type: &str) -> bool {
        let _ = resource_type;
        true
    }

    /// Whether writes under [`DryRun::current`](crate::dry_run::DryRun::current)
    /// (AIP-163 `validate_only`) run every check and change nothing: the
    /// library's stores roll them back. Generated methods hand a dry run
    /// only to a store that says so; the default says no.
    fn dry_runs(&self) -> bool {
        false
    }

    /// Stores a new item: `ParentNotFound` when its parent (of the declared
    /// parent type) is missing, `ReferenceNotFound` when a reference names
    /// no item, `AlreadyExists` when the key is taken.
    fn insert<R: Resource>(
        &self,
        resource: &R,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The item with this key, if stored.
    fn get<R: Resource>(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<R>, StoreError>> + Send;

    /// One page of items for a validated query, with the total count.
    fn list<R: Resource>(
        &self,
        query: &ListQuery,
    ) -> impl Future<Output = Result<Page<R>, StoreError>> + Send;

    /// Replaces a stored item by `update.apply(&stored)` atomically; `None`
    /// when no item has this key.
    fn update<R: Resource>(
        &self,
        key: &str,
        update: &Update<R>,
    ) -> impl Future<Output = Result<Option<R>, StoreError>> + Send;

    /// Deletes an item; `false` when none has this key. Fails with
    /// `EtagMismatch` on a stale `etag` and `HasDependents` while declared
    /// dependents exist, changing nothing.
    fn delete<R: Resource>(
        &self,
        key: &str,
        etag: Option<&str>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// What a write recorded under an AIP-155 request id key
    /// ([`crate::request_id::RequestId`]), unless it expired. Every write
    /// method records, in its own atomic step, the item it wrote (or
    /// deleted) under [`RequestId::current`](crate::request_id::RequestId::current)
    /// when there is one, and fails with `DuplicateRequest` when that key
    /// holds an unexpired record already. Backends that keep none answer
    /// `None`.
    fn recorded(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<crate::request_id::Recorded>, StoreError>> + Send {
        let _ = key;
        async { Ok(None) }
    }

    /// Deletes an item and every item below it (AIP-135 `force`): the
    /// items of the collections that name it their parent
    /// ([`Resource::DEPENDENTS`] with field `parent`), theirs, and so on,
    /// in one atomic step; `false` when none has this key. Fails with
    /// `EtagMismatch` on a stale `etag` and `HasDependents` while other
    /// declared dependents (reference fields) exist, changing nothing.
    /// Backends without it answer `Unimplemented`.
    fn delete_forced<R: Resource>(
        &self,
        key: &str,
        etag: Option<&str>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        let _ = (key, etag);
        async { Err(StoreError::Unimplemented) }
    }
}
