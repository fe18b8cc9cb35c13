//! What a process remembers of the uploads whose bytes it received: the
//! hash of their contents so far, so that finishing one need not read it
//! back. A hash is used only when the upload is still exactly what was
//! hashed (its length on disk, its chunks in object storage).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::digest::Hasher;

/// Uploads remembered at most; past it, the oldest knowledge is dropped
/// (those uploads are read back when finished).
const MAX_REMEMBERED: usize = 10_000;

/// Hashes of uploads by id, each with what it is the hash of (`K`).
pub(super) struct Hashes<K>(Mutex<HashMap<String, (K, Hasher)>>);

impl<K> Default for Hashes<K> {
    fn default() -> Self {
        Hashes(Mutex::new(HashMap::new()))
    }
}

impl<K: PartialEq> Hashes<K> {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (K, Hasher)>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes the hash of upload `id` if it is the hash of `contents`.
    pub(super) fn take(&self, id: &str, contents: &K) -> Option<Hasher> {
        let (hashed, hasher) = self.lock().remove(id)?;
        (hashed == *contents).then_some(hasher)
    }

    /// Remembers `hasher` as the hash of upload `id`'s `contents`.
    pub(super) fn keep(&self, id: &str, contents: K, hasher: Hasher) {
        let mut hashes = self.lock();
        if hashes.len() >= MAX_REMEMBERED {
            hashes.clear();
        }
        hashes.insert(id.to_owned(), (contents, hasher));
    }

    pub(super) fn forget(&self, id: &str) {
        self.lock().remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_is_used_only_for_what_it_hashed() {
        let hashes = Hashes::<u64>::default();
        hashes.keep("a", 3, Hasher::default());
        assert!(hashes.take("a", &4).is_none(), "another length");
        assert!(hashes.take("a", &3).is_none(), "a miss forgets it");
        hashes.keep("a", 3, Hasher::default());
        assert!(hashes.take("a", &3).is_some());
        assert!(hashes.take("a", &3).is_none(), "taken once");
    }

    #[test]
    fn at_most_so_many_are_remembered() {
        let hashes = Hashes::<u64>::default();
        for i in 0..=MAX_REMEMBERED {
            hashes.keep(&i.to_string(), 0, Hasher::default());
        }
        assert_eq!(hashes.lock().len(), 1);
    }
}
