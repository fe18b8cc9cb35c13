//! The crate root: the module tree, one module per proto package, the
//! embedded descriptor set, and the server wiring ([`super::wiring`]).

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::module_ident;

/// Where a package's code lives: its prost file and, if any, its API file.
pub struct PackageFiles {
    pub package: String,
    pub messages_file: Option<String>,
    pub api_file: Option<String>,
    /// Whether the API file declares public items to re-export.
    pub exports: bool,
    /// The private module holding the API file: `api`, unless prost or a
    /// package below already takes that name.
    pub api_module: &'static str,
}

#[derive(Default)]
struct Node<'a> {
    children: BTreeMap<String, Node<'a>>,
    files: Option<&'a PackageFiles>,
}

/// The crate root (`lib.rs`, with crate docs) or a file a crate root
/// `include!`s (build scripts; inner attributes are not allowed there).
pub fn emit(
    packages: &[PackageFiles],
    descriptor_file: &str,
    openapi_file: &str,
    wiring_file: &str,
    client_file: &str,
    error_domain: &str,
    crate_root: bool,
) -> TokenStream {
    let mut root = Node::default();
    for package in packages {
        let mut node = &mut root;
        for part in package.package.split('.') {
            node = node.children.entry(part.to_owned()).or_default();
        }
        node.files = Some(package);
    }
    // A deprecated field is still served: generated code may name it.
    let modules = emit_children(&root)
        .into_iter()
        .map(|module| quote!(#[allow(deprecated)] #module));
    let docs = crate_root.then(|| {
        quote! {
            //! The API generated from the protos in `proto/`.
            //!
            //! Each proto package is a module with its prost messages, its tonic
            //! client and server, and for every service an `XApi<S>` (the service
            //! over a storage `S`), its REST router `x_routes`, and one storage
            //! trait per resource. [`Services`] serves them all on one router.
        }
    });
    quote! {
        #docs

        #(#modules)*

        /// The encoded descriptors of every proto, with imports and comments.
        #[rustfmt::skip]
        pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(#descriptor_file);

        /// The OpenAPI 3.1 document of the REST routes.
        #[rustfmt::skip]
        pub const OPENAPI_JSON: &str = include_str!(#openapi_file);

        /// The ErrorInfo domain of errors outside every service (an unknown
        /// route): the router names it, and `protoapi_runtime::serve::Server::error_domain`
        /// in the answers the server gives outside the router.
        pub const ERROR_DOMAIN: &str = #error_domain;

        /// The descriptors, decoded once; JSON encoding and reflection read them.
        #[rustfmt::skip]
        pub static DESCRIPTOR_POOL: std::sync::LazyLock<::protoapi_runtime::__private::prost_reflect::DescriptorPool> =
            std::sync::LazyLock::new(|| {
                ::protoapi_runtime::__private::prost_reflect::DescriptorPool::decode(FILE_DESCRIPTOR_SET)
                    .expect("the embedded descriptor set is valid")
            });

        #[cfg(not(any(feature = "server", feature = "client")))]
        compile_error!(
            "enable the crate feature `server` (`Services`), `client` (`Client`) or both, declared in Cargo.toml as `server = [\"client\", \"protoapi-runtime/server\"]` and `client = [\"protoapi-runtime/client\"]`"
        );

        #[cfg(feature = "server")]
        include!(#wiring_file);
        #[cfg(feature = "client")]
        include!(#client_file);
    }
}

fn emit_children(node: &Node) -> Vec<TokenStream> {
    node.children
        .iter()
        .map(|(name, child)| {
            let ident = super::ident(&module_ident(name));
            let messages = child
                .files
                .and_then(|files| files.messages_file.as_ref())
                .map(|file| quote!(include!(#file);));
            let api = child
                .files
                .and_then(|files| files.api_file.as_ref().map(|file| (file, files)))
                .map(|(file, files)| {
                    let module = super::ident(files.api_module);
                    let export = files.exports.then(|| {
                        quote!(
                            pub use #module::*;
                        )
                    });
                    // The API of a package whose last part is `api` (`google.api`).
                    let inception = (name == files.api_module).then(|| {
                        quote!(
                            #[allow(clippy::module_inception)]
                        )
                    });
                    quote! {
                        #inception
                        mod #module {
                            include!(#file);
                        }
                        #export
                    }
                });
            let nested = emit_children(child);
            quote! {
                #[rustfmt::skip]
                pub mod #ident {
                    #messages
                    #api
                    #(#nested)*
                }
            }
        })
        .collect()
}
