//! AIP-122 resource name patterns (`shelves/{shelf}/books/{book}`): collection/id pairs.

use crate::diagnostics::Location;

/// The pattern a name-keyed resource is served by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamePattern {
    /// As declared, e.g. `shelves/{shelf}/books/{book}`.
    pub pattern: String,
    /// The collection ids, outermost first: `["shelves", "books"]`.
    pub collections: Vec<String>,
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
        location: location.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::{Location, NamePattern, parse_pattern};

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
