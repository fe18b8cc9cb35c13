//! What generated code tells the runtime about each resource message.
//!
//! The generator implements [`Resource`] for every message carrying a
//! `google.api.resource` option: its type name, the behaviour of each field
//! (from `google.api.field_behavior`), typed field copying for update masks
//! and sort keys for `order_by`. The standard-method flows (the `standard`
//! module, a layer above this one) are written once against this trait.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use prost_reflect::ReflectMessage;
use prost_types::Timestamp;
use sha2::{Digest, Sha256};

use crate::error::{FieldViolation, excerpt};

/// How a field behaves (AIP-203), as declared in the proto.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behavior {
    /// Writable, optional.
    Optional,
    /// Must be set on create.
    Required,
    /// Set by the server; ignored in requests, never named in a mask.
    OutputOnly,
    /// Set on create; may be named in a mask only with its current value.
    Immutable,
    /// REQUIRED and IMMUTABLE: must be set on create, and never changes.
    RequiredImmutable,
}

impl Behavior {
    /// Whether it must be set on create (and not cleared by an update).
    pub fn is_required(self) -> bool {
        matches!(self, Behavior::Required | Behavior::RequiredImmutable)
    }

    /// Whether it keeps the value it was created with.
    pub fn is_immutable(self) -> bool {
        matches!(self, Behavior::Immutable | Behavior::RequiredImmutable)
    }
}

/// One field (or nested field) of a resource.
#[derive(Clone, Copy, Debug)]
pub struct FieldSpec {
    /// Dotted proto path, e.g. `resource_limits.clusters`.
    pub path: &'static str,
    /// Dotted JSON path, e.g. `resourceLimits.clusters`.
    pub json_path: &'static str,
    pub behavior: Behavior,
}

/// Items of another collection that keep an item from being deleted: those
/// whose `field` holds its uid.
#[derive(Clone, Copy, Debug)]
pub struct Dependent {
    /// The collection id, e.g. `bookCopies`.
    pub collection: &'static str,
    /// The resource type reported in the `PreconditionFailure`.
    pub resource_type: &'static str,
    /// The JSON name of the referring field; `parent` for children.
    pub field: &'static str,
    /// The capability that lets a caller see a dependent (its collection's
    /// Get permission; `None`: anyone may); dependents a caller may not see
    /// are not named to it.
    pub read_capability: Option<&'static str>,
}

/// Where the target of a reference field may live, relative to the parent
/// the referring item is created under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Directly under that parent or one of its ancestors.
    Ancestors,
    /// Anywhere under the same root.
    Root,
    /// Any item of the target's collection: a reference between resources
    /// keyed by names (declared by `google.api.resource_reference`), which
    /// no UIDP hierarchy scopes. Storage checks it on create and on every
    /// update that changes it.
    Anywhere,
}

/// A field holding the key of an item of another collection (declared in
/// the annotation files, or by the field's `google.api.resource_reference`).
/// Generated create methods of UIDP-keyed resources check that the target
/// exists and is within [`Reach`] (or directly under a shared scope, see
/// `ApiContext::with_shared_scope`); storage checks again inside its insert
/// transaction, and inside the update transaction of an update that
/// changes the field.
#[derive(Clone, Copy, Debug)]
pub struct Reference {
    /// The JSON name of the referring field.
    pub field: &'static str,
    /// How violations name it, e.g. `book.shelf`.
    pub path: &'static str,
    /// The collection id of the target, e.g. `roles`.
    pub collection: &'static str,
    /// The resource type of the target, e.g. `library.example.com/Shelf`.
    pub resource_type: &'static str,
    pub reach: Reach,
}

/// The value rules of one text field (or each value of a repeated one),
/// declared in the annotation files and checked on create and update.
#[derive(Clone, Copy, Debug)]
pub struct TextRule {
    /// The JSON name of the field.
    pub field: &'static str,
    /// The only values allowed, when restricted.
    pub allowed: Option<&'static [&'static str]>,
    /// Each value is a UIDP.
    pub uidp: bool,
    /// At most this many characters.
    pub max_length: Option<usize>,
    /// At most this many bytes of UTF-8.
    pub max_bytes: Option<usize>,
    /// No control characters.
    pub printable: bool,
    /// The values are capabilities a caller may add only if it holds them
    /// at the item's parent (no escalation).
    pub caller_must_hold: bool,
}

impl TextRule {
    /// A field with no rules, to build others from.
    pub const NONE: TextRule = TextRule {
        field: "",
        allowed: None,
        uidp: false,
        max_length: None,
        max_bytes: None,
        printable: false,
        caller_must_hold: false,
    };

    /// Violations of this rule by one non-empty `value` at `path`; UIDP
    /// values may be at most `max_depth` levels deep.
    pub fn check(
        &self,
        path: &str,
        value: &str,
        max_depth: usize,
        violations: &mut Vec<FieldViolation>,
    ) {
        let mut violation = |description: String| {
            violations.push(FieldViolation::new(path, description));
        };
        if let Some(allowed) = self.allowed
            && !allowed.contains(&value)
        {
            violation(format!(
                "`{}` is not one of: {}",
                excerpt(value),
                allowed.join(", ")
            ));
        }
        if self.uidp && !crate::uidp::is_valid_within(value, max_depth) {
            violation(format!("`{}` is not a UIDP", excerpt(value)));
        }
        if let Some(max) = self.max_length
            && value.chars().count() > max
        {
            violation(format!("at most {max} characters"));
        }
        if let Some(max) = self.max_bytes
            && value.len() > max
        {
            violation(format!("at most {max} bytes"));
        }
        if self.printable && value.chars().any(char::is_control) {
            violation("must not contain control characters".to_owned());
        }
    }
}

/// A value an item is ordered by.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(untagged)]
pub enum SortValue {
    Int(i64),
    Text(String),
}

/// The rule that makes an item of a collection readable by anyone (Get and
/// List, with or without a token); callers holding the read capability see
/// every item. Storage keeps the field in a column and decides the rule from
/// that column's value ([`SortValue`]), so a list and a Get agree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Public {
    /// Items whose bool field (JSON name) is true (annotation `public_if`).
    If(&'static str),
    /// Items whose `google.protobuf.Timestamp` field (JSON name) is set and
    /// not in the future (annotation `public_after`): drafts (unset) and
    /// embargoed items (a time still to come) are not public. Storage keeps
    /// an unset timestamp as 0, so the epoch itself reads as unset.
    After(&'static str),
}

impl Public {
    /// The field (JSON name) the rule reads.
    pub fn field(self) -> &'static str {
        match self {
            Public::If(field) | Public::After(field) => field,
        }
    }

    /// Whether an item whose field has `value` (its sort value, the
    /// storage column's value) is public at `now` (microseconds since the
    /// epoch).
    pub fn admits(self, value: &SortValue, now: i64) -> bool {
        match (self, value) {
            (Public::If(_), SortValue::Int(flag)) => *flag == 1,
            (Public::After(_), SortValue::Int(time)) => *time != 0 && *time <= now,
            (_, SortValue::Text(_)) => false,
        }
    }
}

/// A resource message served by standard methods.
pub trait Resource: ReflectMessage + Default + Clone + PartialEq + Send + Sync + 'static {
    /// The resource type, e.g. `library.example.com/Shelf`.
    const TYPE: &'static str;
    /// The collection id, e.g. `shelves` (the plural of the resource
    /// pattern); SQL storage names its table after it.
    const COLLECTION: &'static str;
    /// Every field and nested field, with its behaviour.
    const FIELDS: &'static [FieldSpec];
    /// Fields `order_by` may name (JSON names); `uid` is always allowed.
    const ORDER_BY: &'static [&'static str];
    /// Default and maximum page size of lists.
    const PAGE_SIZES: PageSizes = PageSizes::DEFAULT;
    /// Hierarchy filters lists accept (`children_of`, `descendants_of`).
    const FILTERS: &'static [&'static str] = &["children_of", "descendants_of"];
    /// Fields (JSON names) a list's AIP-160 `filter` may compare
    /// (checked by the `filter` module): single strings, integers, booleans, enums and
    /// timestamps, each kept in a storage column.
    const FILTERABLE: &'static [&'static str] = &[];
    /// What keeps an item from being deleted.
    const DEPENDENTS: &'static [Dependent] = &[];
    /// Fields that refer to items of other collections.
    const REFERENCES: &'static [Reference] = &[];
    /// Value rules of text fields.
    const TEXT_RULES: &'static [TextRule] = &[];
    /// Which items anyone may read (Get and List), with or without a token
    /// (annotation `public_if` or `public_after`), if any.
    const PUBLIC: Option<Public> = None;
    /// The resource type of the items this one's are created under, when the
    /// API stores them (named in the answer to a missing parent).
    const PARENT_TYPE: Option<&'static str> = None;
    /// Levels the hierarchy may have below its root (`max_depth` in the
    /// annotation files): deeper creates are refused, and longer uids are
    /// refused wherever they are given, before anything that grows with them.
    const MAX_DEPTH: usize = crate::uidp::DEFAULT_MAX_DEPTH;
    /// Whether items directly under a shared scope
    /// (`ApiContext::with_shared_scope`) may be referenced
    /// from every root; only the administrator writes them.
    const SHARED: bool = false;
    /// The resource name pattern when items are keyed by their `name`
    /// (AIP-122, [`crate::names`]); `None` for UIDP-keyed items. Either way
    /// [`Resource::key`] returns the storage key: the uid, or the name.
    const NAMES: Option<crate::names::Pattern> = None;
    /// The JSON name of the timestamp marking soft-deleted items (AIP-164:
    /// `deleteTime`, when the API declares `Undelete<X>`), kept in a
    /// column; `None` when deletes are final. Lists hide items whose time
    /// is set unless asked to show them (the store's `Matching::live_only`).
    const DELETE_TIME: Option<&'static str> = None;

    /// The key of the item a stored item with key `key` lives under, if
    /// any: its UIDP's parent, or its name minus the last `collection/id`.
    fn parent_key(key: &str) -> Option<&str> {
        match Self::NAMES {
            Some(_) => crate::names::parent(key),
            None => crate::uidp::parent(key),
        }
    }

    /// The item's storage key: its `uid` (a UIDP), or its `name` when
    /// items are keyed by names ([`Resource::NAMES`]). Stores, page tokens
    /// and errors name items by it.
    fn key(&self) -> &str;
    fn set_key(&mut self, key: String);

    /// Sets AIP-148's server-assigned `uid` of a resource keyed by names
    /// (set once, on create); resources without one ignore it.
    fn set_system_uid(&mut self, _uid: String) {}
    fn create_time(&self) -> Option<&Timestamp>;
    fn set_create_time(&mut self, time: Timestamp);
    fn update_time(&self) -> Option<&Timestamp>;
    fn set_update_time(&mut self, time: Timestamp);
    fn etag(&self) -> &str;
    fn set_etag(&mut self, etag: String);
    /// When the item was soft-deleted (AIP-164); always `None` when
    /// [`Self::DELETE_TIME`] is.
    fn delete_time(&self) -> Option<&Timestamp> {
        None
    }
    /// Marks the item soft-deleted, or live again with `None`.
    fn set_delete_time(&mut self, time: Option<Timestamp>) {
        let _ = time;
    }

    /// Copies the field at `path` (a proto path from [`Self::FIELDS`]) from `source`.
    fn copy_field(&mut self, source: &Self, path: &str);

    /// Whether the field at `path` holds a value other than its default.
    fn has_field(&self, path: &str) -> bool;

    /// Whether the field at `path` has the same value in both.
    fn field_eq(&self, other: &Self, path: &str) -> bool;

    /// The value of a top-level scalar field (JSON name), for ordering and
    /// for storage columns.
    fn sort_value(&self, field: &str) -> SortValue;

    /// The values of a text field named by [`Self::TEXT_RULES`] (JSON
    /// name): none when empty, every one of a repeated field.
    fn text_values(&self, field: &str) -> Vec<&str> {
        let _ = field;
        Vec::new()
    }

    /// Violations of [`Self::TEXT_RULES`]; paths are prefixed with `body_field`.
    fn check_values(&self, body_field: &str) -> Vec<FieldViolation> {
        let mut violations = Vec::new();
        for rule in Self::TEXT_RULES {
            let path = crate::json::field_path(body_field, rule.field);
            for value in self.text_values(rule.field) {
                rule.check(&path, value, Self::MAX_DEPTH, &mut violations);
            }
        }
        violations
    }

    /// Whether some field holds capabilities whoever writes them must hold.
    fn grants_capabilities() -> bool {
        Self::TEXT_RULES.iter().any(|rule| rule.caller_must_hold)
    }

    /// The values of the fields declared `caller_must_hold`.
    fn must_hold(&self) -> Vec<&str> {
        Self::TEXT_RULES
            .iter()
            .filter(|rule| rule.caller_must_hold)
            .flat_map(|rule| self.text_values(rule.field))
            .collect()
    }

    /// An upper bound of this item's size in canonical JSON, for list byte
    /// budgets. Generated resources add up their strings' escapes and a
    /// margin per field to the encoded size; this default assumes the worst.
    fn json_len_bound(&self) -> usize {
        self.encoded_len() * 6 + 1024
    }

    /// Whether anyone may read this item now ([`Self::PUBLIC`]).
    fn is_public(&self) -> bool {
        self.is_public_at(crate::time::now_micros())
    }

    /// Whether anyone may read this item at `now` (microseconds since the
    /// epoch), as storage decides it from the item's column.
    fn is_public_at(&self, now: i64) -> bool {
        Self::PUBLIC.is_some_and(|rule| rule.admits(&self.sort_value(rule.field()), now))
    }

    /// The ErrorInfo domain of this resource's API (`library.example.com`).
    fn domain() -> &'static str {
        Self::TYPE.split('/').next().unwrap_or(Self::TYPE)
    }

    /// The field spec for a mask path given in either spelling.
    fn field(path: &str) -> Option<&'static FieldSpec> {
        Self::FIELDS
            .iter()
            .find(|f| f.path == path || f.json_path == path)
    }

    /// The REQUIRED fields missing from this resource: top-level ones, and
    /// nested ones whose enclosing message is set.
    fn missing_required(&self) -> Vec<&'static FieldSpec> {
        Self::FIELDS
            .iter()
            .filter(|f| f.behavior.is_required() && !self.has_field(f.path))
            .filter(|f| {
                f.path
                    .rsplit_once('.')
                    .is_none_or(|(parent, _)| self.has_field(parent))
            })
            .collect()
    }

    /// Resets every OUTPUT_ONLY field to what `stored` holds (default when none).
    fn keep_output_only(&mut self, stored: Option<&Self>) {
        let default = Self::default();
        let source = stored.unwrap_or(&default);
        for field in Self::FIELDS
            .iter()
            .filter(|f| f.behavior == Behavior::OutputOnly)
        {
            self.copy_field(source, field.path);
        }
    }
}

/// Default and maximum `page_size` of a collection.
#[derive(Clone, Copy, Debug)]
pub struct PageSizes {
    pub default: u32,
    pub max: u32,
}

impl PageSizes {
    /// The contract's defaults: 50 items, at most 200.
    pub const DEFAULT: PageSizes = PageSizes {
        default: 50,
        max: 200,
    };
}

impl Default for PageSizes {
    fn default() -> Self {
        PageSizes::DEFAULT
    }
}

/// A content hash of the resource (its etag field excluded).
pub fn etag<R: Resource>(resource: &R) -> String {
    let mut unstamped = resource.clone();
    unstamped.set_etag(String::new());
    let digest = Sha256::digest(unstamped.encode_to_vec());
    URL_SAFE_NO_PAD.encode(&digest[..12])
}

#[cfg(test)]
mod public_tests {
    use super::{Public, SortValue};

    #[test]
    fn public_if_admits_true_only() {
        let rule = Public::If("public");
        assert!(rule.admits(&SortValue::Int(1), 0));
        assert!(!rule.admits(&SortValue::Int(0), 0));
        assert!(!rule.admits(&SortValue::Text("1".into()), 0));
    }

    #[test]
    fn public_after_admits_set_times_not_in_the_future() {
        let rule = Public::After("published");
        let now = 1_700_000_000_000_000;
        assert!(rule.admits(&SortValue::Int(now - 1), now));
        assert!(rule.admits(&SortValue::Int(now), now));
        assert!(rule.admits(&SortValue::Int(-1), now), "before the epoch");
        assert!(!rule.admits(&SortValue::Int(now + 1), now), "embargoed");
        assert!(!rule.admits(&SortValue::Int(0), now), "unset (a draft)");
        assert_eq!(rule.field(), "published");
    }
}
