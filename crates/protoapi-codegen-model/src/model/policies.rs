//! access policies (`google.iam.v1.IAMPolicy` methods declared in a service):
//! answered from the API's role bindings, the collection whose reference
//! to roles grants capabilities. A policy on an item is the bindings stored
//! under it, each role with the members granted it; setting one creates and
//! deletes bindings through the collection's own Create and Delete, so the
//! same rules hold (references, no escalation, capabilities).

use super::{Api, Method, Resource, Service, Standard};

/// A method of the API and the service declaring it.
#[derive(Clone, Copy, Debug)]
pub struct Declared<'a> {
    pub service: &'a Service,
    pub method: &'a Method,
}

/// Where the policies of an API come from: its role bindings.
#[derive(Clone, Copy, Debug)]
pub struct PolicyBindings<'a> {
    /// The bindings' resource.
    pub binding: &'a Resource,
    /// The resource bindings are stored under: what a policy is set on.
    pub holder: &'a Resource,
    /// Positions in the binding's references of the role granted and of
    /// the member it is granted to.
    pub role: usize,
    pub member: usize,
    /// How policies name members: `identity` in `identity:<uid>`.
    pub member_kind: &'a str,
    /// The bindings' Create, List and Delete of the current version.
    pub create: Declared<'a>,
    pub list: Declared<'a>,
    pub delete: Declared<'a>,
}

impl Api {
    /// The role bindings policies answer from, or why the API has none a
    /// policy can be read from and written to.
    pub fn policy_bindings(&self) -> Result<PolicyBindings<'_>, String> {
        let mut granting = self.resources().filter(|r| {
            r.references
                .iter()
                .any(|reference| reference.grants.is_some())
        });
        let binding = match (granting.next(), granting.next()) {
            (Some(binding), None) => binding,
            (None, _) => {
                return Err(
                    "no collection of the API grants roles (a reference with `grants` in \
                            its annotations), so there are no bindings to answer from"
                        .to_owned(),
                );
            }
            (Some(_), Some(_)) => {
                return Err(
                    "several collections of the API grant roles, so which holds the \
                            policies is ambiguous"
                        .to_owned(),
                );
            }
        };
        if binding.names.is_some() {
            return Err(format!(
                "`{}` is keyed by resource names, and policies are kept for UIDP-keyed bindings \
                 only",
                binding.plural
            ));
        }
        let role = binding.references.iter().position(|r| r.grants.is_some());
        let member = binding.references.iter().position(|r| r.grants.is_none());
        let (Some(role), Some(member)) = (role, member) else {
            return Err(format!(
                "`{}` names no member besides its role",
                binding.plural
            ));
        };
        let member_kind = self
            .resource(&binding.references[member].target)
            .map_or("member", |target| target.singular.as_str());
        let holder = (binding.parent_type.as_deref())
            .and_then(|parent| self.resources().find(|r| r.type_name == parent))
            .ok_or_else(|| {
                format!(
                    "`{}` declares no `parent` collection (annotation `parent`), so what a \
                     policy is set on is unknown",
                    binding.plural
                )
            })?;
        let standard = |wanted: fn(&Standard) -> bool, verb: &str| {
            self.packages
                .iter()
                .flat_map(|p| &p.services)
                .flat_map(|service| {
                    service
                        .methods
                        .iter()
                        .map(move |method| Declared { service, method })
                })
                .find(|d| {
                    wanted(&d.method.standard)
                        && d.method.view.is_none()
                        && d.method.long_running.is_none()
                        && d.method.standard.resource() == Some(binding.full_name.as_str())
                })
                .ok_or_else(|| {
                    format!(
                        "`{}` has no {verb} of its own that answers at once",
                        binding.plural
                    )
                })
        };
        Ok(PolicyBindings {
            binding,
            holder,
            role,
            member,
            member_kind,
            create: standard(|s| matches!(s, Standard::Create { .. }), "Create")?,
            list: standard(|s| matches!(s, Standard::List { .. }), "List")?,
            delete: standard(|s| matches!(s, Standard::Delete { .. }), "Delete")?,
        })
    }
}
