//! Methods answering `google.longrunning.Operation` (AIP-151): what their
//! `(google.longrunning.operation_info)` declares they end with.

use prost_reflect::{MessageDescriptor, MethodDescriptor};

use crate::diagnostics::{Diagnostic, Location};

use crate::model::proto::string_field;

/// What long-running methods answer.
pub(super) const OPERATION: &str = "google.longrunning.Operation";

const OPERATION_INFO: &str = "google.longrunning.operation_info";

/// The messages an operation's `response` and `metadata` hold.
pub(super) struct Declared {
    pub response: MessageDescriptor,
    pub metadata: Option<MessageDescriptor>,
}

/// What `method` declares its operation ends with: `None` when it does not
/// answer an operation; why it cannot be served when its `operation_info`
/// is missing or names no message.
pub(super) fn declared(method: &MethodDescriptor) -> Option<Result<Declared, String>> {
    if method.output().full_name() != OPERATION {
        return None;
    }
    let pool = method.parent_pool();
    let info = pool
        .get_extension_by_name(OPERATION_INFO)
        .and_then(|extension| {
            let options = method.options();
            options
                .has_extension(&extension)
                .then(|| options.get_extension(&extension).as_message().cloned())
                .flatten()
        });
    let Some(info) = info else {
        return Some(Err(format!(
            "declares no `({OPERATION_INFO})`, so what its operation ends with is unknown"
        )));
    };
    let package = method.parent_service().package_name().to_owned();
    let resolve = |field: &str| {
        let name = string_field(&info, field);
        let found = pool
            .get_message_by_name(&name)
            .or_else(|| pool.get_message_by_name(&format!("{package}.{name}")));
        match (name.is_empty(), found) {
            (true, _) => Ok(None),
            (false, Some(message)) => Ok(Some(message)),
            (false, None) => Err(format!(
                "names `{name}` as its operation's `{field}`, which is no message this API \
                 defines or imports"
            )),
        }
    };
    let declared = resolve("response_type").and_then(|response| {
        let response = response
            .ok_or_else(|| "declares no `response_type` in its `operation_info`".to_owned())?;
        Ok(Declared {
            response,
            metadata: resolve("metadata_type")?,
        })
    });
    Some(declared)
}

/// The message `method` answers once done: its operation's response when it
/// answers one, else its output.
pub(super) fn answered(method: &MethodDescriptor) -> MessageDescriptor {
    match declared(method) {
        Some(Ok(declared)) => declared.response,
        _ => method.output(),
    }
}

/// The warning for a method answering an operation that the generated code
/// does not run (one that is no Create, Update or Delete, or declares no
/// usable `operation_info`): it is served as a custom method, by a handler
/// the user implements. `None` for any other method.
pub(super) fn unserved(method: &MethodDescriptor, location: &Location) -> Option<Diagnostic> {
    let standard = ["Create", "Update", "Delete"]
        .iter()
        .any(|verb| method.name().starts_with(verb));
    let why = match declared(method)? {
        // A missing item has no resource to answer.
        Ok(declared)
            if method.name().starts_with("Delete")
                && declared.response.full_name() != "google.protobuf.Empty"
                && method.input().get_field_by_name("allow_missing").is_some() =>
        {
            "takes `allow_missing` while its operation answers the resource, which a missing \
             item does not have"
                .to_owned()
        }
        Ok(_) if standard => return None,
        Ok(_) => "is not a Create, Update or Delete".to_owned(),
        Err(why) => why,
    };
    Some(
        Diagnostic::warning(
            location.clone(),
            format!(
                "`{}` answers `{OPERATION}` but {why}: it is generated as a custom method whose \
                 handler you implement",
                method.name()
            ),
        )
        .note("long-running methods are in codegen/README.md, \"Long-running operations\""),
    )
}
