//! How every binding of the API is routed, and which bindings conflict.
//!
//! A binding whose template axum's router expresses (literals, then at most
//! one trailing `{x}` or `{x=**}`, no `:verb`) becomes an axum route as
//! before. Every other template is matched at run time
//! (`protoapi_runtime::rest::template`), under one axum route per literal prefix:
//! the literal segments before its first wildcard or variable. Any binding
//! whose requests that prefix's routes would take (its own literals start
//! with the prefix, or a variable of its may extend into it) is matched
//! there too, so axum never chooses between a route and the matcher. The
//! matcher tries the bindings of a prefix in precedence order
//! ([`PathTemplate::match_key`]: literal before `*` before `**`, segment by
//! segment; a `:verb` before none), which agrees with axum's own.
//!
//! Two bindings of one HTTP verb with the same match key (the same segments
//! and verb, whatever their variables are named) match the same requests:
//! precedence cannot choose, and that is a diagnostic naming both methods.
//!
//! Prefixes are chosen over the whole API: bindings of several services
//! may share one, and are matched together once the services' routes are
//! merged (`protoapi_runtime::rest::ServiceRoutes`).

use std::collections::BTreeMap;

use super::{Api, HttpRule};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::template::{MatchKey, PathTemplate, Segment};

/// The literal segments a template starts with.
fn literals(template: &PathTemplate) -> Vec<&str> {
    template.segments[..template.literal_prefix()]
        .iter()
        .map(|segment| match segment {
            Segment::Literal(text) => text.as_str(),
            _ => unreachable!("a literal prefix holds literals"),
        })
        .collect()
}

/// A binding with its service's full name and its method.
type Bound<'a> = (&'a str, &'a super::Method, &'a HttpRule);

/// Where a binding is: package, service, method and binding index.
type At = (usize, usize, usize, usize);

impl Api {
    /// Decides each binding's route (`HttpRule::matched_prefix`) and
    /// reports conflicts.
    pub(super) fn plan_routes(&mut self, diagnostics: &mut Diagnostics) {
        self.report_conflicts(diagnostics);
        let mut bindings: Vec<(At, &HttpRule)> = Vec::new();
        for (p, package) in self.packages.iter().enumerate() {
            for (s, service) in package.services.iter().enumerate() {
                for (m, method) in service.methods.iter().enumerate() {
                    for (b, binding) in method.bindings().enumerate() {
                        bindings.push(((p, s, m, b), binding));
                    }
                }
            }
        }
        let mut matched: Vec<bool> = bindings
            .iter()
            .map(|(_, b)| b.template.axum_shape().is_none())
            .collect();
        // Axum refuses `{x}` and `{*x}` at one position.
        for (i, (_, a)) in bindings.iter().enumerate() {
            for (_, b) in &bindings {
                let (Some(Some((_, multi_a))), Some(Some((_, multi_b)))) =
                    (a.template.axum_shape(), b.template.axum_shape())
                else {
                    continue;
                };
                if multi_a != multi_b && a.template.prefix() == b.template.prefix() {
                    matched[i] = true;
                }
            }
        }
        loop {
            let prefixes: Vec<Vec<&str>> = (0..bindings.len())
                .filter(|&i| matched[i])
                .map(|i| literals(&bindings[i].1.template))
                .collect();
            let mut grew = false;
            for (i, (_, binding)) in bindings.iter().enumerate() {
                let own = literals(&binding.template);
                let open = own.len() < binding.template.segments.len();
                let taken = prefixes
                    .iter()
                    .any(|p| own.starts_with(p) || (open && p.starts_with(&own)));
                if !matched[i] && taken {
                    matched[i] = true;
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        let prefixes: Vec<Vec<String>> = (0..bindings.len())
            .filter(|&i| matched[i])
            .map(|i| {
                literals(&bindings[i].1.template)
                    .into_iter()
                    .map(str::to_owned)
                    .collect()
            })
            .collect();
        let mut assigned = Vec::new();
        for (i, (at, binding)) in bindings.iter().enumerate() {
            if !matched[i] {
                continue;
            }
            let own: Vec<String> = literals(&binding.template)
                .into_iter()
                .map(str::to_owned)
                .collect();
            let shortest = prefixes
                .iter()
                .filter(|prefix| own.starts_with(prefix))
                .min_by_key(|prefix| prefix.len())
                .expect("a matched binding's own prefix is a prefix");
            let prefix: String = shortest.iter().map(|l| format!("/{l}")).collect();
            assigned.push((*at, prefix));
        }
        for ((p, s, m, b), prefix) in assigned {
            let Some(http) = &mut self.packages[p].services[s].methods[m].http else {
                continue;
            };
            let binding = if b == 0 {
                http
            } else {
                &mut http.additional_bindings[b - 1]
            };
            binding.matched_prefix = Some(prefix);
        }
    }

    /// Two bindings of one verb matching the same requests.
    fn report_conflicts(&self, diagnostics: &mut Diagnostics) {
        let mut seen: BTreeMap<(&str, MatchKey), Vec<Bound>> = BTreeMap::new();
        for service in self.packages.iter().flat_map(|p| &p.services) {
            for method in &service.methods {
                for binding in method.bindings() {
                    seen.entry((binding.verb.method(), binding.template.match_key()))
                        .or_default()
                        .push((&service.full_name, method, binding));
                }
            }
        }
        for ((verb, _), bindings) in seen {
            let [(service, first, rule), others @ ..] = bindings.as_slice() else {
                continue;
            };
            for (other_service, other, other_rule) in others {
                diagnostics.push(
                    Diagnostic::new(
                        other.location.clone(),
                        format!(
                            "`{verb} {}` of `{}.{}` matches the same requests as `{verb} {}` of `{service}.{}`: \
                             no precedence chooses between them",
                            other_rule.template.source,
                            other_service,
                            other.name,
                            rule.template.source,
                            first.name,
                        ),
                    )
                    .note(format!("`{}` is declared at {}", first.name, first.location)),
                );
            }
        }
    }
}
