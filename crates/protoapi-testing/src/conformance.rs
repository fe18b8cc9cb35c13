//! The storage conformance suite: what every storage
//! backend must do, written once against [`Backend`] and run from a test of
//! any store (the library's memory and SQL stores run it on themselves).
//!
//! ```ignore
//! #[tokio::test]
//! async fn my_store_conforms() {
//!     let store = MyStore::new();
//!     protoapi_runtime::conformance::run::<_, Shelf, Book>(&store, |n| Book {
//!         title: format!("book {n}"),
//!         ..Default::default()
//!     })
//!     .await;
//! }
//! ```
//!
//! Every check works under a fresh root, so a store that already holds
//! data (a shared database) can run it. Failures are collected and reported
//! together, each naming the rule broken.

use std::fmt::Debug;

use prost_types::FieldMask;

use protoapi_core::mask::Update;
use protoapi_core::resource::Resource;
use protoapi_core::store::{Backend, Hierarchy, ListQuery, OrderBy, StoreError};
use protoapi_core::{standard, time, uidp};

/// `value` as created under `parent` (a root when empty) at `micros` past
/// the epoch: uid, times and etag set as the generated create methods do.
fn created<T: Resource>(mut value: T, parent: &str, micros: i64) -> T {
    value.set_key(if parent.is_empty() {
        uidp::new_root()
    } else {
        uidp::new_child(parent)
    });
    let time = time::from_micros(micros);
    value.set_create_time(time);
    value.set_update_time(time);
    value.set_etag(standard::etag(&value));
    value
}

/// Runs every check against `store` for items of `R` created under items of
/// `P` (`R::PARENT_TYPE`; when parents live outside the API, any resource
/// type: its items are then never stored). `sample(n)` gives the `n`th
/// distinct item's writable fields (uid, times and etag are set here).
///
/// # Panics
///
/// Lists every rule the store broke.
pub async fn run<B, P, R>(store: &B, sample: impl Fn(usize) -> R)
where
    B: Backend,
    P: Resource + Debug,
    R: Resource + Debug,
{
    let suite = Suite {
        store,
        sample: &sample,
        failures: Vec::new(),
    };
    let failures = suite.run::<P>().await;
    assert!(
        failures.is_empty(),
        "the store breaks {} storage rule(s) for {}:\n- {}",
        failures.len(),
        R::TYPE,
        failures.join("\n- ")
    );
}

struct Suite<'a, B, R> {
    store: &'a B,
    sample: &'a dyn Fn(usize) -> R,
    failures: Vec<String>,
}

/// A storage result that must be `Ok`, or the check stops with its failure.
macro_rules! ok {
    ($suite:expr, $result:expr, $what:expr) => {
        match $result {
            Ok(value) => value,
            Err(error) => {
                $suite.fail(format!("{}: {error}", $what));
                return;
            }
        }
    };
}

impl<B: Backend, R: Resource + Debug> Suite<'_, B, R> {
    fn fail(&mut self, failure: String) {
        self.failures.push(failure);
    }

    fn check(&mut self, holds: bool, rule: impl FnOnce() -> String) {
        if !holds {
            self.failures.push(rule());
        }
    }

    async fn run<P: Resource + Debug>(mut self) -> Vec<String> {
        self.round_trip::<P>().await;
        self.insert_rules::<P>().await;
        self.lists::<P>().await;
        self.updates::<P>().await;
        self.deletes::<P>().await;
        self.failures
    }

    /// A new parent: stored when `R`'s items are created under stored `P`s.
    async fn parent<P: Resource + Debug>(&mut self) -> Option<String> {
        let parent: P = created(P::default(), "", 1_000_000);
        if R::PARENT_TYPE == Some(P::TYPE)
            && let Err(error) = self.store.insert(&parent).await
        {
            self.fail(format!("inserting a root {}: {error}", P::TYPE));
            return None;
        }
        Some(parent.key().to_owned())
    }

    /// The `n`th sample, created under `parent` at `micros` past the epoch.
    fn item(&self, parent: &str, n: usize, micros: i64) -> R {
        created((self.sample)(n), parent, micros)
    }

    async fn round_trip<P: Resource + Debug>(&mut self) {
        let Some(parent) = self.parent::<P>().await else {
            return;
        };
        let item = self.item(&parent, 0, 1_000_000);
        ok!(self, self.store.insert(&item).await, "insert");
        let stored: Option<R> = ok!(self, self.store.get(item.key()).await, "get");
        self.check(stored.as_ref() == Some(&item), || {
            format!("get returns what insert stored: {stored:?} != {item:?}")
        });
        let missing = format!("{parent}/0000000000000000");
        let found: Option<R> = ok!(self, self.store.get(&missing).await, "get of a missing uid");
        self.check(found.is_none(), || "get of a missing uid is None".into());
    }

    async fn insert_rules<P: Resource + Debug>(&mut self) {
        let Some(parent) = self.parent::<P>().await else {
            return;
        };
        let item = self.item(&parent, 1, 1_000_000);
        ok!(self, self.store.insert(&item).await, "insert");
        let again = self.store.insert(&item).await;
        self.check(matches!(again, Err(StoreError::AlreadyExists)), || {
            format!("inserting a taken uid is AlreadyExists, not {again:?}")
        });
        if R::PARENT_TYPE == Some(P::TYPE) {
            let orphan = self.item(&format!("{parent}/0123456789abcdef"), 2, 1_000_000);
            let answer = self.store.insert(&orphan).await;
            self.check(matches!(answer, Err(StoreError::ParentNotFound)), || {
                format!("inserting under a missing parent is ParentNotFound, not {answer:?}")
            });
        }
    }

    /// Hierarchy filters, counts, and keyset pages in both directions of an
    /// order, each item exactly once.
    async fn lists<P: Resource + Debug>(&mut self) {
        let Some(parent) = self.parent::<P>().await else {
            return;
        };
        let mut items = Vec::new();
        for n in 0..7 {
            // Two items per time: ties are broken by uid.
            let item = self.item(&parent, n, 1_000_000 + (n as i64 / 2));
            ok!(self, self.store.insert(&item).await, "insert");
            items.push(item);
        }
        let by_time = R::ORDER_BY.contains(&"createTime");
        for descending in [false, true] {
            let mut order = Vec::new();
            if by_time {
                order.push(OrderBy {
                    field: "createTime".into(),
                    descending,
                });
            }
            order.push(OrderBy {
                field: "uid".into(),
                descending: false,
            });
            let mut expected: Vec<&R> = items.iter().collect();
            expected.sort_by(|a, b| {
                let time = |r: &R| r.sort_value("createTime");
                let by_time = if !by_time {
                    std::cmp::Ordering::Equal
                } else if descending {
                    time(b).cmp(&time(a))
                } else {
                    time(a).cmp(&time(b))
                };
                by_time.then_with(|| a.key().cmp(b.key()))
            });
            let expected: Vec<&str> = expected.iter().map(|r| r.key()).collect();
            let filter = Hierarchy::ChildrenOf(parent.clone());
            let mut seen = Vec::new();
            let mut after = None;
            loop {
                let query = ListQuery {
                    filter: filter.clone(),
                    matching: Default::default(),
                    order_by: order.clone(),
                    after: after.clone(),
                    skip: 0,
                    limit: 3,
                    byte_budget: u64::MAX,
                    public: None,
                };
                let page = ok!(self, self.store.list::<R>(&query).await, "list");
                self.check(page.total_count == 7, || {
                    format!(
                        "totalCount counts the filter's 7 items, not {}",
                        page.total_count
                    )
                });
                self.check(page.items.len() <= 3, || {
                    "a page holds at most `limit` items".into()
                });
                let Some(last) = page.items.last() else { break };
                after = Some(
                    order
                        .iter()
                        .map(|term| last.sort_value(&term.field))
                        .collect(),
                );
                let full = page.items.len() == 3;
                seen.extend(page.items.iter().map(|r| r.key().to_owned()));
                if !full || seen.len() > items.len() {
                    break;
                }
            }
            self.check(seen == expected, || {
                format!(
                    "keyset pages of 3 (descending: {descending}) list {expected:?}, not {seen:?}"
                )
            });
        }
        let within = Hierarchy::Within(vec![parent.clone()]);
        let query = ListQuery {
            filter: within,
            matching: Default::default(),
            order_by: vec![OrderBy {
                field: "uid".into(),
                descending: false,
            }],
            after: None,
            skip: 2,
            limit: 100,
            byte_budget: u64::MAX,
            public: None,
        };
        let page = ok!(
            self,
            self.store.list::<R>(&query).await,
            "list within a scope"
        );
        // The scope itself is an item when items nest.
        let within =
            items.len() + usize::from(R::PARENT_TYPE == Some(P::TYPE) && P::TYPE == R::TYPE);
        self.check(page.items.len() == within - 2, || {
            format!(
                "skip 2 of {within} leaves {}, not {}",
                within - 2,
                page.items.len()
            )
        });
    }

    async fn updates<P: Resource + Debug>(&mut self) {
        let Some(parent) = self.parent::<P>().await else {
            return;
        };
        let item = self.item(&parent, 3, 1_000_000);
        ok!(self, self.store.insert(&item).await, "insert");
        // Every writable field the sample sets, from another sample;
        // immutable fields keep their values.
        let mut patch = (self.sample)(4);
        for field in R::FIELDS
            .iter()
            .filter(|f| f.behavior.is_immutable() && !f.path.contains('.'))
        {
            patch.copy_field(&item, field.path);
        }
        let update = match Update::plan(None, patch.clone(), "item") {
            Ok(update) => update,
            Err(_) => return, // the sample sets nothing writable
        };
        let updated = ok!(self, self.store.update(item.key(), &update).await, "update");
        let stored: Option<R> = ok!(self, self.store.get(item.key()).await, "get");
        self.check(updated.is_some() && updated == stored, || {
            format!("update returns what it stored: {updated:?} != {stored:?}")
        });
        if let Some(stored) = &stored {
            for path in update.paths() {
                self.check(stored.field_eq(&patch, path), || {
                    format!("update copies `{path}` from the patch")
                });
            }
            self.check(stored.etag() != item.etag(), || {
                "update changes the etag".into()
            });
        }
        let missing = format!("{parent}/0000000000000000");
        let answer = ok!(
            self,
            self.store.update(&missing, &update).await,
            "update of a missing uid"
        );
        self.check(answer.is_none(), || {
            "update of a missing uid is None".into()
        });
        let mut stale = patch;
        stale.set_etag(item.etag().to_owned());
        if let Ok(update) = Update::plan(
            Some(&FieldMask {
                paths: update.paths().iter().map(|p| (*p).to_owned()).collect(),
            }),
            stale,
            "item",
        ) {
            let answer = self.store.update(item.key(), &update).await;
            self.check(
                matches!(&answer, Err(StoreError::Rejected(error)) if error.code() == protoapi_core::Code::Aborted),
                || format!("an update carrying a stale etag is rejected ABORTED, not {answer:?}"),
            );
        }
    }

    async fn deletes<P: Resource + Debug>(&mut self) {
        let Some(parent) = self.parent::<P>().await else {
            return;
        };
        let item = self.item(&parent, 5, 1_000_000);
        ok!(self, self.store.insert(&item).await, "insert");
        let stale = self.store.delete::<R>(item.key(), Some("stale")).await;
        self.check(matches!(stale, Err(StoreError::EtagMismatch)), || {
            format!("a delete with a stale etag is EtagMismatch, not {stale:?}")
        });
        let nests = R::PARENT_TYPE == Some(R::TYPE)
            && R::DEPENDENTS
                .iter()
                .any(|d| d.resource_type == R::TYPE && d.field == "parent");
        if nests {
            let child = self.item(item.key(), 6, 1_000_000);
            ok!(self, self.store.insert(&child).await, "insert a child");
            let blocked = self.store.delete::<R>(item.key(), None).await;
            self.check(matches!(&blocked, Err(StoreError::HasDependents(d)) if d.iter().any(|(_, uid)| uid == child.key())), || {
                format!("a delete while children exist is HasDependents naming them, not {blocked:?}")
            });
            ok!(
                self,
                self.store.delete::<R>(child.key(), None).await,
                "delete a child"
            );
        }
        let deleted = ok!(
            self,
            self.store.delete::<R>(item.key(), Some(item.etag())).await,
            "delete"
        );
        self.check(deleted, || "delete of a stored item is true".into());
        let gone: Option<R> = ok!(self, self.store.get(item.key()).await, "get");
        self.check(gone.is_none(), || "a deleted item is gone".into());
        let again = ok!(
            self,
            self.store.delete::<R>(item.key(), None).await,
            "delete again"
        );
        self.check(!again, || "delete of a missing uid is false".into());
    }
}
