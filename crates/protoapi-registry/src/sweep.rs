//! Forgetting repositories the application no longer has: what a push
//! wrote while its repository was being deleted is otherwise kept, and
//! its blobs with it, for good.

use crate::error::RegistryError;
use crate::registry::Registry;

/// Repositories looked at per query.
const BATCH: u32 = 100;

impl Registry {
    /// Forgets the manifests, tags and blobs of every repository the
    /// application says does not exist ([`crate::Repositories::exists`]);
    /// answers how many. Their blobs go at the next garbage collection.
    pub async fn forget_missing(&self) -> Result<u64, RegistryError> {
        let index = &self.storage.index;
        let mut forgotten = 0;
        let mut after = String::new();
        loop {
            let repositories = index.repositories(&after, BATCH).await?;
            for repository in &repositories {
                if !self.repositories.exists(repository).await? {
                    index.forget_repository(repository).await?;
                    forgotten += 1;
                }
            }
            match repositories.last() {
                Some(last) if repositories.len() == BATCH as usize => after.clone_from(last),
                _ => return Ok(forgotten),
            }
        }
    }
}
