//! Building the model: every package's services, methods and resources
//! from the descriptor pool, with the annotations applied and the checks
//! that span the whole API.

mod long_running;
mod mixins;
mod operations;
mod policies;
mod resource;
mod shapes;
mod standard;

use heck::{ToSnakeCase, ToUpperCamelCase};
use prost_reflect::{DescriptorPool, MessageDescriptor, MethodDescriptor, ServiceDescriptor};

use super::http::{Reported, http_rule};
use super::json::{JsonShape, NamedField};
use super::media::Media;
use super::proto::module_ident;
use super::proto::{comments, generator_package, rust_ident, rust_path};
use super::{Api, Message, Method, Package, Service, Standard, media, names, writes};
use crate::annotations::Annotations;
use crate::diagnostics::{Diagnostic, Diagnostics, Location};
use resource::build_resource;
use standard::standard_method;

impl Api {
    /// Builds the model of every package but [`GENERATOR_PACKAGES`](crate::model::GENERATOR_PACKAGES), with the
    /// annotations applied. The services and resources are those of
    /// `api_files` (the files the user named, as the pool names them);
    /// the files they import give messages only, so that a vendored
    /// `google.longrunning` or `google.cloud.location` is not served unasked.
    pub fn build(
        pool: &DescriptorPool,
        api_files: &[String],
        annotations: &Annotations,
        diagnostics: &mut Diagnostics,
    ) -> Api {
        let views: Vec<&str> = annotations
            .views
            .iter()
            .map(|view| view.rule.message.get_ref().as_str())
            .collect();
        let mut api = Self::build_from_descriptors(pool, api_files, &views, diagnostics);
        api.add_operations_service(pool);
        api.add_mixins(pool, annotations, diagnostics);
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
        api.resolve_policies(diagnostics);
        api.check_mixins(annotations, diagnostics);
        api.check_access_subjects(annotations, diagnostics);
        api.check_indexed(annotations, diagnostics);
        api.check_upserts(diagnostics);
        api
    }

    fn build_from_descriptors(
        pool: &DescriptorPool,
        api_files: &[String],
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
            // An imported file gives its messages, not resources or services.
            let own = api_files.iter().any(|f| f == file.name());
            for message in file.messages() {
                collect_messages(&message, &mut messages);
                if own && let Some(resource) = build_resource(pool, &message, diagnostics) {
                    packages[index].resources.push(resource);
                }
            }
            for service in file.services().filter(|_| own) {
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
            token_exchange: None,
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
                let name = resource.name.to_upper_camel_case();
                let of = |item: &str| format!("{item} of `{}`", resource.full_name);
                types.push((format!("{name}Store"), of("the storage trait")));
                types.push((format!("{name}Row"), of("the storage row")));
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
            // A map's values: its entry is the map's own (synthetic) message.
            let kind = match field.kind() {
                prost_reflect::Kind::Message(entry) if field.is_map() => {
                    entry.map_entry_value_field().kind()
                }
                kind => kind,
            };
            let prost_reflect::Kind::Message(inner) = kind else {
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

/// The warning for a method without an HTTP rule: served over gRPC only.
fn grpc_only(method: &MethodDescriptor, location: &Location) -> Diagnostic {
    Diagnostic::warning(
        location.clone(),
        format!(
            "`{}` has no `google.api.http` option: it is served over gRPC only (REST clients \
             get UNIMPLEMENTED)",
            method.full_name()
        ),
    )
    .note("HTTP rules are in codegen/README.md, \"HTTP rules and routing\"")
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
        Some(Ok(http)) => Ok(Some(http)),
        Some(Err(Reported)) => Err(Reported),
        None => {
            diagnostics.push(grpc_only(method, &location));
            Ok(None)
        }
    };
    let standard = standard_method(pool, method, views, &location, diagnostics);
    let (mut http, standard) = (http.ok()?, standard?);
    let mut media = Media::of(method, http.as_ref(), &location, diagnostics);
    if media.client_streaming {
        // Served over gRPC only: nothing of the HTTP rule applies.
        http = None;
        media.raw_request = None;
    }
    if (media.server_streaming || media.client_streaming) && !matches!(standard, Standard::Custom) {
        diagnostics.push(Diagnostic::new(
            location.clone(),
            format!(
                "`{}` streams, so it cannot be the standard method its name and request make \
                 it: rename it",
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
        shape,
        capability: None,
        anonymous: false,
        location,
        view: None,
        names: names::request_shape(method),
        writes,
        long_running: match long_running::declared(method) {
            Some(Ok(declared)) if !matches!(standard, Standard::Custom) => Some(
                super::LongRunning::new(&declared.response, declared.metadata.as_ref()),
            ),
            _ => None,
        },
        standard,
    })
}
