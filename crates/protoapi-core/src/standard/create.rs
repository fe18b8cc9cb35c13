//! `Create` (AIP-133): a fresh resource and the references it makes.

use super::errors::unusable;
use super::{ApiContext, parse_uid, store_error};
use crate::context::Caller;
use crate::error::{Code, Error, FieldViolation};
use crate::resource::etag;
use crate::resource::{Reference, Resource};
use crate::store::StoreError;
use crate::{time, uidp};
use std::future::Future;

/// A fresh resource for `Create`: validated, with a new uid under `parent`
/// and server-set times and etag.
pub fn prepare_create<R: Resource>(
    caller: &Caller,
    parent: &str,
    resource: Option<R>,
    body_field: &str,
) -> Result<R, Error> {
    let uid = if parent.is_empty() {
        if !caller.is_admin() {
            return Err(Error::new(
                Code::PermissionDenied,
                "ROOT_CREATE_DENIED",
                format!(
                    "only the administrator may create a {} without a parent",
                    R::TYPE.rsplit('/').next().unwrap_or(R::TYPE)
                ),
            ));
        }
        uidp::new_root()
    } else {
        let parent = parse_uid::<R>("parent", parent)?;
        if uidp::levels(parent) >= R::MAX_DEPTH {
            return Err(Error::invalid_field(
                "parent",
                format!(
                    "items may be nested at most {} levels below their root; `{}` is at that depth",
                    R::MAX_DEPTH,
                    crate::error::excerpt(parent)
                ),
            ));
        }
        uidp::new_child(parent)
    };
    new_item(resource, body_field, uid)
}

/// The body of a Create (`resource`, at request field `body_field`) as a new
/// item keyed `key`: output-only fields cleared, REQUIRED fields and value
/// rules checked (every violation at once), times and etag set.
pub(super) fn new_item<R: Resource>(
    resource: Option<R>,
    body_field: &str,
    key: String,
) -> Result<R, Error> {
    let mut resource = resource.unwrap_or_default();
    resource.keep_output_only(None);
    let mut violations: Vec<FieldViolation> = resource
        .missing_required()
        .into_iter()
        .map(|f| FieldViolation::new(crate::json::field_path(body_field, f.json_path), "required"))
        .collect();
    violations.extend(resource.check_values(body_field));
    if !violations.is_empty() {
        return Err(Error::invalid_fields(violations));
    }
    resource.set_key(key);
    let now = time::now();
    resource.set_create_time(now);
    resource.set_update_time(now);
    resource.set_etag(etag(&resource));
    Ok(resource)
}

/// Resolves reference field `reference` of an item created under `parent`
/// whose value is `uid`: the target, or the violation to report. `fetch`
/// (reading the target) runs only when the target is within reach, and
/// every failure reads the same, so nothing is learnt about items under
/// other roots.
pub async fn resolve_reference<T: Resource>(
    context: &ApiContext,
    parent: &str,
    reference: &Reference,
    uid: &str,
    fetch: impl Future<Output = Result<Option<T>, StoreError>>,
) -> Result<Result<T, FieldViolation>, Error> {
    let violation = |description: String| Ok(Err(FieldViolation::new(reference.path, description)));
    if uid.is_empty() {
        return violation("required".to_owned());
    }
    if !uidp::is_valid_within(uid, T::MAX_DEPTH)
        || !context.reaches::<T>(reference.reach, parent, uid)
    {
        return violation(unusable(reference));
    }
    match fetch
        .await
        .map_err(|error| store_error::<T>(error, uid, ""))?
    {
        Some(target) => Ok(Ok(target)),
        None => violation(unusable(reference)),
    }
}
