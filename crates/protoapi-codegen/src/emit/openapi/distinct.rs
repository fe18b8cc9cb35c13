//! Operations whose templates write the same OpenAPI path and verb:
//! `GET /v1/{name=shippers/*}` and `GET /v1/{name=sites/*}` are both
//! `GET /v1/{name}`, and a path item holds one operation per verb (so are
//! `PATCH /v1/{shipper.name=shippers/*}` and `PATCH /v1/{site.name=sites/*}`,
//! whose paths differ only in a variable's name, which OpenAPI 3.1 forbids). Each of
//! them is written instead with its variables' literal segments in the path
//! and one parameter per id segment (`/v1/shippers/{shippersId}`), which
//! sends the same request.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::template::{PathTemplate, Segment};

/// One operation of the document: its path, verb, body and template.
pub(super) struct Operation<'a> {
    pub path: String,
    pub verb: String,
    pub operation: Value,
    pub template: &'a PathTemplate,
}

/// `path` with every variable's name left out (`/v1/groups/{}`).
pub(super) fn shape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut inside = false;
    for c in path.chars() {
        match c {
            '{' => {
                inside = true;
                out.push_str("{}");
            }
            '}' => inside = false,
            _ if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

/// `operations`, those sharing a path and verb written apart.
pub(super) fn distinct(operations: Vec<Operation<'_>>) -> Vec<(String, String, Value)> {
    let mut shared: HashMap<(String, String), usize> = HashMap::new();
    for op in &operations {
        *shared
            .entry((shape(&op.path), op.verb.clone()))
            .or_default() += 1;
    }
    operations
        .into_iter()
        .map(|mut op| {
            if shared[&(shape(&op.path), op.verb.clone())] > 1 {
                let (path, parameters) = expand(op.template);
                replace_path_parameters(&mut op.operation, op.template, parameters);
                op.path = path;
            }
            (op.path, op.verb, op.operation)
        })
        .collect()
}

/// The template's path with every variable's own segments written out, and
/// a parameter for each id segment, named after the literal before it.
fn expand(template: &PathTemplate) -> (String, Vec<Value>) {
    let mut path = String::new();
    let mut parameters: Vec<Value> = Vec::new();
    let mut index = 0;
    while index < template.segments.len() {
        path.push('/');
        let Some(variable) = template.variables.iter().find(|v| v.start == index) else {
            match &template.segments[index] {
                Segment::Literal(text) => path.push_str(text),
                Segment::Any | Segment::Rest => path.push('-'),
            }
            index += 1;
            continue;
        };
        let mut previous: Option<&str> = None;
        for (at, segment) in template.segments[variable.start..variable.end]
            .iter()
            .enumerate()
        {
            if at > 0 {
                path.push('/');
            }
            let Segment::Literal(text) = segment else {
                let base =
                    previous.map_or_else(|| variable.field.replace('.', "_"), |c| format!("{c}Id"));
                let taken = |name: &str| parameters.iter().any(|p| p["name"] == name);
                let mut name = base.clone();
                let mut n = 2;
                while taken(&name) {
                    name = format!("{base}{n}");
                    n += 1;
                }
                path.push_str(&format!("{{{name}}}"));
                let rest = matches!(segment, Segment::Rest);
                parameters.push(json!({
                    "name": name,
                    "in": "path",
                    "required": true,
                    "description": format!(
                        "A segment of `{}`{}.",
                        variable.field,
                        if rest { ", the rest of the path (`/` kept)" } else { "" }
                    ),
                    "schema": {"type": "string"},
                }));
                continue;
            };
            path.push_str(text);
            previous = Some(text);
        }
        index = variable.end;
    }
    if let Some(verb) = &template.verb {
        path.push(':');
        path.push_str(verb);
    }
    (path, parameters)
}

/// `operation`'s path parameters for the template's variables, replaced by
/// `parameters`.
fn replace_path_parameters(operation: &mut Value, template: &PathTemplate, parameters: Vec<Value>) {
    let Some(object) = operation.as_object_mut() else {
        return;
    };
    let bound = |p: &Value| {
        p["in"] == "path"
            && template
                .variables
                .iter()
                .any(|v| p["name"] == v.field.as_str())
    };
    let mut all = parameters;
    if let Some(Value::Array(existing)) = object.remove("parameters") {
        all.extend(existing.into_iter().filter(|p| !bound(p)));
    }
    if !all.is_empty() {
        object.insert("parameters".into(), Value::Array(all));
    }
}
