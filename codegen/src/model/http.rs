//! `google.api.http` rules of methods: verb, parsed path template, body.

use prost_reflect::{DescriptorPool, Kind, MethodDescriptor};

use super::string_field;
use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use crate::template::PathTemplate;

/// A `google.api.http` binding.
#[derive(Clone, Debug)]
pub struct HttpRule {
    pub verb: Verb,
    pub template: PathTemplate,
    /// The request field holding the body: `None`, `Some("*")` or a field name.
    pub body: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
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
}

const HTTP_OPTION: &str = "google.api.http";

/// A problem already added to the diagnostics.
pub(super) struct Reported;

/// The method's HTTP rule: `None` without the option, `Err` when it is invalid.
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
    let (verb, path) = [
        (Verb::Get, "get"),
        (Verb::Post, "post"),
        (Verb::Put, "put"),
        (Verb::Patch, "patch"),
        (Verb::Delete, "delete"),
    ]
    .into_iter()
    .find_map(|(verb, name)| {
        rule.has_field_by_name(name)
            .then(|| (verb, string_field(rule, name)))
    })?;
    let template = match PathTemplate::parse(&path) {
        Ok(template) => template,
        Err(error) => {
            diagnostics.push(Diagnostic::new(
                location.clone(),
                format!(
                    "bad path template `{path}` of `{}` at column {}: {error}",
                    method.name(),
                    error.column + 1
                ),
            ));
            return Some(Err(Reported));
        }
    };
    let body = Some(string_field(rule, "body")).filter(|b| !b.is_empty());
    if let Some(body) = body.as_deref().filter(|b| *b != "*")
        && method.input().get_field_by_name(body).is_none()
    {
        diagnostics.push(Diagnostic::new(
            location.clone(),
            format!(
                "`body: \"{body}\"` of `{}` names no field of `{}`",
                method.name(),
                method.input().full_name()
            ),
        ));
    }
    Some(Ok(HttpRule {
        verb,
        template,
        body,
    }))
}

pub(super) fn check_template_field(
    method: &MethodDescriptor,
    http: &HttpRule,
    location: &Location,
    diagnostics: &mut Diagnostics,
) {
    let Some(variable) = &http.template.variable else {
        return;
    };
    let mut message = method.input();
    let mut parts = variable.field.split('.').peekable();
    while let Some(part) = parts.next() {
        let field = message.get_field_by_name(part);
        match (field.map(|f| f.kind()), parts.peek()) {
            (Some(Kind::String), None) => return,
            (Some(Kind::Message(inner)), Some(_)) => message = inner,
            _ => break,
        }
    }
    diagnostics.push(Diagnostic::new(
        location.clone(),
        format!(
            "path variable `{}` of `{}` names no string field of `{}`",
            variable.field,
            method.name(),
            method.input().full_name()
        ),
    ));
}
