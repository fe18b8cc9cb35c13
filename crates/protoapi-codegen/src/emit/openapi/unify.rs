//! Paths that differ only in their variables' names (`POST
//! /v1/groups/{parent}` creates, `GET /v1/groups/{uid}` reads), which
//! OpenAPI 3.1 forbids: such operations (of different verbs; those of one
//! verb are written apart by [`super::distinct`]) are written under one
//! path, the variable names of the path with the most operations, and a
//! renamed parameter says which request field it fills.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::distinct::shape;

/// `operations` (path, verb, operation), same-shaped paths under one.
pub(super) fn unify(operations: Vec<(String, String, Value)>) -> Vec<(String, String, Value)> {
    let mut by_shape: BTreeMap<String, BTreeMap<&str, usize>> = BTreeMap::new();
    for (path, _, _) in &operations {
        *by_shape
            .entry(shape(path))
            .or_default()
            .entry(path)
            .or_default() += 1;
    }
    // The path each shape is written as: the one most operations use, the
    // first in order on a tie.
    let chosen: BTreeMap<String, String> = by_shape
        .into_iter()
        .filter(|(_, paths)| paths.len() > 1)
        .map(|(shape, paths)| {
            let most = paths.values().max().copied().unwrap_or_default();
            let path = paths.into_iter().find(|(_, n)| *n == most).map(|(p, _)| p);
            (shape, path.unwrap_or_default().to_owned())
        })
        .collect();
    let mut taken: BTreeSet<(String, String)> = operations
        .iter()
        .filter(|(path, _, _)| chosen.get(&shape(path)) == Some(path))
        .map(|(path, verb, _)| (path.clone(), verb.clone()))
        .collect();
    operations
        .into_iter()
        .map(|(path, verb, mut operation)| {
            let Some(target) = chosen.get(&shape(&path)) else {
                return (path, verb, operation);
            };
            if *target == path || !taken.insert((target.clone(), verb.clone())) {
                return (path, verb, operation);
            }
            for (old, new) in variables(&path).into_iter().zip(variables(target)) {
                rename(&mut operation, old, new);
            }
            (target.clone(), verb, operation)
        })
        .collect()
}

/// The variables' names of `path`, in order.
fn variables(path: &str) -> Vec<&str> {
    path.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
        .collect()
}

/// Renames the path parameter `old` of `operation` to `new`, its
/// description naming the request field it fills.
fn rename(operation: &mut Value, old: &str, new: &str) {
    if old == new {
        return;
    }
    let parameters = operation
        .get_mut("parameters")
        .and_then(Value::as_array_mut);
    for parameter in parameters.into_iter().flatten() {
        if parameter["in"] == "path" && parameter["name"] == old {
            let described = parameter["description"].as_str().unwrap_or_default();
            parameter["description"] = Value::from(format!("The request's `{old}`. {described}"));
            parameter["name"] = Value::from(new);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn op(name: &str) -> Value {
        json!({"parameters": [{"name": name, "in": "path", "description": "Matches `*`."}]})
    }

    #[test]
    fn same_shaped_paths_take_the_names_most_operations_use() {
        let unified = unify(vec![
            ("/v1/groups/{parent}".into(), "post".into(), op("parent")),
            ("/v1/groups/{uid}".into(), "get".into(), op("uid")),
            ("/v1/groups/{uid}".into(), "delete".into(), op("uid")),
            ("/v1/other/{x}".into(), "get".into(), op("x")),
        ]);
        let paths: BTreeSet<&str> = unified.iter().map(|(p, _, _)| p.as_str()).collect();
        assert_eq!(paths, BTreeSet::from(["/v1/groups/{uid}", "/v1/other/{x}"]));
        let post = &unified[0].2["parameters"][0];
        assert_eq!(post["name"], "uid");
        assert_eq!(post["description"], "The request's `parent`. Matches `*`.");
    }

    #[test]
    fn a_verb_already_taken_on_the_path_keeps_its_own() {
        let unified = unify(vec![
            ("/v1/a/{x}".into(), "get".into(), op("x")),
            ("/v1/a/{y}".into(), "get".into(), op("y")),
            ("/v1/a/{x}".into(), "post".into(), op("x")),
        ]);
        assert_eq!(unified[1].0, "/v1/a/{y}");
    }
}
