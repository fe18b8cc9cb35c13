//! UIDPs: hierarchical resource identifiers (CONTRACT §2).
//!
//! A root segment of 40 lowercase hex characters, then zero or more child
//! segments of 16, joined by `/`. A child's uid is its parent's uid plus a new
//! random segment, so every descendant of `X` sorts inside the byte range
//! `[X + "/", X + "0")` — which is what makes hierarchy filters index ranges.

use rand::RngCore;

use crate::error::Error;

const ROOT_LEN: usize = 40;
const CHILD_LEN: usize = 16;

/// Levels a hierarchy may have below its root unless an API declares
/// otherwise (`max_depth` in its annotation files).
pub const DEFAULT_MAX_DEPTH: usize = 16;

/// The length of a uid `levels` levels below its root: 312 characters at
/// [`DEFAULT_MAX_DEPTH`].
pub const fn max_len(levels: usize) -> usize {
    ROOT_LEN + levels * (CHILD_LEN + 1)
}

/// Checks that `value` is a well-formed UIDP at most [`DEFAULT_MAX_DEPTH`]
/// levels below its root.
pub fn is_valid(value: &str) -> bool {
    is_valid_within(value, DEFAULT_MAX_DEPTH)
}

/// Checks that `value` is a well-formed UIDP at most `max_depth` levels
/// below its root. A longer value is refused by its length alone, before a
/// byte of it is read, so the check costs at most [`max_len`] steps.
pub fn is_valid_within(value: &str, max_depth: usize) -> bool {
    if value.len() > max_len(max_depth) {
        return false;
    }
    let mut segments = value.split('/');
    let root_ok = segments
        .next()
        .is_some_and(|root| is_hex_segment(root, ROOT_LEN));
    root_ok && segments.all(|segment| is_hex_segment(segment, CHILD_LEN))
}

fn is_hex_segment(segment: &str, len: usize) -> bool {
    segment.len() == len
        && segment
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Validates a UIDP-valued request field of an API with the default depth,
/// naming it in the violation.
pub fn parse<'a>(field: &str, value: &'a str) -> Result<&'a str, Error> {
    parse_within(field, value, DEFAULT_MAX_DEPTH)
}

/// Validates a UIDP-valued request field of an API whose hierarchies are
/// at most `max_depth` levels deep, naming it in the violation.
pub fn parse_within<'a>(field: &str, value: &'a str, max_depth: usize) -> Result<&'a str, Error> {
    if is_valid_within(value, max_depth) {
        return Ok(value);
    }
    let excerpt = crate::error::excerpt(value);
    let description = if value.len() > max_len(max_depth) {
        format!(
            "`{excerpt}` is longer than a UIDP may be ({} characters: at most {max_depth} levels below a root)",
            max_len(max_depth)
        )
    } else {
        format!(
            "`{excerpt}` is not a UIDP (40 hex characters, then `/` + 16 hex characters per level)"
        )
    };
    Err(Error::invalid_field(field, description))
}

/// Number of segments: 1 for a root-level item.
pub fn depth(uid: &str) -> usize {
    uid.split('/').count()
}

/// Levels below its root: 0 for a root-level item.
pub fn levels(uid: &str) -> usize {
    uid.bytes().filter(|b| *b == b'/').count()
}

/// The parent uid, or `None` for a root.
pub fn parent(uid: &str) -> Option<&str> {
    uid.rsplit_once('/').map(|(parent, _)| parent)
}

/// The proper ancestors of a uid, nearest first (none for a root).
pub fn ancestors(uid: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(parent(uid), |uid| parent(uid))
}

/// The root a uid lies under (its first segment).
pub fn root(uid: &str) -> &str {
    uid.split_once('/').map_or(uid, |(root, _)| root)
}

/// A new root uid (20 random bytes).
pub fn new_root() -> String {
    random_hex::<20>()
}

/// A new uid directly under `parent` (8 random bytes).
pub fn new_child(parent: &str) -> String {
    format!("{parent}/{}", random_hex::<8>())
}

/// The half-open key range `[start, end)` holding every strict descendant.
pub fn descendant_range(uid: &str) -> (String, String) {
    (format!("{uid}/"), format!("{uid}0"))
}

fn random_hex<const N: usize>() -> String {
    let mut bytes = [0u8; N];
    rand::rng().fill_bytes(&mut bytes);
    let mut out = String::with_capacity(N * 2);
    for b in bytes {
        out.push(char::from_digit(u32::from(b >> 4), 16).unwrap());
        out.push(char::from_digit(u32::from(b & 0xf), 16).unwrap());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_uids_are_valid_and_nest() {
        let root = new_root();
        let child = new_child(&root);
        let grandchild = new_child(&child);
        assert!(is_valid(&root) && is_valid(&child) && is_valid(&grandchild));
        assert_eq!(depth(&grandchild), 3);
        assert_eq!(parent(&grandchild), Some(child.as_str()));
        assert_eq!(parent(&root), None);
        let (start, end) = descendant_range(&root);
        assert!(start <= grandchild && grandchild < end);
        assert!(!(start <= root && root < end));
    }

    #[test]
    fn malformed_uids_are_rejected() {
        let root = "a".repeat(40);
        for bad in [
            "",
            "abc",
            &"A".repeat(40),
            &"g".repeat(40),
            &format!("{root}/"),
            &format!("{root}/abc"),
            &format!("{root}/{}", "a".repeat(17)),
            &format!("/{root}"),
            &format!("{root}//{}", "a".repeat(16)),
        ] {
            assert!(!is_valid(bad), "{bad:?} accepted");
        }
        assert!(is_valid(&format!("{root}/{}", "0".repeat(16))));
    }

    #[test]
    fn depth_is_bounded() {
        let mut uid = new_root();
        for _ in 0..DEFAULT_MAX_DEPTH {
            uid = new_child(&uid);
        }
        assert_eq!(uid.len(), max_len(DEFAULT_MAX_DEPTH));
        assert_eq!(levels(&uid), DEFAULT_MAX_DEPTH);
        assert!(is_valid(&uid));
        let deeper = new_child(&uid);
        assert!(!is_valid(&deeper));
        assert!(is_valid_within(&deeper, DEFAULT_MAX_DEPTH + 1));
        let error = parse("uid", &deeper).unwrap_err();
        assert!(
            error.field_violations()[0]
                .description
                .contains("longer than a UIDP may be"),
            "{error:?}"
        );
    }
}
