//! Stage 2: the typed model every emitter works from.
//!
//! Built from the descriptor pool (which keeps custom options): services and
//! their HTTP rules with parsed path templates, the standard method each RPC
//! implements, resources with field behaviours, and proto comments.

use heck::ToSnakeCase;

use crate::diagnostics::Location;

mod annotate;
mod build;
pub mod derived;
mod exchange;
mod fields;
mod http;
mod json;
mod legacy;
mod managed;
mod media;
mod names;
mod operations;
mod pattern;
mod policies;
mod proto;
mod references;
mod resource;
mod routes;
mod shapes;
mod standard;
mod storage;
mod writes;

pub use derived::Derived;
pub use exchange::{FieldName, TokenExchange};
pub use http::{HttpRule, Verb};
pub use json::{Container, JsonField, JsonShape, JsonValue, NamedField, QueryKind};
pub use legacy::{Conversion, View, ViewField};
pub use media::{HTTP_BODY, HTTP_BODY_PATH, Media, RawRequest};
pub use names::RequestShape;
pub use operations::{LongRunning, OperationMetadata, Progress};
pub use pattern::NamePattern;
pub use policies::{Declared, PolicyBindings};
pub use proto::comments;
pub use proto::{
    GENERATOR_PACKAGES, OneofMember, generator_package, module_ident, package_module, rust_ident,
    rust_path,
};
pub use resource::{
    Behavior, Dependent, Field, FieldKind, FieldRule, PublicRule, Reach, Reference, Resource,
};
pub use shapes::{DeleteShape, ListShape, Shape, Total, UpdateShape};
pub use standard::{LIST_FILTERS, Paging, PolicyVerb, Standard};
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
    /// The token exchange the annotations declare, if any.
    pub token_exchange: Option<TokenExchange>,
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
    /// Its HTTP rule; `None` for a method served over gRPC only.
    pub http: Option<HttpRule>,
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
    /// What the operation it answers holds, for a standard method that
    /// runs as one (AIP-151).
    pub long_running: Option<LongRunning>,
}

impl Method {
    /// e.g. `create_group`; as prost and tonic spell it, so `r#move` for
    /// `Move` (which `format_ident!` reads as a raw identifier).
    pub fn rust_name(&self) -> String {
        rust_ident(&self.name.to_snake_case())
    }

    /// Its HTTP rule and the rule's additional bindings, each served as a
    /// route (none for a method served over gRPC only).
    pub fn bindings(&self) -> impl Iterator<Item = &HttpRule> {
        self.http.iter().flat_map(HttpRule::bindings)
    }
}

/// Queries over the built model, which emitters ask.
impl Api {
    /// Whether any method states who may call it (a capability, or none
    /// for anonymous callers): without, every caller the server
    /// authenticates may call every method.
    pub fn declares_access_rules(&self) -> bool {
        self.packages
            .iter()
            .flat_map(|p| &p.services)
            .flat_map(|s| &s.methods)
            .any(|m| m.capability.is_some() || m.anonymous)
    }

    /// The first segment of the packages that declare services (`library`
    /// of `library.v1`), naming the API by default; of a `google.*` package,
    /// its last segment before the version (`library` of
    /// `google.example.library.v1`), since `google` names no one API. The
    /// `google.longrunning.Operations` served for the API's operations is
    /// not the API's own.
    pub fn root_package(&self) -> &str {
        let own = |service: &Service| {
            (service.methods.iter()).any(|m| !matches!(m.standard, Standard::Operations))
        };
        let package = self
            .packages
            .iter()
            .find(|p| p.services.iter().any(own))
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
