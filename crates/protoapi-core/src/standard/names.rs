//! The standard methods of resources keyed by their name (AIP-122,
//! [`crate::names`]): what differs from the UIDP flows. Items are still
//! stored by [`Resource::key`], which such resources answer with their
//! `name`; so Get, Update and Delete run the same flows once the name is
//! checked against the pattern, and List's `parent` becomes the hierarchy
//! filter storage answers from its parent column.

use crate::error::{Error, FieldViolation};
use crate::names::{self, Pattern};
use crate::resource::Resource;

/// The pattern of `R` (one matching nothing for a UIDP-keyed resource,
/// whose generated code never calls these).
fn pattern<R: Resource>() -> Pattern {
    R::NAMES.unwrap_or(Pattern::new(&[]))
}

/// Checks a request field naming an item of `R` (`name`): INVALID_ARGUMENT
/// unless it matches the pattern, before any work that grows with it.
pub fn parse_name<R: Resource>(field: &str, name: &str) -> Result<(), Error> {
    pattern::<R>().parse_name(field, name)
}

/// Checks a Create's `parent` and, when the request has one, its
/// client-chosen id (AIP-133 `{singular}_id`, `id_field` its JSON name;
/// empty: the server chooses), reporting both problems at once.
pub fn parse_create<R: Resource>(parent: &str, id: Option<(&str, &str)>) -> Result<(), Error> {
    let mut violations: Vec<FieldViolation> = Vec::new();
    if let Err(error) = pattern::<R>().parse_parent(parent) {
        violations.extend(error.field_violations().iter().cloned());
    }
    if let Some((field, id)) = id.filter(|(_, id)| !id.is_empty())
        && let Err(error) = names::parse_id(field, id)
    {
        violations.extend(error.field_violations().iter().cloned());
    }
    match violations.is_empty() {
        true => Ok(()),
        false => Err(Error::invalid_fields(violations)),
    }
}

/// A fresh resource for a Create under `parent` (checked by
/// [`parse_create`]): validated, named `parent/collection/id` (`id` chosen
/// by the client, or by the server when empty), whatever name the body
/// gave (AIP-133), with server-set times and etag.
pub fn prepare_create<R: Resource>(
    parent: &str,
    id: &str,
    resource: Option<R>,
    body_field: &str,
) -> Result<R, Error> {
    let id = match id {
        "" => names::new_id(),
        id => id.to_owned(),
    };
    let mut item =
        super::create::new_item(resource, body_field, pattern::<R>().child(parent, &id))?;
    item.set_system_uid(names::new_uuid());
    Ok(item)
}

/// The item an Update with `allow_missing` (AIP-134) creates when the item
/// `name` (checked by [`parse_name`]) is missing: the request's body as its
/// Create would prepare it under `name`, the update mask ignored; and the
/// parent its Create is authorized on.
pub fn prepare_upsert<R: Resource>(
    name: &str,
    resource: Option<R>,
    body_field: &str,
) -> Result<(String, R), Error> {
    let parent = R::parent_key(name).unwrap_or_default().to_owned();
    let id = name.rsplit('/').next().unwrap_or_default();
    let item = prepare_create::<R>(&parent, id, resource, body_field)?;
    match item.key() == name {
        true => Ok((parent, item)),
        false => Err(Error::internal(format!(
            "`{name}` would be created as `{}`",
            item.key()
        ))),
    }
}

/// What a List's `parent` scopes the list to, as
/// [`super::ListRequest::within`] takes it (see [`Pattern::list_scope`]).
pub fn list_scope<R: Resource>(parent: &str) -> Result<Option<(&str, bool)>, Error> {
    pattern::<R>().list_scope(parent)
}
