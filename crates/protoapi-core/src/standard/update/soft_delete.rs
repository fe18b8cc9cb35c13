//! Soft deletes (AIP-164): [`Update::soft_delete`] and [`Update::undelete`]
//! applied to a stored item, a change of a deleted item refused, and the
//! memory store's lists hiding deleted items unless asked.

use prost_reflect::{MessageDescriptor, ReflectMessage};
use prost_types::Timestamp;

use crate::error::Code;
use crate::mask::Update;
use crate::memory::MemoryStore;
use crate::paging::QueryBinding;
use crate::resource::{Behavior, FieldSpec, Resource, SortValue};
use crate::store::{Backend, Hierarchy, ListQuery, Matching, OrderBy};

/// A resource with soft deletes.
#[derive(Clone, PartialEq, prost::Message)]
struct Note {
    #[prost(string, tag = "1")]
    uid: String,
    #[prost(string, tag = "2")]
    text: String,
    #[prost(message, optional, tag = "3")]
    update_time: Option<Timestamp>,
    #[prost(string, tag = "4")]
    etag: String,
    #[prost(message, optional, tag = "5")]
    delete_time: Option<Timestamp>,
}

/// Not read by these tests (no JSON): the update tests' descriptor.
impl ReflectMessage for Note {
    fn descriptor(&self) -> MessageDescriptor {
        super::descriptor()
    }
}

impl Resource for Note {
    const TYPE: &'static str = "test.example.com/Note";
    const COLLECTION: &'static str = "notes";
    const FIELDS: &'static [FieldSpec] = &[
        super::spec("uid", "uid", Behavior::OutputOnly),
        super::spec("text", "text", Behavior::Optional),
        super::spec("update_time", "updateTime", Behavior::OutputOnly),
        super::spec("etag", "etag", Behavior::OutputOnly),
        super::spec("delete_time", "deleteTime", Behavior::OutputOnly),
    ];
    const ORDER_BY: &'static [&'static str] = &[];
    const DELETE_TIME: Option<&'static str> = Some("deleteTime");

    fn key(&self) -> &str {
        &self.uid
    }
    fn set_key(&mut self, key: String) {
        self.uid = key;
    }
    fn create_time(&self) -> Option<&Timestamp> {
        None
    }
    fn set_create_time(&mut self, _: Timestamp) {}
    fn update_time(&self) -> Option<&Timestamp> {
        self.update_time.as_ref()
    }
    fn set_update_time(&mut self, time: Timestamp) {
        self.update_time = Some(time);
    }
    fn etag(&self) -> &str {
        &self.etag
    }
    fn set_etag(&mut self, etag: String) {
        self.etag = etag;
    }
    fn delete_time(&self) -> Option<&Timestamp> {
        self.delete_time.as_ref()
    }
    fn set_delete_time(&mut self, time: Option<Timestamp>) {
        self.delete_time = time;
    }
    fn copy_field(&mut self, source: &Self, path: &str) {
        if path == "text" {
            self.text.clone_from(&source.text);
        }
    }
    fn has_field(&self, path: &str) -> bool {
        path == "text" && !self.text.is_empty()
    }
    fn field_eq(&self, other: &Self, path: &str) -> bool {
        path != "text" || self.text == other.text
    }
    fn sort_value(&self, _field: &str) -> SortValue {
        SortValue::Text(self.uid.clone())
    }
}

fn note(uid: &str) -> Note {
    Note {
        uid: uid.into(),
        text: "hello".into(),
        etag: format!("\"{uid}\""),
        ..Default::default()
    }
}

fn change() -> Update<Note> {
    let patch = Note {
        text: "changed".into(),
        ..Default::default()
    };
    Update::plan(None, patch, "note").unwrap()
}

#[test]
fn a_soft_delete_marks_the_item_once_and_an_undelete_clears_it() {
    let live = note("a");
    let deleted = Update::soft_delete(None).apply(&live).unwrap();
    assert!(deleted.delete_time.is_some());
    assert!(deleted.update_time.is_some());
    assert_ne!(deleted.etag, live.etag);
    assert_eq!(deleted.text, live.text);
    // Deleted again: NOT_FOUND; changed: FAILED_PRECONDITION.
    let again = Update::soft_delete(None).apply(&deleted).unwrap_err();
    assert_eq!(again.code(), Code::NotFound);
    let changed = change().apply(&deleted).unwrap_err();
    assert_eq!(changed.code(), Code::FailedPrecondition);
    // A stale etag is ABORTED; the current one undeletes.
    let stale = Update::undelete(Some("\"stale\""))
        .apply(&deleted)
        .unwrap_err();
    assert_eq!(stale.code(), Code::Aborted);
    let back = Update::undelete(Some(&deleted.etag))
        .apply(&deleted)
        .unwrap();
    assert!(back.delete_time.is_none());
    assert_ne!(back.etag, deleted.etag);
    // A live item is not undeleted (ALREADY_EXISTS), but changes.
    let live_again = Update::undelete(None).apply(&back).unwrap_err();
    assert_eq!(live_again.code(), Code::AlreadyExists);
    assert_eq!(change().apply(&back).unwrap().text, "changed");
}

fn query(live_only: bool, limit: u64) -> ListQuery {
    ListQuery {
        filter: Hierarchy::All,
        matching: Matching {
            live_only,
            ..Matching::default()
        },
        order_by: vec![OrderBy {
            field: "uid".into(),
            descending: false,
        }],
        after: None,
        skip: 0,
        limit,
        byte_budget: u64::MAX,
        public: None,
    }
}

#[tokio::test]
async fn memory_lists_hide_deleted_items_unless_asked() {
    let store = MemoryStore::new();
    for uid in ["a", "b", "c"] {
        store.insert(&note(uid)).await.unwrap();
    }
    let update = Update::soft_delete(None);
    store.update::<Note>("b", &update).await.unwrap().unwrap();
    let page = store.list::<Note>(&query(true, 1)).await.unwrap();
    assert_eq!((page.items[0].uid.as_str(), page.total_count), ("a", 2));
    let page = store.list::<Note>(&query(true, 10)).await.unwrap();
    let uids: Vec<&str> = page.items.iter().map(|n| n.uid.as_str()).collect();
    assert_eq!(uids, ["a", "c"]);
    let page = store.list::<Note>(&query(false, 10)).await.unwrap();
    assert_eq!((page.items.len(), page.total_count), (3, 3));
    // Still read by its key.
    let read = store.get::<Note>("b").await.unwrap().unwrap();
    assert!(read.delete_time.is_some());
}

#[test]
fn page_tokens_of_lists_hiding_deleted_items_page_only_them() {
    let binding = |live_only| {
        let query = query(live_only, 1);
        QueryBinding::new(
            Note::TYPE,
            &query.filter,
            &query.matching,
            &query.order_by,
            false,
        )
    };
    assert_ne!(binding(true), binding(false));
}
