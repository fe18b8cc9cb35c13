//! AIP-122 resource name patterns (`shelves/{shelf}/books/{book}`): collection/id pairs.

use crate::diagnostics::Location;

/// The pattern a name-keyed resource is served by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamePattern {
    /// As declared, e.g. `shelves/{shelf}/books/{book}`.
    pub pattern: String,
    /// The collection ids, outermost first: `["shelves", "books"]`.
    pub collections: Vec<String>,
    /// The collection ids of the resource's other patterns of the same
    /// collection (`folders/{folder}/contacts/{contact}` beside
    /// `projects/{project}/contacts/{contact}`), whose names it also takes.
    pub alternatives: Vec<Vec<String>>,
    /// Where the resource is declared.
    pub location: Location,
}

impl NamePattern {
    /// The parent's pattern (`shelves/{shelf}`), or `None` at the top level.
    pub fn parent_collections(&self) -> Option<&[String]> {
        (self.collections.len() > 1).then(|| &self.collections[..self.collections.len() - 1])
    }
}

/// `shelves/{shelf}/books/{book}` as its collection ids.
pub(super) fn parse_pattern(pattern: &str, location: &Location) -> Option<NamePattern> {
    let segments: Vec<&str> = pattern.split('/').collect();
    if !segments.len().is_multiple_of(2) {
        return None;
    }
    let mut collections = Vec::new();
    for pair in segments.chunks(2) {
        let (collection, variable) = (pair[0], pair[1]);
        let variable = variable.strip_prefix('{')?.strip_suffix('}')?;
        let collection_ok = collection.starts_with(|c: char| c.is_ascii_lowercase())
            && collection.chars().all(|c| c.is_ascii_alphanumeric());
        let variable_ok = variable.starts_with(|c: char| c.is_ascii_lowercase())
            && variable
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !collection_ok || !variable_ok {
            return None;
        }
        collections.push(collection.to_owned());
    }
    Some(NamePattern {
        pattern: pattern.to_owned(),
        collections,
        alternatives: Vec::new(),
        location: location.clone(),
    })
}

/// Whether `pattern` names a singleton (AIP-156): collection/id pairs then
/// one literal, `projects/{project}/config`.
pub(super) fn is_singleton(pattern: &str) -> bool {
    let Some((parent, last)) = pattern.rsplit_once('/') else {
        return false;
    };
    let literal = last.starts_with(|c: char| c.is_ascii_lowercase())
        && last.chars().all(|c| c.is_ascii_alphanumeric());
    literal && parse_pattern(parent, &Location::default()).is_some()
}

/// Why the generated code does not store `message`'s items, if it does
/// not: it is a singleton (AIP-156: pairs then one literal,
/// `projects/{project}/config`), or its name has another shape than
/// `collection/{id}` pairs (a literal id, `locations/global/hubs/{hub}`),
/// or it has neither `name` nor `uid`, or its `name`, `uid` or `etag` is
/// `optional`. Resources with a plain `uid` field are keyed by it, whatever
/// their pattern.
pub(super) fn unstored(message: &prost_reflect::MessageDescriptor) -> Option<&'static str> {
    let name = message.get_field_by_name("name");
    let named = name
        .as_ref()
        .is_some_and(|f| f.kind() == prost_reflect::Kind::String && !f.is_list());
    let resource = message
        .options()
        .extensions()
        .any(|(ext, _)| ext.full_name() == super::proto::RESOURCE_OPTION);
    if !resource {
        return None;
    }
    let etag = message.get_field_by_name("etag");
    if etag.is_some_and(|f| f.supports_presence() && f.kind().as_message().is_none()) {
        return Some("tagged by an `optional` etag (AIP-154 declares a plain `string etag`)");
    }
    let uid = message.get_field_by_name("uid");
    if uid
        .as_ref()
        .is_some_and(|f| f.supports_presence() && f.kind().as_message().is_none())
    {
        return Some("with an `optional` uid (AIP-148 declares a plain `string uid`)");
    }
    // Legacy views have no option of their own; UIDP keys take any pattern.
    if uid.is_some() {
        return None;
    }
    if !named {
        return name
            .is_none()
            .then_some("without a `name` field (or a `uid`) to key its items");
    }
    if name.is_some_and(|f| f.supports_presence()) {
        return Some("keyed by an `optional` name");
    }
    let pattern = super::proto::patterns(message).into_iter().next()?;
    if is_singleton(&pattern) {
        Some("a singleton (AIP-156)")
    } else if parse_pattern(&pattern, &Location::default()).is_none() {
        Some("named by a pattern of another shape than `collection/{id}` pairs")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{Location, NamePattern, is_singleton, parse_pattern};

    #[test]
    fn singletons_are_pairs_then_a_literal() {
        assert!(is_singleton("projects/{project}/config"));
        assert!(is_singleton("users/{user}/books/{book}/settings"));
        for not in [
            "config",
            "projects/{project}",
            "projects/{project}/{x}",
            "a/b/config",
        ] {
            assert!(!is_singleton(not), "{not:?} taken for a singleton");
        }
    }

    fn parse_pattern_at(pattern: &str) -> Option<NamePattern> {
        parse_pattern(pattern, &Location::default())
    }

    #[test]
    fn patterns_are_collection_id_pairs() {
        let books = parse_pattern_at("shelves/{shelf}/books/{book}").unwrap();
        assert_eq!(books.collections, ["shelves", "books"]);
        assert_eq!(books.parent_collections().unwrap(), ["shelves".to_owned()]);
        assert!(
            parse_pattern_at("shelves/{shelf}")
                .unwrap()
                .parent_collections()
                .is_none()
        );
        for bad in [
            "",
            "{uid}",
            "shelves",
            "shelves/{shelf}/settings",
            "shelves/{shelf=*}",
            "Shelves/{shelf}",
            "shelves/{Shelf}",
            "shelves/shelf",
            "shelves/{shelf}/books/{book}:x",
        ] {
            assert!(parse_pattern_at(bad).is_none(), "{bad:?} accepted");
        }
    }
}
