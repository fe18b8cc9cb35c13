//! What each identity is granted, cached until a write it derives from.
//!
//! Grants derive from bindings (items of a resource type `B`) and the roles
//! they name (items of `T`): a binding grants its role's capabilities on the
//! group it lives in (its parent). The store declares which field of a
//! binding holds the identity it grants to
//! ([`Table::guarding_access_of`](super::Table::guarding_access_of) on `B`'s
//! table); the binding's reference to `T` (in [`Resource::REFERENCES`]) names
//! its role, and the role's capabilities are the values of its fields
//! declared `caller_must_hold` ([`Resource::must_hold`]).
//!
//! Every write of those tables advances the access epoch of the subject it
//! touches inside its own transaction: a binding write the epoch of the
//! identity it grants to, a role write the role's own (`T`'s table marked
//! [`Table::guarding_access`](super::Table::guarding_access)). An identity's
//! cached grants remember the epochs of the identity and of each role they
//! were read from, and hold while those are unchanged. A request reads those
//! epochs in one statement (linear in the caller's bindings) instead of the
//! bindings and roles; a write under one root touches only its own
//! identities and roles, so no other root's cached grants go stale. Servers
//! on one database share the epochs: a revoked binding is seen by the next
//! request on every replica, with no time-to-live to wait out.

use std::collections::{BTreeMap, HashMap};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::SqlStore;
use protoapi_core::auth::{Access, BoxFuture, Grants};
use protoapi_core::resource::Resource;
use protoapi_core::store::StoreError;

/// Identities whose grants are kept at most; the cache starts over beyond.
const CAPACITY: usize = 10_000;

/// Grants per identity, from bindings of `B` naming roles of `T`, each
/// valid while the epochs it was read at hold.
pub struct GrantsCache<B, T> {
    entries: Mutex<HashMap<String, GrantsEntry>>,
    types: PhantomData<fn() -> (B, T)>,
}

impl<B, T> Default for GrantsCache<B, T> {
    fn default() -> Self {
        GrantsCache {
            entries: Mutex::default(),
            types: PhantomData,
        }
    }
}

impl<B, T> std::fmt::Debug for GrantsCache<B, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrantsCache")
            .field("identities", &self.entries().len())
            .finish()
    }
}

/// Grants and the access epochs of the subjects they derive from: the
/// identity itself (its bindings) and each bound role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrantsEntry {
    pub grants: Grants,
    subjects: Vec<String>,
    epochs: Vec<i64>,
}

impl GrantsEntry {
    /// Whether no write has touched what these grants derive from since
    /// they were read: one statement.
    async fn holds(&self, store: &SqlStore) -> Result<bool, StoreError> {
        let subjects: Vec<&str> = self.subjects.iter().map(String::as_str).collect();
        Ok(store.access_epochs(&subjects).await? == self.epochs)
    }
}

impl<B: Resource, T: Resource> GrantsCache<B, T> {
    /// What the bindings of `identity` grant: each binding's role's
    /// capabilities on the group the binding lives in.
    pub async fn grants_of(&self, store: &SqlStore, identity: &str) -> Result<Grants, StoreError> {
        if let Some(entry) = self.get(identity)
            && entry.holds(store).await?
        {
            return Ok(entry.grants);
        }
        let entry = read_grants::<B, T>(store, identity).await?;
        self.put(identity, entry.clone());
        Ok(entry.grants)
    }

    /// Whether grants of `identity` are cached and still hold (the next
    /// request is answered from the cache).
    pub async fn holds(&self, store: &SqlStore, identity: &str) -> Result<bool, StoreError> {
        match self.get(identity) {
            Some(entry) => entry.holds(store).await,
            None => Ok(false),
        }
    }
}

impl<B, T> GrantsCache<B, T> {
    fn entries(&self) -> MutexGuard<'_, HashMap<String, GrantsEntry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get(&self, identity: &str) -> Option<GrantsEntry> {
        self.entries().get(identity).cloned()
    }

    fn put(&self, identity: &str, entry: GrantsEntry) {
        let mut entries = self.entries();
        if entries.len() >= CAPACITY && !entries.contains_key(identity) {
            entries.clear();
        }
        entries.insert(identity.to_owned(), entry);
    }
}

/// The field of a binding of `B` holding the identity it grants to, and
/// the field naming its role of `T`.
fn binding_fields<B: Resource, T: Resource>(
    store: &SqlStore,
) -> Result<(&'static str, &'static str), StoreError> {
    let subject = store.table::<B>()?.access_subject.ok_or_else(|| {
        StoreError::Backend(format!("the table of {} does not guard access", B::TYPE).into())
    })?;
    let role = B::REFERENCES
        .iter()
        .find(|reference| reference.resource_type == T::TYPE)
        .ok_or_else(|| {
            StoreError::Backend(format!("{} does not refer to {}", B::TYPE, T::TYPE).into())
        })?;
    Ok((subject, role.field))
}

/// What the bindings (`B`) of `identity` grant, read without the cache,
/// with the epochs that keep it valid: the bindings, their roles (`T`) and
/// the epochs in one statement, what every request would pay without the
/// cache.
pub async fn read_grants<B: Resource, T: Resource>(
    store: &SqlStore,
    identity: &str,
) -> Result<GrantsEntry, StoreError> {
    let (subject, role) = binding_fields::<B, T>(store)?;
    let read = store.access_read::<B, T>(subject, role, identity).await?;
    let mut grants = Grants::default();
    let mut roles = BTreeMap::new();
    for (binding, role, epoch) in read.items {
        if let Some(scope) = protoapi_core::uidp::parent(binding.key()) {
            grants.add(scope, role.must_hold().into_iter().map(str::to_owned));
        }
        roles.insert(role.key().to_owned(), epoch);
    }
    let (subjects, epochs) = std::iter::once((identity.to_owned(), read.subject_epoch))
        .chain(roles)
        .unzip();
    Ok(GrantsEntry {
        grants,
        subjects,
        epochs,
    })
}

/// What bindings of `B` naming roles of `T` grant, cached until a role or
/// binding it derives from changes on any server: the [`Access`] of a
/// server whose access comes from stored bindings.
pub struct StoredAccess<B, T> {
    store: SqlStore,
    cache: Arc<GrantsCache<B, T>>,
}

impl<B, T> StoredAccess<B, T> {
    pub fn new(store: SqlStore) -> Self {
        StoredAccess {
            store,
            cache: Arc::default(),
        }
    }
}

impl<B, T> Clone for StoredAccess<B, T> {
    fn clone(&self) -> Self {
        StoredAccess {
            store: self.store.clone(),
            cache: Arc::clone(&self.cache),
        }
    }
}

impl<B, T> std::fmt::Debug for StoredAccess<B, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredAccess")
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl<B: Resource, T: Resource> Access for StoredAccess<B, T> {
    fn grants<'a>(
        &'a self,
        identity: &'a str,
    ) -> BoxFuture<'a, Result<Grants, protoapi_core::Error>> {
        Box::pin(async move {
            self.cache
                .grants_of(&self.store, identity)
                .await
                .map_err(protoapi_core::Error::from)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(scope: &str) -> GrantsEntry {
        let mut grants = Grants::default();
        grants.add(scope, ["things.get".to_owned()]);
        GrantsEntry {
            grants,
            subjects: vec![scope.to_owned()],
            epochs: vec![1],
        }
    }

    #[test]
    fn entries_are_kept_per_identity() {
        let cache = GrantsCache::<(), ()>::default();
        cache.put("a", entry("x"));
        cache.put("b", entry("y"));
        cache.put("a", entry("z"));
        assert_eq!(cache.get("a"), Some(entry("z")));
        assert_eq!(cache.get("b"), Some(entry("y")));
        assert_eq!(cache.get("c"), None);
    }

    #[test]
    fn a_full_cache_starts_over_for_a_new_identity_only() {
        let cache = GrantsCache::<(), ()>::default();
        for i in 0..CAPACITY {
            cache.put(&i.to_string(), entry("x"));
        }
        cache.put("0", entry("y"));
        assert_eq!(
            cache.entries().len(),
            CAPACITY,
            "a known identity is replaced"
        );
        cache.put("new", entry("z"));
        assert_eq!(cache.entries().len(), 1);
        assert_eq!(cache.get("new"), Some(entry("z")));
    }
}
