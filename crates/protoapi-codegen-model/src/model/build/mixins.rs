//! Services mixed into an API (a service configuration's `mixins`, stated
//! in the annotation files): `google.iam.v1.IAMPolicy`, served as a service
//! of its own on the items of the collection whose `mixins` names it, at
//! routes beside that collection's Get (`/v1/members/{resource=**}:getIamPolicy`),
//! since the routes a service configuration gives a mixin are not in its
//! protos. Its methods answer from the role bindings as the same methods
//! declared in a service of the API do.

use prost_reflect::DescriptorPool;

use super::{build_service, package_index};
use crate::annotations::{Annotations, MIXINS};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::{Api, HttpRule, Standard};
use crate::template::PathTemplate;

impl Api {
    /// Adds each mixin a collection names, routed beside its Get.
    pub(super) fn add_mixins(
        &mut self,
        pool: &DescriptorPool,
        annotations: &Annotations,
        diagnostics: &mut Diagnostics,
    ) {
        for (id, collection) in &annotations.collections {
            for name in collection.mixins.iter().flatten() {
                let at = || collection.source.at(name);
                let known = MIXINS.iter().map(|(known, _)| *known);
                if !known.clone().any(|known| known == name.get_ref()) {
                    let known: Vec<&str> = known.collect();
                    diagnostics.push(Diagnostic::new(
                        at(),
                        format!(
                            "unknown mixin `{}` (mixins: {})",
                            name.get_ref(),
                            known.join(", ")
                        ),
                    ));
                    continue;
                }
                let (Some(descriptor), Some(get)) =
                    (pool.get_service_by_name(name.get_ref()), self.get_route(id))
                else {
                    diagnostics.push(Diagnostic::new(
                        at(),
                        format!(
                            "`{}` is mixed into `{id}`, which has no Get with an HTTP rule to route it beside",
                            name.get_ref()
                        ),
                    ));
                    continue;
                };
                if self.service(name.get_ref()).is_some() {
                    diagnostics.push(Diagnostic::new(
                        at(),
                        format!(
                            "`{}` is mixed into more than one collection",
                            name.get_ref()
                        ),
                    ));
                    continue;
                }
                // Its methods are not the API's to diagnose.
                let mut service =
                    build_service(pool, &descriptor, &[], &mut Diagnostics::default());
                for method in &mut service.methods {
                    method.http = beside(&get, method.http.take());
                    if !matches!(method.standard, Standard::Policy(_)) {
                        method.http = None;
                    }
                }
                let index = package_index(&mut self.packages, descriptor.package_name());
                self.packages[index].services.push(service);
            }
        }
    }

    /// The HTTP rule of the current Get of collection `id`.
    fn get_route(&self, id: &str) -> Option<HttpRule> {
        let resource = self.resource_by_collection(id)?;
        (self.packages.iter())
            .flat_map(|p| &p.services)
            .flat_map(|s| &s.methods)
            .filter(|m| m.view.is_none())
            .find(|m| {
                matches!(&m.standard, Standard::Get { resource: r } if *r == resource.full_name)
            })
            .and_then(|m| m.http.clone())
    }

    /// Reports a policy mixin on a collection other than the one policies
    /// are kept on (the role bindings' parent).
    pub(in crate::model) fn check_mixins(
        &self,
        annotations: &Annotations,
        diagnostics: &mut Diagnostics,
    ) {
        let Ok(bindings) = self.policy_bindings() else {
            // Its methods are custom methods, with a warning saying why.
            return;
        };
        for (id, collection) in &annotations.collections {
            let policies = (collection.mixins.iter().flatten())
                .find(|name| name.get_ref() == "google.iam.v1.IAMPolicy");
            if let Some(name) = policies
                && *id != bindings.holder.plural
            {
                diagnostics.push(Diagnostic::new(
                    collection.source.at(name),
                    format!(
                        "`google.iam.v1.IAMPolicy` is mixed into `{id}`, but policies are kept on `{}` \
                         (the collection `{}` are stored under): mix it into `{}`",
                        bindings.holder.plural, bindings.binding.plural, bindings.holder.plural
                    ),
                ));
            }
        }
    }

    fn service(&self, full_name: &str) -> Option<&crate::model::Service> {
        (self.packages.iter())
            .flat_map(|p| &p.services)
            .find(|s| s.full_name == full_name)
    }
}

/// The mixin method's own rule (its verb and body), at the Get's route with
/// its key renamed `resource` and the method's custom verb
/// (`/v1/members/{uid=**}` → `/v1/members/{resource=**}:getIamPolicy`).
fn beside(get: &HttpRule, own: Option<HttpRule>) -> Option<HttpRule> {
    let own = own?;
    let key = get.template.variables.last()?;
    let source = &get.template.source;
    let renamed = source.replacen(&format!("{{{}", key.field), "{resource", 1);
    let verb = own.template.verb.as_deref()?;
    let template = PathTemplate::parse(&format!("{renamed}:{verb}")).ok()?;
    Some(HttpRule {
        template,
        additional_bindings: Vec::new(),
        ..own
    })
}
