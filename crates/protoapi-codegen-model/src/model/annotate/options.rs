//! Rules the proto states in options of its own, which an annotation names
//! instead of restating: `permission_option` in the `["*"]` table names a
//! string method option (`acme.v1.required_permission`) whose value on each
//! method is the capability the method needs.

use prost_reflect::{DescriptorPool, ExtensionDescriptor, Kind, Value};
use toml::Spanned;

use crate::annotations::{Annotations, SourceFile};
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::model::Api;

/// The message every method option extends.
const METHOD_OPTIONS: &str = "google.protobuf.MethodOptions";

impl Api {
    /// Gives each method that states no permission in the annotations, and
    /// is not anonymous, the capability its `permission_option` holds.
    pub(super) fn apply_permission_option(
        &mut self,
        pool: &DescriptorPool,
        annotations: &Annotations,
        diagnostics: &mut Diagnostics,
    ) {
        for defaults in &annotations.defaults {
            let Some(option) = &defaults.permission_option else {
                continue;
            };
            let Some(extension) = method_extension(pool, option, &defaults.source, diagnostics)
            else {
                continue;
            };
            for service in self.packages.iter_mut().flat_map(|p| &mut p.services) {
                let Some(descriptor) = pool.get_service_by_name(&service.full_name) else {
                    continue;
                };
                for method in &mut service.methods {
                    if method.capability.is_some() || method.anonymous {
                        continue;
                    }
                    let Some(stated) = descriptor.methods().find(|m| m.name() == method.name)
                    else {
                        continue;
                    };
                    let options = stated.options();
                    if !options.has_extension(&extension) {
                        continue;
                    }
                    if let Value::String(capability) = options.get_extension(&extension).as_ref()
                        && !capability.is_empty()
                    {
                        method.capability = Some(capability.clone());
                    }
                }
            }
        }
    }
}

/// The extension `option` names, if it is a singular string extending
/// `google.protobuf.MethodOptions`; else a diagnostic at the annotation.
fn method_extension(
    pool: &DescriptorPool,
    option: &Spanned<String>,
    source: &SourceFile,
    diagnostics: &mut Diagnostics,
) -> Option<ExtensionDescriptor> {
    let name = option.get_ref().trim_start_matches('.');
    let problem = match pool.get_extension_by_name(name) {
        None => format!("`permission_option` names `{name}`, which is not an extension"),
        Some(extension) if extension.containing_message().full_name() != METHOD_OPTIONS => {
            format!(
                "`permission_option` names `{name}`, which extends `{}`, not `{METHOD_OPTIONS}`",
                extension.containing_message().full_name()
            )
        }
        Some(extension) if extension.is_list() || !matches!(extension.kind(), Kind::String) => {
            format!("`permission_option` names `{name}`, which is not a singular `string`")
        }
        Some(extension) => return Some(extension),
    };
    diagnostics.push(Diagnostic::new(source.at(option), problem).note(
        "declare it with `extend google.protobuf.MethodOptions { string <name> = <number>; }`",
    ));
    None
}
