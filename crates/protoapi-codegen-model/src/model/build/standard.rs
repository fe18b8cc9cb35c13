//! Which standard method (AIP-131 to AIP-135, AIP-164, AIP-231) an RPC implements, from its name and messages.

use prost_reflect::{DescriptorPool, FieldDescriptor, Kind, MessageDescriptor, MethodDescriptor};

use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use crate::model::fields::behavior;
use crate::model::proto::RESOURCE_OPTION;
use crate::model::{Behavior, LIST_FILTERS, Standard};

pub(super) fn standard_method(
    pool: &DescriptorPool,
    method: &MethodDescriptor,
    views: &[&str],
    location: &Location,
    diagnostics: &mut Diagnostics,
) -> Option<Standard> {
    let name = method.name();
    if let Some(verb) = crate::model::PolicyVerb::of(method) {
        return Some(Standard::Policy(verb));
    }
    if !names_a_resource(method, views) {
        return Some(Standard::Custom);
    }
    // A long-running Create, Update or Delete is served as the method its
    // operation's response makes it (AIP-151).
    if let Some(unserved) = super::long_running::unserved(method, location) {
        diagnostics.push(unserved);
        return Some(Standard::Custom);
    }
    let output = super::long_running::answered(method);
    // Resources, and legacy messages showing one (resolved to it later).
    let is_resource =
        |message: &MessageDescriptor| is_resource(message) || views.contains(&message.full_name());
    let resource_field = |message: &MessageDescriptor| {
        message.fields().find_map(|f| match f.kind() {
            Kind::Message(m) if is_resource(&m) && !f.is_list() => Some((f.name().to_owned(), m)),
            _ => None,
        })
    };
    // Create and Update answer the resource they write (AIP-133, AIP-134).
    let answered = |(field, m): (String, MessageDescriptor)| {
        (m.full_name() == output.full_name()).then_some((field, m))
    };
    let standard = if name.starts_with("Create") {
        let parent_required = method
            .input()
            .get_field_by_name("parent")
            .is_some_and(|field| {
                matches!(
                    behavior(pool, &field),
                    Behavior::Required | Behavior::RequiredImmutable
                )
            });
        let written = resource_field(&method.input()).and_then(answered);
        written.map(|(body_field, m)| Standard::Create {
            resource: m.full_name().to_owned(),
            body_field,
            parent_required,
        })
    } else if name.starts_with("Update") {
        match resource_field(&method.input()) {
            Some(written) => answered(written).map(|(body_field, m)| Standard::Update {
                resource: m.full_name().to_owned(),
                body_field,
            }),
            // A full replacement: the request is the resource itself.
            None => Some(method.input())
                .filter(|input| is_resource(input))
                .map(|input| Standard::Update {
                    resource: input.full_name().to_owned(),
                    body_field: String::new(),
                }),
        }
    } else if name.starts_with("Get") {
        Some(method.output())
            .filter(|output| is_resource(output))
            .map(|m| Standard::Get {
                resource: m.full_name().to_owned(),
            })
    } else if name.starts_with("List") {
        let items = super::shapes::list_items(&method.output(), is_resource);
        items
            .zip(super::shapes::paging(method))
            .map(|((_, m), paging)| Standard::List {
                resource: m.full_name().to_owned(),
                filters: list_filters(&method.input()),
                paging,
            })
    } else if name.starts_with("Undelete") {
        // Not a resource's: a custom method implemented by hand.
        let Some(undelete) = super::shapes::undelete(method) else {
            return Some(Standard::Custom);
        };
        if let Some(why) = super::shapes::undelete_unserved(method, &undelete) {
            diagnostics.push(
                Diagnostic::warning(
                    location.clone(),
                    format!("`{name}` {why}: it is generated as a custom method whose handler you implement"),
                )
                .note("soft deletes are in codegen/README.md, \"Standard methods\""),
            );
            return Some(Standard::Custom);
        }
        return Some(undelete);
    } else if name.starts_with("BatchGet") {
        super::shapes::batch_get(method, is_resource)
    } else if let Some(rest) = name.strip_prefix("Delete") {
        let package = method.parent_service().package_name().to_owned();
        method
            .parent_pool()
            .get_message_by_name(&format!("{package}.{rest}"))
            .filter(|m| is_resource(m))
            .map(|m| Standard::Delete {
                resource: m.full_name().to_owned(),
            })
    } else {
        return Some(Standard::Custom);
    };
    let Some(standard) = standard else {
        return not_standard(method, views, location, diagnostics).then_some(Standard::Custom);
    };
    Some(served(method, standard, location, diagnostics))
}

/// `standard`, or a custom method (with a warning) where the generated code
/// does not serve what `method` declares.
fn served(
    method: &MethodDescriptor,
    standard: Standard,
    location: &Location,
    diagnostics: &mut Diagnostics,
) -> Standard {
    let resource = standard
        .resource()
        .and_then(|name| method.parent_pool().get_message_by_name(name));
    if let Some((resource, why)) =
        resource.and_then(|r| crate::model::pattern::unstored(&r).map(|why| (r, why)))
    {
        diagnostics.push(unstored_method(method, &resource, why, location));
        return Standard::Custom;
    }
    if let Standard::Delete { resource } = &standard
        && !matches!(super::long_running::answered(method).full_name(), EMPTY)
        && super::long_running::answered(method).full_name() != resource
    {
        diagnostics.push(delete_answering(method, resource, location));
        return Standard::Custom;
    }
    if let Some(field) = optional_read_field(method, &standard) {
        diagnostics.push(optional_field(method, &field, location));
        return Standard::Custom;
    }
    standard
}

/// The fields of standard requests that the generated code reads as plain
/// values (AIP-131 to AIP-135, AIP-154, AIP-158, AIP-163, AIP-164).
const REQUEST_FIELDS: &[&str] = &[
    "name",
    "parent",
    "filter",
    "order_by",
    "page_size",
    "page_token",
    "skip",
    "show_deleted",
    "etag",
    "force",
    "allow_missing",
    "validate_only",
];

/// A field that the generated code of `standard` reads or writes as a plain
/// value but that is declared `optional` (explicit presence): one of the
/// request's (a Create's id field among them), or a List response's
/// `next_page_token`.
fn optional_read_field(method: &MethodDescriptor, standard: &Standard) -> Option<FieldDescriptor> {
    let optional_scalar =
        |field: &FieldDescriptor| field.supports_presence() && field.kind().as_message().is_none();
    // A Create's client-chosen id (AIP-133) is read too.
    let id_field = match standard {
        Standard::Create { resource, .. } => method
            .parent_pool()
            .get_message_by_name(resource)
            .and_then(|resource| super::resource::create_id_field(&resource)),
        _ => None,
    };
    let read = |name: &str| REQUEST_FIELDS.contains(&name) || id_field.as_deref() == Some(name);
    let request = method
        .input()
        .fields()
        .find(|field| read(field.name()) && optional_scalar(field));
    request.or_else(|| {
        matches!(standard, Standard::List { .. })
            .then(|| method.output().get_field_by_name("next_page_token"))
            .flatten()
            .filter(optional_scalar)
    })
}

fn optional_field(
    method: &MethodDescriptor,
    field: &FieldDescriptor,
    location: &Location,
) -> Diagnostic {
    Diagnostic::warning(
        location.clone(),
        format!(
            "`{}.{}` is `optional`, and a standard method reads it as a plain value: `{}` is \
             generated as a custom method whose handler you implement",
            field.parent_message().name(),
            field.name(),
            method.name()
        ),
    )
    .note("in a standard method's messages an empty value is an unset one (AIP-158, AIP-154)")
}

/// Reports a method named like a standard method without the shape of one:
/// a custom method with a warning (`true`), or, when what it takes or
/// answers lacks its `google.api.resource` option, a fatal error (`false`).
fn not_standard(
    method: &MethodDescriptor,
    views: &[&str],
    location: &Location,
    diagnostics: &mut Diagnostics,
) -> bool {
    let name = method.name();
    let is_resource =
        |message: &MessageDescriptor| is_resource(message) || views.contains(&message.full_name());
    // Unless a legacy table names a message that does not exist (then
    // that is the mistake, reported when views are resolved).
    let views_exist = views
        .iter()
        .all(|view| method.parent_pool().get_message_by_name(view).is_some());
    let missing = used_as_resource(method).filter(|m| !is_resource(m) && views_exist);
    if let Some(message) = missing {
        diagnostics.push_fatal(
            Diagnostic::new(
                Location::of(&message.parent_file(), message.path()),
                format!(
                    "`{}` is used as a resource but has no `{RESOURCE_OPTION}` option",
                    message.full_name()
                ),
            )
            .note("standard methods (Create, Get, List, Update, Delete) work on resources")
            .note(format!(
                "declare it one with `option ({RESOURCE_OPTION}) = {{type: \"<service>/{}\" \
                 plural: \"...\" singular: \"...\"}};` (codegen/README.md, \"Resource names\")",
                message.name()
            )),
        );
        return false;
    }
    let mut diagnostic = Diagnostic::warning(
        location.clone(),
        format!(
            "method `{name}` is named like a standard method but does not have the shape of one: \
             it is generated as a custom method whose handler you implement"
        ),
    )
    .note("the shapes served are in codegen/README.md, \"Standard methods\"");
    if name.starts_with("List") {
        diagnostic = diagnostic.note(super::shapes::list_expectation(method));
    } else if name.starts_with("BatchGet") {
        diagnostic = diagnostic.note(super::shapes::BATCH_GET_EXPECTATION);
    } else if name.starts_with("Create") || name.starts_with("Update") {
        diagnostic = diagnostic.note(format!(
            "a Create or Update takes the resource in a field of its request and answers it \
             (AIP-133, AIP-134); `{name}` answers `{}`",
            method.output().name()
        ));
    }
    diagnostics.push(diagnostic);
    true
}

/// What a Delete may answer beside its resource (AIP-135).
const EMPTY: &str = "google.protobuf.Empty";

/// The warning for a Delete answering neither `Empty` nor its resource:
/// served as a custom method.
fn delete_answering(method: &MethodDescriptor, resource: &str, location: &Location) -> Diagnostic {
    Diagnostic::warning(
        location.clone(),
        format!(
            "`{}` answers `{}`; AIP-135 expects `{EMPTY}` or the resource `{resource}`: it is \
             generated as a custom method whose handler you implement",
            method.name(),
            method.output().full_name()
        ),
    )
    .note("custom methods are in codegen/README.md, \"Standard methods\"")
}

/// The warning for a standard method of a resource the generated code does
/// not store (`why`): served as a custom method, by a handler the user
/// implements.
fn unstored_method(
    method: &MethodDescriptor,
    resource: &MessageDescriptor,
    why: &str,
    location: &Location,
) -> Diagnostic {
    Diagnostic::warning(
        location.clone(),
        format!(
            "`{}` works on `{}`, {why}, which the generated code does not store: it is generated \
             as a custom method whose handler you implement",
            method.name(),
            resource.name()
        ),
    )
    .note("custom methods are in codegen/README.md, \"Standard methods\"")
}

/// The message a method named like a standard method uses as its resource,
/// resource or not: what `Delete<X>` names, the `items` of a list or batch
/// get, else the
/// response (of `Create`, `Get` and `Update`).
fn used_as_resource(method: &MethodDescriptor) -> Option<MessageDescriptor> {
    let message = if let Some(rest) = method.name().strip_prefix("Delete") {
        let package = method.parent_service().package_name().to_owned();
        method
            .parent_pool()
            .get_message_by_name(&format!("{package}.{rest}"))?
    } else if method.name().starts_with("List") || method.name().starts_with("BatchGet") {
        // Only `items` says what a list holds without a resource's plural.
        method
            .output()
            .get_field_by_name("items")?
            .kind()
            .as_message()?
            .clone()
    } else if method.input().fields().any(|field| match field.kind() {
        Kind::Message(m) => is_resource(&m),
        _ => false,
    }) {
        // A write of a declared resource that answers something else.
        return None;
    } else {
        method.output()
    };
    Some(message).filter(|m| !m.package_name().starts_with("google."))
}

/// The filters a list request has fields for (see [`LIST_FILTERS`]).
fn list_filters(request: &MessageDescriptor) -> Vec<String> {
    LIST_FILTERS
        .iter()
        .filter(|(_, path)| {
            let mut message = request.clone();
            let mut parts = path.split('.').peekable();
            while let Some(part) = parts.next() {
                let Some(field) = message.get_field_by_name(part) else {
                    return false;
                };
                match (field.kind(), parts.peek()) {
                    (Kind::Message(inner), Some(_)) => message = inner,
                    (Kind::String | Kind::Bool, None) => return true,
                    _ => return false,
                }
            }
            false
        })
        .map(|(filter, _)| (*filter).to_owned())
        .collect()
}

/// The verbs of standard methods, as their names start.
const STANDARD_VERBS: &[&str] = &[
    "BatchGet", "Create", "Get", "List", "Update", "Delete", "Undelete",
];

/// Whether `method`, named like a standard method, is meant as one: it takes
/// or answers a resource (or a legacy view), or its name names one of its
/// package (`GetBook`, `ListBooks`, `DeleteBooks`: a misspelt standard
/// method). Other methods whose names start with a standard verb
/// (`GetIamPolicy`, `GetCover` answering a `google.api.HttpBody`,
/// `ListenEvents`) are custom methods.
fn names_a_resource(method: &MethodDescriptor, views: &[&str]) -> bool {
    let name = method.name();
    let Some(subject) = STANDARD_VERBS
        .iter()
        .find_map(|verb| name.strip_prefix(verb))
    else {
        return false;
    };
    let shown = |m: &MessageDescriptor| is_resource(m) || views.contains(&m.full_name());
    // A message it takes or answers that is (or holds) a resource or view.
    let holds = |m: &MessageDescriptor| {
        shown(m)
            || m.fields()
                .any(|f| f.kind().as_message().is_some_and(&shown))
    };
    if holds(&method.input()) || holds(&method.output()) {
        return true;
    }
    // `GetBook` answering a `Book` that lacks its resource option.
    if used_as_resource(method).is_some_and(|m| m.name() == subject) {
        return true;
    }
    let package = method.parent_service().package_name();
    method
        .parent_pool()
        .all_messages()
        .filter(|m| m.package_name() == package && shown(m))
        .any(|m| m.name() == subject || plural_name(&m).as_deref() == Some(subject))
}

/// The resource's plural as a method names it (`books` → `Books`).
fn plural_name(message: &MessageDescriptor) -> Option<String> {
    use heck::ToUpperCamelCase;
    let options = message.options();
    let (_, option) = options
        .extensions()
        .find(|(ext, _)| ext.full_name() == RESOURCE_OPTION)?;
    let plural = option.as_message()?.get_field_by_name("plural")?;
    Some(plural.as_str()?.to_upper_camel_case())
}

fn is_resource(message: &MessageDescriptor) -> bool {
    message
        .options()
        .extensions()
        .any(|(ext, _)| ext.full_name() == RESOURCE_OPTION)
}
