//! In-memory storage with the semantics every storage trait expects: for
//! tests, examples and prototypes. [`MemoryStore`] holds every collection of
//! an API and implements [`Backend`], so the generated storage traits are
//! implemented for it; a hand-written backend can delegate to a
//! [`MemoryCollection`] instead.

use std::any::Any;
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use crate::dry_run::DryRun;
use crate::mask::Update;
use crate::operation::{Running, StoredOperation};
use crate::request_id::{Recorded, RequestId};
use crate::resource::{Resource, SortValue};
use crate::store::{
    Backend, Hierarchy, ListQuery, Matching, OrderBy, Page, PublicItems, StoreError,
};
use crate::uidp;

mod operations;

/// Items of one resource type, keyed by uid (so subtrees are key ranges).
#[derive(Debug, Default)]
pub struct MemoryCollection<R> {
    items: Mutex<BTreeMap<String, R>>,
}

impl<R: Resource> MemoryCollection<R> {
    pub fn new() -> Self {
        MemoryCollection {
            items: Mutex::new(BTreeMap::new()),
        }
    }

    fn items(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, R>> {
        self.items
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stores a new item; `parent_exists` says whether its parent does.
    pub fn insert(&self, resource: &R, parent_exists: bool) -> Result<(), StoreError> {
        if !parent_exists {
            return Err(StoreError::ParentNotFound);
        }
        let mut items = self.items();
        if items.contains_key(resource.key()) {
            return Err(StoreError::AlreadyExists);
        }
        if !DryRun::current() {
            items.insert(resource.key().to_owned(), resource.clone());
        }
        Ok(())
    }

    pub fn contains(&self, uid: &str) -> bool {
        self.items().contains_key(uid)
    }

    pub fn get(&self, uid: &str) -> Result<Option<R>, StoreError> {
        Ok(self.items().get(uid).cloned())
    }

    pub fn list(&self, query: &ListQuery) -> Result<Page<R>, StoreError> {
        let items = self.items();
        // One time for the whole list, as SQL storage binds one.
        let now = crate::time::now_micros();
        let mut matching: Vec<&R> = items
            .values()
            .filter(|item| match query.public {
                None => in_hierarchy::<R>(&query.filter, item.key()),
                Some(PublicItems::Only(rule)) => {
                    in_hierarchy::<R>(&query.filter, item.key())
                        && rule.admits(&item.sort_value(rule.field()), now)
                }
                Some(PublicItems::Also(rule)) => {
                    in_hierarchy::<R>(&query.filter, item.key())
                        || rule.admits(&item.sort_value(rule.field()), now)
                }
            })
            .filter(|item| query.matching.is_empty() || matches(&query.matching, *item))
            .collect();
        let total_count = matching.len() as u64;
        matching.sort_by(|a, b| {
            compare(
                &query.order_by,
                &keys(a, &query.order_by),
                &keys(b, &query.order_by),
            )
        });
        let page = matching
            .into_iter()
            .filter(|item| {
                query.after.as_ref().is_none_or(|after| {
                    compare(&query.order_by, &keys(item, &query.order_by), after)
                        == Ordering::Greater
                })
            })
            .skip(usize::try_from(query.skip).unwrap_or(usize::MAX))
            .take(usize::try_from(query.limit).unwrap_or(usize::MAX))
            .cloned()
            .collect();
        Ok(Page {
            items: page,
            total_count,
        })
    }

    /// Applies `update` under the collection's lock (atomic).
    pub fn update(&self, uid: &str, update: &Update<R>) -> Result<Option<R>, StoreError> {
        let mut items = self.items();
        let Some(stored) = items.get_mut(uid) else {
            return Ok(None);
        };
        let merged = update.apply(stored).map_err(StoreError::Rejected)?;
        if !DryRun::current() {
            *stored = merged.clone();
        }
        Ok(Some(merged))
    }

    /// Deletes an item unless `has_dependents` names some.
    pub fn delete(
        &self,
        uid: &str,
        etag: Option<&str>,
        dependents: Vec<(String, String)>,
    ) -> Result<bool, StoreError> {
        let mut items = self.items();
        let Some(stored) = items.get(uid) else {
            return Ok(false);
        };
        if etag.is_some_and(|etag| etag != stored.etag()) {
            return Err(StoreError::EtagMismatch);
        }
        if !dependents.is_empty() {
            return Err(StoreError::HasDependents(dependents));
        }
        if !DryRun::current() {
            items.remove(uid);
        }
        Ok(true)
    }

    /// The items whose text field `field` (JSON name) holds `uid`, as
    /// `(type, uid)`: the dependents a delete of `uid` reports.
    pub fn referring(&self, field: &str, uid: &str) -> Vec<(String, String)> {
        self.items()
            .values()
            .filter(|item| item.sort_value(field) == SortValue::Text(uid.to_owned()))
            .map(|item| (R::TYPE.to_owned(), item.key().to_owned()))
            .collect()
    }

    /// The uids of items whose parent is `uid` (children that block
    /// deletes), read from the key range below it.
    pub fn children_of(&self, uid: &str) -> Vec<String> {
        let (start, end) = uidp::descendant_range(uid);
        self.items()
            .range(start..end)
            .map(|(key, _)| key)
            .filter(|item| R::parent_key(item) == Some(uid))
            .cloned()
            .collect()
    }

    /// Removes every item whose key lies below `uid` (a forced delete).
    pub fn remove_below(&self, uid: &str) {
        let (start, end) = uidp::descendant_range(uid);
        let mut items = self.items();
        let below: Vec<String> = items
            .range(start..end)
            .map(|(key, _)| key.clone())
            .collect();
        for key in below {
            items.remove(&key);
        }
    }
}

fn matches<R: Resource>(matching: &Matching, item: &R) -> bool {
    let name = match item.sort_value("name") {
        SortValue::Text(name) if matching.name.is_some() => Some(name),
        _ => None,
    };
    matching.matches(item.key(), name.as_deref())
        && (!matching.live_only || item.delete_time().is_none())
        && matching
            .condition
            .as_ref()
            .is_none_or(|condition| condition.admits(&|field| item.sort_value(field)))
}

fn in_hierarchy<R: Resource>(filter: &Hierarchy, uid: &str) -> bool {
    let below = |scope: &str| {
        uid.strip_prefix(scope)
            .is_some_and(|rest| rest.starts_with('/'))
    };
    match filter {
        Hierarchy::All => true,
        Hierarchy::ChildrenOf(parent) => R::parent_key(uid) == Some(parent.as_str()),
        Hierarchy::DescendantsOf(ancestor) => below(ancestor),
        Hierarchy::Within(scopes) => scopes.iter().any(|scope| uid == scope || below(scope)),
    }
}

fn keys<R: Resource>(item: &&R, order: &[OrderBy]) -> Vec<SortValue> {
    order
        .iter()
        .map(|term| item.sort_value(&term.field))
        .collect()
}

fn compare(order: &[OrderBy], a: &[SortValue], b: &[SortValue]) -> Ordering {
    order
        .iter()
        .zip(a.iter().zip(b))
        .map(|(term, (a, b))| if term.descending { b.cmp(a) } else { a.cmp(b) })
        .find(|ordering| ordering.is_ne())
        .unwrap_or(Ordering::Equal)
}

/// One collection, whatever its item type: what the store's rules ask of
/// collections they do not know statically (parents, references, dependents).
trait AnyCollection: Send + Sync {
    fn contains(&self, uid: &str) -> bool;
    fn dependents(&self, field: &str, uid: &str) -> Vec<(String, String)>;
    /// The resource types whose items name this collection's their parent.
    fn children(&self) -> Vec<&'static str>;
    fn remove_below(&self, uid: &str);
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

impl<R: Resource> AnyCollection for MemoryCollection<R> {
    fn contains(&self, uid: &str) -> bool {
        MemoryCollection::contains(self, uid)
    }

    /// Its children when `field` is `parent`, else the items whose `field`
    /// holds `uid`.
    fn dependents(&self, field: &str, uid: &str) -> Vec<(String, String)> {
        if field == "parent" {
            self.children_of(uid)
                .into_iter()
                .map(|child| (R::TYPE.to_owned(), child))
                .collect()
        } else {
            self.referring(field, uid)
        }
    }

    fn children(&self) -> Vec<&'static str> {
        R::DEPENDENTS
            .iter()
            .filter(|d| d.field == "parent")
            .map(|d| d.resource_type)
            .collect()
    }

    fn remove_below(&self, uid: &str) {
        MemoryCollection::remove_below(self, uid);
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }
}

/// Every collection of an API in memory, with the rules each resource
/// declares (parents that must exist, references that must name an item,
/// dependents that block deletes): the generated storage traits are
/// implemented for every [`Backend`], so an API runs in memory with no
/// storage code. Writes that check other collections (inserts and deletes)
/// run one at a time, so a check and its write are atomic.
#[derive(Default)]
pub struct MemoryStore {
    /// By resource type (`Resource::TYPE`), as rules name them.
    collections: Mutex<HashMap<&'static str, Arc<dyn AnyCollection>>>,
    writes: Mutex<()>,
    /// What writes under AIP-155 request ids recorded, by key, with when
    /// each expires; written under the write lock with the write itself.
    requests: Mutex<HashMap<String, (Recorded, i64)>>,
    /// AIP-151 operations by name; ended under the write lock.
    operations: Mutex<BTreeMap<String, StoredOperation>>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore").finish_non_exhaustive()
    }
}

impl MemoryStore {
    pub fn new() -> Self {
        MemoryStore::default()
    }

    fn collections(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<&'static str, Arc<dyn AnyCollection>>> {
        self.collections
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The collection of `R` (empty until written to).
    pub fn collection<R: Resource>(&self) -> Arc<MemoryCollection<R>> {
        let collection = Arc::clone(
            self.collections()
                .entry(R::TYPE)
                .or_insert_with(|| Arc::new(MemoryCollection::<R>::new())),
        );
        collection
            .into_any()
            .downcast::<MemoryCollection<R>>()
            .expect("collections are keyed by their item type")
    }

    /// The collection of a resource type, if anything created it.
    fn existing(&self, type_name: &str) -> Option<Arc<dyn AnyCollection>> {
        self.collections().get(type_name).cloned()
    }

    /// Whether an item of the resource type `type_name` has this uid.
    fn contains(&self, type_name: &str, uid: &str) -> bool {
        self.existing(type_name)
            .is_some_and(|collection| collection.contains(uid))
    }

    /// `ReferenceNotFound` for the first reference field of `resource` that
    /// names no stored item, among those that differ from `previous` (all
    /// on an insert); an empty field names nothing.
    fn check_references<R: Resource>(
        &self,
        resource: &R,
        previous: Option<&R>,
    ) -> Result<(), StoreError> {
        let missing = R::REFERENCES.iter().find(|reference| {
            let value = resource.sort_value(reference.field);
            if previous.is_some_and(|previous| previous.sort_value(reference.field) == value) {
                return false;
            }
            match value {
                SortValue::Text(key) => {
                    !key.is_empty() && !self.contains(reference.resource_type, &key)
                }
                SortValue::Int(_) => true,
            }
        });
        match missing {
            Some(reference) => Err(StoreError::ReferenceNotFound(reference.field)),
            None => Ok(()),
        }
    }

    /// Holds off other checked writes while the guard lives.
    fn write_lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.writes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn requests(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Recorded, i64)>> {
        self.requests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `write` with the current request id and operation, if any,
    /// under the write lock (taken without either too when `locked`):
    /// `DuplicateRequest` when the id holds an unexpired record,
    /// `OperationEnded` when the operation ended first, else the write. Its
    /// outcome (the item written or deleted, encoded; asked for only with
    /// an id or operation: `write(true)`; `None` when nothing was written)
    /// is recorded under the id and ends the operation.
    fn once<T>(
        &self,
        locked: bool,
        write: impl FnOnce(bool) -> Result<(T, Option<Vec<u8>>), StoreError>,
    ) -> Result<T, StoreError> {
        // A dry run records nothing, as it writes nothing.
        let id = RequestId::current().filter(|_| !DryRun::current());
        let running = Running::current().filter(|_| !DryRun::current());
        let recording = id.is_some() || running.is_some();
        let _write = (locked || recording).then(|| self.write_lock());
        if !recording {
            return write(false).map(|(written, _)| written);
        }
        let now = crate::time::now_micros();
        if let Some(id) = &id
            && self
                .requests()
                .get(id.key())
                .is_some_and(|(_, expires)| *expires > now)
        {
            return Err(StoreError::DuplicateRequest);
        }
        if let Some(running) = &running {
            self.check_running(running.name())?;
        }
        let (written, outcome) = write(true)?;
        if let (Some(running), Some(outcome)) = (running, &outcome) {
            self.end_running(running.name(), running.done_body(outcome));
        }
        if let Some(id) = id {
            // Checked above, under the write lock: no twin recorded since.
            self.record_request(&id, outcome.unwrap_or_default())?;
        }
        Ok(written)
    }

    /// Records `outcome` under `id`: `DuplicateRequest` when the id holds
    /// an unexpired record. Forgets the expired ones.
    pub(super) fn record_request(
        &self,
        id: &RequestId,
        outcome: Vec<u8>,
    ) -> Result<(), StoreError> {
        let now = crate::time::now_micros();
        let mut requests = self.requests();
        requests.retain(|_, (_, expires)| *expires > now);
        if requests.contains_key(id.key()) {
            return Err(StoreError::DuplicateRequest);
        }
        let record = Recorded {
            fingerprint: id.fingerprint().to_owned(),
            outcome,
        };
        requests.insert(id.key().to_owned(), (record, id.expires()));
        Ok(())
    }

    /// The encoded item of `uid`, when `recording` and it is stored.
    fn outcome<R: Resource>(
        &self,
        recording: bool,
        uid: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        match recording {
            true => Ok(self
                .collection::<R>()
                .get(uid)?
                .map(|item| item.encode_to_vec())),
            false => Ok(None),
        }
    }

    /// The declared dependents of `uid` blocking its delete (its children
    /// too unless `children_go`).
    fn dependents_of<R: Resource>(&self, uid: &str, children_go: bool) -> Vec<(String, String)> {
        R::DEPENDENTS
            .iter()
            .filter(|dependent| !children_go || dependent.field != "parent")
            .flat_map(|dependent| {
                self.existing(dependent.resource_type)
                    .map(|collection| collection.dependents(dependent.field, uid))
                    .unwrap_or_default()
            })
            .collect()
    }
}

impl Backend for MemoryStore {
    fn dry_runs(&self) -> bool {
        true
    }

    async fn insert<R: Resource>(&self, resource: &R) -> Result<(), StoreError> {
        self.once(true, |recording| {
            let parent_exists = match (R::PARENT_TYPE, R::parent_key(resource.key())) {
                (Some(parent_type), Some(parent)) => self.contains(parent_type, parent),
                // Roots, and parents stored outside the API.
                _ => true,
            };
            self.check_references(resource, None)?;
            self.collection::<R>().insert(resource, parent_exists)?;
            Ok(((), recording.then(|| resource.encode_to_vec())))
        })
    }

    async fn recorded(&self, key: &str) -> Result<Option<Recorded>, StoreError> {
        let now = crate::time::now_micros();
        Ok(self
            .requests()
            .get(key)
            .filter(|(_, expires)| *expires > now)
            .map(|(record, _)| record.clone()))
    }

    async fn get<R: Resource>(&self, uid: &str) -> Result<Option<R>, StoreError> {
        self.collection::<R>().get(uid)
    }

    async fn list<R: Resource>(&self, query: &ListQuery) -> Result<Page<R>, StoreError> {
        self.collection::<R>().list(query)
    }

    async fn update<R: Resource>(
        &self,
        uid: &str,
        update: &Update<R>,
    ) -> Result<Option<R>, StoreError> {
        // An update of `R` with references holds the write lock: the item
        // checked is the one updated. The check runs outside the
        // collection's lock, which a reference to an item of the same
        // collection would take again.
        self.once(!R::REFERENCES.is_empty(), |recording| {
            let collection = self.collection::<R>();
            if !R::REFERENCES.is_empty()
                && let Some(stored) = collection.get(uid)?
            {
                let merged = update.apply(&stored).map_err(StoreError::Rejected)?;
                self.check_references(&merged, Some(&stored))?;
            }
            let updated = collection.update(uid, update)?;
            let outcome = updated
                .as_ref()
                .filter(|_| recording)
                .map(|item| item.encode_to_vec());
            Ok((updated, outcome))
        })
    }

    async fn delete<R: Resource>(&self, uid: &str, etag: Option<&str>) -> Result<bool, StoreError> {
        self.once(true, |recording| {
            let outcome = self.outcome::<R>(recording, uid)?;
            let dependents = self.dependents_of::<R>(uid, false);
            let deleted = self.collection::<R>().delete(uid, etag, dependents)?;
            Ok((deleted, outcome.filter(|_| deleted)))
        })
    }

    async fn delete_forced<R: Resource>(
        &self,
        uid: &str,
        etag: Option<&str>,
    ) -> Result<bool, StoreError> {
        self.once(true, |recording| {
            let outcome = self.outcome::<R>(recording, uid)?;
            // Children go with the item; other dependents still refuse it.
            let dependents = self.dependents_of::<R>(uid, true);
            let collection = self.collection::<R>();
            if !collection.delete(uid, etag, dependents)? {
                return Ok((false, None));
            }
            if DryRun::current() {
                // Checked; nothing below it goes either.
                return Ok((true, outcome));
            }
            // Every collection below this one, each once.
            let mut seen: Vec<&'static str> = Vec::new();
            let mut pending: Vec<&'static str> = AnyCollection::children(&*collection);
            while let Some(resource_type) = pending.pop() {
                if seen.contains(&resource_type) {
                    continue;
                }
                seen.push(resource_type);
                if let Some(below) = self.existing(resource_type) {
                    below.remove_below(uid);
                    pending.extend(below.children());
                }
            }
            Ok((true, outcome))
        })
    }
}
