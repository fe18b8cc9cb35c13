//! The builder users drive the generator with, from `build.rs` or the CLI.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;

use crate::Warnings;
use crate::annotations::Annotations;
use crate::diagnostics::{Diagnostic, Diagnostics};
use crate::emit::{self, root::PackageFiles};
use crate::model::Api;
use crate::{Error, load};

/// Name of the embedded descriptor set in the output directory.
pub const DESCRIPTOR_FILE: &str = "file_descriptor_set.bin";

/// Generator settings, in the style of `prost_build::Config`.
///
/// ```no_run
/// protoapi_codegen::Config::new()
///     .include("proto")
///     .file("library/v1/shelves.proto")
///     .write_to("generated/src")
///     .unwrap();
/// ```
#[derive(Clone, Debug, Default)]
pub struct Config {
    includes: Vec<PathBuf>,
    files: Vec<PathBuf>,
    /// Annotation files, relative to an import root.
    annotation_files: Vec<PathBuf>,
    /// The API's title in the OpenAPI document.
    title: Option<String>,
    /// The API's version in the OpenAPI document.
    version: Option<String>,
    /// The ErrorInfo domain of errors no service answers (unknown routes).
    error_domain: Option<String>,
    /// The crate feature compiling the command-line module, if one is emitted.
    cli_feature: Option<String>,
}

/// Name of the OpenAPI document in the output directory.
pub const OPENAPI_FILE: &str = "openapi.json";

/// The file [`Config::build_script`] writes the module tree to.
pub const BUILD_SCRIPT_ROOT: &str = "generated.rs";

/// The name of annotation files found by [`Config::files_under`].
pub const ANNOTATION_FILE: &str = "annotations.toml";

/// Generated files by path relative to the output directory.
pub type Output = BTreeMap<PathBuf, Vec<u8>>;

impl Config {
    pub fn new() -> Self {
        Config::default()
    }

    /// Adds an import root (like `protoc -I`).
    pub fn include(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.includes.push(path.into());
        self
    }

    /// Adds a file to generate, relative to an import root.
    pub fn file(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.files.push(path.into());
        self
    }

    /// Sets the API's title in the OpenAPI document (default: from the
    /// packages' first segment, `library.v1` → `Library API`).
    pub fn title(&mut self, title: impl Into<String>) -> &mut Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the API's version in the OpenAPI document (default: the latest
    /// `vN` package suffix, e.g. `v2` beside `v1`).
    pub fn version(&mut self, version: impl Into<String>) -> &mut Self {
        self.version = Some(version.into());
        self
    }

    /// Sets the ErrorInfo domain of errors outside every service, such as an
    /// unknown route (default: the packages' first segment). Services answer
    /// in the domain of their resource types.
    pub fn error_domain(&mut self, domain: impl Into<String>) -> &mut Self {
        self.error_domain = Some(domain.into());
        self
    }

    /// Also emits module `cli`: clap commands for the standard methods of
    /// every collection of the API's current version, on the generated
    /// `Client` (see `protoapi_runtime::cli`). It is compiled when the crate's feature
    /// `feature` is on; declare that as `feature = ["protoapi-runtime/cli"]`, which
    /// brings clap through the runtime.
    pub fn cli(&mut self, feature: impl Into<String>) -> &mut Self {
        self.cli_feature = Some(feature.into());
        self
    }

    /// Adds an annotation file (see `proto/README.md`), relative to an import root.
    pub fn annotations(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.annotation_files.push(path.into());
        self
    }

    /// Adds every `.proto` file and every `annotations.toml` under `dir` (an
    /// import root), except vendored copies of the common protos (directly
    /// in [`VENDORED`] directories: `google/api`, `google/rpc`, ...), which
    /// are read only when imported. Other `google/` directories are the
    /// API's (`google/example/library/v1`, `google/api/apikeys/v2`): keep a
    /// whole vendored googleapis tree in an import root of its own
    /// ([`Config::include`]).
    pub fn files_under(&mut self, dir: impl AsRef<Path>) -> Result<&mut Self, Error> {
        let dir = dir.as_ref();
        let mut found = Vec::new();
        collect_protos(dir, dir, &mut found)?;
        found.sort();
        for file in found {
            if file.file_name().is_some_and(|name| name == ANNOTATION_FILE) {
                self.annotation_files.push(file);
            } else {
                self.files.push(file);
            }
        }
        Ok(self)
    }

    /// Generates every file in memory, with `lib.rs` as the crate root.
    /// Warnings are dropped: [`Config::generate_with_warnings`] keeps them.
    pub fn generate(&self) -> Result<Output, Error> {
        Ok(self.generate_with_warnings()?.0)
    }

    /// [`Config::generate`], with the warnings: what the inputs declare and
    /// the generated code serves partially or leaves to a handler.
    pub fn generate_with_warnings(&self) -> Result<(Output, Warnings), Error> {
        self.generate_with_root("lib.rs", true, false)
    }

    /// [`Config::generate`], with each package's API file split by emitter:
    /// `<package>.api/<emitter>.rs` (`imports`, `reflect`, `json`,
    /// `resource`, `legacy`, `store`, `backend`, `service`, `rest`,
    /// `client`; empty ones left out) in place of `<package>.api.rs`. What
    /// the golden fixtures in `tests/fixtures/` compare, so that a change to
    /// one emitter shows as a diff in its own small file.
    pub fn generate_by_emitter(&self) -> Result<(Output, Warnings), Error> {
        self.generate_with_root("lib.rs", true, true)
    }

    /// For `build.rs`: generates into `OUT_DIR`, with the module tree in
    /// `OUT_DIR/generated.rs` for the crate root to `include!`, and tells
    /// cargo to rerun when an input changes.
    ///
    /// ```ignore
    /// // build.rs
    /// fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     protoapi_codegen::Config::new().include("proto").files_under("proto")?.build_script()?;
    ///     Ok(())
    /// }
    /// // src/lib.rs
    /// include!(concat!(env!("OUT_DIR"), "/generated.rs"));
    /// ```
    ///
    /// On mistakes in the inputs, the error's `Debug` form (which `main`
    /// prints) shows each one as rustc would, with the path relative to the
    /// crate (`CARGO_MANIFEST_DIR`) and the offending line underlined.
    pub fn build_script(&self) -> Result<(), Error> {
        let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or_else(|| {
            Error::Io(
                PathBuf::from("OUT_DIR"),
                std::io::Error::other("not set: call this from build.rs"),
            )
        })?);
        // An import root (cargo watches every file under a directory): a
        // proto or annotation file added under it reruns the build script.
        for include in self.includes.iter().filter(|include| include.is_dir()) {
            println!("cargo:rerun-if-changed={}", include.display());
        }
        for file in self.files.iter().chain(&self.annotation_files) {
            if let Some(path) = self
                .includes
                .iter()
                .map(|i| i.join(file))
                .find(|p| p.exists())
            {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
        let (output, warnings) = self.generate_with_root(BUILD_SCRIPT_ROOT, false, false)?;
        // Cargo shows a build script's warnings one line each.
        let report = warnings.render(&crate::crate_root());
        for line in report.lines().filter(|line| !line.trim().is_empty()) {
            println!("cargo:warning={line}");
        }
        for (path, contents) in output {
            let target = out_dir.join(&path);
            if std::fs::read(&target).ok().as_deref() != Some(contents.as_slice()) {
                std::fs::write(&target, contents).map_err(|e| Error::Io(target.clone(), e))?;
            }
        }
        Ok(())
    }

    fn generate_with_root(
        &self,
        root_file: &str,
        crate_root: bool,
        by_emitter: bool,
    ) -> Result<(Output, Warnings), Error> {
        // A file that does not parse is left out, and the protos are still
        // checked: every problem is reported in one run.
        let (annotations, unreadable) = self.load_annotations();
        let loaded = load::load(&self.includes, &self.files, &annotations.mixin_files())?;
        let mut diagnostics = Diagnostics::default();
        let api = Api::build(
            &loaded.pool,
            &loaded.api_files,
            &annotations,
            &mut diagnostics,
        );
        let warnings = match diagnostics.finish() {
            Ok(warnings) if unreadable.is_empty() => Warnings::new(warnings, &self.includes),
            Ok(checked) | Err(checked) => {
                let found = unreadable.into_iter().chain(checked).collect();
                return Err(Error::invalid(found, &self.includes));
            }
        };

        let mut output = Output::new();
        let messages = emit::messages::emit(&loaded.file_descriptor_set)?;
        let mut packages: Vec<PackageFiles> = Vec::new();
        let mut names: Vec<&String> = messages.keys().collect();
        for package in &api.packages {
            if !messages.contains_key(&package.name) {
                names.push(&package.name);
            }
        }
        names.sort();
        names.dedup();
        for name in names {
            let messages_file = messages.get(name).map(|code| {
                let file = format!("{name}.rs");
                output.insert(file.clone().into(), reformat(code).into_bytes());
                file
            });
            let package = api.packages.iter().find(|p| &p.name == name);
            let api_file = package.and_then(|package| {
                let shadowed = shadowed_prelude(&loaded.pool, &package.name);
                let sections = emit_package(&api, package, &shadowed);
                write_api_file(&mut output, name, sections, by_emitter)
            });
            let api_taken = api_module_taken(&loaded.pool, name);
            packages.push(PackageFiles {
                package: name.clone(),
                messages_file,
                api_file,
                api_module: if api_taken { "generated_api" } else { "api" },
                exports: package.is_some_and(|p| !p.services.is_empty() || !p.resources.is_empty()),
            });
        }
        let error_domain = self
            .error_domain
            .clone()
            .unwrap_or_else(|| api.root_package().to_owned());
        let root = emit::root::emit(
            &packages,
            DESCRIPTOR_FILE,
            OPENAPI_FILE,
            emit::wiring::FILE,
            emit::client::FILE,
            &error_domain,
            crate_root,
        );
        let cli = self.cli_feature.as_deref().map(emit::cli::emit_module);
        output.insert(
            root_file.into(),
            emit::format(quote!(#root #cli)).into_bytes(),
        );
        output.insert(
            emit::wiring::FILE.into(),
            emit::format(emit::wiring::emit(
                &api,
                &[
                    emit::rows::emit_tables(&api).unwrap_or_default(),
                    emit::console::emit_console(),
                ],
            ))
            .into_bytes(),
        );
        let client_root = emit::client::emit_root(&api);
        let schema = emit::console::emit(&api);
        output.insert(
            emit::client::FILE.into(),
            emit::format(quote!(#client_root #schema)).into_bytes(),
        );
        if self.cli_feature.is_some() {
            output.insert(
                emit::cli::FILE.into(),
                emit::format(emit::cli::emit(&api)).into_bytes(),
            );
        }
        let title = self.title.clone().unwrap_or_else(|| {
            format!(
                "{} API",
                heck::ToTitleCase::to_title_case(api.root_package())
            )
        });
        let version = self.version.clone().unwrap_or_else(|| api.latest_version());
        output.insert(
            OPENAPI_FILE.into(),
            emit::openapi::emit(&api, &loaded.pool, &title, &version).into_bytes(),
        );
        output.insert(DESCRIPTOR_FILE.into(), loaded.encoded);
        Ok((output, warnings))
    }

    /// The annotation files, and the problems of those that do not parse.
    fn load_annotations(&self) -> (Annotations, Vec<Diagnostic>) {
        let mut annotations = Annotations::default();
        let mut problems = Vec::new();
        for file in &self.annotation_files {
            let path = self
                .includes
                .iter()
                .map(|include| include.join(file))
                .find(|path| path.exists())
                .unwrap_or_else(|| file.clone());
            let name = file.to_string_lossy().replace('\\', "/");
            if let Err(problem) = annotations.add_file(&path, &name) {
                problems.push(problem);
            }
        }
        (annotations, problems)
    }

    /// Generates and writes every file under `dir`, rewriting only changed ones
    /// and removing generated files that are no longer produced: the files
    /// changed, and the warnings.
    pub fn write_to(&self, dir: impl AsRef<Path>) -> Result<(Vec<PathBuf>, Warnings), Error> {
        let dir = dir.as_ref();
        let (output, warnings) = self.generate_with_warnings()?;
        fs::create_dir_all(dir).map_err(|e| Error::Io(dir.to_owned(), e))?;
        let mut changed = Vec::new();
        for (path, contents) in &output {
            let target = dir.join(path);
            if fs::read(&target).ok().as_deref() != Some(contents.as_slice()) {
                fs::write(&target, contents).map_err(|e| Error::Io(target.clone(), e))?;
                changed.push(path.clone());
            }
        }
        for stale in stale_files(dir, &output)? {
            fs::remove_file(dir.join(&stale)).map_err(|e| Error::Io(stale.clone(), e))?;
            changed.push(stale);
        }
        Ok((changed, warnings))
    }

    /// The files under `dir` that differ from what would be generated, and
    /// the warnings.
    pub fn check(&self, dir: impl AsRef<Path>) -> Result<(Vec<PathBuf>, Warnings), Error> {
        let dir = dir.as_ref();
        let (output, warnings) = self.generate_with_warnings()?;
        let mut differing: Vec<PathBuf> = output
            .iter()
            .filter(|(path, contents)| {
                fs::read(dir.join(path)).ok().as_deref() != Some(contents.as_slice())
            })
            .map(|(path, _)| path.clone())
            .collect();
        differing.extend(stale_files(dir, &output)?);
        Ok((differing, warnings))
    }
}

/// Writes a package's API file (or, `by_emitter`, one file per section)
/// into `output`; its name, or `None` for a package of enums or options
/// alone (`google.cloud`'s extended operations), whose file would hold
/// imports only.
fn write_api_file(
    output: &mut Output,
    name: &str,
    sections: Vec<(&'static str, TokenStream)>,
    by_emitter: bool,
) -> Option<String> {
    if sections
        .iter()
        .all(|(emitter, code)| *emitter == "imports" || code.is_empty())
    {
        return None;
    }
    let file = format!("{name}.api.rs");
    if by_emitter {
        for (emitter, code) in sections {
            let text = emit::format(code);
            let body = text.strip_prefix(emit::HEADER).unwrap_or(&text);
            if !body.trim().is_empty() {
                let path = format!("{name}.api/{emitter}.rs");
                output.insert(path.into(), body.as_bytes().to_vec());
            }
        }
    } else {
        let code = sections.into_iter().map(|(_, code)| code);
        output.insert(
            file.clone().into(),
            emit::format(quote!(#(#code)*)).into_bytes(),
        );
    }
    Some(file)
}

/// A package's API file, in sections named after the emitters that wrote them.
fn emit_package(
    api: &Api,
    package: &crate::model::Package,
    shadowed: &[&str],
) -> Vec<(&'static str, TokenStream)> {
    let messages: Vec<_> = api
        .messages
        .iter()
        .filter(|m| m.package == package.name)
        .collect();
    let scope = emit::Scope::new(&package.name);
    let each = |items: Vec<TokenStream>| quote!(#(#items)*);
    let imports = emit_imports(api, package, shadowed, messages.is_empty());
    let json_imports = emit::json::imports(&messages);
    vec![
        ("imports", quote!(#imports #json_imports)),
        ("reflect", emit::reflect::emit(&scope, &messages)),
        ("json", emit::json::emit(&scope, &messages)),
        (
            "resource",
            each(
                package
                    .resources
                    .iter()
                    .map(|r| emit::resource::emit(&scope, r))
                    .collect(),
            ),
        ),
        (
            "legacy",
            each(
                api.views
                    .iter()
                    .filter(|v| v.package == package.name)
                    .map(|v| emit::legacy::emit(&scope, api, v))
                    .collect(),
            ),
        ),
        (
            "store",
            each(
                package
                    .resources
                    .iter()
                    .map(|r| emit::store::emit(&scope, r))
                    .collect(),
            ),
        ),
        (
            "rows",
            each(
                package
                    .resources
                    .iter()
                    .map(|r| emit::rows::emit(&scope, api, r))
                    .collect(),
            ),
        ),
        (
            "backend",
            each(
                package
                    .resources
                    .iter()
                    .map(|r| emit::backend::emit(&scope, r))
                    .collect(),
            ),
        ),
        (
            "service",
            each(
                package
                    .services
                    .iter()
                    .map(|s| emit::service::emit(&scope, api, s))
                    .collect(),
            ),
        ),
        (
            "exchange",
            each(
                package
                    .services
                    .iter()
                    .filter_map(|s| emit::exchange::emit(&scope, api, s))
                    .collect(),
            ),
        ),
        (
            "rest",
            each(
                package
                    .services
                    .iter()
                    .map(|s| emit::rest::emit(&scope, api, s))
                    .collect(),
            ),
        ),
        ("client", emit::client::emit_package(&scope, api, package)),
    ]
}

/// The `use` lines of a package's API file: only what its code names.
fn emit_imports(
    api: &Api,
    package: &crate::model::Package,
    shadowed: &[&str],
    no_messages: bool,
) -> TokenStream {
    use crate::model::Standard;
    let methods = || package.services.iter().flat_map(|s| &s.methods);
    let has = |f: fn(&Standard) -> bool| methods().any(|m| f(&m.standard));
    // Types named like prelude items are named through `super::`, and a
    // package without messages of its own may name none of its module's
    // items: either may leave the glob import unused.
    let allow = (no_messages || !shadowed.is_empty()).then(|| quote!(#[allow(unused_imports)]));
    let mut imports = vec![quote!(
        #allow
        use super::*;
    )];
    for path in shadowed.iter().map(|path| emit::path(path)) {
        imports.push(quote!(
            #[allow(unused_imports)]
            use #path;
        ));
    }
    if !package.services.is_empty() {
        imports.push(quote!(
            use ::protoapi_runtime::__private::{axum, tonic};
        ));
        imports.push(quote!(
            use ::protoapi_runtime::__private::standard::ApiContext;
        ));
        imports.push(quote!(
            use ::protoapi_runtime::__private::{Caller, Error};
        ));
    }
    if has(|s| !matches!(s, Standard::Custom)) {
        imports.push(quote!(
            use ::protoapi_runtime::__private::auth::Need;
        ));
        imports.push(quote!(
            use ::protoapi_runtime::__private::standard;
        ));
    }
    if has(|s| matches!(s, Standard::List { .. })) {
        imports.push(quote!(
            use ::protoapi_runtime::__private::standard::{ListPlan, ListRequest};
        ));
    }
    // Only creates check references and held capabilities: a version that
    // serves a resource with them but no create names no `Resource`.
    let mut created = methods()
        .filter(|m| matches!(m.standard, Standard::Create { .. }))
        .filter_map(|m| api.resource(m.standard.resource()?));
    if created.any(|r| !r.resolved_references().is_empty() || r.has_must_hold()) {
        imports.push(quote!(
            use ::protoapi_runtime::__private::resource::Resource;
        ));
    }
    if !package.resources.is_empty() {
        imports.push(quote!(
            use ::protoapi_runtime::__private::mask::Update;
        ));
    }
    if !package.resources.is_empty() {
        imports.push(quote!(
            use ::protoapi_runtime::__private::store::{Backend, ListQuery, Page, StoreError};
        ));
    }
    quote!(#(#imports)*)
}

/// Whether prost's code of `package` already has a module `api`: the module
/// of a message `Api`'s nested types and oneofs. (A package `<package>.api`
/// beside an API is refused: its file would be the API's.)
fn api_module_taken(pool: &prost_reflect::DescriptorPool, package: &str) -> bool {
    pool.all_messages().any(|m| {
        m.package_name() == package
            && m.parent_message().is_none()
            && heck::ToSnakeCase::to_snake_case(m.name()) == "api"
            && (m.child_messages().next().is_some()
                || m.child_enums().next().is_some()
                || m.oneofs().next().is_some())
    })
}

/// The paths of the prelude items (see [`emit::PRELUDE`]) that a message or
/// enum declared at the top of `package` shadows in its API file.
fn shadowed_prelude(pool: &prost_reflect::DescriptorPool, package: &str) -> Vec<&'static str> {
    let messages = pool
        .all_messages()
        .filter(|m| m.package_name() == package && m.parent_message().is_none())
        .map(|m| m.name().to_owned());
    let enums = pool
        .all_enums()
        .filter(|e| e.package_name() == package && e.parent_message().is_none())
        .map(|e| e.name().to_owned());
    let names: Vec<String> = messages
        .chain(enums)
        .map(|name| {
            crate::model::rust_ident(&heck::ToUpperCamelCase::to_upper_camel_case(name.as_str()))
        })
        .collect();
    emit::PRELUDE
        .iter()
        .filter(|(name, _)| names.iter().any(|n| n == name))
        .map(|(_, path)| *path)
        .collect()
}

/// Re-formats prost-build output with this crate's formatter and header.
fn reformat(code: &str) -> String {
    let file =
        syn::parse_file(code).unwrap_or_else(|e| panic!("prost-build emitted invalid Rust: {e}"));
    format!("{}{}", emit::HEADER, prettyplease::unparse(&file))
}

/// Directories of vendored copies of the protos the generator ships or
/// prost maps to `prost_types`, whose files [`Config::files_under`] leaves
/// out: they are read when imported, and generated only as far as the API
/// uses them. Their subdirectories are APIs (`google/api/apikeys/v2`), as is
/// every other directory, `google/example/...` included.
pub const VENDORED: &[&str] = &[
    "google/api",
    "google/longrunning",
    "google/protobuf",
    "google/rpc",
    "google/type",
];

/// Whether `file` (relative to its import root) lies directly in a
/// [`VENDORED`] directory.
fn is_vendored(file: &Path) -> bool {
    file.parent()
        .is_some_and(|dir| VENDORED.iter().any(|vendored| dir == Path::new(vendored)))
}

fn collect_protos(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let entries = fs::read_dir(dir).map_err(|e| Error::Io(dir.to_owned(), e))?;
    for entry in entries {
        let path = entry.map_err(|e| Error::Io(dir.to_owned(), e))?.path();
        let relative = path.strip_prefix(root).expect("under root").to_owned();
        if path.is_dir() {
            collect_protos(root, &path, out)?;
        } else if is_vendored(&relative) {
            continue;
        } else if path.extension().is_some_and(|e| e == "proto")
            || path.file_name().is_some_and(|name| name == ANNOTATION_FILE)
        {
            out.push(relative);
        }
    }
    Ok(())
}

/// Generated files present in `dir` that the current protos no longer produce.
fn stale_files(dir: &Path, output: &Output) -> Result<Vec<PathBuf>, Error> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut stale = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| Error::Io(dir.to_owned(), e))?.path();
        let name = PathBuf::from(path.file_name().expect("a file name"));
        if path.extension().is_some_and(|e| e == "rs") && !output.contains_key(&name) {
            let generated = fs::read_to_string(&path).is_ok_and(|c| c.starts_with(emit::HEADER));
            if generated {
                stale.push(name);
            }
        }
    }
    stale.sort();
    Ok(stale)
}
