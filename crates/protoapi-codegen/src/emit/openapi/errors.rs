//! The error model in OpenAPI: the `Error` body every operation answers on
//! failure, its `details` typed as the `google.rpc` detail messages the
//! runtime sends (each told apart by its `@type`), and the responses that
//! name it.

use serde_json::{Map, Value, json};

/// A `google.rpc` error detail: its message name, what it says, and its
/// JSON properties (proto3 JSON names) with their kinds.
type Detail = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// The `google.rpc` error details.
const DETAILS: &[Detail] = &[
    (
        "ErrorInfo",
        "Why the request failed: a reason, unique within its domain, and facts about it.",
        &[
            ("reason", "string"),
            ("domain", "string"),
            ("metadata", "map"),
        ],
    ),
    (
        "BadRequest",
        "The fields of the request that are wrong, and why.",
        &[("fieldViolations", "fieldViolations")],
    ),
    (
        "PreconditionFailure",
        "What must change before the request can succeed, e.g. the items keeping one from being deleted.",
        &[("violations", "preconditionViolations")],
    ),
    (
        "ResourceInfo",
        "The resource the error is about.",
        &[
            ("resourceType", "string"),
            ("resourceName", "string"),
            ("owner", "string"),
            ("description", "string"),
        ],
    ),
    (
        "RetryInfo",
        "How long to wait before retrying.",
        &[("retryDelay", "duration")],
    ),
    (
        "QuotaFailure",
        "The quotas or rate limits the request exceeded.",
        &[("violations", "quotaViolations")],
    ),
    (
        "RequestInfo",
        "The request, as the server names it in its logs.",
        &[("requestId", "string"), ("servingData", "string")],
    ),
    (
        "LocalizedMessage",
        "The error's message in a locale.",
        &[("locale", "string"), ("message", "string")],
    ),
    (
        "Help",
        "Links to documentation about the error.",
        &[("links", "links")],
    ),
];

/// The schema components of the error body: `Error` and each detail.
pub(super) fn components(components: &mut Map<String, Value>) {
    components.insert("Error".to_owned(), error());
    for (name, description, properties) in DETAILS {
        components.insert(
            format!("google.rpc.{name}"),
            detail(name, description, properties),
        );
    }
}

/// An operation's responses besides its success: `4XX` for a request the
/// server refused, `default` for the rest (unavailable, internal).
pub(super) fn responses(success: Value) -> Value {
    let error = json!({"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}});
    json!({
        "200": success,
        "4XX": {
            "description": "The request was refused: invalid, unauthenticated, not allowed, not found, \
                            in conflict, failing a precondition, or over a rate limit.",
            "content": error,
        },
        "default": {"description": "Another error (unavailable, internal).", "content": error},
    })
}

fn error() -> Value {
    let refs: Vec<Value> = DETAILS
        .iter()
        .map(|(name, ..)| json!({"$ref": format!("#/components/schemas/google.rpc.{name}")}))
        .collect();
    let mapping: Map<String, Value> = DETAILS
        .iter()
        .map(|(name, ..)| {
            (
                type_url(name),
                json!(format!("#/components/schemas/google.rpc.{name}")),
            )
        })
        .collect();
    json!({
        "type": "object",
        "description": "The Google API error model: the canonical code, a message, and typed details.",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "status", "message", "details"],
                "properties": {
                    "code": {"type": "integer", "description": "The HTTP status."},
                    "status": {"type": "string", "description": "The canonical code, e.g. `NOT_FOUND`."},
                    "message": {"type": "string", "description": "What went wrong, for a developer."},
                    "details": {
                        "type": "array",
                        "description": "Typed details, each named by its `@type`.",
                        "items": {
                            "oneOf": refs,
                            "discriminator": {"propertyName": "@type", "mapping": mapping},
                        },
                    },
                },
            },
        },
    })
}

fn type_url(name: &str) -> String {
    format!("type.googleapis.com/google.rpc.{name}")
}

fn detail(name: &str, description: &str, properties: &[(&str, &str)]) -> Value {
    let mut schema = Map::new();
    schema.insert(
        "@type".to_owned(),
        json!({"type": "string", "const": type_url(name)}),
    );
    for (property, kind) in properties {
        schema.insert((*property).to_owned(), property_schema(kind));
    }
    json!({
        "type": "object",
        "description": description,
        "required": ["@type"],
        "properties": schema,
    })
}

fn property_schema(kind: &str) -> Value {
    let string = json!({"type": "string"});
    let list = |properties: &[&str]| {
        let properties: Map<String, Value> = properties
            .iter()
            .map(|p| ((*p).to_owned(), string.clone()))
            .collect();
        json!({"type": "array", "items": {"type": "object", "properties": properties}})
    };
    match kind {
        "map" => json!({"type": "object", "additionalProperties": {"type": "string"}}),
        "duration" => json!({"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?s$"}),
        "fieldViolations" => list(&["field", "description", "reason"]),
        "preconditionViolations" => list(&["type", "subject", "description"]),
        "quotaViolations" => list(&["subject", "description"]),
        "links" => list(&["description", "url"]),
        _ => string,
    }
}
