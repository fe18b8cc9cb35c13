//! Operations still running on an item (AIP-151): read through the API's
//! `ListOperations` as the signed-in caller (so only those the caller may
//! read), at the location of the item when the API names operations under
//! locations.

use http::Method;
use protoapi_http::rest::template::{Segment, Template};
use serde_json::Value;

use super::reply::encode;
use super::shared::Shared;
use super::view::Running;
use super::visit::Visit;
use protoapi_client::schema::Collection;

/// Running operations read for one page at most; the operations service
/// reads at most ten per item of a page itself.
const SCANNED: usize = 50;

impl Shared {
    /// The operations still running on the item `key` of `collection`
    /// that the caller may read; none (and no call) when no method runs on
    /// the collection's items as an operation.
    pub(super) async fn running(
        &self,
        visit: &Visit,
        collection: &Collection,
        key: &str,
    ) -> Vec<Running> {
        let rule = (self.schema.operations)
            .filter(|_| collection.long_running)
            .and_then(|route| route.http.as_ref());
        let Some(rule) = rule else {
            return Vec::new();
        };
        let Some(scope) = scope(&rule.template, key) else {
            return Vec::new();
        };
        let path = format!(
            "{}?filter={}&pageSize={SCANNED}",
            rule.template.expand(|_| scope.clone()),
            encode("done = false")
        );
        let Ok(page) = self.call(visit, Method::GET, &path, None).await else {
            return Vec::new();
        };
        let operations = page["operations"].as_array().into_iter().flatten();
        operations
            .filter(|operation| operation["metadata"]["target"] == key)
            .map(|operation| {
                let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
                Running {
                    name: text(&operation["name"]),
                    verb: text(&operation["metadata"]["verb"]),
                    since: super::form::display(&operation["metadata"]["createTime"], "lines"),
                }
            })
            .collect()
    }
}

/// What the variable of `template` (the operations' location) is for the
/// item `key`: the leading segments of the key its pattern covers, or
/// empty when it has none; `None` when the key does not fit it.
fn scope(template: &Template, key: &str) -> Option<String> {
    let Some(variable) = template.variables.first() else {
        return Some(String::new());
    };
    let pattern = &template.segments[variable.start..variable.end];
    let parts: Vec<&str> = key.split('/').collect();
    let fits = parts.len() >= pattern.len()
        && pattern
            .iter()
            .zip(&parts)
            .all(|(segment, part)| match segment {
                Segment::Literal(text) => text == part,
                Segment::Any => !part.is_empty(),
                Segment::Rest => true,
            });
    fits.then(|| parts[..pattern.len()].join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use protoapi_http::rest::template::Variable;

    #[test]
    fn the_operations_of_an_item_are_listed_at_its_location() {
        static LOCATED: Template = Template {
            segments: &[
                Segment::Literal("v1"),
                Segment::Literal("projects"),
                Segment::Any,
                Segment::Literal("locations"),
                Segment::Any,
                Segment::Literal("operations"),
            ],
            variables: &[Variable {
                field: "name",
                start: 1,
                end: 5,
            }],
            verb: None,
        };
        let key = "projects/p/locations/l/branches/b";
        assert_eq!(
            scope(&LOCATED, key).as_deref(),
            Some("projects/p/locations/l")
        );
        assert_eq!(scope(&LOCATED, "shelves/s"), None);
        assert_eq!(scope(&LOCATED, "projects/p"), None);
        static TOP: Template = Template {
            segments: &[Segment::Literal("operations")],
            variables: &[],
            verb: None,
        };
        assert_eq!(scope(&TOP, "0123/4567").as_deref(), Some(""));
    }
}
