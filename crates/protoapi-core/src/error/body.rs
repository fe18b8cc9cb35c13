//! The REST error body, serialized straight from an error's parts (no JSON
//! tree built first): `{"error": {"code", "details", "message", "status"}}`
//! with `@type`-tagged details, each object's keys in sorted order as a JSON
//! tree would write them. `Error::body` fills it in from the error; `Error::to_json` is
//! this body as a tree.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use tonic_types::{
    BadRequest, ErrorInfo, FieldViolation, PreconditionFailure, PreconditionViolation,
    ResourceInfo, RetryInfo,
};

/// `{"error": {...}}` of an error.
#[derive(Serialize)]
pub(super) struct Body<'a> {
    error: Status<'a>,
}

impl<'a> Body<'a> {
    /// The body of an error with HTTP status `code`, canonical code name
    /// `status`, `message` and `details`.
    pub(super) fn new(
        code: u16,
        status: &'static str,
        message: &'a str,
        details: Vec<Detail<'a>>,
    ) -> Self {
        Body {
            error: Status {
                code,
                details,
                message,
                status,
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

/// One `@type`-tagged detail.
#[derive(Serialize)]
#[serde(transparent)]
pub(super) struct Detail<'a>(Kind<'a>);

#[derive(Serialize)]
#[serde(untagged)]
enum Kind<'a> {
    Info(Info<'a>),
    Resource(Resource<'a>),
    BadRequest(Fields<'a>),
    Preconditions(Preconditions<'a>),
    Retry(Retry),
}

impl<'a> Detail<'a> {
    pub(super) fn info(
        domain: &'a str,
        reason: &'a str,
        metadata: &'a HashMap<String, String>,
    ) -> Self {
        Detail(Kind::Info(Info {
            kind: ErrorInfo::TYPE_URL,
            domain,
            metadata: (metadata.iter())
                .map(|(key, value)| (key.as_str(), value.as_str()))
                .collect(),
            reason,
        }))
    }

    pub(super) fn resource(resource: &'a ResourceInfo) -> Self {
        Detail(Kind::Resource(Resource {
            kind: ResourceInfo::TYPE_URL,
            description: &resource.description,
            resource_name: &resource.resource_name,
            resource_type: &resource.resource_type,
        }))
    }

    pub(super) fn bad_request(violations: &'a [FieldViolation]) -> Self {
        let field = |v: &'a FieldViolation| Field {
            description: &v.description,
            field: &v.field,
        };
        Detail(Kind::BadRequest(Fields {
            kind: BadRequest::TYPE_URL,
            field_violations: violations.iter().map(field).collect(),
        }))
    }

    pub(super) fn preconditions(violations: &'a [PreconditionViolation]) -> Self {
        let precondition = |v: &'a PreconditionViolation| Precondition {
            description: &v.description,
            subject: &v.subject,
            kind: &v.r#type,
        };
        Detail(Kind::Preconditions(Preconditions {
            kind: PreconditionFailure::TYPE_URL,
            violations: violations.iter().map(precondition).collect(),
        }))
    }

    /// `RetryInfo` with its delay in proto3 JSON (`"1.500s"`).
    pub(super) fn retry(delay: String) -> Self {
        Detail(Kind::Retry(Retry {
            kind: RetryInfo::TYPE_URL,
            retry_delay: delay,
        }))
    }
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
