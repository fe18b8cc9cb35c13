//! The uids a request carries, checked before any work that grows with them.

use crate::error::Error;
use crate::resource::Resource;
use crate::uidp;

/// A uid of `R`'s API given in request field `field`, checked before any
/// work that grows with it.
pub fn parse_uid<'a, R: Resource>(field: &str, uid: &'a str) -> Result<&'a str, Error> {
    uidp::parse_within(field, uid, R::MAX_DEPTH)
}

/// INVALID_ARGUMENT for a UIDP-valued field of `resource` (a request body)
/// longer than any uid of `R`'s API may be. Checked before authorization,
/// so such a value is refused alike with or without a token, before any
/// work that grows with it; the other rules are checked once authorized.
pub fn check_uid_lengths<R: Resource>(resource: Option<&R>, body_field: &str) -> Result<(), Error> {
    let Some(resource) = resource else {
        return Ok(());
    };
    let longest = uidp::max_len(R::MAX_DEPTH);
    let mut violations = Vec::new();
    for rule in R::TEXT_RULES.iter().filter(|rule| rule.uidp) {
        let path = crate::json::field_path(body_field, rule.field);
        for value in resource.text_values(rule.field) {
            if value.len() > longest
                && let Err(error) = uidp::parse_within(&path, value, R::MAX_DEPTH)
            {
                violations.extend(error.field_violations().iter().cloned());
            }
        }
    }
    match violations.is_empty() {
        true => Ok(()),
        false => Err(Error::invalid_fields(violations)),
    }
}

/// The parent of a `Create`, checked before any work that grows with it;
/// empty (a root) only where the collection does not require a parent.
pub fn parse_parent<R: Resource>(parent: &str, required: bool) -> Result<(), Error> {
    if parent.is_empty() && !required {
        return Ok(());
    }
    parse_uid::<R>("parent", parent).map(drop)
}
