//! The API's errors as Terraform diagnostics: a field violation names the
//! attribute it is about, a refused delete lists what keeps the item.

use heck::ToSnakeCase;
use protoapi_core::error::{Code, Error};

use crate::proto::attribute_path::{Step, step::Selector};
use crate::proto::{AttributePath, Diagnostic, diagnostic::Severity};

/// One error diagnostic, about the attribute at `path` if any.
pub fn error(summary: impl Into<String>, detail: impl Into<String>, path: &[&str]) -> Diagnostic {
    Diagnostic {
        severity: Severity::Error as i32,
        summary: summary.into(),
        detail: detail.into(),
        attribute: (!path.is_empty()).then(|| self::path(path)),
    }
}

/// The attribute at `names` (an attribute, then its nested attributes).
pub fn path(names: &[&str]) -> AttributePath {
    AttributePath {
        steps: names
            .iter()
            .map(|name| Step {
                selector: Some(Selector::AttributeName((*name).to_owned())),
            })
            .collect(),
    }
}

/// What the API answered `doing` (`creating library_shelf`) with.
/// `body` is the request field holding the item, whose name starts the
/// violations' field paths.
pub fn from_api(doing: &str, failure: &Error, body: &str) -> Vec<Diagnostic> {
    let summary = format!("{doing}: {}", failure.message());
    let mut found: Vec<Diagnostic> = failure
        .field_violations()
        .iter()
        .map(|violation| {
            let field = violation
                .field
                .strip_prefix(body)
                .map_or(violation.field.as_str(), |rest| {
                    rest.trim_start_matches('.')
                });
            let path: Vec<String> = field.split('.').map(|part| part.to_snake_case()).collect();
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            error(summary.clone(), violation.description.clone(), &path)
        })
        .collect();
    if found.is_empty() {
        found.push(error(summary, detail(failure), &[]));
    }
    found
}

/// The detail of an error without field violations: the items that keep a
/// delete from happening, or what the code means for the user.
fn detail(failure: &Error) -> String {
    let violations = failure.precondition_violations();
    if !violations.is_empty() {
        let listed: Vec<String> = violations
            .iter()
            .map(|v| format!("- {}: {}", v.subject, v.description))
            .collect();
        return format!("It is still referred to by:\n{}", listed.join("\n"));
    }
    let code = failure.code();
    match code {
        Code::Aborted => "The item changed since it was read: run `terraform refresh` (or plan \
                          again) to see the change, then apply."
            .to_owned(),
        Code::PermissionDenied | Code::Unauthenticated => format!(
            "{code:?} ({}): check the provider's credentials and the role bindings of the \
             identity they belong to.",
            failure.reason()
        ),
        _ => format!("{code:?} ({})", failure.reason()),
    }
}
