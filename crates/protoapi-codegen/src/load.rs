//! Stage 1: parse `.proto` files with protox (no `protoc` needed).

use std::path::{Path, PathBuf};

use prost::Message;
use prost_reflect::DescriptorPool;
use prost_types::FileDescriptorSet;

use crate::Error;
use crate::diagnostics::{Diagnostic, Label, Location};

/// The parsed contract: the same descriptors in the three forms later stages need.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// For prost-build and tonic code generation.
    pub file_descriptor_set: FileDescriptorSet,
    /// For reading options (`google.api.http`, field behaviours, resources).
    pub pool: DescriptorPool,
    /// Encoded descriptor set (with source info), embedded for reflection and JSON.
    pub encoded: Vec<u8>,
    /// The files parsed as the API, as the pool names them (the others are
    /// their imports).
    pub api_files: Vec<String>,
}

/// Parses `files` (paths relative to one of `includes`) and their imports,
/// and the files declaring the services the API mixes in (`mixins`, by
/// import path: found like imports).
pub fn load(includes: &[PathBuf], files: &[PathBuf], mixins: &[&str]) -> Result<Loaded, Error> {
    let invalid = |error: protox::Error| Error::invalid(diagnostics(&error), includes);
    let mut resolver = protox::file::ChainFileResolver::new();
    for include in includes {
        resolver.add(protox::file::IncludeFileResolver::new(include.clone()));
    }
    // After the user's roots, so a vendored copy of their own wins.
    resolver.add(Bundled);
    resolver.add(protox::file::GoogleFileResolver::new());
    let mut compiler = protox::Compiler::with_file_resolver(resolver);
    compiler.include_imports(true).include_source_info(true);
    for file in files {
        compiler.open_file(file).map_err(invalid)?;
    }
    let api_files = compiler
        .files()
        .filter(|file| !file.is_import())
        .map(|file| file.name().to_owned())
        .collect();
    for mixin in mixins {
        compiler.open_file(mixin).map_err(invalid)?;
    }
    // An operation's error holds the error model's details, which JSON
    // names by type: their descriptors go with the operations'.
    if compiler.files().any(|file| file.name() == OPERATIONS) {
        compiler.open_file(ERROR_DETAILS).map_err(invalid)?;
    }
    let mut file_descriptor_set = compiler.file_descriptor_set();
    // Absolute include paths must not leak into the checked-in output.
    for file in &mut file_descriptor_set.file {
        if let Some(name) = &file.name {
            file.name = Some(relative(includes, Path::new(name)));
        }
    }
    let encoded = file_descriptor_set.encode_to_vec();
    let pool = compiler.descriptor_pool();
    Ok(Loaded {
        file_descriptor_set,
        pool,
        encoded,
        api_files,
    })
}

const OPERATIONS: &str = "google/longrunning/operations.proto";
const ERROR_DETAILS: &str = "google/rpc/error_details.proto";

/// The protos shipped with the generator: `google.api` (HTTP rules, field
/// behaviours, resources, client options, launch stages), `google.rpc`
/// (errors), `google.type` (dates, money, coordinates, ...) and
/// `google.longrunning` (operations), `google.iam.v1` (policies), `protoapi.v1` (the `UidpFilter` of
/// list requests). An import root holding
/// a file of the same name wins over these.
pub const BUNDLED: &[(&str, &str)] = &[
    (
        "google/api/annotations.proto",
        include_str!("../proto/google/api/annotations.proto"),
    ),
    (
        "google/api/field_behavior.proto",
        include_str!("../proto/google/api/field_behavior.proto"),
    ),
    (
        "google/api/http.proto",
        include_str!("../proto/google/api/http.proto"),
    ),
    (
        "google/api/httpbody.proto",
        include_str!("../proto/google/api/httpbody.proto"),
    ),
    (
        "google/api/resource.proto",
        include_str!("../proto/google/api/resource.proto"),
    ),
    (
        "google/rpc/code.proto",
        include_str!("../proto/google/rpc/code.proto"),
    ),
    (
        "google/rpc/error_details.proto",
        include_str!("../proto/google/rpc/error_details.proto"),
    ),
    (
        "google/rpc/status.proto",
        include_str!("../proto/google/rpc/status.proto"),
    ),
    // The common protos users import (googleapis `google/api/client.proto`,
    // `launch_stage.proto`, `field_info.proto`, `routing.proto` and
    // `google/type`), shipped so they need no copy.
    (
        "google/api/client.proto",
        include_str!("../proto/google/api/client.proto"),
    ),
    (
        "google/longrunning/operations.proto",
        include_str!("../proto/google/longrunning/operations.proto"),
    ),
    (
        "google/iam/v1/iam_policy.proto",
        include_str!("../proto/google/iam/v1/iam_policy.proto"),
    ),
    (
        "google/iam/v1/options.proto",
        include_str!("../proto/google/iam/v1/options.proto"),
    ),
    (
        "google/iam/v1/policy.proto",
        include_str!("../proto/google/iam/v1/policy.proto"),
    ),
    (
        "google/api/launch_stage.proto",
        include_str!("../proto/google/api/launch_stage.proto"),
    ),
    (
        "google/api/field_info.proto",
        include_str!("../proto/google/api/field_info.proto"),
    ),
    (
        "google/api/routing.proto",
        include_str!("../proto/google/api/routing.proto"),
    ),
    (
        "google/type/calendar_period.proto",
        include_str!("../proto/google/type/calendar_period.proto"),
    ),
    (
        "google/type/color.proto",
        include_str!("../proto/google/type/color.proto"),
    ),
    (
        "google/type/date.proto",
        include_str!("../proto/google/type/date.proto"),
    ),
    (
        "google/type/datetime.proto",
        include_str!("../proto/google/type/datetime.proto"),
    ),
    (
        "google/type/dayofweek.proto",
        include_str!("../proto/google/type/dayofweek.proto"),
    ),
    (
        "google/type/decimal.proto",
        include_str!("../proto/google/type/decimal.proto"),
    ),
    (
        "google/type/expr.proto",
        include_str!("../proto/google/type/expr.proto"),
    ),
    (
        "google/type/fraction.proto",
        include_str!("../proto/google/type/fraction.proto"),
    ),
    (
        "google/type/interval.proto",
        include_str!("../proto/google/type/interval.proto"),
    ),
    (
        "google/type/latlng.proto",
        include_str!("../proto/google/type/latlng.proto"),
    ),
    (
        "google/type/localized_text.proto",
        include_str!("../proto/google/type/localized_text.proto"),
    ),
    (
        "google/type/money.proto",
        include_str!("../proto/google/type/money.proto"),
    ),
    (
        "google/type/month.proto",
        include_str!("../proto/google/type/month.proto"),
    ),
    (
        "google/type/phone_number.proto",
        include_str!("../proto/google/type/phone_number.proto"),
    ),
    (
        "google/type/postal_address.proto",
        include_str!("../proto/google/type/postal_address.proto"),
    ),
    (
        "google/type/quaternion.proto",
        include_str!("../proto/google/type/quaternion.proto"),
    ),
    (
        "google/type/timeofday.proto",
        include_str!("../proto/google/type/timeofday.proto"),
    ),
    (
        "protoapi/v1/list_filter.proto",
        include_str!("../proto/protoapi/v1/list_filter.proto"),
    ),
];

/// Resolves [`BUNDLED`] imports without an include path.
struct Bundled;

impl protox::file::FileResolver for Bundled {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        match BUNDLED.iter().find(|(bundled, _)| *bundled == name) {
            Some((name, source)) => protox::file::File::from_source(name, source),
            None => Err(protox::Error::file_not_found(name)),
        }
    }
}

fn relative(includes: &[PathBuf], path: &Path) -> String {
    includes
        .iter()
        .find_map(|include| path.strip_prefix(include).ok())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

/// A protox error (syntax, unresolved names, missing imports) as a
/// diagnostic at the place it names: protox reports spans through miette's
/// `Diagnostic` trait, with the file's text as its source code. Only its
/// first error: the others it may have found often follow from it.
fn diagnostics(error: &protox::Error) -> Vec<Diagnostic> {
    use miette::Diagnostic as _;
    vec![diagnostic(
        error,
        error.file().unwrap_or_default(),
        error.source_code(),
    )]
}

fn diagnostic(
    error: &dyn miette::Diagnostic,
    file: &str,
    source: Option<&dyn miette::SourceCode>,
) -> Diagnostic {
    let place = |span: &miette::LabeledSpan| {
        let contents = source?.read_span(span.inner(), 0, 0).ok()?;
        let location = Location {
            file: file.to_owned(),
            line: contents.line() + 1,
            column: contents.column() + 1,
        };
        Some((
            location,
            span.len(),
            span.label().unwrap_or_default().to_owned(),
        ))
    };
    let mut labels: Vec<_> = error.labels().into_iter().flatten().collect();
    // The primary label, else the last (of duplicates, the second one).
    let primary = labels
        .iter()
        .position(|l| l.primary())
        .or(labels.len().checked_sub(1));
    let primary = primary.map(|index| labels.remove(index));
    let location = Location {
        file: file.to_owned(),
        ..Location::default()
    };
    let mut diagnostic = Diagnostic::new(location, error.to_string());
    if let Some((location, length, text)) = primary.as_ref().and_then(place) {
        diagnostic.location = location.clone();
        diagnostic = diagnostic.label(Label {
            location,
            length: Some(length),
            text,
            primary: true,
        });
    }
    for (location, length, text) in labels.iter().filter_map(place) {
        diagnostic = diagnostic.label(Label {
            location,
            length: Some(length),
            text,
            primary: false,
        });
    }
    if let Some(help) = error.help() {
        diagnostic = diagnostic.note(help.to_string());
    }
    diagnostic
}
