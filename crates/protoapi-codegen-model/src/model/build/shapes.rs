//! Reading the shape of a standard method's messages, among the shapes the AIPs allow.

use prost_reflect::{DescriptorPool, FieldDescriptor, Kind, MessageDescriptor, MethodDescriptor};

use crate::diagnostics::{Diagnostic, Diagnostics, Location, Severity};
use crate::model::fields::behavior;
use crate::model::proto::RESOURCE_OPTION;
use crate::model::{Behavior, DeleteShape, ListShape, Paging, Shape, Standard, Total, UpdateShape};

/// The repeated field of a list response holding `is_resource` messages:
/// the one named by their plural or `items`, else the only one (real APIs
/// spell plurals their own way: `bigquery_links` of `BigQueryLink`,
/// `label_permissions` of collection `permissions`).
pub(super) fn list_items(
    response: &MessageDescriptor,
    is_resource: impl Fn(&MessageDescriptor) -> bool,
) -> Option<(FieldDescriptor, MessageDescriptor)> {
    let repeated: Vec<(FieldDescriptor, MessageDescriptor)> = response
        .fields()
        .filter_map(|field| match field.kind() {
            Kind::Message(m) if field.is_list() && is_resource(&m) => Some((field, m)),
            _ => None,
        })
        .collect();
    let named = repeated.iter().position(|(field, m)| {
        field.name() == "items" || plural(m).is_some_and(|p| p == field.name())
    });
    match (named, repeated.len()) {
        (Some(at), _) => repeated.into_iter().nth(at),
        (None, 1) => repeated.into_iter().next(),
        _ => None,
    }
}

/// The resource's `plural` (snake_case as a field names it, `bookCopies` ->
/// `book_copies`): as declared, else the collection id its first pattern
/// ends in (AIP-122: `shelves/{shelf}` -> `shelves`).
fn plural(message: &MessageDescriptor) -> Option<String> {
    let options = message.options();
    let (_, value) = options
        .extensions()
        .find(|(ext, _)| ext.full_name() == RESOURCE_OPTION)?;
    let option = value.as_message()?;
    let declared = option
        .get_field_by_name("plural")
        .and_then(|plural| plural.as_str().map(str::to_owned))
        .filter(|plural| !plural.is_empty());
    let plural = declared.or_else(|| {
        let patterns = option.get_field_by_name("pattern")?;
        let pattern = patterns.as_list()?.first()?.as_str()?.to_owned();
        let segments: Vec<&str> = pattern.split('/').collect();
        segments
            .windows(2)
            .rev()
            .find(|pair| !pair[0].starts_with('{') && pair[1].starts_with('{'))
            .map(|pair| pair[0].to_owned())
    })?;
    Some(heck::ToSnakeCase::to_snake_case(plural.as_str()))
}

/// What a method named `List…` lacks to be a list, for its diagnostic:
/// several repeated fields of resources, none named as the items, or none
/// at all.
/// How the List `method` pages: by token (AIP-158), or by `offset` and
/// `limit` into `items` (the legacy shape); `None` for a list that does not
/// page, which is not served as a standard List.
pub(super) fn paging(method: &MethodDescriptor) -> Option<Paging> {
    let (request, response) = (method.input(), method.output());
    if request.get_field_by_name("page_token").is_some() {
        Some(Paging::Token)
    } else {
        let has = |message: &MessageDescriptor, field| message.get_field_by_name(field).is_some();
        (has(&request, "offset") && has(&request, "limit") && has(&response, "items"))
            .then_some(Paging::Offset)
    }
}

pub(super) fn list_expectation(method: &MethodDescriptor) -> String {
    let response = method.output();
    let repeated: Vec<String> = response
        .fields()
        .filter(|field| {
            field.is_list()
                && field
                    .kind()
                    .as_message()
                    .is_some_and(|m| plural(m).is_some())
        })
        .map(|field| format!("`{}`", field.name()))
        .collect();
    if repeated.len() == 1 && paging(method).is_none() {
        format!(
            "`{}` has no `page_token`: a standard List pages (AIP-158), with `int32 page_size` \
             and `string page_token` in the request and `string next_page_token` in the response",
            method.input().name()
        )
    } else if repeated.len() > 1 {
        format!(
            "`{}` has several repeated fields of resources ({}), and none is named by its \
             resource's plural or `items`: AIP-132 expects one, `repeated <Resource> <plural> = 1;`",
            response.name(),
            repeated.join(", ")
        )
    } else {
        format!(
            "`{}` has no repeated field of a resource; AIP-132 expects `repeated <Resource> \
             <plural> = 1;` (or `items`) and `string next_page_token = 2;`",
            response.name()
        )
    }
}

/// The shape of `method`'s messages, or diagnostics for shapes that cannot
/// be served (reported at the method; `None` then).
pub(super) fn shape(
    pool: &DescriptorPool,
    method: &MethodDescriptor,
    standard: &Standard,
    location: &Location,
    diagnostics: &mut Diagnostics,
) -> Option<Shape> {
    let mut problems = Problems::default();
    let shape = match standard {
        Standard::List { paging, .. } => Shape::List(list_shape(method, *paging, &mut problems)?),
        Standard::Update {
            body_field,
            resource,
        } => Shape::Update(update_shape(
            pool,
            method,
            body_field,
            resource,
            &mut problems,
        )),
        Standard::Delete { resource } => {
            Shape::Delete(delete_shape(method, resource, &mut problems))
        }
        Standard::Undelete { resource } => {
            Shape::Delete(undelete_shape(method, resource, &mut problems))
        }
        _ => Shape::Fixed,
    };
    let reported = problems.has_errors();
    for (at, severity, problem) in problems.0 {
        diagnostics.push(Diagnostic {
            severity,
            ..Diagnostic::new(at.unwrap_or_else(|| location.clone()), problem)
        });
    }
    (!reported).then_some(shape)
}

fn list_shape(
    method: &MethodDescriptor,
    paging: Paging,
    problems: &mut Problems,
) -> Option<ListShape> {
    let (request, response) = (method.input(), method.output());
    // Which messages are resources (or legacy views of one) was decided
    // when the method was recognised as a list.
    let (field, resource) = list_items(&response, |_| true)?;
    let show_deleted = request.get_field_by_name("show_deleted");
    if let Some(show) = &show_deleted {
        show_deleted_problem(&request, show, &resource, problems);
    }
    let int32 = |message: &MessageDescriptor, name: &str| {
        message
            .get_field_by_name(name)
            .map(|f| matches!(f.kind(), Kind::Int32) && !f.is_list())
    };
    let string = |message: &MessageDescriptor, name: &str| {
        message
            .get_field_by_name(name)
            .map(|f| matches!(f.kind(), Kind::String) && !f.is_list())
    };
    let (total, total_type) = match (
        integer(&response, "total_size"),
        integer(&response, "total_count"),
    ) {
        (Some(Some(ty)), _) => (Total::Size, ty),
        (_, Some(Some(ty))) => (Total::Count, ty),
        (None, None) => (Total::None, ("i32", false)),
        _ => {
            problems.push(format!(
                "`{}`: a list's total is an integer `total_size` (AIP-132) or `total_count`",
                response.name()
            ));
            (Total::None, ("i32", false))
        }
    };
    let mut expect = |message: &MessageDescriptor, ok: Option<bool>, field: &str, aip: &str| {
        if ok != Some(true) {
            problems.push(format!(
                "`{}` of `{}` pages by token and needs `{field}` ({aip})",
                message.name(),
                method.name(),
            ));
        }
    };
    if paging == Paging::Token {
        expect(
            &request,
            int32(&request, "page_size"),
            "int32 page_size",
            "AIP-158",
        );
        expect(
            &request,
            string(&request, "page_token"),
            "string page_token",
            "AIP-158",
        );
        expect(
            &response,
            string(&response, "next_page_token"),
            "string next_page_token",
            "AIP-158",
        );
        for (name, ok, ty) in [
            ("skip", int32(&request, "skip"), "int32"),
            ("order_by", string(&request, "order_by"), "string"),
        ] {
            if ok == Some(false) {
                expect(
                    &request,
                    ok,
                    &format!("{ty} {name}"),
                    "AIP-132, when present",
                );
            }
        }
    }
    Some(ListShape {
        items: field.name().to_owned(),
        total,
        total_type,
        skip: int32(&request, "skip") == Some(true),
        order_by: string(&request, "order_by") == Some(true),
        filter: string(&request, "filter") == Some(true),
        more: response.fields().any(|f| {
            ![field.name(), "next_page_token", "total_size", "total_count"].contains(&f.name())
        }),
        // Read only where deletes are soft (else a warning says so).
        show_deleted: show_deleted.is_some() && soft_deletes(&resource),
    })
}

/// What is wrong with a list request's `show_deleted`: not a `bool`, or a
/// list of a resource whose deletes are final.
fn show_deleted_problem(
    request: &MessageDescriptor,
    field: &FieldDescriptor,
    resource: &MessageDescriptor,
    problems: &mut Problems,
) {
    if !matches!(field.kind(), Kind::Bool) || field.is_list() {
        problems.at(
            field,
            format!(
                "`{}.show_deleted` is not a `bool` (AIP-164)",
                request.name()
            ),
        );
    } else if !soft_deletes(resource) {
        problems.warn_at(
            field,
            format!(
                "`{}.show_deleted` is not read: deletes of `{}` are final (soft deletes, AIP-164, \
                 need `google.protobuf.Timestamp delete_time` in `{}` and an `Undelete{}` \
                 method), so no deleted item is kept to show",
                request.name(),
                resource.name(),
                resource.name(),
                resource.name(),
            ),
        );
    }
}

fn update_shape(
    pool: &DescriptorPool,
    method: &MethodDescriptor,
    body_field: &str,
    resource: &str,
    problems: &mut Problems,
) -> UpdateShape {
    let request = method.input();
    let mask = request.get_field_by_name("update_mask");
    if let Some(field) = &mask
        && !matches!(field.kind(), Kind::Message(m) if m.full_name() == "google.protobuf.FieldMask")
    {
        problems.at(
            field,
            format!(
                "`{}.update_mask` is not a `google.protobuf.FieldMask` (AIP-134)",
                request.name()
            ),
        );
    }
    UpdateShape {
        // A request that is the resource itself replaces it: no mask.
        has_mask: mask.is_some() && !body_field.is_empty(),
        mask_required: mask.is_some_and(|field| {
            matches!(
                behavior(pool, &field),
                Behavior::Required | Behavior::RequiredImmutable
            )
        }),
        etag: pool
            .get_message_by_name(resource)
            .is_some_and(|m| m.get_field_by_name("etag").is_some()),
    }
}

fn delete_shape(method: &MethodDescriptor, resource: &str, problems: &mut Problems) -> DeleteShape {
    let output = super::long_running::answered(method);
    let returns_resource = output.full_name() == resource;
    if !returns_resource && output.full_name() != "google.protobuf.Empty" {
        problems.push(format!(
            "`{}` answers `{}`; AIP-135 expects `google.protobuf.Empty` or the resource `{}`",
            method.name(),
            output.full_name(),
            resource
        ));
    }
    let soft = method
        .parent_pool()
        .get_message_by_name(resource)
        .is_some_and(|m| soft_deletes(&m));
    DeleteShape {
        returns_resource,
        soft,
        ..delete_shape_etag(method, problems)
    }
}

/// A Delete's or Undelete's request `etag`, if it has one (AIP-154).
fn delete_shape_etag(method: &MethodDescriptor, problems: &mut Problems) -> DeleteShape {
    let etag = match method.input().get_field_by_name("etag") {
        Some(field) if matches!(field.kind(), Kind::String) && !field.is_list() => true,
        Some(field) => {
            problems.at(
                &field,
                format!(
                    "`{}.etag` is not a `string` (AIP-154)",
                    method.input().name()
                ),
            );
            false
        }
        None => false,
    };
    DeleteShape {
        returns_resource: false,
        etag,
        soft: false,
    }
}

/// An `Undelete<X>` (AIP-164): `X` has a `delete_time`, the request its
/// key (`name` or `uid`) and optionally an `etag`, the answer is `X`.
fn undelete_shape(
    method: &MethodDescriptor,
    resource: &str,
    problems: &mut Problems,
) -> DeleteShape {
    let (request, output) = (method.input(), method.output());
    let kind = resource.rsplit('.').next().unwrap_or(resource);
    let message = method.parent_pool().get_message_by_name(resource);
    if !message.as_ref().is_some_and(has_delete_time) {
        problems.push(format!(
            "`{}` undeletes `{kind}` (soft delete, AIP-164), but `{kind}` has no \
             `google.protobuf.Timestamp delete_time` to mark deleted items: add \
             `google.protobuf.Timestamp delete_time = <n> [(google.api.field_behavior) = \
             OUTPUT_ONLY];` to `{kind}`, or remove `{}` (or rename it to implement it by hand)",
            method.name(),
            method.name(),
        ));
    }
    if output.full_name() != resource {
        problems.push(format!(
            "`{}` answers `{}`; AIP-164 expects the resource `{resource}`",
            method.name(),
            output.full_name(),
        ));
    }
    let key = ["name", "uid"]
        .into_iter()
        .find_map(|name| request.get_field_by_name(name));
    if !key.is_some_and(|f| matches!(f.kind(), Kind::String) && !f.is_list()) {
        problems.push(format!(
            "`{}` has no `string name` (or `uid`) naming the item to undelete (AIP-164)",
            request.name()
        ));
    }
    DeleteShape {
        returns_resource: true,
        soft: true,
        ..delete_shape_etag(method, problems)
    }
}

/// What a method named `BatchGet…` must look like, for its diagnostic.
pub(super) const BATCH_GET_EXPECTATION: &str = "AIP-231 expects a request with `repeated string \
     uids` (or `names`) and an optional `string parent`, and a response with `repeated \
     <Resource> <plural> = 1;` (or `items`)";

/// `BatchGet<Plural>` (AIP-231): a request with repeated string `uids` (or
/// `names`) and optionally `parent`, a response whose only field is the
/// repeated resources (named by their plural or `items`).
pub(super) fn batch_get(
    method: &MethodDescriptor,
    is_resource: impl Fn(&MessageDescriptor) -> bool,
) -> Option<Standard> {
    let (request, response) = (method.input(), method.output());
    let keys = ["uids", "names"].into_iter().find_map(|name| {
        let field = request.get_field_by_name(name)?;
        (field.is_list() && matches!(field.kind(), Kind::String)).then_some(name)
    })?;
    let parent = request.get_field_by_name("parent");
    if parent
        .as_ref()
        .is_some_and(|f| f.is_list() || !matches!(f.kind(), Kind::String))
    {
        return None;
    }
    let (items, resource) = list_items(&response, is_resource)?;
    // Nothing else to fill in: other response fields are not served.
    if response.fields().count() != 1 {
        return None;
    }
    Some(Standard::BatchGet {
        resource: resource.full_name().to_owned(),
        keys_field: keys.to_owned(),
        items_field: items.name().to_owned(),
        has_parent: parent.is_some(),
    })
}

/// `Undelete<X>` of a resource `X` of the method's package (AIP-164); its
/// shape is checked with the method's ([`undelete_shape`]). `None` when `X`
/// is no resource: a custom method then.
pub(super) fn undelete(method: &MethodDescriptor) -> Option<Standard> {
    let kind = method.name().strip_prefix("Undelete")?;
    let package = method.parent_service().package_name().to_owned();
    let resource = method
        .parent_pool()
        .get_message_by_name(&format!("{package}.{kind}"))
        .filter(|m| plural(m).is_some())?;
    Some(Standard::Undelete {
        resource: resource.full_name().to_owned(),
    })
}

/// Why `undelete` (an `Undelete<X>`) cannot be served as AIP-164's
/// standard method, if it cannot: `X` keeps no deleted items, or it
/// answers something else than `X`.
pub(super) fn undelete_unserved(method: &MethodDescriptor, undelete: &Standard) -> Option<String> {
    let resource = undelete.resource()?;
    let message = method.parent_pool().get_message_by_name(resource)?;
    if !has_delete_time(&message) {
        Some(format!(
            "undeletes `{}`, which has no `google.protobuf.Timestamp delete_time` to mark deleted \
             items (AIP-164)",
            message.name()
        ))
    } else if method.output().full_name() != resource {
        Some(format!(
            "answers `{}`; AIP-164 expects the resource `{resource}`",
            method.output().full_name()
        ))
    } else {
        None
    }
}

/// The Rust type of `message`'s integer field `name` and whether it is
/// `optional`: `None` without the field, `Some(None)` for another type.
fn integer(message: &MessageDescriptor, name: &str) -> Option<Option<(&'static str, bool)>> {
    let field = message.get_field_by_name(name)?;
    let rust = match field.kind() {
        _ if field.is_list() || field.is_map() => return Some(None),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => "i32",
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => "i64",
        Kind::Uint32 | Kind::Fixed32 => "u32",
        Kind::Uint64 | Kind::Fixed64 => "u64",
        _ => return Some(None),
    };
    Some(Some((rust, field.supports_presence())))
}

/// Whether `message` has a single `google.protobuf.Timestamp delete_time`.
fn has_delete_time(message: &MessageDescriptor) -> bool {
    message.get_field_by_name("delete_time").is_some_and(|f| {
        !f.is_list()
            && matches!(f.kind(), Kind::Message(m) if m.full_name() == "google.protobuf.Timestamp")
    })
}

/// Whether the resource `message` soft-deletes (AIP-164): it has a
/// `google.protobuf.Timestamp delete_time` and a service of its package
/// declares `Undelete<X>` for it.
pub(crate) fn soft_deletes(message: &MessageDescriptor) -> bool {
    let undelete = format!("Undelete{}", message.name());
    has_delete_time(message)
        && message.parent_pool().services().any(|service| {
            service.package_name() == message.package_name()
                && service.methods().any(|m| m.name() == undelete)
        })
}

/// The problems of a method's shape, each at the field it is about, or at
/// the method when a field is missing.
#[derive(Default)]
struct Problems(Vec<(Option<Location>, Severity, String)>);

impl Problems {
    fn push(&mut self, problem: String) {
        self.0.push((None, Severity::Error, problem));
    }

    fn at(&mut self, field: &FieldDescriptor, problem: String) {
        let location = Location::of(&field.parent_file(), field.path());
        self.0.push((Some(location), Severity::Error, problem));
    }

    /// A warning at `field`: the shape is served, partially.
    fn warn_at(&mut self, field: &FieldDescriptor, warning: String) {
        let location = Location::of(&field.parent_file(), field.path());
        self.0.push((Some(location), Severity::Warning, warning));
    }

    fn has_errors(&self) -> bool {
        self.0
            .iter()
            .any(|(_, severity, _)| *severity == Severity::Error)
    }
}
