//! What each identity is granted, cached until a write it derives from.
//!
//! Grants derive from an identity's role bindings and their roles. Every
//! write of those tables advances the access epoch of the subject it
//! touches inside its own transaction: a binding write the epoch of the
//! identity it grants to, a role write the role's own. An identity's cached
//! grants remember the epochs of the identity and of each role they were
//! read from, and hold while those are unchanged. A request reads those
//! epochs in one statement (linear in the caller's bindings) instead of the
//! bindings and roles; a write in one organization touches only its own
//! identities and roles, so no other organization's cached grants go stale.
//! Servers on one database share the epochs: a revoked binding is seen by
//! the next request on every replica, with no time-to-live to wait out.

use std::collections::HashMap;
use std::sync::Mutex;

use generated::platform::iam::v2::{Role, RoleBinding};
use runtime::auth::{Access, BoxFuture, Grants};
use runtime::sql::SqlStore;
use runtime::store::StoreError;

/// Identities whose grants are kept at most; the cache starts over beyond.
const CAPACITY: usize = 10_000;

/// Grants per identity, each valid while the epochs it was read at hold.
#[derive(Debug, Default)]
pub struct GrantsCache {
    entries: Mutex<HashMap<String, Entry>>,
}

/// Grants and the access epochs of the subjects they derive from: the
/// identity itself (its bindings) and each bound role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub grants: Grants,
    subjects: Vec<String>,
    epochs: Vec<i64>,
}

impl Entry {
    /// Whether no write has touched what these grants derive from since
    /// they were read: one statement.
    async fn holds(&self, store: &SqlStore) -> Result<bool, StoreError> {
        let subjects: Vec<&str> = self.subjects.iter().map(String::as_str).collect();
        Ok(store.access_epochs(&subjects).await? == self.epochs)
    }
}

impl GrantsCache {
    /// What the role bindings of `identity` grant: each binding's role's
    /// capabilities on the group the binding lives in.
    pub async fn grants_of(&self, store: &SqlStore, identity: &str) -> Result<Grants, StoreError> {
        if let Some(entry) = self.get(identity)
            && entry.holds(store).await?
        {
            return Ok(entry.grants);
        }
        let entry = read_grants(store, identity).await?;
        self.put(identity, entry.clone());
        Ok(entry.grants)
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn get(&self, identity: &str) -> Option<Entry> {
        self.entries().get(identity).cloned()
    }

    /// Whether grants of `identity` are cached and still hold (the next
    /// request is answered from the cache).
    pub async fn holds(&self, store: &SqlStore, identity: &str) -> Result<bool, StoreError> {
        match self.get(identity) {
            Some(entry) => entry.holds(store).await,
            None => Ok(false),
        }
    }

    fn put(&self, identity: &str, entry: Entry) {
        let mut entries = self.entries();
        if entries.len() >= CAPACITY && !entries.contains_key(identity) {
            entries.clear();
        }
        entries.insert(identity.to_owned(), entry);
    }
}

/// What the role bindings of `identity` grant, read without the cache, with
/// the epochs that keep it valid: the bindings, their roles and the epochs
/// in one statement, what every request would pay without the cache
/// (`benches/authorization.rs` measures both).
pub async fn read_grants(store: &SqlStore, identity: &str) -> Result<Entry, StoreError> {
    let read = store
        .access_read::<RoleBinding, Role>("identity", "role", identity)
        .await?;
    let mut grants = Grants::default();
    let mut roles = std::collections::BTreeMap::new();
    for (binding, role, epoch) in read.items {
        if let Some(scope) = runtime::uidp::parent(&binding.uid) {
            grants.add(scope, role.capabilities);
        }
        roles.insert(role.uid, epoch);
    }
    let (subjects, epochs) = std::iter::once((identity.to_owned(), read.subject_epoch))
        .chain(roles)
        .unzip();
    Ok(Entry {
        grants,
        subjects,
        epochs,
    })
}

/// What role bindings grant, cached until a role or binding it derives
/// from changes on any server.
#[derive(Clone, Debug)]
pub struct StoredAccess {
    store: SqlStore,
    cache: std::sync::Arc<GrantsCache>,
}

impl StoredAccess {
    pub fn new(store: SqlStore) -> Self {
        StoredAccess {
            store,
            cache: Default::default(),
        }
    }
}

impl Access for StoredAccess {
    fn grants<'a>(&'a self, identity: &'a str) -> BoxFuture<'a, Result<Grants, runtime::Error>> {
        Box::pin(async move {
            self.cache
                .grants_of(&self.store, identity)
                .await
                .map_err(runtime::Error::internal)
        })
    }
}
