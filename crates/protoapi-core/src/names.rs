//! Resource names (AIP-122): the second key scheme beside UIDPs.
//!
//! A resource whose proto declares a `name` field and a pattern such as
//! `shelves/{shelf}/books/{book}` is keyed by its full name. The pattern is
//! kept as its collection ids (`["shelves", "books"]`); a name is those
//! collection ids each followed by one resource id. Its parent is the name
//! minus its last `collection/id` pair (none for a top-level collection),
//! so every item under `shelves/s1` sorts inside the key range
//! `[shelves/s1/, shelves/s10)`, as a UIDP's descendants do: storage keeps
//! the name in its key column and the parent's name in its parent column,
//! and lists a parent's children from an index.
//!
//! Resource ids are those AIP-122 recommends (`^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`),
//! so a name is at most 64 bytes per level plus its collection ids, and is
//! refused by its length before a byte of it is read.

use rand::RngCore;

use crate::error::{Error, excerpt};

/// The longest resource id (AIP-122).
pub const MAX_ID_LEN: usize = 63;

/// The id segment AIP-159 reads as "any": `shelves/-` in a List's parent.
pub const WILDCARD: &str = "-";

/// A resource name pattern: its collection ids, outermost first, and those
/// of the other patterns the resource declares for the same collection
/// under other parents (`folders/{folder}/contacts/{contact}` beside
/// `projects/{project}/contacts/{contact}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// e.g. `["shelves", "books"]` for `shelves/{shelf}/books/{book}`.
    pub collections: &'static [&'static str],
    /// The other patterns' collection ids, each ending with the same
    /// collection id as `collections`.
    pub alternatives: &'static [&'static [&'static str]],
}

impl Pattern {
    pub const fn new(collections: &'static [&'static str]) -> Self {
        Pattern {
            collections,
            alternatives: &[],
        }
    }

    /// The pattern, with `alternatives` also naming its items.
    pub const fn with_alternatives(self, alternatives: &'static [&'static [&'static str]]) -> Self {
        Pattern {
            alternatives,
            ..self
        }
    }

    /// Every pattern's collection ids, the first one first.
    fn all(&self) -> impl Iterator<Item = &'static [&'static str]> + '_ {
        std::iter::once(self.collections).chain(self.alternatives.iter().copied())
    }

    /// Whether items are created under a parent (the pattern has more than
    /// one `collection/{id}` pair).
    pub fn has_parent(&self) -> bool {
        self.collections.len() > 1
    }

    /// The collection id of the items themselves, e.g. `books`.
    pub fn collection(&self) -> &'static str {
        self.collections.last().copied().unwrap_or_default()
    }

    /// Every pattern's parent collection ids (empty for a top-level
    /// collection).
    fn parent_collections(&self) -> impl Iterator<Item = &'static [&'static str]> + '_ {
        self.all()
            .map(|collections| &collections[..collections.len().saturating_sub(1)])
    }

    /// Whether `name` is a name of one of the patterns with valid ids.
    pub fn matches(&self, name: &str) -> bool {
        self.all()
            .any(|collections| matches(collections, name, false))
    }

    /// Whether `parent` is a name of one of the parents' patterns.
    pub fn parent_matches(&self, parent: &str) -> bool {
        self.parent_collections()
            .any(|collections| matches(collections, parent, false))
    }

    /// The name of a new item with `id` under `parent` (empty for a
    /// top-level collection).
    pub fn child(&self, parent: &str, id: &str) -> String {
        match parent {
            "" => format!("{}/{id}", self.collection()),
            parent => format!("{parent}/{}/{id}", self.collection()),
        }
    }

    /// The forms of a name, for messages, each in backticks:
    /// `shelves/{shelf}/books/{book}` reads `` `shelves/*/books/*` ``; with
    /// alternatives, `` `projects/*/contacts/*`, `folders/*/contacts/*` ``.
    pub fn shapes(&self) -> String {
        quoted_shapes(self.all())
    }

    /// The forms of a parent's name, for messages, each in backticks.
    pub fn parent_shapes(&self) -> String {
        quoted_shapes(self.parent_collections())
    }

    /// Checks a request field holding a name of this pattern.
    pub fn parse_name(&self, field: &str, name: &str) -> Result<(), Error> {
        if self.matches(name) {
            return Ok(());
        }
        Err(Error::invalid_field(
            field,
            format!(
                "`{}` is not a resource name of the form {} (ids: lowercase letters, digits and `-`, \
                 starting with a letter, at most {MAX_ID_LEN} characters)",
                excerpt(name),
                self.shapes()
            ),
        ))
    }

    /// Checks a Create's `parent` (a name of the parent's pattern; empty
    /// for a top-level collection).
    pub fn parse_parent(&self, parent: &str) -> Result<(), Error> {
        if !self.has_parent() {
            return match parent {
                "" => Ok(()),
                _ => Err(Error::invalid_field(
                    "parent",
                    format!("{} are not created under a parent", self.collection()),
                )),
            };
        }
        if parent.is_empty() {
            return Err(Error::invalid_field("parent", "required"));
        }
        if self.parent_matches(parent) {
            return Ok(());
        }
        Err(Error::invalid_field(
            "parent",
            format!(
                "`{}` is not a parent name of the form {}",
                excerpt(parent),
                self.parent_shapes()
            ),
        ))
    }

    /// The part of the name space a List's `parent` scopes the list to:
    /// `None` for every item (an absent parent of a top-level collection,
    /// or a parent of wildcards only), else the name whose descendants are
    /// listed and whether they are its direct children. A wildcard id
    /// (AIP-159, `shelves/-`) is accepted at the end of the parent only,
    /// where it is a key range; anywhere else it is INVALID_ARGUMENT.
    pub fn list_scope<'a>(&self, parent: &'a str) -> Result<Option<(&'a str, bool)>, Error> {
        if !self.has_parent() {
            return match parent {
                "" => Ok(None),
                _ => Err(Error::invalid_field(
                    "parent",
                    format!("{} have no parent", self.collection()),
                )),
            };
        }
        if parent.is_empty() {
            return Err(Error::invalid_field("parent", "required"));
        }
        if !self
            .parent_collections()
            .any(|collections| matches(collections, parent, true))
        {
            return Err(Error::invalid_field(
                "parent",
                format!(
                    "`{}` is not a parent name of the form {} (`-` for any id, \
                     at its end only)",
                    excerpt(parent),
                    self.parent_shapes()
                ),
            ));
        }
        // The name before the first wildcard id: its `collection/` is the
        // one the wildcard stands for.
        let mut end = 0;
        for (index, segment) in parent.split('/').enumerate() {
            if index % 2 == 1 && segment == WILDCARD {
                let prefix = parent[..end].trim_end_matches('/');
                let scope = prefix.rsplit_once('/').map_or("", |(scope, _)| scope);
                return Ok((!scope.is_empty()).then_some((scope, false)));
            }
            end += segment.len() + 1;
        }
        Ok(Some((parent, true)))
    }

    /// The longest name of this pattern.
    pub fn max_len(&self) -> usize {
        self.all()
            .map(|collections| {
                collections
                    .iter()
                    .map(|collection| collection.len() + MAX_ID_LEN + 2)
                    .sum::<usize>()
                    .saturating_sub(1)
            })
            .max()
            .unwrap_or_default()
    }
}

/// Each pattern's form (`shelves/*/books/*`) in backticks, comma-separated.
fn quoted_shapes<'a>(patterns: impl Iterator<Item = &'a [&'a str]>) -> String {
    patterns
        .map(|collections| {
            let segments: Vec<_> = collections.iter().map(|c| format!("{c}/*")).collect();
            format!("`{}`", segments.join("/"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `name` is `collections` each followed by a valid id; with
/// `wildcards`, ids may be `-` from some point to the end.
fn matches(collections: &[&str], name: &str, wildcards: bool) -> bool {
    let longest: usize = collections.iter().map(|c| c.len() + MAX_ID_LEN + 2).sum();
    if collections.is_empty() || name.len() > longest {
        return false;
    }
    let mut segments = name.split('/');
    let mut wild = false;
    for collection in collections {
        if segments.next() != Some(*collection) {
            return false;
        }
        match segments.next() {
            Some(WILDCARD) if wildcards => wild = true,
            Some(id) if !wild && is_valid_id(id) => {}
            _ => return false,
        }
    }
    segments.next().is_none()
}

/// Whether `id` is a resource id AIP-122 recommends:
/// `^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`.
pub fn is_valid_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    bytes.len() <= MAX_ID_LEN
        && first.is_ascii_lowercase()
        && (last.is_ascii_lowercase() || last.is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// Checks a client-chosen id (AIP-133 `{singular}_id`) in request field `field`.
pub fn parse_id(field: &str, id: &str) -> Result<(), Error> {
    if is_valid_id(id) {
        return Ok(());
    }
    Err(Error::invalid_field(
        field,
        format!(
            "`{}` is not a resource id: lowercase letters, digits and `-`, starting with a letter, \
             not ending with `-`, at most {MAX_ID_LEN} characters",
            excerpt(id)
        ),
    ))
}

/// A new server-chosen id: a letter and 15 hex digits (64 random bits).
pub fn new_id() -> String {
    let mut bytes = [0u8; 8];
    rand::rng().fill_bytes(&mut bytes);
    let mut id = String::with_capacity(16);
    id.push(char::from(b'a' + bytes[0] % 26));
    for byte in &bytes[1..] {
        id.push_str(&format!("{byte:02x}"));
    }
    id.push(char::from_digit(u32::from(bytes[0] >> 4), 16).unwrap_or('0'));
    id
}

/// A new random UUID (version 4), AIP-148's form of a server-assigned
/// `uid`: `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`.
pub fn new_uuid() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The parent of a stored name: the name minus its last `collection/id`
/// pair; `None` for an item of a top-level collection.
pub fn parent(name: &str) -> Option<&str> {
    let (rest, _id) = name.rsplit_once('/')?;
    let (parent, _collection) = rest.rsplit_once('/')?;
    Some(parent)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOKS: Pattern = Pattern::new(&["shelves", "books"]);
    const SHELVES: Pattern = Pattern::new(&["shelves"]);
    const CONTACTS: Pattern = Pattern::new(&["projects", "contacts"])
        .with_alternatives(&[&["folders", "contacts"], &["accounts", "contacts"]]);

    #[test]
    fn alternative_patterns_name_items_under_each_parent() {
        for parent in ["projects/p1", "folders/f1", "accounts/a1"] {
            assert!(CONTACTS.parent_matches(parent), "{parent}");
            let name = CONTACTS.child(parent, "c1");
            assert_eq!(name, format!("{parent}/contacts/c1"));
            assert!(CONTACTS.matches(&name), "{name}");
            assert_eq!(CONTACTS.list_scope(parent).unwrap(), Some((parent, true)));
        }
        assert!(!CONTACTS.matches("billingAccounts/b1/contacts/c1"));
        assert!(!CONTACTS.matches("folders/f1/books/c1"));
        let refused = CONTACTS.parse_parent("billingAccounts/b1").unwrap_err();
        assert!(
            refused
                .message()
                .contains("`projects/*`, `folders/*`, `accounts/*`"),
            "{}",
            refused.message()
        );
    }

    #[test]
    fn uuids_are_version_4() {
        let uuid = new_uuid();
        let parts: Vec<&str> = uuid.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'), "{uuid}");
        assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"), "{uuid}");
        assert_ne!(uuid, new_uuid());
    }

    #[test]
    fn names_match_their_pattern_only() {
        assert!(BOOKS.matches("shelves/s1/books/b-2"));
        assert!(SHELVES.matches("shelves/fiction"));
        for bad in [
            "",
            "shelves/s1",
            "shelves/s1/books",
            "shelves/s1/books/",
            "shelves/s1/books/b1/x",
            "shelves/s1/authors/b1",
            "shelves//books/b1",
            "shelves/S1/books/b1",
            "shelves/1s/books/b1",
            "shelves/s-/books/b1",
            "shelves/-/books/b1",
            "/shelves/s1/books/b1",
        ] {
            assert!(!BOOKS.matches(bad), "{bad:?} accepted");
        }
        let long = format!("shelves/a{}/books/b", "a".repeat(MAX_ID_LEN));
        assert!(!BOOKS.matches(&long));
        let longest = format!(
            "shelves/a{}/books/b{}",
            "a".repeat(MAX_ID_LEN - 1),
            "b".repeat(MAX_ID_LEN - 1)
        );
        assert!(BOOKS.matches(&longest));
        assert_eq!(longest.len(), BOOKS.max_len());
    }

    #[test]
    fn parents_come_from_the_pattern() {
        assert_eq!(parent("shelves/s1/books/b1"), Some("shelves/s1"));
        assert_eq!(parent("shelves/s1"), None);
        assert!(BOOKS.has_parent() && !SHELVES.has_parent());
        assert!(BOOKS.parent_matches("shelves/s1"));
        assert!(!BOOKS.parent_matches("shelves/s1/books/b1"));
        assert_eq!(BOOKS.child("shelves/s1", "b1"), "shelves/s1/books/b1");
        assert_eq!(SHELVES.child("", "s1"), "shelves/s1");
        assert_eq!(BOOKS.shapes(), "`shelves/*/books/*`");
        assert_eq!(BOOKS.parent_shapes(), "`shelves/*`");
    }

    #[test]
    fn create_parents_are_checked() {
        assert!(BOOKS.parse_parent("shelves/s1").is_ok());
        for bad in [
            "",
            "shelves",
            "shelves/-",
            "books/b1",
            "shelves/s1/books/b1",
        ] {
            let error = BOOKS.parse_parent(bad).unwrap_err();
            assert_eq!(error.field_violations()[0].field, "parent", "{bad:?}");
        }
        assert!(SHELVES.parse_parent("").is_ok());
        assert!(SHELVES.parse_parent("shelves/s1").is_err());
    }

    #[test]
    fn list_parents_scope_the_list() {
        assert_eq!(
            BOOKS.list_scope("shelves/s1").unwrap(),
            Some(("shelves/s1", true))
        );
        assert_eq!(BOOKS.list_scope("shelves/-").unwrap(), None);
        assert_eq!(SHELVES.list_scope("").unwrap(), None);
        const PAGES: Pattern = Pattern::new(&["shelves", "books", "pages"]);
        assert_eq!(
            PAGES.list_scope("shelves/s1/books/-").unwrap(),
            Some(("shelves/s1", false))
        );
        assert_eq!(PAGES.list_scope("shelves/-/books/-").unwrap(), None);
        assert!(PAGES.list_scope("shelves/-/books/b1").is_err());
        assert!(BOOKS.list_scope("").is_err());
        assert!(BOOKS.list_scope("shelves/S").is_err());
        assert!(SHELVES.list_scope("shelves/s1").is_err());
    }

    #[test]
    fn ids_follow_aip_122() {
        for good in ["a", "a1", "a-b", "abc-123", &format!("a{}", "b".repeat(62))] {
            assert!(is_valid_id(good), "{good:?} refused");
        }
        for bad in [
            "",
            "1a",
            "-a",
            "a-",
            "A",
            "a_b",
            "a.b",
            "a/b",
            "é",
            &format!("a{}", "b".repeat(63)),
        ] {
            assert!(!is_valid_id(bad), "{bad:?} accepted");
        }
        assert!(parse_id("book_id", "Bad").is_err());
        for _ in 0..100 {
            let id = new_id();
            assert!(is_valid_id(&id) && id.len() == 16, "{id}");
        }
    }
}
