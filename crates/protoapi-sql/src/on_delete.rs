//! What an application keeps beside a collection's items, deleted in the
//! same transaction as each item ([`crate::SqlOptions::on_delete`]): a
//! delete that cannot take it along changes nothing.

use std::sync::Arc;

use protoapi_core::auth::BoxFuture;

/// Work done in the transaction that deletes an item of one collection,
/// after its row is gone: by a delete of the item itself and by a forced
/// delete of an item above it.
pub trait OnDelete: Send + Sync + 'static {
    /// Item `uid` is deleted in `connection`'s transaction.
    fn deleted<'a>(
        &'a self,
        connection: &'a mut sqlx::AnyConnection,
        uid: &'a str,
    ) -> BoxFuture<'a, Result<(), sqlx::Error>>;
}

/// A table's [`OnDelete`], if any.
#[derive(Clone, Default)]
pub(crate) struct Effect(pub(crate) Option<Arc<dyn OnDelete>>);

impl std::fmt::Debug for Effect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Effect(Some)"
        } else {
            "Effect(None)"
        })
    }
}
