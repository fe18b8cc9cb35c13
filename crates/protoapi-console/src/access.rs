//! Who holds what, on an item's page, from the API's access model
//! ([`protoapi_client::schema::Access`]): on an item bindings are kept
//! under, each member with the roles bound to it there and above (as cloud
//! consoles show a resource's principals); and on any item other items
//! reference, those items (a member's own bindings, who holds a role).

use super::items::{key_of, link_to, parent_key};
use super::names::Names;
use super::pages::{MAX_CRUMBS, may_create};
use super::paths::PREFIX;
use super::reply::{encode, query_string};
use super::shared::Shared;
use super::view::{Cell, Grant, Holder, Related, Row};
use super::visit::Visit;
use protoapi_client::schema::Collection;
use protoapi_core::context::Held;

/// Items of another collection shown as referring to an item.
const RELATED_PREVIEW: u32 = 20;

impl Shared {
    /// The members bound to a role on the item `key` of `collection` or on
    /// one of its ancestors, each with its roles; `None` when bindings are
    /// not kept under items of `collection`.
    pub(super) async fn holders(
        &self,
        visit: &Visit,
        names: &mut Names<'_>,
        collection: &'static Collection,
        key: &str,
    ) -> Option<Vec<Holder>> {
        let access = self.schema.access?;
        let bindings = self.schema.collection(access.bindings)?;
        if bindings.parent_type != Some(collection.resource_type) {
            return None;
        }
        let query = [("pageSize".to_owned(), bindings.page_sizes.max.to_string())];
        let nested = collection.parent_type == Some(collection.resource_type);
        let mut holders: Vec<Holder> = Vec::new();
        let mut scope = Some(key.to_owned());
        for _ in 0..MAX_CRUMBS {
            let Some(here) = scope.take() else { break };
            let listed = self.list_page(visit, bindings, &here, &query).await;
            let from = if here == key {
                None
            } else {
                Some(names.link(collection, &here).await)
            };
            for binding in listed.map(|(items, _, _)| items).unwrap_or_default() {
                let member = names.reference(bindings, access.member, &binding[access.member]);
                let Some(member) = member.await else { continue };
                let role = names.reference(bindings, access.role, &binding[access.role]);
                let Some(role) = role.await else { continue };
                let grant = Grant {
                    role,
                    binding: link_to(bindings, &binding).href,
                    from: from.clone(),
                };
                match holders.iter_mut().find(|h| h.member.href == member.href) {
                    Some(holder) => holder.grants.push(grant),
                    None => holders.push(Holder {
                        member,
                        grants: vec![grant],
                    }),
                }
            }
            scope = parent_key(collection, &here)
                .filter(|parent| nested && !parent.is_empty())
                .map(str::to_owned);
        }
        Some(holders)
    }

    /// For each collection with a reference to `collection` that its list
    /// can filter on, its items naming the item `key` (wherever the caller
    /// sees them): where each lives and what else it names.
    pub(super) async fn related(
        &self,
        visit: &Visit,
        names: &mut Names<'_>,
        collection: &'static Collection,
        key: &str,
    ) -> Vec<Related> {
        let mut sections = Vec::new();
        for other in self.schema.collections {
            let naming = other
                .references
                .iter()
                .filter(|r| r.collection == collection.id && other.filters_on(r.field));
            for reference in naming {
                sections.push(
                    self.naming(visit, names, other, reference.field, collection, key)
                        .await,
                );
            }
        }
        sections
    }

    /// The items of `other` whose reference `field` names `key`.
    async fn naming(
        &self,
        visit: &Visit,
        names: &mut Names<'_>,
        other: &'static Collection,
        field: &'static str,
        collection: &Collection,
        key: &str,
    ) -> Related {
        let filter = format!("{field} = {}", protoapi_core::filter::literal(key));
        let query = [
            ("pageSize".to_owned(), RELATED_PREVIEW.to_string()),
            ("filter".to_owned(), filter.clone()),
        ];
        let (items, next) = match self.list_page(visit, other, "", &query).await {
            Ok((items, next, _)) => (items, next),
            Err(_) => (Vec::new(), String::new()),
        };
        let owner = other.parent_type.and_then(|t| self.schema.of_type(t));
        let others: Vec<_> = other
            .references
            .iter()
            .filter(|r| r.field != field)
            .collect();
        let mut rows = Vec::new();
        for item in &items {
            let mut cells = Vec::new();
            if let Some(owner) = owner {
                let item_key = key_of(other, item);
                let parent = parent_key(other, &item_key).unwrap_or_default();
                cells.push(Cell::from(names.link(owner, parent).await));
            }
            for reference in &others {
                let target = names.reference(other, reference.field, &item[reference.field]);
                cells.push(target.await.map(Cell::from).unwrap_or_default());
            }
            let link = link_to(other, item);
            rows.push(Row {
                href: link.href,
                text: link.text,
                cells,
            });
        }
        let mut columns = vec![crate::words::label(other.singular)];
        if let Some(owner) = owner {
            columns.push(format!(
                "In ({})",
                crate::words::collection(owner).to_lowercase()
            ));
        }
        columns.extend(others.iter().map(|r| crate::words::field(other, r.field)));
        Related {
            id: other.id,
            field,
            title: format!(
                "{} with this {}",
                crate::words::collection(other),
                crate::words::label(collection.singular).to_lowercase()
            ),
            columns,
            rows,
            more: (!next.is_empty()).then(|| self.filtered_list(other, &filter)),
        }
    }

    /// Where a binding on the item `key` is created, when the caller
    /// holding `held` there may.
    pub(super) fn grant_href(&self, visit: &Visit, held: &Held, key: &str) -> Option<String> {
        let bindings = self.schema.collection(self.schema.access?.bindings)?;
        let create = bindings.create?;
        let allowed = may_create(visit, held, bindings, create.action.capability, key);
        allowed.then(|| format!("{PREFIX}{}/new?parent={}", bindings.id, encode(key)))
    }

    fn filtered_list(&self, collection: &Collection, filter: &str) -> String {
        let query = query_string([("filter", filter)]);
        format!("{PREFIX}{}?{query}", collection.id)
    }
}
