//! Storage errors as the error model answers them.

use crate::error::{Code, Error};
use crate::resource::{Reach, Reference, Resource};
use crate::store::StoreError;

/// The API error for a storage failure on a resource of type `R`.
pub fn store_error<R: Resource>(error: StoreError, uid: &str, parent: &str) -> Error {
    match error {
        StoreError::ParentNotFound => {
            let error = Error::new(
                Code::NotFound,
                "PARENT_NOT_FOUND",
                format!("parent `{parent}` not found"),
            );
            match R::PARENT_TYPE {
                Some(parent_type) => error.with_resource(parent_type, parent),
                None => error,
            }
        }
        StoreError::DuplicateRequest => Error::new(
            Code::Aborted,
            "REQUEST_IN_PROGRESS",
            "a request with this `requestId` was written meanwhile; retry it to get its answer",
        ),
        StoreError::OperationEnded => Error::new(
            Code::Aborted,
            "OPERATION_ENDED",
            "the operation ended (cancelled, or abandoned) before its write; nothing was written",
        ),
        StoreError::AlreadyExists => Error::new(
            Code::AlreadyExists,
            "ALREADY_EXISTS",
            format!("{} `{uid}` already exists", R::TYPE),
        )
        .with_resource(R::TYPE, uid),
        StoreError::HasDependents(dependents) => Error::failed_precondition(
            "HAS_DEPENDENTS",
            format!(
                "{} `{uid}` still has dependent resources; delete them first",
                R::TYPE
            ),
            dependents
                .into_iter()
                .map(|(kind, name)| {
                    crate::error::PreconditionViolation::new(
                        "DEPENDENT_RESOURCE",
                        name,
                        format!("{kind} depends on this resource"),
                    )
                })
                .collect(),
        ),
        StoreError::ReferenceNotFound(field) => {
            match R::REFERENCES.iter().find(|r| r.field == field) {
                Some(reference) => Error::invalid_field(reference.path, unusable(reference)),
                None => Error::internal(format!("unknown reference field `{field}`")),
            }
        }
        StoreError::EtagMismatch => Error::new(
            Code::Aborted,
            "ETAG_MISMATCH",
            "the resource changed since it was read (etag mismatch); read it again",
        )
        .with_resource(R::TYPE, uid),
        StoreError::Rejected(error) => error,
        StoreError::Unimplemented => Error::unimplemented(R::TYPE),
        other => Error::from(other),
    }
    .in_domain(R::domain())
}

/// `NOT_FOUND` for a uid of type `R`.
pub fn not_found<R: Resource>(uid: &str) -> Error {
    Error::not_found(R::TYPE, uid).in_domain(R::domain())
}

pub(super) fn unusable(reference: &Reference) -> String {
    let kind = reference
        .resource_type
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let place = match reference.reach {
        Reach::Ancestors => "under this parent or one above it",
        Reach::Root => "under the same root",
        Reach::Anywhere => return format!("must be the name of an existing {kind}"),
    };
    format!("must be the uid of an existing {kind} {place}")
}
