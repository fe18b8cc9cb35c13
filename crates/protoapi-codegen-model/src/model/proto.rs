//! Reading descriptors as prost names them: Rust paths and identifiers of
//! proto types, comments, string options, oneof members, and the packages
//! that are the generator's own.

use heck::{ToSnakeCase, ToUpperCamelCase};
use prost_reflect::{DynamicMessage, FieldDescriptor, MessageDescriptor};

pub(crate) const RESOURCE_OPTION: &str = "google.api.resource";

/// The packages of the generator's own dependencies: the protos it bundles
/// and reads itself (`google.api`: HTTP rules, resources, field behaviours,
/// client options; `google.rpc`: errors) and the well-known types prost maps
/// to `prost_types` (`google.protobuf`). Their services are never the API's,
/// and their messages are generated only where a message of the API holds
/// one. Every other package is the API's, whatever its name:
/// `google.example.library.v1` and `google.type` included.
pub const GENERATOR_PACKAGES: &[&str] = &[
    "google.protobuf",
    "google.api",
    "google.rpc",
    "google.rpc.context",
];

/// Whether `package` is one of [`GENERATOR_PACKAGES`].
pub fn generator_package(package: &str) -> bool {
    GENERATOR_PACKAGES.contains(&package)
}

/// A member of a (non-synthetic) oneof, which prost keeps as a variant of
/// one `Option<enum>` field rather than a field of its own.
#[derive(Clone, Debug, PartialEq)]
pub struct OneofMember {
    /// The Rust field holding the oneof (`delivery`).
    pub field: String,
    /// The path of the member's variant
    /// (`crate::widgets::v1::widget::Delivery::Address`).
    pub variant: String,
}

impl OneofMember {
    /// `field`'s place in its oneof, `None` outside one (or in the synthetic
    /// oneof of a proto3 `optional`).
    pub fn of(message: &MessageDescriptor, field: &FieldDescriptor) -> Option<OneofMember> {
        let oneof = field
            .containing_oneof()
            .filter(|oneof| !oneof.is_synthetic())?;
        let enum_path = type_path(message.package_name(), Some(message.clone()), oneof.name());
        Some(OneofMember {
            field: rust_ident(&oneof.name().to_snake_case()),
            variant: format!(
                "{enum_path}::{}",
                rust_ident(&field.name().to_upper_camel_case())
            ),
        })
    }
}

/// The path prost-build gives a message, from the crate root.
pub fn rust_path(message: &MessageDescriptor) -> String {
    if message.full_name() == "google.protobuf.Empty" {
        return "()".to_owned();
    }
    if let Some(name) = message.full_name().strip_prefix("google.protobuf.") {
        return format!("::prost_types::{name}");
    }
    type_path(
        message.package_name(),
        message.parent_message(),
        message.name(),
    )
}

/// The Rust path prost gives a type declared in `package`, nested in
/// `parent` when it is a message's: `library.v1.Shelf.Kind` →
/// `crate::library::v1::shelf::Kind`.
pub(super) fn type_path(package: &str, parent: Option<MessageDescriptor>, name: &str) -> String {
    let mut path = package_module(package);
    let mut parents = Vec::new();
    let mut parent = parent;
    while let Some(p) = parent {
        parents.push(p.name().to_snake_case());
        parent = p.parent_message();
    }
    for p in parents.iter().rev() {
        path.push_str("::");
        path.push_str(&module_ident(p));
    }
    path.push_str("::");
    path.push_str(&rust_ident(&name.to_upper_camel_case()));
    path
}

/// The module of a proto package, from the crate root: `library.v1` →
/// `crate::library::v1`.
pub fn package_module(package: &str) -> String {
    let mut path = String::from("crate");
    for part in package.split('.').filter(|p| !p.is_empty()) {
        path.push_str("::");
        path.push_str(&module_ident(part));
    }
    path
}

/// A module name as prost spells it (keywords raw, `self` as `self_`).
pub fn module_ident(name: &str) -> String {
    rust_ident(&name.to_snake_case())
}

/// An identifier as prost-build spells it (its `sanitize_identifier`):
/// keywords raw (`r#type`), the keywords that cannot be raw with a trailing
/// underscore (`self_`, `Self_`), a leading digit after an underscore.
pub fn rust_ident(name: &str) -> String {
    match name {
        "as" | "break" | "const" | "continue" | "else" | "enum" | "false" | "fn" | "for" | "if"
        | "impl" | "in" | "let" | "loop" | "match" | "mod" | "move" | "mut" | "pub" | "ref"
        | "return" | "static" | "struct" | "trait" | "true" | "type" | "unsafe" | "use"
        | "where" | "while" | "dyn" | "abstract" | "become" | "box" | "do" | "final" | "macro"
        | "override" | "priv" | "typeof" | "unsized" | "virtual" | "yield" | "async" | "await"
        | "try" | "gen" => format!("r#{name}"),
        "_" | "super" | "self" | "Self" | "extern" | "crate" => format!("{name}_"),
        _ if name.starts_with(|c: char| c.is_ascii_digit()) => format!("_{name}"),
        _ => name.to_owned(),
    }
}

/// The leading comment of the declaration at `descriptor_path` in `file`,
/// without the space after each `//`.
pub fn comments(descriptor_path: &[i32], file: &prost_reflect::FileDescriptor) -> String {
    file.file_descriptor_proto()
        .source_code_info
        .as_ref()
        .and_then(|info| info.location.iter().find(|l| l.path == descriptor_path))
        .and_then(|l| l.leading_comments.clone())
        .map(|c| {
            c.lines()
                .map(|l| l.strip_prefix(' ').unwrap_or(l))
                .collect::<Vec<_>>()
                .join("\n")
                .trim()
                .to_owned()
        })
        .unwrap_or_default()
}

pub(super) fn string_field(message: &DynamicMessage, name: &str) -> String {
    message
        .get_field_by_name(name)
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The patterns of `message`'s `google.api.resource` option, if any.
pub(super) fn patterns(message: &MessageDescriptor) -> Vec<String> {
    let options = message.options();
    let Some((_, value)) = options
        .extensions()
        .find(|(ext, _)| ext.full_name() == RESOURCE_OPTION)
    else {
        return Vec::new();
    };
    value
        .as_message()
        .and_then(|option| option.get_field_by_name("pattern"))
        .and_then(|patterns| {
            patterns.as_list().map(|list| {
                list.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
        })
        .unwrap_or_default()
}
