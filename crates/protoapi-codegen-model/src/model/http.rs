//! `google.api.http` rules of methods: verb, parsed path template, body,
//! response body and additional bindings.

use prost_reflect::{DescriptorPool, DynamicMessage, Kind, MessageDescriptor, MethodDescriptor};

use super::proto::string_field;
use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use crate::template::PathTemplate;

/// A `google.api.http` binding.
#[derive(Clone, Debug)]
pub struct HttpRule {
    pub verb: Verb,
    pub template: PathTemplate,
    /// The request field holding the body: `None`, `Some("*")` or a field name.
    pub body: Option<String>,
    /// The response field answered instead of the whole response, if any.
    pub response_body: Option<String>,
    /// The rule's `additional_bindings`: each served as its own route, by
    /// the same method (they have none of their own).
    pub additional_bindings: Vec<HttpRule>,
    /// The literal prefix (`/v1`, or empty for `/`) under which the
    /// template is matched at run time, or `None` when axum routes it
    /// (`super::routes`).
    pub matched_prefix: Option<String>,
}

impl HttpRule {
    /// The rule and its additional bindings.
    pub fn bindings(&self) -> impl Iterator<Item = &HttpRule> {
        std::iter::once(self).chain(&self.additional_bindings)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Verb {
    /// The axum routing function (`get`, `post`, ...).
    pub fn routing_fn(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::Post => "post",
            Verb::Put => "put",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
        }
    }

    /// The HTTP method, `GET`, ...
    pub fn method(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
            Verb::Put => "PUT",
            Verb::Patch => "PATCH",
            Verb::Delete => "DELETE",
        }
    }
}

const HTTP_OPTION: &str = "google.api.http";

/// A problem already added to the diagnostics.
pub(super) struct Reported;

/// The method's HTTP rule: `None` without the option, `Err` when it is invalid
/// (every problem of it reported).
pub(super) fn http_rule(
    pool: &DescriptorPool,
    method: &MethodDescriptor,
    location: &Location,
    diagnostics: &mut Diagnostics,
) -> Option<Result<HttpRule, Reported>> {
    let extension = pool.get_extension_by_name(HTTP_OPTION)?;
    let options = method.options();
    if !options.has_extension(&extension) {
        return None;
    }
    let rule = options.get_extension(&extension);
    let rule = rule.as_message()?;
    let check = Check { method, location };
    let before = diagnostics.len();
    let primary = check.binding(rule, true, diagnostics);
    let mut additional_bindings = Vec::new();
    if let Some(list) = rule
        .get_field_by_name("additional_bindings")
        .and_then(|v| v.as_list().map(<[_]>::to_vec))
    {
        for binding in list {
            let Some(binding) = binding.as_message() else {
                continue;
            };
            if let Some(binding) = check.binding(binding, false, diagnostics) {
                additional_bindings.push(binding);
            }
        }
    }
    // A rule that names wrong fields is kept (reported, and the method
    // checked further); one that does not parse is not.
    match primary {
        Some(mut primary) => {
            primary.additional_bindings = additional_bindings;
            Some(Ok(primary))
        }
        None if diagnostics.len() > before => Some(Err(Reported)),
        None => None,
    }
}

struct Check<'a> {
    method: &'a MethodDescriptor,
    location: &'a Location,
}

impl Check<'_> {
    fn report(&self, diagnostics: &mut Diagnostics, message: String) {
        diagnostics.push(Diagnostic::new(self.location.clone(), message));
    }

    /// One binding (the rule itself, or one of its additional bindings).
    fn binding(
        &self,
        rule: &DynamicMessage,
        primary: bool,
        diagnostics: &mut Diagnostics,
    ) -> Option<HttpRule> {
        let name = self.method.name();
        if !primary
            && rule
                .get_field_by_name("additional_bindings")
                .and_then(|v| v.as_list().map(|l| !l.is_empty()))
                .unwrap_or(false)
        {
            self.report(
                diagnostics,
                format!("an additional binding of `{name}` has additional bindings of its own (the spec forbids nesting them)"),
            );
        }
        if rule.has_field_by_name("custom") {
            let custom = rule.get_field_by_name("custom")?;
            let kind = custom
                .as_message()
                .map(|c| string_field(c, "kind"))
                .unwrap_or_default();
            self.report(
                diagnostics,
                format!("`{name}` binds the custom HTTP verb `{kind}`, which is not served: use get, put, post, patch or delete"),
            );
            return None;
        }
        let (verb, path) = [
            (Verb::Get, "get"),
            (Verb::Post, "post"),
            (Verb::Put, "put"),
            (Verb::Patch, "patch"),
            (Verb::Delete, "delete"),
        ]
        .into_iter()
        .find_map(|(verb, field)| {
            rule.has_field_by_name(field)
                .then(|| (verb, string_field(rule, field)))
        })?;
        let template = match PathTemplate::parse(&path) {
            Ok(template) => template,
            Err(error) => {
                self.report(
                    diagnostics,
                    format!(
                        "bad path template `{path}` of `{name}` at column {}: {error}",
                        error.column + 1
                    ),
                );
                return None;
            }
        };
        for variable in &template.variables {
            if !names_string_field(&self.method.input(), &variable.field) {
                self.report(
                    diagnostics,
                    format!(
                        "path variable `{}` of `{name}` names no string, integer or enum field of `{}`",
                        variable.field,
                        self.method.input().full_name()
                    ),
                );
            }
        }
        let body = Some(string_field(rule, "body")).filter(|b| !b.is_empty());
        if let Some(body) = body.as_deref().filter(|b| *b != "*")
            && self.method.input().get_field_by_name(body).is_none()
        {
            self.report(
                diagnostics,
                format!(
                    "`body: \"{body}\"` of `{name}` names no field of `{}`",
                    self.method.input().full_name()
                ),
            );
        }
        let response_body = Some(string_field(rule, "response_body")).filter(|b| !b.is_empty());
        if let Some(field) = &response_body
            && self.method.output().get_field_by_name(field).is_none()
        {
            self.report(
                diagnostics,
                format!(
                    "`response_body: \"{field}\"` of `{name}` names no field of `{}`",
                    self.method.output().full_name()
                ),
            );
        }
        Some(HttpRule {
            verb,
            template,
            body,
            response_body,
            additional_bindings: Vec::new(),
            matched_prefix: None,
        })
    }
}

/// Whether `path` (`book.name`) names a singular string, integer or enum
/// field of `message`,
/// through singular message fields.
fn names_string_field(message: &MessageDescriptor, path: &str) -> bool {
    let mut message = message.clone();
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        let Some(field) = message.get_field_by_name(part) else {
            return false;
        };
        if field.is_list() || field.is_map() {
            return false;
        }
        match (field.kind(), parts.peek()) {
            // What canonical JSON reads from a string: text, numbers, enum
            // names (a bad value is INVALID_ARGUMENT naming the field).
            (
                Kind::String
                | Kind::Int32
                | Kind::Sint32
                | Kind::Sfixed32
                | Kind::Int64
                | Kind::Sint64
                | Kind::Sfixed64
                | Kind::Uint32
                | Kind::Fixed32
                | Kind::Uint64
                | Kind::Fixed64
                | Kind::Enum(_),
                None,
            ) => return true,
            (Kind::Message(inner), Some(_)) => message = inner,
            _ => return false,
        }
    }
    false
}
