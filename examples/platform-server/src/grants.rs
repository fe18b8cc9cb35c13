//! What each identity is granted, cached until an access write.
//!
//! Grants derive from role bindings and roles. Every write of those tables
//! advances the store's access epoch inside its own transaction, so
//! a request reads one row to learn whether the grants cached for an epoch
//! still hold. Servers on one database share the row: a revoked binding is
//! seen by the next request on every replica, with no time-to-live to wait
//! out. A request costs one primary-key read instead of the bindings and
//! roles queries.

use std::collections::HashMap;
use std::sync::Mutex;

use generated::platform::iam::v2::{Role, RoleBinding};
use runtime::auth::{Access, BoxFuture, Grants};
use runtime::sql::SqlStore;
use runtime::store::{Backend, StoreError};

/// Identities whose grants are kept at most; the cache starts over beyond.
const CAPACITY: usize = 10_000;

/// Grants per identity, valid for one access epoch.
#[derive(Debug, Default)]
pub struct GrantsCache {
    state: Mutex<Cached>,
}

#[derive(Debug, Default)]
struct Cached {
    epoch: i64,
    grants: HashMap<String, Grants>,
}

impl GrantsCache {
    /// What the role bindings of `identity` grant: each binding's role's
    /// capabilities on the group the binding lives in.
    pub async fn grants_of(&self, store: &SqlStore, identity: &str) -> Result<Grants, StoreError> {
        let epoch = store.access_epoch().await?;
        if let Some(grants) = self.get(epoch, identity) {
            return Ok(grants);
        }
        // Read after the epoch: whatever this sees is at least that recent,
        // and a write committed since has advanced the epoch past it.
        let grants = read_grants(store, identity).await?;
        self.put(epoch, identity, grants.clone());
        Ok(grants)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Cached> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn get(&self, epoch: i64, identity: &str) -> Option<Grants> {
        let state = self.state();
        (state.epoch == epoch)
            .then(|| state.grants.get(identity).cloned())
            .flatten()
    }

    fn put(&self, epoch: i64, identity: &str, grants: Grants) {
        let mut state = self.state();
        if epoch < state.epoch {
            return;
        }
        if epoch > state.epoch || state.grants.len() >= CAPACITY {
            state.grants.clear();
            state.epoch = epoch;
        }
        state.grants.insert(identity.to_owned(), grants);
    }
}

/// What the role bindings of `identity` grant, read without the cache: the
/// bindings query and one role read per binding, what every request would
/// pay without it (`benches/authorization.rs` measures both).
pub async fn read_grants(store: &SqlStore, identity: &str) -> Result<Grants, StoreError> {
    let bindings: Vec<RoleBinding> = store.find_by("identity", identity).await?;
    let mut grants = Grants::default();
    for binding in bindings {
        let Some(scope) = runtime::uidp::parent(&binding.uid) else {
            continue;
        };
        if let Some(role) = Backend::get::<Role>(store, &binding.role).await? {
            grants.add(scope, role.capabilities);
        }
    }
    Ok(grants)
}

/// What role bindings grant, cached until a role or binding changes on any
/// server.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_hold_for_their_epoch_only() {
        let cache = GrantsCache::default();
        let mut grants = Grants::default();
        grants.add("a".repeat(40), ["groups.get".to_owned()]);
        cache.put(3, "alice", grants.clone());
        assert_eq!(cache.get(3, "alice"), Some(grants.clone()));
        assert_eq!(cache.get(4, "alice"), None, "a later epoch misses");
        cache.put(2, "bob", grants.clone());
        assert_eq!(cache.get(2, "bob"), None, "an older read is not kept");
        cache.put(4, "bob", grants.clone());
        assert_eq!(cache.get(3, "alice"), None, "a newer epoch starts over");
        assert_eq!(cache.get(4, "bob"), Some(grants));
    }
}
