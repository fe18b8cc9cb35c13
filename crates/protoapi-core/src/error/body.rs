//! The REST error body, serialized straight from an [`Error`] (no JSON tree
//! built first): `{"error": {"code", "details", "message", "status"}}` with
//! `@type`-tagged details, each object's keys in sorted order as a JSON tree
//! would write them. [`Error::to_json`] is this body as a tree.

use std::collections::BTreeMap;

use serde::Serialize;
use tonic_types::{BadRequest, PreconditionFailure};

use super::{Error, ErrorInfo, ResourceInfo, RetryInfo, duration_json};

/// `{"error": {...}}` of an error.
#[derive(Serialize)]
pub(super) struct Body<'a> {
    error: Status<'a>,
}

impl<'a> Body<'a> {
    pub(super) fn of(error: &'a Error) -> Self {
        let inner = &error.inner;
        let mut details = vec![Detail::Info(Info {
            kind: ErrorInfo::TYPE_URL,
            domain: error.domain(),
            metadata: (inner.metadata.iter())
                .map(|(key, value)| (key.as_str(), value.as_str()))
                .collect(),
            reason: &inner.reason,
        })];
        if let Some(resource) = &inner.resource_info {
            details.push(Detail::Resource(Resource {
                kind: ResourceInfo::TYPE_URL,
                description: &resource.description,
                resource_name: &resource.resource_name,
                resource_type: &resource.resource_type,
            }));
        }
        if !inner.field_violations.is_empty() {
            details.push(Detail::BadRequest(Fields {
                kind: BadRequest::TYPE_URL,
                field_violations: (inner.field_violations.iter())
                    .map(|v| Field {
                        description: &v.description,
                        field: &v.field,
                    })
                    .collect(),
            }));
        }
        if !inner.precondition_violations.is_empty() {
            details.push(Detail::Preconditions(Preconditions {
                kind: PreconditionFailure::TYPE_URL,
                violations: (inner.precondition_violations.iter())
                    .map(|v| Precondition {
                        description: &v.description,
                        subject: &v.subject,
                        kind: &v.r#type,
                    })
                    .collect(),
            }));
        }
        if let Some(delay) = inner.retry_delay {
            details.push(Detail::Retry(Retry {
                kind: RetryInfo::TYPE_URL,
                retry_delay: duration_json(delay),
            }));
        }
        Body {
            error: Status {
                code: error.http_status().as_u16(),
                details,
                message: &inner.message,
                status: inner.code.name(),
            },
        }
    }
}

#[derive(Serialize)]
struct Status<'a> {
    code: u16,
    details: Vec<Detail<'a>>,
    message: &'a str,
    status: &'static str,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Detail<'a> {
    Info(Info<'a>),
    Resource(Resource<'a>),
    BadRequest(Fields<'a>),
    Preconditions(Preconditions<'a>),
    Retry(Retry),
}

#[derive(Serialize)]
struct Info<'a> {
    #[serde(rename = "@type")]
    kind: &'static str,
    domain: &'a str,
    metadata: BTreeMap<&'a str, &'a str>,
    reason: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Resource<'a> {
    #[serde(rename = "@type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    description: &'a str,
    resource_name: &'a str,
    resource_type: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Fields<'a> {
    #[serde(rename = "@type")]
    kind: &'static str,
    field_violations: Vec<Field<'a>>,
}

#[derive(Serialize)]
struct Field<'a> {
    description: &'a str,
    field: &'a str,
}

#[derive(Serialize)]
struct Preconditions<'a> {
    #[serde(rename = "@type")]
    kind: &'static str,
    violations: Vec<Precondition<'a>>,
}

#[derive(Serialize)]
struct Precondition<'a> {
    description: &'a str,
    subject: &'a str,
    #[serde(rename = "type")]
    kind: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Retry {
    #[serde(rename = "@type")]
    kind: &'static str,
    retry_delay: String,
}
