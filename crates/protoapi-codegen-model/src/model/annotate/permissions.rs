//! Who may call each method: the capability it needs (`permissions`, by
//! default `<collection>.<verb>`), or none at all (`anonymous`); and the
//! capabilities the application checks itself (`capabilities`).

use toml::Spanned;

use super::Table;
use crate::annotations::Collection;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::{Api, Method, Standard};

/// A collection's `permissions` and `anonymous`, resolved against its methods.
pub(super) struct Permissions {
    /// (method, capability) as stated.
    capabilities: Vec<(String, String)>,
    anonymous: Vec<String>,
}

impl Permissions {
    /// Sets who may call `method`, one of the collection's, as stated.
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
        // A misspelt method name leaves the method meant to its default:
        // the misspelling is reported with the methods the table states no
        // permission for as a note, the one meant among them.
        let unpermitted = unstated(collection, &methods);
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
        };
        for method in &collection.anonymous {
            if methods.contains(&method.get_ref().as_str()) {
                permissions.anonymous.push(method.get_ref().clone());
            } else {
                diagnostics.push(unknown("anonymous", method, String::new()));
            }
        }
        for (method, capability) in &collection.permissions {
            if methods.contains(&method.get_ref().as_str()) {
                let stated = (method.get_ref().clone(), capability.get_ref().clone());
                permissions.capabilities.push(stated);
            } else {
                let listed = format!(" (methods: {})", methods.join(", "));
                diagnostics.push(unknown("permissions", method, listed));
            }
        }
        permissions
    }

    /// Gives every standard method that states no permission and is not
    /// anonymous the default capability, `<collection>.<verb>`
    /// (`CreateBook`: `books.create`).
    pub(super) fn default_capabilities(&mut self) {
        let collections: Vec<(String, String)> = self
            .resources()
            .map(|r| (r.full_name.clone(), r.plural.clone()))
            .collect();
        for method in self.methods_mut() {
            if method.capability.is_some() || method.anonymous {
                continue;
            }
            let Some((resource, verb)) = resource_and_verb(&method.standard) else {
                continue;
            };
            if let Some((_, collection)) = collections.iter().find(|(name, _)| name == resource) {
                method.capability = Some(format!("{collection}.{verb}"));
            }
        }
    }
}

/// The verbs of a collection's methods' default capabilities.
const METHOD_VERBS: [&str; 6] = ["create", "get", "list", "update", "delete", "undelete"];

/// The table's `capabilities`, as `<collection>.<verb>`: each a verb of
/// its own (a lower-case letter, then letters and digits, at most 32), once,
/// and not one a standard method's capability already has.
pub(super) fn capabilities(table: &Table, diagnostics: &mut Diagnostics) -> Vec<String> {
    let mut capabilities = Vec::new();
    for verb in &table.collection.capabilities {
        let text = verb.get_ref();
        let problem = if !is_verb(text) {
            Some(format!(
                "`capabilities` names verbs such as `pull` (a lower-case letter, then letters and \
                 digits, at most 32): `{text}` is not one"
            ))
        } else if METHOD_VERBS.contains(&text.as_str()) {
            Some(format!(
                "`{}.{text}` is the capability of a standard method already; `capabilities` \
                 declares others",
                table.id
            ))
        } else if capabilities.contains(&format!("{}.{text}", table.id)) {
            Some(format!("`capabilities` names `{text}` twice"))
        } else {
            None
        };
        match problem {
            Some(problem) => diagnostics.push(Diagnostic::new(table.at(verb), problem)),
            None => capabilities.push(format!("{}.{text}", table.id)),
        }
    }
    capabilities
}

fn is_verb(text: &str) -> bool {
    let mut chars = text.chars();
    text.len() <= 32
        && chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_alphanumeric())
}

/// The methods neither `permissions` nor `anonymous` names.
fn unstated<'m>(collection: &Collection, methods: &[&'m str]) -> Vec<&'m str> {
    let stated = collection.permissions.keys().chain(&collection.anonymous);
    methods
        .iter()
        .copied()
        .filter(|method| !stated.clone().any(|named| named.get_ref() == method))
        .collect()
}

/// The resource a standard method serves, and the verb of its default
/// capability.
fn resource_and_verb(standard: &Standard) -> Option<(&str, &'static str)> {
    match standard {
        Standard::Create { resource, .. } => Some((resource, "create")),
        Standard::Get { resource } => Some((resource, "get")),
        Standard::List { resource, .. } => Some((resource, "list")),
        Standard::Update { resource, .. } => Some((resource, "update")),
        Standard::Delete { resource } => Some((resource, "delete")),
        Standard::Undelete { resource } => Some((resource, "undelete")),
        // Each item is authorized as its Get is.
        Standard::BatchGet { resource, .. } => Some((resource, "get")),
        // Each operation is authorized as the Get of what it acts on, a
        // policy as the list of its bindings (`model::policies`).
        Standard::Operations | Standard::Policy(_) | Standard::Custom => None,
    }
}
