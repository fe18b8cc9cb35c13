//! Stage 2: the typed model every emitter works from.
//!
//! Built from the descriptor pool (which keeps custom options): services and
//! their HTTP rules with parsed path templates, the standard method each RPC
//! implements, resources with field behaviours, and proto comments.

use heck::{ToSnakeCase, ToUpperCamelCase};
use prost_reflect::{
    DescriptorPool, DynamicMessage, FieldDescriptor, MessageDescriptor, MethodDescriptor,
    ServiceDescriptor,
};

use crate::annotations::Annotations;
use crate::diagnostics::{Diagnostic, Diagnostics, Location};

mod annotate;
mod http;
mod json;
mod legacy;
mod managed;
mod media;
mod names;
mod references;
mod resource;
mod routes;
mod shapes;
mod standard;
mod storage;
mod writes;

pub use http::{HttpRule, Verb};
use http::{Reported, http_rule};
pub use json::{Container, JsonField, JsonShape, JsonValue, NamedField, QueryKind};
pub use legacy::{Conversion, View, ViewField};
pub use media::{HTTP_BODY, HTTP_BODY_PATH, Media, RawRequest};
pub use names::{NamePattern, RequestShape};
pub use resource::{
    Behavior, Dependent, Field, FieldKind, FieldRule, PublicRule, Reach, Reference, Resource,
};
use resource::{behavior, build_resource, field_kind};
pub use shapes::{DeleteShape, ListShape, Shape, Total, UpdateShape};
use standard::standard_method;
pub use standard::{LIST_FILTERS, Paging, Standard};
pub use storage::{AccessSubject, Column};
pub use writes::WriteOptions;

/// Every package of the API that declares services or resources.
#[derive(Clone, Debug)]
pub struct Api {
    pub packages: Vec<Package>,
    /// Every message of the API's packages, and of the generator's own
    /// packages those reach (see [`generator_package`]), for
    /// `ReflectMessage` and JSON impls.
    pub messages: Vec<Message>,
    /// Legacy messages showing resources under earlier names (e.g. v1).
    pub views: Vec<View>,
}

/// One proto package.
#[derive(Clone, Debug)]
pub struct Package {
    /// e.g. `library.v1`.
    pub name: String,
    pub services: Vec<Service>,
    pub resources: Vec<Resource>,
}

/// A message and the Rust path prost gives it.
#[derive(Clone, Debug)]
pub struct Message {
    pub full_name: String,
    /// The proto package whose API file holds its impls: its own, or for
    /// `google.api.HttpBody` (whose package has no API file) the first.
    pub package: String,
    pub rust_path: String,
    /// How the message reads and writes canonical JSON.
    pub json: JsonShape,
    /// Its fields as requests name them.
    pub named_fields: Vec<NamedField>,
}

#[derive(Clone, Debug)]
pub struct Service {
    /// e.g. `GroupService`.
    pub name: String,
    pub full_name: String,
    pub comments: String,
    pub methods: Vec<Method>,
}

#[derive(Clone, Debug)]
pub struct Method {
    /// e.g. `CreateGroup`.
    pub name: String,
    pub comments: String,
    /// Rust path of the request message.
    pub input: String,
    /// Rust path of the response message; `()` for `google.protobuf.Empty`.
    pub output: String,
    /// Full proto names of the request and response messages.
    pub input_type: String,
    pub output_type: String,
    pub http: HttpRule,
    /// Streaming and raw (`google.api.HttpBody`) requests and responses.
    pub media: Media,
    pub standard: Standard,
    /// How its messages are shaped, among the shapes the AIPs allow.
    pub shape: Shape,
    /// The capability the caller needs (from the annotation files).
    pub capability: Option<String>,
    /// Whether the method needs no token (from the annotation files).
    pub anonymous: bool,
    /// Where the method is declared.
    pub location: Location,
    /// The legacy message (full name) the method speaks instead of the
    /// resource, for methods of a legacy version.
    pub view: Option<String>,
    /// The request fields a method of a name-keyed resource reads.
    pub names: RequestShape,
    /// `validate_only` and `allow_missing` of a write's request.
    pub writes: WriteOptions,
}

impl Method {
    /// e.g. `create_group`; as prost and tonic spell it, so `r#move` for
    /// `Move` (which `format_ident!` reads as a raw identifier).
    pub fn rust_name(&self) -> String {
        rust_ident(&self.name.to_snake_case())
    }
}

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

impl Api {
    /// Builds the model of every package but [`GENERATOR_PACKAGES`], with the
    /// annotations applied.
    pub fn build(
        pool: &DescriptorPool,
        annotations: &Annotations,
        diagnostics: &mut Diagnostics,
    ) -> Api {
        let views: Vec<&str> = annotations
            .views
            .iter()
            .map(|view| view.rule.message.get_ref().as_str())
            .collect();
        let mut api = Self::build_from_descriptors(pool, &views, diagnostics);
        api.plan_routes(diagnostics);
        api.check_generated_names(pool, diagnostics);
        if diagnostics.fatal() {
            // A message used as a resource is not one: the annotations, which
            // name resources' collections, would only report that again.
            return api;
        }
        api.resolve_views(pool, annotations, diagnostics);
        api.annotate(pool, annotations, diagnostics);
        api.link_names(diagnostics);
        api.option_references(pool, diagnostics);
        api.resolve_read_capabilities();
        api.check_access_subjects(annotations, diagnostics);
        api
    }

    fn build_from_descriptors(
        pool: &DescriptorPool,
        views: &[&str],
        diagnostics: &mut Diagnostics,
    ) -> Api {
        let mut packages: Vec<Package> = Vec::new();
        let mut messages = Vec::new();
        check_rust_names(pool, diagnostics);
        for file in pool.files() {
            let package_name = file.package_name();
            if generator_package(package_name) {
                continue;
            }
            let index = package_index(&mut packages, package_name);
            for message in file.messages() {
                collect_messages(&message, &mut messages);
                if let Some(resource) = build_resource(pool, &message, diagnostics) {
                    packages[index].resources.push(resource);
                }
            }
            for service in file.services() {
                let service = build_service(pool, &service, views, diagnostics);
                packages[index].services.push(service);
            }
        }
        for message in reached_dependencies(pool, &messages) {
            package_index(&mut packages, message.package_name());
            collect_messages(&message, &mut messages);
        }
        // `google.api.HttpBody` as a request or response is no field's type.
        if let Some(body) = media::http_body_message(pool)
            && !messages.iter().any(|m| m.full_name == body.full_name)
        {
            package_index(&mut packages, &body.package);
            messages.push(body);
        }
        packages.sort_by(|a, b| a.name.cmp(&b.name));
        messages.sort_by(|a, b| a.full_name.cmp(&b.full_name));
        Api {
            packages,
            messages,
            views: Vec::new(),
        }
    }

    /// Reports messages and enums named like an item the generator declares
    /// beside them: `<Service>Api`, `<Service>Handler` (with custom
    /// methods), `<Resource>Store`,
    /// or (with nested types, which prost puts in a module of the message's
    /// name) the modules `client`, `<service>_client`, `<service>_server`
    /// and `<service>_rest`.
    fn check_generated_names(&self, pool: &DescriptorPool, diagnostics: &mut Diagnostics) {
        for package in &self.packages {
            let mut types = Vec::new();
            let mut modules = Vec::new();
            if !package.services.is_empty() {
                modules.push(("client".to_owned(), "the clients' module".to_owned()));
            }
            for service in &package.services {
                let what = |item: &str| format!("{item} of `{}`", service.full_name);
                types.push((format!("{}Api", service.name), what("the service")));
                if service
                    .methods
                    .iter()
                    .any(|m| matches!(m.standard, Standard::Custom))
                {
                    types.push((
                        format!("{}Handler", service.name),
                        what("the handler trait"),
                    ));
                }
                let snake = service.name.to_snake_case();
                modules.push((format!("{snake}_client"), what("the gRPC client")));
                modules.push((format!("{snake}_server"), what("the gRPC server")));
                modules.push((format!("{snake}_rest"), what("the REST handlers")));
            }
            for resource in &package.resources {
                let name = format!("{}Store", resource.name.to_upper_camel_case());
                types.push((
                    name,
                    format!("the storage trait of `{}`", resource.full_name),
                ));
            }
            let messages = pool
                .all_messages()
                .filter(|m| m.package_name() == package.name && m.parent_message().is_none())
                .map(|m| {
                    let nested = m.child_messages().next().is_some()
                        || m.child_enums().next().is_some()
                        || m.oneofs().any(|oneof| !oneof.is_synthetic());
                    let location = Location::of(&m.parent_file(), m.path());
                    (
                        m.full_name().to_owned(),
                        m.name().to_owned(),
                        nested,
                        location,
                    )
                });
            let enums = pool
                .all_enums()
                .filter(|e| e.package_name() == package.name && e.parent_message().is_none())
                .map(|e| {
                    let location = Location::of(&e.parent_file(), e.path());
                    (
                        e.full_name().to_owned(),
                        e.name().to_owned(),
                        false,
                        location,
                    )
                });
            let top_level: Vec<_> = messages.chain(enums).collect();
            for (full_name, name, nested, location) in top_level {
                let rust = rust_ident(&name.to_upper_camel_case());
                let module = module_ident(&name);
                let clash = types
                    .iter()
                    .find(|(item, _)| *item == rust)
                    .map(|(item, what)| (item.clone(), what))
                    .or_else(|| {
                        modules
                            .iter()
                            .find(|(item, _)| nested && *item == module)
                            .map(|(item, what)| (format!("mod {item}"), what))
                    });
                if let Some((item, what)) = clash {
                    diagnostics.push(Diagnostic::new(
                        location,
                        format!(
                            "`{full_name}` is named like `{item}`, {what}, generated in the \
                             same module: rename it"
                        ),
                    ));
                }
            }
        }
    }

    /// The first segment of the packages that declare services (`library`
    /// of `library.v1`), naming the API by default; of a `google.*` package,
    /// its last segment before the version (`library` of
    /// `google.example.library.v1`), since `google` names no one API.
    pub fn root_package(&self) -> &str {
        let package = self
            .packages
            .iter()
            .find(|p| !p.services.is_empty())
            .or(self.packages.first())
            .map(|p| p.name.as_str())
            .unwrap_or("api");
        let mut segments = package.split('.');
        let first = segments.next().unwrap_or("api");
        if first != "google" {
            return first;
        }
        let is_version = |segment: &&str| {
            segment
                .strip_prefix('v')
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        };
        segments
            .rfind(|segment| !is_version(segment))
            .unwrap_or(first)
    }

    /// The latest `vN` suffix among the packages (`v1` without any).
    pub fn latest_version(&self) -> String {
        let latest = self
            .packages
            .iter()
            .filter_map(|p| {
                p.name
                    .rsplit('.')
                    .next()?
                    .strip_prefix('v')?
                    .parse::<u32>()
                    .ok()
            })
            .max()
            .unwrap_or(1);
        format!("v{latest}")
    }

    pub fn resource(&self, full_name: &str) -> Option<&Resource> {
        self.packages
            .iter()
            .flat_map(|p| &p.resources)
            .find(|r| r.full_name == full_name)
    }

    /// The rule by which `method` (a Get or List) answers some items without
    /// a token, if its collection declares one.
    pub fn public_reads(&self, method: &Method) -> Option<&PublicRule> {
        match &method.standard {
            Standard::Get { resource } | Standard::List { resource, .. } => {
                self.resource(resource)?.public.as_ref()
            }
            _ => None,
        }
    }
}

/// The index of `name` in `packages`, added (without services or resources)
/// if it is not there yet.
fn package_index(packages: &mut Vec<Package>, name: &str) -> usize {
    match packages.iter().position(|p| p.name == name) {
        Some(index) => index,
        None => {
            packages.push(Package {
                name: name.to_owned(),
                services: Vec::new(),
                resources: Vec::new(),
            });
            packages.len() - 1
        }
    }
}

/// The top-level messages of [`GENERATOR_PACKAGES`] (but `google.protobuf`,
/// which is `prost_types`) that the API's `messages` hold in a field, however
/// deeply (a `google.rpc.Status` in a response): their JSON impls are
/// generated with the API's, so that the field's impl can call them.
fn reached_dependencies(pool: &DescriptorPool, messages: &[Message]) -> Vec<MessageDescriptor> {
    let mut reached: Vec<MessageDescriptor> = Vec::new();
    let mut pending: Vec<MessageDescriptor> = messages
        .iter()
        .filter_map(|m| pool.get_message_by_name(&m.full_name))
        .collect();
    let mut seen: std::collections::BTreeSet<String> =
        messages.iter().map(|m| m.full_name.clone()).collect();
    while let Some(message) = pending.pop() {
        for field in message.fields() {
            let prost_reflect::Kind::Message(inner) = field.kind() else {
                continue;
            };
            let package = inner.package_name();
            if !generator_package(package) || package == "google.protobuf" {
                continue;
            }
            // The top-level message: `collect_messages` adds its nested ones.
            let mut top = inner.clone();
            while let Some(parent) = top.parent_message() {
                top = parent;
            }
            if seen.insert(top.full_name().to_owned()) {
                // Its nested messages are generated too: walk theirs.
                let mut nested = vec![top.clone()];
                while let Some(next) = nested.pop() {
                    nested.extend(next.child_messages());
                    pending.push(next);
                }
                reached.push(top);
            }
        }
    }
    reached
}

/// Reports types that prost would give one Rust name in one module: messages,
/// enums and oneofs whose names differ only by case or underscores
/// (`foo_bar` and `FooBar` are both `FooBar`).
fn check_rust_names(pool: &DescriptorPool, diagnostics: &mut Diagnostics) {
    use std::collections::BTreeMap;
    // (module, Rust name) -> the first proto type given it.
    let mut seen: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut check = |module: String, name: &str, full_name: &str, location: Location| {
        let rust = rust_ident(&name.to_upper_camel_case());
        match seen.entry((module, rust.clone())) {
            std::collections::btree_map::Entry::Vacant(entry) => {
                entry.insert(full_name.to_owned());
            }
            std::collections::btree_map::Entry::Occupied(first) => {
                diagnostics.push(Diagnostic::new(
                    location,
                    format!(
                        "`{full_name}` and `{}` are both `{rust}` in Rust: rename one of them",
                        first.get()
                    ),
                ));
            }
        }
    };
    let module = |package: &str, parent: Option<MessageDescriptor>| match parent {
        Some(parent) => parent.full_name().to_owned(),
        None => package.to_owned(),
    };
    for message in pool.all_messages() {
        if generator_package(message.package_name()) || message.is_map_entry() {
            continue;
        }
        let file = message.parent_file();
        let location = Location::of(&file, message.path());
        let scope = module(message.package_name(), message.parent_message());
        check(scope, message.name(), message.full_name(), location.clone());
        for oneof in message.oneofs().filter(|oneof| !oneof.is_synthetic()) {
            let full_name = format!("{}.{}", message.full_name(), oneof.name());
            let scope = message.full_name().to_owned();
            check(scope, oneof.name(), &full_name, location.clone());
        }
    }
    for enumeration in pool.all_enums() {
        if generator_package(enumeration.package_name()) {
            continue;
        }
        let location = Location::of(&enumeration.parent_file(), enumeration.path());
        let scope = module(enumeration.package_name(), enumeration.parent_message());
        check(scope, enumeration.name(), enumeration.full_name(), location);
    }
    // `<package>.api.rs` holds the generated API of `<package>`: a package
    // `<package>.api` would write its messages to the same file.
    for file in pool.files() {
        let package = file.package_name();
        let Some(parent) = package.strip_suffix(".api") else {
            continue;
        };
        if pool.files().any(|other| other.package_name() == parent) {
            /// `FileDescriptorProto.package`.
            const PACKAGE_FIELD: i32 = 2;
            diagnostics.push(
                Diagnostic::new(
                    Location::of(&file, &[PACKAGE_FIELD]),
                    format!(
                        "package `{package}` cannot be generated beside `{parent}`: its \
                         messages would go to `{package}.rs`, the file of `{parent}`'s API"
                    ),
                )
                .note("rename the package (its last part may not be `api`)"),
            );
        }
    }
}

fn collect_messages(message: &MessageDescriptor, out: &mut Vec<Message>) {
    if message.is_map_entry() {
        return;
    }
    out.push(Message {
        full_name: message.full_name().to_owned(),
        package: message.package_name().to_owned(),
        rust_path: rust_path(message),
        json: JsonShape::of(message),
        named_fields: NamedField::all(message),
    });
    for nested in message.child_messages() {
        collect_messages(&nested, out);
    }
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
fn type_path(package: &str, parent: Option<MessageDescriptor>, name: &str) -> String {
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

fn comments(descriptor_path: &[i32], file: &prost_reflect::FileDescriptor) -> String {
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

fn string_field(message: &DynamicMessage, name: &str) -> String {
    message
        .get_field_by_name(name)
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn build_service(
    pool: &DescriptorPool,
    service: &ServiceDescriptor,
    views: &[&str],
    diagnostics: &mut Diagnostics,
) -> Service {
    let methods = service
        .methods()
        .filter_map(|method| build_method(pool, &method, views, diagnostics))
        .collect();
    Service {
        name: service.name().to_owned(),
        full_name: service.full_name().to_owned(),
        comments: comments(service.path(), &service.parent_file()),
        methods,
    }
}

fn build_method(
    pool: &DescriptorPool,
    method: &MethodDescriptor,
    views: &[&str],
    diagnostics: &mut Diagnostics,
) -> Option<Method> {
    let file = method.parent_file();
    let location = Location::of(&file, method.path());
    // Each check reports what it finds whatever the others found, so that
    // every problem of the method is listed in one run.
    let http = match http_rule(pool, method, &location, diagnostics) {
        Some(Ok(http)) => Some(http),
        Some(Err(Reported)) => None,
        None => {
            diagnostics.push(Diagnostic::new(
                location.clone(),
                format!(
                    "method `{}` has no `google.api.http` option",
                    method.full_name()
                ),
            ));
            None
        }
    };
    let standard = standard_method(pool, method, views, &location, diagnostics);
    let (http, standard) = (http?, standard?);
    let media = Media::of(method, &http, &location, diagnostics).ok()?;
    if media.server_streaming && !matches!(standard, Standard::Custom) {
        diagnostics.push(Diagnostic::new(
            location.clone(),
            format!(
                "`{}` streams its responses, so it cannot be the standard method its name \
                 and request make it: rename it",
                method.name()
            ),
        ));
        return None;
    }
    let shape = shapes::shape(pool, method, &standard, &location, diagnostics)?;
    let writes = writes::write_options(method, &standard, &shape, &location, diagnostics)?;
    Some(Method {
        name: method.name().to_owned(),
        comments: comments(method.path(), &file),
        input: rust_path(&method.input()),
        output: rust_path(&method.output()),
        input_type: method.input().full_name().to_owned(),
        output_type: method.output().full_name().to_owned(),
        http,
        media,
        standard,
        shape,
        capability: None,
        anonymous: false,
        location,
        view: None,
        names: names::request_shape(method),
        writes,
    })
}
