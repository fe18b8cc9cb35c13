//! Items named on pages by what people call them: a reference's target,
//! a member and its role, shown by their labels (each read once per page
//! as the signed-in caller) rather than their keys.

use std::collections::HashMap;

use super::items::{item_href, label};
use super::shared::Shared;
use super::view::Link;
use super::visit::Visit;
use protoapi_client::schema::Collection;

/// Items one page reads at most to name them; the others show their key.
const MAX_LOOKUPS: usize = 64;

/// Labels of the items a page has named so far.
pub(super) struct Names<'a> {
    shared: &'a Shared,
    visit: &'a Visit,
    known: HashMap<(&'static str, String), Option<String>>,
}

impl<'a> Names<'a> {
    pub(super) fn new(shared: &'a Shared, visit: &'a Visit) -> Self {
        Names {
            shared,
            visit,
            known: HashMap::new(),
        }
    }

    /// A link to item `key` of `collection`, named by its label; by its key
    /// when the caller cannot read it (or the page has read enough).
    pub(super) async fn link(&mut self, collection: &'static Collection, key: &str) -> Link {
        let text = self.label(collection, key).await;
        Link {
            href: item_href(collection, key),
            text: text.unwrap_or_else(|| key.to_owned()),
            id: collection.id,
        }
    }

    /// A link to item `key` of `collection` named by its label, when the
    /// caller can read it.
    pub(super) async fn find(
        &mut self,
        collection: &'static Collection,
        key: &str,
    ) -> Option<Link> {
        let text = self.label(collection, key).await?;
        Some(Link {
            href: item_href(collection, key),
            text,
            id: collection.id,
        })
    }

    async fn label(&mut self, collection: &'static Collection, key: &str) -> Option<String> {
        let entry = (collection.id, key.to_owned());
        if let Some(text) = self.known.get(&entry) {
            return text.clone();
        }
        if self.known.len() >= MAX_LOOKUPS || !collection.is_key(key) {
            return None;
        }
        let item = self.shared.get_item(self.visit, collection, key).await;
        let text = item.ok().map(|item| label(collection, &item));
        self.known.insert(entry, text.clone());
        text
    }

    /// The target of the reference `field` of `collection` that `value`
    /// holds, as a link: `None` when the field is no reference or empty.
    pub(super) async fn reference(
        &mut self,
        collection: &Collection,
        field: &str,
        value: &serde_json::Value,
    ) -> Option<Link> {
        let target = collection.reference(field)?.collection;
        let target = self.shared.schema.collection(target)?;
        let key = value.as_str().filter(|key| !key.is_empty())?;
        Some(self.link(target, key).await)
    }
}
