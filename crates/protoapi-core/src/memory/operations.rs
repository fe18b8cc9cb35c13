//! AIP-151 operations in memory: ended under the store's write lock, so
//! that ending one and the write that would end it are one step.

use std::collections::BTreeMap;
use std::ops::Bound;

use super::MemoryStore;
use crate::operation::{OperationStore, RETENTION, StoredOperation};
use crate::request_id::{Recorded, RequestId};
use crate::store::{Backend, StoreError};

impl MemoryStore {
    fn operations(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, StoredOperation>> {
        self.operations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `OperationEnded` unless operation `name` is stored and running
    /// (called under the write lock).
    pub(super) fn check_running(&self, name: &str) -> Result<(), StoreError> {
        match self.operations().get(name) {
            Some(operation) if !operation.done => Ok(()),
            _ => Err(StoreError::OperationEnded),
        }
    }

    /// Ends operation `name` with `body` (called under the write lock).
    pub(super) fn end_running(&self, name: &str, body: Vec<u8>) {
        if let Some(operation) = self.operations().get_mut(name) {
            end(operation, body);
        }
    }
}

/// Ends `operation` with `body` now.
fn end(operation: &mut StoredOperation, body: Vec<u8>) {
    operation.done = true;
    operation.body = body;
    operation.lease = crate::time::now_micros();
}

impl OperationStore for MemoryStore {
    async fn insert_operation(&self, operation: &StoredOperation) -> Result<(), StoreError> {
        let mut operations = self.operations();
        if operations.contains_key(&operation.name) {
            return Err(StoreError::AlreadyExists);
        }
        if let Some(id) = RequestId::current() {
            let name = operation.name.as_bytes().to_vec();
            self.record_request(&id, name)?;
        }
        let forgotten = crate::time::now_micros().saturating_sub(retention());
        operations.retain(|_, operation| !operation.done || operation.lease >= forgotten);
        operations.insert(operation.name.clone(), operation.clone());
        Ok(())
    }

    async fn operation_started_under(&self, key: &str) -> Result<Option<Recorded>, StoreError> {
        self.recorded(key).await
    }

    async fn get_operation(&self, name: &str) -> Result<Option<StoredOperation>, StoreError> {
        Ok(self.operations().get(name).cloned())
    }

    async fn list_operations(
        &self,
        prefix: &str,
        after: &str,
        limit: usize,
    ) -> Result<Vec<StoredOperation>, StoreError> {
        let start = match after {
            "" => Bound::Included(prefix),
            after => Bound::Excluded(after),
        };
        Ok(self
            .operations()
            .range::<str, _>((start, Bound::Unbounded))
            .map(|(_, operation)| operation)
            .take_while(|operation| operation.name.starts_with(prefix))
            .take(limit)
            .cloned()
            .collect())
    }

    async fn finish_operation(&self, name: &str, body: &[u8]) -> Result<bool, StoreError> {
        let _write = self.write_lock();
        let mut operations = self.operations();
        match operations.get_mut(name) {
            Some(operation) if !operation.done => {
                end(operation, body.to_vec());
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn renew_operation(&self, name: &str, lease: i64) -> Result<(), StoreError> {
        if let Some(operation) = self.operations().get_mut(name) {
            operation.lease = lease;
        }
        Ok(())
    }

    async fn delete_operation(&self, name: &str) -> Result<bool, StoreError> {
        Ok(self.operations().remove(name).is_some())
    }
}

/// [`RETENTION`] in microseconds.
fn retention() -> i64 {
    i64::try_from(RETENTION.as_micros()).unwrap_or(i64::MAX)
}
