//! Command-line commands for the standard methods of every collection, on
//! the generated client (module `cli`, behind a crate feature).
//!
//! - [`FILE`]: `Command`, one clap subcommand per collection of the API's
//!   current version (`book-copies`), and per collection an enum of the
//!   standard methods it has (`list`, `get`, `create`, `update`, `delete`)
//!   with a `run` that builds the request from the arguments as canonical
//!   JSON, decodes it into the typed request and calls the collection's
//!   client. The arguments and answers are `protoapi_runtime::cli`'s; a list's
//!   filters are the ones its collection declares.
//! - [`emit_module`]: the crate root's `cli` module including it, compiled
//!   when the crate's feature is on.
//!
//! Custom methods, lists paged by offset, creates without a `parent`,
//! updates without an `update_mask`, and collections of earlier versions
//! have no commands.

use heck::{ToKebabCase, ToLowerCamelCase, ToSnakeCase, ToUpperCamelCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::{
    Api, Behavior, FieldKind, LIST_FILTERS, Method, Paging, Resource, Service, Standard,
};

/// The file the crate root's `cli` module includes.
pub const FILE: &str = "cli.rs";

/// The crate root's `cli` module, compiled with the crate feature `feature`.
pub fn emit_module(feature: &str) -> TokenStream {
    let doc = format!(
        " Command-line commands for every collection of the API's current version, over [`crate::Client`] (crate feature `{feature}`)."
    );
    quote! {
        #[doc = #doc]
        #[cfg(feature = #feature)]
        #[rustfmt::skip]
        #[allow(deprecated)]
        pub mod cli {
            include!(#FILE);
        }
    }
}

/// One collection of the current version and the standard methods its
/// service has, each with its name on the generated client.
struct Collection<'a> {
    resource: &'a Resource,
    service: &'a Service,
    /// Its accessor on the crate's `Client` (`book_copies`).
    accessor: String,
    /// Its commands' name: the resource's plural, unless another
    /// collection has it too (`publisher_models` beside `models`).
    plural: String,
    list: Option<(&'a Method, String)>,
    get: Option<(&'a Method, String)>,
    create: Option<(&'a Method, String)>,
    update: Option<(&'a Method, String)>,
    delete: Option<(&'a Method, String)>,
}

impl Collection<'_> {
    /// `BookCopies`, the name of its command enum.
    fn type_name(&self) -> syn::Ident {
        format_ident!("{}", self.plural.to_upper_camel_case())
    }

    /// Whether no method of it has a command.
    fn is_empty(&self) -> bool {
        [
            &self.list,
            &self.get,
            &self.create,
            &self.update,
            &self.delete,
        ]
        .iter()
        .all(|method| method.is_none())
    }

    /// `book copy`, as help texts name one item.
    fn item(&self) -> String {
        self.resource.singular.to_snake_case().replace('_', " ")
    }
}

/// The collections with commands, by name.
fn collections(api: &Api) -> Vec<Collection<'_>> {
    let latest = api.latest_version();
    let accessors = super::shared::accessors(api);
    let mut collections: Vec<Collection> = Vec::new();
    let current = api
        .packages
        .iter()
        .filter(|p| p.name.rsplit('.').next() == Some(latest.as_str()));
    for package in current {
        for service in &package.services {
            let Some((accessor, _)) = accessors
                .iter()
                .find(|(_, (name, s))| *name == package.name && s.full_name == service.full_name)
            else {
                continue;
            };
            let names = super::shared::method_names(service);
            for (method, name) in service.methods.iter().zip(names) {
                add_method(api, &mut collections, service, accessor, method, name);
            }
        }
    }
    collections.retain(|collection| !collection.is_empty());
    distinct_names(&mut collections);
    collections.sort_by(|a, b| a.plural.cmp(&b.plural));
    collections
}

/// Gives collections sharing a plural their qualified plural; those still
/// alike after that (one kind in two packages) are told apart by their order.
fn distinct_names(collections: &mut [Collection]) {
    let command = |c: &Collection| c.plural.to_snake_case();
    let shared: Vec<bool> = collections
        .iter()
        .map(|c| {
            collections
                .iter()
                .filter(|o| command(o) == command(c))
                .count()
                > 1
        })
        .collect();
    for (collection, shared) in collections.iter_mut().zip(shared) {
        if shared {
            collection.plural = qualified_plural(collection.resource);
        }
    }
    for index in 1..collections.len() {
        let name = command(&collections[index]);
        let taken = collections[..index]
            .iter()
            .filter(|c| command(c) == name)
            .count();
        if taken > 0 {
            collections[index].plural = format!("{name}_{}", taken + 1);
        }
    }
}

/// `publisher_models` for `PublisherModel` of plural `models`: the
/// resource's singular (AIP-123: its type's kind unless declared) with its
/// last word replaced by the plural's.
fn qualified_plural(resource: &Resource) -> String {
    let name = resource.singular.to_snake_case();
    let plural = resource.plural.to_snake_case();
    let last = plural.rsplit('_').next().unwrap_or(&plural);
    match name.rsplit_once('_') {
        Some((prefix, _)) => format!("{prefix}_{last}"),
        None => last.to_owned(),
    }
}

/// Files `method` under its collection's, if it is one a command calls.
fn add_method<'a>(
    api: &'a Api,
    collections: &mut Vec<Collection<'a>>,
    service: &'a Service,
    accessor: &str,
    method: &'a Method,
    name: String,
) {
    let Some(resource) = method.standard.resource().and_then(|r| api.resource(r)) else {
        return;
    };
    let index = match collections
        .iter()
        .position(|c| c.resource.full_name == resource.full_name)
    {
        Some(index) => index,
        None => {
            collections.push(Collection {
                resource,
                service,
                accessor: accessor.to_owned(),
                plural: resource.plural.clone(),
                list: None,
                get: None,
                create: None,
                update: None,
                delete: None,
            });
            collections.len() - 1
        }
    };
    let collection = &mut collections[index];
    if collection.service.full_name != service.full_name {
        return;
    }
    let has = |field: &str| request_field(api, method, field).is_some();
    let slot = match &method.standard {
        Standard::List {
            paging: Paging::Token,
            ..
        } => &mut collection.list,
        Standard::Get { .. } => &mut collection.get,
        Standard::Create { .. } if has("parent") => &mut collection.create,
        Standard::Update { body_field, .. } if !body_field.is_empty() && has("update_mask") => {
            &mut collection.update
        }
        Standard::Delete { .. } => &mut collection.delete,
        _ => return,
    };
    *slot = Some((method, name));
}

/// The canonical JSON name of a field of `method`'s request.
fn request_field(api: &Api, method: &Method, field: &str) -> Option<String> {
    api.messages
        .iter()
        .find(|m| m.full_name == method.input_type)?
        .named_fields
        .iter()
        .find(|f| f.name == field)
        .map(|f| f.json_name.clone())
}

/// The JSON name of the request field the path binds (`uid`); for a
/// method served over gRPC only, its `name` field if it has one.
fn id_field(api: &Api, method: &Method) -> String {
    let bound = method
        .http
        .as_ref()
        .and_then(|http| http.template.variables.first())
        .map(|v| v.field.as_str());
    let variable = bound.unwrap_or_else(|| match request_field(api, method, "name") {
        Some(_) => "name",
        None => "uid",
    });
    request_field(api, method, variable).unwrap_or_else(|| variable.to_owned())
}

/// The JSON name of the request field holding the item (`bookCopy`).
fn body_field(api: &Api, method: &Method) -> String {
    let field = match &method.standard {
        Standard::Create { body_field, .. } | Standard::Update { body_field, .. } => body_field,
        _ => unreachable!("only creates and updates carry an item"),
    };
    request_field(api, method, field).unwrap_or_else(|| field.clone())
}

/// The `cli` module's file: `Command` and each collection's commands.
pub fn emit(api: &Api) -> TokenStream {
    let collections = collections(api);
    let command = emit_command(&collections);
    let each: TokenStream = collections
        .iter()
        .map(|c| emit_collection(api, c))
        .collect();
    // What the commands name, and only that, is imported.
    let named = |name: &str| names(&each, name);
    let value = named("Value").then(|| {
        quote!(
            use ::protoapi_runtime::__private::serde_json::Value;
        )
    });
    let args = named("Args").then(|| quote!(Args,));
    let cli = named("cli").then(|| quote!(self,));
    let page = named("Page").then(|| quote!(, Page));
    let json = named("json").then(|| {
        quote!(
            use ::protoapi_runtime::__private::json;
        )
    });
    quote! {
        use ::protoapi_runtime::__private::Error;
        #value
        // clap's derives name `clap::…`.
        use ::protoapi_runtime::__private::cli::clap::{self, #args Subcommand};
        use ::protoapi_runtime::__private::cli::{#cli Answer #page};
        #json

        #command
        #each
    }
}

/// Whether `tokens` name the identifier `name` anywhere.
fn names(tokens: &TokenStream, name: &str) -> bool {
    tokens.clone().into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => ident == name,
        proc_macro2::TokenTree::Group(group) => names(&group.stream(), name),
        _ => false,
    })
}

fn emit_command(collections: &[Collection]) -> TokenStream {
    let variants = collections.iter().map(|collection| {
        let name = collection.type_name();
        let doc = format!(" Work with {}.", collection.plural.to_kebab_case());
        quote! {
            #[doc = #doc]
            #[command(subcommand)]
            #name(#name),
        }
    });
    let arms: Vec<TokenStream> = collections
        .iter()
        .map(|collection| {
            let name = collection.type_name();
            quote!(Command::#name(command) => command.run(client).await,)
        })
        .collect();
    // An API without commands has no variant to match (and no client to call).
    let (client, run) = match arms.is_empty() {
        true => (quote!(_client), quote!(match *self {})),
        false => (quote!(client), quote!(match self { #(#arms)* })),
    };
    quote! {
        /// A collection of the API and what to do with it
        /// (`<collection> <method>`).
        #[derive(Debug, Subcommand)]
        pub enum Command {
            #(#variants)*
        }

        impl Command {
            /// Calls the method the command names through `client`.
            pub async fn run(&self, #client: &crate::Client) -> Result<Answer, Error> {
                #run
            }
        }
    }
}

/// A collection's command enum, its list's arguments and its `run`.
fn emit_collection(api: &Api, collection: &Collection) -> TokenStream {
    let name = collection.type_name();
    let item = collection.item();
    let plural = collection.plural.to_kebab_case();
    let mut variants = Vec::new();
    if collection.list.is_some() {
        let list = format_ident!("List{name}");
        let doc = format!(" List {plural}, one page or (`--all`) every page.");
        variants.push(quote!(#[doc = #doc] List(#list),));
    }
    let standard = [
        (&collection.get, quote!(Get), format!(" Print one {item}.")),
        (
            &collection.create,
            quote!(Create),
            format!(" Create {} from `--set` fields.", a(&item)),
        ),
        (
            &collection.update,
            quote!(Update),
            format!(
                " Change the `--set` fields of {} (they are the update mask).",
                a(&item)
            ),
        ),
        (
            &collection.delete,
            quote!(Delete),
            format!(" Delete {}.", a(&item)),
        ),
    ];
    for (method, variant, doc) in standard {
        let fields = settable(collection.resource, &variant.to_string());
        let help = fields.map(|fields| quote!(#[command(after_long_help = #fields)]));
        match method {
            Some((method, _)) if method.long_running.is_some() => {
                let doc = format!("{doc} Waits until its operation is done, unless `--async`.");
                variants
                    .push(quote!(#[doc = #doc] #help #variant(cli::LongRunning<cli::#variant>),));
            }
            Some(_) => variants.push(quote!(#[doc = #doc] #help #variant(cli::#variant),)),
            None => {}
        }
    }
    let doc = format!(
        " The commands of {plural}: the standard methods of `{}`.",
        collection.service.full_name
    );
    let list = collection
        .list
        .as_ref()
        .map(|(method, _)| emit_list_args(collection, method));
    let run = emit_run(api, collection);
    quote! {
        #[doc = #doc]
        #[derive(Debug, Subcommand)]
        pub enum #name {
            #(#variants)*
        }

        #list
        #run
    }
}

/// `item` with its indefinite article: `an artifact`, `a group`.
fn a(item: &str) -> String {
    match item.starts_with(['a', 'e', 'i', 'o', 'u']) {
        true => format!("an {item}"),
        false => format!("a {item}"),
    }
}

/// What `create --help` and `update --help` say `--set` takes: the fields
/// a client writes (JSON paths; not OUTPUT_ONLY, and for an update not
/// IMMUTABLE), the required ones marked.
fn settable(resource: &Resource, command: &str) -> Option<String> {
    let update = match command {
        "Create" => false,
        "Update" => true,
        _ => return None,
    };
    let fields: Vec<String> = (resource.fields.iter())
        .filter(|field| field.kind != FieldKind::Message || field.parent.is_some())
        .filter(|field| match field.behavior {
            Behavior::OutputOnly => false,
            Behavior::Immutable | Behavior::RequiredImmutable => !update,
            Behavior::Optional | Behavior::Required => true,
        })
        .filter(|field| !matches!(field.name.as_str(), "uid" | "etag"))
        .map(|field| {
            let required = !update
                && matches!(
                    field.behavior,
                    Behavior::Required | Behavior::RequiredImmutable
                );
            match required {
                true => format!("  {} (required)", field.json_path()),
                false => format!("  {}", field.json_path()),
            }
        })
        .collect();
    (!fields.is_empty()).then(|| format!("Fields for --set:\n{}", fields.join("\n")))
}

/// The flag of a hierarchy filter (one whose request field is nested):
/// its help and type, and whether several values are comma-separated.
fn filter_flag(filter: &str) -> (&'static str, TokenStream) {
    match filter {
        "children_of" => (
            " Only the items one level below this UIDP.",
            quote!(Option<String>),
        ),
        "descendants_of" => (" Only the items below this UIDP.", quote!(Option<String>)),
        "ancestors_of" => (" Only the items above this UIDP.", quote!(Option<String>)),
        "in_root" => (" Only the items at the root.", quote!(bool)),
        "ids" => (" Only these UIDPs.", quote!(Vec<String>)),
        other => unreachable!("`{other}` is a field filter"),
    }
}

/// `List<Collection>`: the declared filters and the paging of a list,
/// and the request they make.
fn emit_list_args(collection: &Collection, method: &Method) -> TokenStream {
    let name = format_ident!("List{}", collection.type_name());
    let declared =
        |filter: &&(&str, &str)| collection.resource.filters.iter().any(|f| f == filter.0);
    let (nested, fields): (Vec<_>, Vec<_>) = LIST_FILTERS
        .iter()
        .filter(declared)
        .partition(|(_, path)| path.contains('.'));
    let mut flags = Vec::new();
    let mut inserts = Vec::new();
    for &(filter, path) in nested {
        let field = format_ident!("{filter}");
        let (doc, ty) = filter_flag(filter);
        let delimiter = (filter == "ids").then(|| quote!(, value_delimiter = ','));
        let value = match filter {
            "in_root" => quote!(self.#field),
            _ => quote!(self.#field.clone()),
        };
        flags.push(quote! {
            #[doc = #doc]
            #[arg(long #delimiter)]
            pub #field: #ty,
        });
        let path = json_path(path);
        inserts.push(quote!(cli::insert(&mut request, #path, #value);));
    }
    // An AIP-160 expression takes `--filter`; the declared field filters
    // of such a request take `--match`.
    let expression = method.list_shape().filter;
    if expression {
        let fields = collection.resource.filterable();
        let doc = format!(
            " An AIP-160 filter on `{}`, e.g. `{} = \"x\" AND NOT ...`.",
            fields.join("`, `"),
            fields.first().copied().unwrap_or("field")
        );
        flags.push(quote! {
            #[doc = #doc]
            #[arg(long, value_name = "EXPRESSION")]
            pub filter: Option<String>,
        });
        inserts.push(quote!(cli::insert(&mut request, "filter", self.filter.clone());));
    }
    if !fields.is_empty() {
        let names: Vec<&str> = fields.iter().map(|(filter, _)| *filter).collect();
        let doc = format!(
            " A declared filter, `field=value`: `{}`.",
            names.join("`, `")
        );
        let flag = if expression { "match" } else { "filter" };
        flags.push(quote! {
            #[doc = #doc]
            #[arg(long = #flag, value_name = "FIELD=VALUE", value_parser = cli::filter(&[#(#names),*]))]
            pub filters: Vec<(String, String)>,
        });
        inserts.push(quote! {
            for (field, value) in &self.filters {
                cli::insert(&mut request, field, value.as_str());
            }
        });
    }
    let doc = format!(
        " The arguments of `{} list`.",
        collection.plural.to_kebab_case()
    );
    let request_doc = format!(
        " The `{}` request they make, as canonical JSON.",
        method.name
    );
    let body = match inserts.is_empty() {
        true => quote!(self.paging.request()),
        false => quote! {
            let mut request = self.paging.request();
            #(#inserts)*
            request
        },
    };
    quote! {
        #[doc = #doc]
        #[derive(Debug, Args)]
        pub struct #name {
            #(#flags)*
            #[command(flatten)]
            pub paging: cli::Paging,
        }

        impl #name {
            #[doc = #request_doc]
            pub fn request(&self) -> Value {
                #body
            }
        }
    }
}

/// A request field path in canonical JSON (`uidp.childrenOf`).
fn json_path(path: &str) -> String {
    path.split('.')
        .map(ToLowerCamelCase::to_lower_camel_case)
        .collect::<Vec<_>>()
        .join(".")
}

/// `impl <Collection> { run }`: one arm per command.
fn emit_run(api: &Api, collection: &Collection) -> TokenStream {
    let name = collection.type_name();
    let accessor = super::ident(&collection.accessor);
    let client = super::ident(&collection.plural.to_snake_case());
    let item = super::ident(&collection.resource.singular.to_snake_case());
    let mut arms = Vec::new();
    if let Some((method, list)) = &collection.list {
        let pages = format_ident!("{list}_pages");
        let (items, total) = list_page_fields(method);
        arms.push(quote! {
            #name::List(list) => {
                let pages = #client.#pages(json::from_value(list.request())?);
                list.paging
                    .answer(pages, |page| Page::new(&page.#items, page.next_page_token, #total))
                    .await
            }
        });
    }
    if let Some((method, get)) = &collection.get {
        let (id, get) = (id_field(api, method), super::ident(get));
        arms.push(quote! {
            #name::Get(get) => {
                let #item = #client.#get(json::from_value(get.request(#id))?).await?;
                Ok(Answer::item(&#item))
            }
        });
    }
    if let Some((method, create)) = &collection.create {
        let body = body_field(api, method);
        let request = quote!(json::from_value(create.request(#body)?)?);
        let command = (quote!(#name::Create), format_ident!("create"));
        arms.push(write_arm(method, command, (&client, create), request));
    }
    if let Some((method, update)) = &collection.update {
        let (id, body) = (id_field(api, method), body_field(api, method));
        let request = quote!(json::from_value(update.request(#id, #body)?)?);
        let command = (quote!(#name::Update), format_ident!("update"));
        arms.push(write_arm(method, command, (&client, update), request));
    }
    if let Some((method, delete)) = &collection.delete {
        let id = id_field(api, method);
        let request = quote!(json::from_value(delete.request(#id))?);
        let command = (quote!(#name::Delete), format_ident!("delete"));
        arms.push(write_arm(method, command, (&client, delete), request));
    }
    quote! {
        impl #name {
            /// Calls the method the command names through `client`.
            pub async fn run(&self, client: &crate::Client) -> Result<Answer, Error> {
                let #client = client.#accessor();
                match self {
                    #(#arms)*
                }
            }
        }
    }
}

/// The arm of a write command (`variant`, its arguments bound to
/// `binding`): `request` read from them, then `call` (the client and its
/// method) made; it answers the item written, or for a delete its uid. For
/// a method answering an operation, the arguments hold the command's and
/// `--async`: the operation is printed as soon as it starts, else waited for.
fn write_arm(
    method: &Method,
    (variant, binding): (TokenStream, syn::Ident),
    (client, name): (&syn::Ident, &str),
    request: TokenStream,
) -> TokenStream {
    let deleting = binding == "delete";
    let answer = |call: syn::Ident| match deleting {
        true => quote! {
            #client.#call(request).await?;
            Ok(Answer::Deleted(#binding.uid.clone()))
        },
        false => quote! {
            let item = #client.#call(request).await?;
            Ok(Answer::item(&item))
        },
    };
    let call = super::ident(name);
    let Some(_) = method.long_running else {
        let answer = answer(call);
        return quote!(#variant(#binding) => { let request = #request; #answer });
    };
    let answer = answer(format_ident!("{name}_and_wait"));
    quote! {
        #variant(long_running) => {
            let #binding = &long_running.command;
            let request = #request;
            if long_running.no_wait {
                let operation = #client.#call(request).await?;
                return Ok(Answer::item(&operation));
            }
            #answer
        }
    }
}

/// The field of a list response holding its items, and its total (`0`
/// when the response reports none), as a page of the command shows them.
fn list_page_fields(method: &Method) -> (syn::Ident, TokenStream) {
    let shape = method.list_shape();
    let field = match shape.total {
        crate::model::Total::Count => quote!(page.total_count),
        crate::model::Total::Size => quote!(page.total_size),
        crate::model::Total::None => return (super::ident(&shape.items), quote!(0)),
    };
    // A page shows an `i32`, whatever the response's integer type.
    let total = match shape.total_type {
        ("i32", false) => field,
        ("i32", true) => quote!(#field.unwrap_or_default()),
        (_, false) => quote!(i32::try_from(#field).unwrap_or(i32::MAX)),
        (_, true) => quote!(i32::try_from(#field.unwrap_or_default()).unwrap_or(i32::MAX)),
    };
    (super::ident(&shape.items), total)
}
