//! Who may call each method: the capability it needs (`permissions`), or
//! none at all (`anonymous`).

use toml::Spanned;

use super::Table;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::{Api, Method};

/// A collection's `permissions` and `anonymous`, resolved against its methods.
pub(super) struct Permissions {
    /// (method, capability) as stated.
    capabilities: Vec<(String, String)>,
    anonymous: Vec<String>,
    /// `permissions` or `anonymous` names a method the collection lacks.
    pub(super) misnamed: bool,
}

impl Permissions {
    /// Sets who may call `method`, one of the collection's.
    pub(super) fn apply(&self, method: &mut Method) {
        if let Some((_, capability)) = self
            .capabilities
            .iter()
            .find(|(name, _)| *name == method.name)
        {
            method.capability = Some(capability.clone());
        }
        method.anonymous = self.anonymous.contains(&method.name);
    }
}

impl Api {
    /// Resolves the table's `permissions` and `anonymous`, each naming a
    /// method of the collection.
    pub(super) fn permissions(&self, table: &Table, diagnostics: &mut Diagnostics) -> Permissions {
        let collection = table.collection;
        let methods: Vec<&str> = self
            .methods()
            .filter(|m| m.standard.resource() == Some(table.resource.full_name.as_str()))
            .map(|m| m.name.as_str())
            .collect();
        // A misspelt method name leaves the method meant without a
        // permission: the misspelling is reported, with the methods left
        // without one as a note, instead of a second error for each.
        let unpermitted: Vec<&str> = methods
            .iter()
            .copied()
            .filter(|method| {
                !collection
                    .permissions
                    .keys()
                    .chain(&collection.anonymous)
                    .any(|named| named.get_ref() == method)
            })
            .collect();
        let unknown = |key: &str, method: &Spanned<String>, listed: String| {
            let diagnostic = Diagnostic::new(
                table.at(method),
                format!(
                    "`{key}` names `{}`, which is not a method on `{}`{listed}",
                    method.get_ref(),
                    table.id
                ),
            );
            if unpermitted.is_empty() {
                diagnostic
            } else {
                diagnostic.note(format!(
                    "methods without a permission: {}",
                    unpermitted.join(", ")
                ))
            }
        };
        let mut permissions = Permissions {
            capabilities: Vec::new(),
            anonymous: Vec::new(),
            misnamed: false,
        };
        for method in &collection.anonymous {
            if methods.contains(&method.get_ref().as_str()) {
                permissions.anonymous.push(method.get_ref().clone());
            } else {
                permissions.misnamed = true;
                diagnostics.push(unknown("anonymous", method, String::new()));
            }
        }
        for (method, capability) in &collection.permissions {
            if methods.contains(&method.get_ref().as_str()) {
                let stated = (method.get_ref().clone(), capability.get_ref().clone());
                permissions.capabilities.push(stated);
            } else {
                permissions.misnamed = true;
                let listed = format!(" (methods: {})", methods.join(", "));
                diagnostics.push(unknown("permissions", method, listed));
            }
        }
        permissions
    }

    /// Deny by default: every standard method states who may call it (of a
    /// collection that misnames a method, the misnaming said it).
    pub(super) fn require_permissions(&self, misnamed: &[String], diagnostics: &mut Diagnostics) {
        for method in self.methods() {
            if let Some(resource) = method.standard.resource()
                && method.capability.is_none()
                && !method.anonymous
                && !misnamed.iter().any(|name| name == resource)
            {
                diagnostics.push(Diagnostic::new(
                    method.location.clone(),
                    format!(
                        "method `{}` has no permission: add it to the collection's `permissions` (or `anonymous`) in annotations.toml",
                        method.name
                    ),
                ));
            }
        }
    }
}
