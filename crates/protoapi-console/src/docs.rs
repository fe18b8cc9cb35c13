//! A human API reference, served at `/docs` beside `/openapi.json`:
//! server-rendered HTML (askama, escaped, no script) from the API's OpenAPI
//! document, so every API built with the generator has one. Each service
//! (tag) with its operations (method, path, summary, description, whether a
//! token is needed, parameters, body, answers) and each schema with its
//! properties; anchors by operationId and schema name.

use askama::Template;
use serde_json::{Map, Value};

/// The stylesheet of the page, served at [`STYLESHEET_PATH`].
pub const STYLESHEET: &str = include_str!("../assets/docs.css");
/// Where the page links its stylesheet.
pub const STYLESHEET_PATH: &str = "/docs/reference.css";
/// The page's Content-Security-Policy: its stylesheet, nothing else.
pub const POLICY: &str = "default-src 'none'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// The page of `openapi` (an OpenAPI document, JSON), or why it cannot be
/// read.
pub fn page(openapi: &str) -> Result<String, String> {
    let document: Value = serde_json::from_str(openapi).map_err(|error| error.to_string())?;
    let reference = Reference::of(&document);
    reference.render().map_err(|error| error.to_string())
}

#[derive(Template)]
#[template(path = "docs/reference.html")]
struct Reference {
    title: String,
    version: String,
    description: String,
    stylesheet: &'static str,
    services: Vec<Service>,
    schemas: Vec<Schema>,
}

struct Service {
    name: String,
    description: String,
    operations: Vec<Operation>,
}

struct Operation {
    id: String,
    method: String,
    path: String,
    summary: String,
    description: String,
    token: &'static str,
    parameters: Vec<Property>,
    body: Option<Kind>,
    answer: Option<Kind>,
}

/// A parameter or a property: its name, type, and what the document says.
struct Property {
    name: String,
    place: String,
    kind: Kind,
    notes: String,
    description: String,
}

/// A type, linking to the schema it names.
struct Kind {
    text: String,
    schema: Option<String>,
}

struct Schema {
    name: String,
    description: String,
    properties: Vec<Property>,
}

const METHODS: &[&str] = &["get", "put", "post", "patch", "delete"];

impl Reference {
    fn of(document: &Value) -> Reference {
        let info = &document["info"];
        let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
        let mut services: Vec<Service> = (document["tags"].as_array().into_iter().flatten())
            .map(|tag| Service {
                name: text(&tag["name"]),
                description: text(&tag["description"]),
                operations: Vec::new(),
            })
            .collect();
        let paths = document["paths"].as_object().cloned().unwrap_or_default();
        for (path, item) in &paths {
            for method in METHODS {
                let Some(operation) = item.get(*method) else {
                    continue;
                };
                let tag = text(&operation["tags"][0]);
                let service = match services.iter().position(|s| s.name == tag) {
                    Some(at) => &mut services[at],
                    None => {
                        services.push(Service {
                            name: tag,
                            description: String::new(),
                            operations: Vec::new(),
                        });
                        services.last_mut().expect("just pushed")
                    }
                };
                service
                    .operations
                    .push(Operation::of(method, path, operation));
            }
        }
        services.retain(|service| !service.operations.is_empty());
        let schemas = (document["components"]["schemas"]
            .as_object()
            .into_iter()
            .flatten())
        .map(|(name, schema)| Schema {
            name: name.clone(),
            description: text(&schema["description"]),
            properties: properties(schema),
        })
        .collect();
        Reference {
            title: text(&info["title"]),
            version: text(&info["version"]),
            description: text(&info["description"]),
            stylesheet: STYLESHEET_PATH,
            services,
            schemas,
        }
    }
}

impl Operation {
    fn of(method: &str, path: &str, operation: &Value) -> Operation {
        let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
        // `[{}, {"bearer": []}]`: with or without a token.
        let token = match operation["security"].as_array() {
            Some(any) if any.iter().any(|s| s.as_object().is_some_and(Map::is_empty)) => {
                "A token is optional."
            }
            _ => "Needs a token.",
        };
        let parameters = (operation["parameters"].as_array().into_iter().flatten())
            .map(|parameter| Property {
                name: text(&parameter["name"]),
                place: text(&parameter["in"]),
                kind: Kind::of(&parameter["schema"]),
                notes: match parameter["required"].as_bool() {
                    Some(true) => "required".to_owned(),
                    _ => String::new(),
                },
                description: text(&parameter["description"]),
            })
            .collect();
        let content = |value: &Value| {
            let content = value["content"].as_object()?;
            let (_, media) = content.iter().next()?;
            Some(Kind::of(&media["schema"]))
        };
        Operation {
            id: text(&operation["operationId"]),
            method: method.to_uppercase(),
            path: path.to_owned(),
            summary: text(&operation["summary"]),
            description: text(&operation["description"]),
            token,
            parameters,
            body: content(&operation["requestBody"]),
            answer: content(&operation["responses"]["200"]),
        }
    }
}

impl Kind {
    fn of(schema: &Value) -> Kind {
        if let Some(reference) = schema["$ref"].as_str() {
            let name = reference.rsplit('/').next().unwrap_or(reference).to_owned();
            return Kind {
                text: name.clone(),
                schema: Some(name),
            };
        }
        if let Some(inner) = schema["allOf"].get(0) {
            return Kind::of(inner);
        }
        let ty = schema["type"].as_str().unwrap_or("any");
        let text = match ty {
            "array" => {
                let items = Kind::of(&schema["items"]);
                return Kind {
                    text: format!("list of {}", items.text),
                    schema: items.schema,
                };
            }
            "object" if schema["additionalProperties"].is_object() => {
                let values = Kind::of(&schema["additionalProperties"]);
                return Kind {
                    text: format!("map of {}", values.text),
                    schema: values.schema,
                };
            }
            _ => match (schema["format"].as_str(), schema["enum"].as_array()) {
                (_, Some(values)) => {
                    let values: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
                    format!("one of {}", values.join(", "))
                }
                (Some(format), None) => format!("{ty} ({format})"),
                (None, None) => ty.to_owned(),
            },
        };
        Kind { text, schema: None }
    }
}

fn properties(schema: &Value) -> Vec<Property> {
    let required: Vec<&str> = (schema["required"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    (schema["properties"].as_object().into_iter().flatten())
        .map(|(name, property)| {
            let mut notes = Vec::new();
            if required.contains(&name.as_str()) {
                notes.push("required");
            }
            if property["readOnly"].as_bool() == Some(true) {
                notes.push("output only");
            }
            Property {
                name: name.clone(),
                place: String::new(),
                kind: Kind::of(property),
                notes: notes.join(", "),
                description: property["description"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_operation_and_schema_is_on_the_page() {
        let openapi = r##"{
            "openapi": "3.1.0",
            "info": {"title": "Shelves <API>", "version": "v1", "description": "Books."},
            "tags": [{"name": "ShelfService", "description": "Shelves of books."}],
            "paths": {"/v1/shelves/{uid}": {"get": {
                "operationId": "ShelfService_GetShelf", "tags": ["ShelfService"],
                "summary": "Returns one shelf",
                "parameters": [{"name": "uid", "in": "path", "required": true, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "Success.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Shelf"}}}}},
                "security": [{"bearer": []}]
            }}},
            "components": {"schemas": {"Shelf": {"type": "object", "description": "A shelf.",
                "properties": {"uid": {"type": "string", "readOnly": true, "description": "Its UIDP."},
                               "tags": {"type": "array", "items": {"type": "string"}}}}}}
        }"##;
        let page = super::page(openapi).unwrap();
        for expected in [
            "Shelves &#60;API&#62;",
            "id=\"ShelfService_GetShelf\"",
            "GET",
            "/v1/shelves/{uid}",
            "Returns one shelf",
            "Needs a token.",
            "href=\"#schema-Shelf\"",
            "id=\"schema-Shelf\"",
            "output only",
            "list of string",
        ] {
            assert!(page.contains(expected), "{expected} in {page}");
        }
        assert!(!page.contains("<script"));
    }
}
