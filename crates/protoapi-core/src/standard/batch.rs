//! `BatchGet` (AIP-231): the keys a batch names, checked before anything is
//! read. Generated methods then read each item as `Get` does (authorized
//! per item), in request order, all or nothing.

use crate::error::{Error, FieldViolation};
use crate::resource::Resource;

/// At most this many items per batch: each is authorized and read on its
/// own, so a batch costs what this many Gets do.
pub const MAX_BATCH_GET: usize = 1000;

/// The keys (uids, or names of a name-keyed resource) of a batch from
/// request field `field` (its JSON name), each checked as `Get` checks one; with a non-empty `parent`, each must be
/// directly under it (AIP-231). INVALID_ARGUMENT for more than
/// [`MAX_BATCH_GET`] keys, before any is looked at.
pub fn batch_uids<'a, R: Resource>(
    field: &str,
    keys: &'a [String],
    parent: &str,
) -> Result<Vec<&'a str>, Error> {
    if keys.len() > MAX_BATCH_GET {
        return Err(Error::invalid_fields(vec![FieldViolation::new(
            field,
            format!("at most {MAX_BATCH_GET} per batch, not {}", keys.len()),
        )]));
    }
    if !parent.is_empty() {
        match R::NAMES {
            Some(pattern) => pattern.parse_parent(parent)?,
            None => drop(super::parse_uid::<R>("parent", parent)?),
        }
    }
    let mut uids = Vec::with_capacity(keys.len());
    for (index, key) in keys.iter().enumerate() {
        let path = format!("{field}[{index}]");
        let uid = match R::NAMES {
            Some(pattern) => pattern.parse_name(&path, key).map(|()| key.as_str())?,
            None => super::parse_uid::<R>(&path, key)?,
        };
        if !parent.is_empty() && R::parent_key(uid) != Some(parent) {
            return Err(Error::invalid_fields(vec![FieldViolation::new(
                path,
                "is not directly under `parent`",
            )]));
        }
        uids.push(uid);
    }
    Ok(uids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;

    /// Any resource will do: only its `MAX_DEPTH` is read.
    type Thing = crate::standard::update::tests::Thing;

    const ROOT: &str = "1111111111111111111111111111111111111111";

    fn keys(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{ROOT}/{i:016x}")).collect()
    }

    #[test]
    fn batches_are_bounded_before_any_key_is_read() {
        let error = batch_uids::<Thing>("uids", &keys(MAX_BATCH_GET + 1), "").unwrap_err();
        assert_eq!(error.code(), Code::InvalidArgument);
        assert_eq!(
            batch_uids::<Thing>("uids", &keys(MAX_BATCH_GET), "")
                .unwrap()
                .len(),
            MAX_BATCH_GET
        );
    }

    #[test]
    fn each_key_is_a_uid_under_the_parent_given() {
        let mut named = keys(2);
        assert_eq!(
            batch_uids::<Thing>("uids", &named, ROOT).unwrap(),
            [&named[0], &named[1]]
        );
        let elsewhere = "2".repeat(40);
        assert_eq!(
            batch_uids::<Thing>("uids", &named, &elsewhere)
                .unwrap_err()
                .code(),
            Code::InvalidArgument
        );
        named.push("not a uid".into());
        let error = batch_uids::<Thing>("uids", &named, "").unwrap_err();
        assert!(format!("{error:?}").contains("uids[2]"), "{error:?}");
    }
}
