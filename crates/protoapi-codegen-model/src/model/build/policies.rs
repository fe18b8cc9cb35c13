//! Access policy methods: reading and setting a policy needs what listing its
//! bindings does; an API without role bindings to answer from serves them
//! as custom methods, with a warning saying why.

use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::{Api, PolicyVerb, Standard};

impl Api {
    /// Gives Get and Set of access policies that state no capability the one
    /// of the bindings' List, or makes every access policy method a custom method when the API
    /// has no role bindings to answer it from.
    pub(super) fn resolve_policies(&mut self, diagnostics: &mut Diagnostics) {
        let bindings = self
            .policy_bindings()
            .map(|b| b.list.method.capability.clone());
        let methods = (self.packages.iter_mut())
            .flat_map(|p| &mut p.services)
            .flat_map(|s| &mut s.methods)
            .filter(|m| matches!(m.standard, Standard::Policy(_)));
        for method in methods {
            let why = match (&bindings, &method.standard) {
                (Ok(_), Standard::Policy(PolicyVerb::Test)) => continue,
                (Ok(list), _) => {
                    if method.capability.is_none() && !method.anonymous {
                        method.capability.clone_from(list);
                    }
                    continue;
                }
                (Err(why), _) => why,
            };
            method.standard = Standard::Custom;
            diagnostics.push(
                Diagnostic::warning(
                    method.location.clone(),
                    format!(
                        "`{}` reads or sets an access policy (`google.iam.v1`), but {why}: it is generated as a custom \
                         method whose handler you implement",
                        method.name
                    ),
                )
                .note("access policies are in codegen/README.md, \"Access policies\""),
            );
        }
    }
}
