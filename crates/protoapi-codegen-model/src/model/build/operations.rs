//! `google.longrunning.Operations`, served for an API whose standard
//! methods run as operations (AIP-151): its methods read the operations the
//! API's store keeps, at routes under the API's own version and locations
//! (`/v1/{name=projects/*/locations/*/operations/*}`), since the routes a
//! service configuration gives them are not in its protos.

use prost_reflect::DescriptorPool;

use super::{build_service, package_index};
use crate::diagnostics::Diagnostics;
use crate::model::{Api, HttpRule, Method, Standard, Verb};
use crate::template::{PathTemplate, Segment};

const SERVICE: &str = "google.longrunning.Operations";

impl Api {
    /// Adds `google.longrunning.Operations` when a method runs as an
    /// operation.
    pub(super) fn add_operations_service(&mut self, pool: &DescriptorPool) {
        let long_running: Vec<&Method> = (self.packages.iter())
            .flat_map(|p| &p.services)
            .flat_map(|s| &s.methods)
            .filter(|m| m.long_running.is_some())
            .collect();
        let Some(descriptor) = pool
            .get_service_by_name(SERVICE)
            .filter(|_| !long_running.is_empty())
        else {
            return;
        };
        let mut scopes: Vec<(String, String)> = (long_running.iter())
            .filter_map(|m| m.http.as_ref().map(|rule| scope(&rule.template)))
            .collect();
        scopes.sort();
        scopes.dedup();
        // Its methods are not the API's to diagnose.
        let mut service = build_service(pool, &descriptor, &[], &mut Diagnostics::default());
        for method in &mut service.methods {
            method.standard = Standard::Operations;
            method.http = routes(&method.name, &scopes);
        }
        let index = package_index(&mut self.packages, descriptor.package_name());
        self.packages[index].services.push(service);
    }
}

/// The version (`v1`, or `registry/v2`: the leading literals through the
/// first that names a version, else the first) and location pattern
/// (`projects/*/locations/*`, or empty for operations at the top) of a
/// long-running method's route.
fn scope(template: &PathTemplate) -> (String, String) {
    let literals: Vec<&str> = template
        .segments
        .iter()
        .map_while(|segment| match segment {
            Segment::Literal(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let is_version = |text: &&str| {
        text.strip_prefix('v')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    };
    let length = match literals.iter().position(is_version) {
        Some(at) => at + 1,
        None => literals.len().min(1),
    };
    let version = literals[..length].join("/");
    let segments = &template.segments[length..];
    let location = segments.windows(2).rposition(|pair| {
        pair[0] == Segment::Literal("locations".to_owned()) && pair[1] == Segment::Any
    });
    let location = location.map_or_else(String::new, |at| {
        let pattern: Vec<&str> = segments[..at + 2]
            .iter()
            .map(|segment| match segment {
                Segment::Literal(text) => text.as_str(),
                Segment::Any => "*",
                Segment::Rest => "**",
            })
            .collect();
        pattern.join("/")
    });
    (version, location)
}

/// The route of an Operations method under every scope, the first as the
/// rule and the others as its additional bindings.
fn routes(method: &str, scopes: &[(String, String)]) -> Option<HttpRule> {
    let mut rules = scopes.iter().filter_map(|(version, location)| {
        let version = match version.as_str() {
            "" => String::new(),
            version => format!("/{version}"),
        };
        let item = match location.as_str() {
            "" => "operations/*".to_owned(),
            location => format!("{location}/operations/*"),
        };
        let (verb, path, body) = match method {
            "ListOperations" if location.is_empty() => {
                (Verb::Get, format!("{version}/operations"), None)
            }
            "ListOperations" => (
                Verb::Get,
                format!("{version}/{{name={location}}}/operations"),
                None,
            ),
            "GetOperation" => (Verb::Get, format!("{version}/{{name={item}}}"), None),
            "DeleteOperation" => (Verb::Delete, format!("{version}/{{name={item}}}"), None),
            "CancelOperation" => (
                Verb::Post,
                format!("{version}/{{name={item}}}:cancel"),
                Some("*"),
            ),
            "WaitOperation" => (
                Verb::Post,
                format!("{version}/{{name={item}}}:wait"),
                Some("*"),
            ),
            _ => return None,
        };
        Some(HttpRule {
            verb,
            template: PathTemplate::parse(&path).ok()?,
            body: body.map(str::to_owned),
            response_body: None,
            additional_bindings: Vec::new(),
            matched_prefix: None,
        })
    });
    let mut rule = rules.next()?;
    rule.additional_bindings = rules.collect();
    Some(rule)
}
