//! `protoapi_runtime::resource::Resource` for every resource message: the field
//! behaviours from `google.api.field_behavior`, typed field copying and
//! comparison for update masks, and sort keys for `order_by`.

use proc_macro2::TokenStream;
use quote::quote;

use super::ident;
use crate::model::{Behavior, Field, FieldKind, PublicRule, Reach, Resource};

/// Fields the standard flows manage themselves, never named in a mask.
const MANAGED: &[&str] = &["etag"];

pub fn emit(scope: &super::Scope, resource: &Resource) -> TokenStream {
    let ty = scope.path(&resource.rust_path);
    let type_name = &resource.type_name;
    let collection = &resource.plural;
    let fields: Vec<&Field> = resource
        .fields
        .iter()
        .filter(|f| !MANAGED.contains(&f.path().as_str()))
        .collect();
    let specs = fields.iter().map(|field| field_spec(field));
    let order_by = &resource.order_by;
    let copy_arms = fields.iter().map(|f| copy_arm(f, scope));
    let has_arms = fields.iter().map(|f| has_arm(f, scope));
    let eq_arms = fields.iter().map(|f| eq_arm(f, scope));
    let sort_arms = sort_arms(resource);
    let constants = constants(resource);
    let text_rules = (!resource.rules.is_empty()).then(|| text_rules(resource));
    let json_len_bound = json_len_bound(resource, scope);
    // The storage key: the uid, or the name of a name-keyed resource.
    let key = ident(key_field(resource));
    let managed = super::shared::shapes::managed_accessors(resource);
    let soft_delete = super::shared::shapes::soft_delete(resource);
    // AIP-148's `uid` beside the name of a name-keyed resource, which
    // `set_system_uid` sets; the storage key stays the name.
    let top_level = |name: &str| {
        resource
            .fields
            .iter()
            .any(|f| f.parent.is_none() && f.name == name && f.string)
    };
    let aip_uid = resource.names.is_some() && top_level("uid");
    // A field named `key` (never the storage key): `key()` still answers
    // the storage key.
    let key_getter_lint = top_level("key").then(|| quote!(#[allow(clippy::misnamed_getters)]));
    let system_uid = aip_uid.then(|| {
        quote! {
            fn set_system_uid(&mut self, uid: String) {
                self.uid = uid;
            }
        }
    });
    quote! {
        impl ::protoapi_runtime::__private::resource::Resource for #ty {
            const TYPE: &'static str = #type_name;
            const COLLECTION: &'static str = #collection;
            #constants
            const FIELDS: &'static [::protoapi_runtime::__private::resource::FieldSpec] = {
                use ::protoapi_runtime::__private::resource::{Behavior, FieldSpec};
                &[#(#specs),*]
            };
            const ORDER_BY: &'static [&'static str] = &[#(#order_by),*];

            #key_getter_lint
            fn key(&self) -> &str {
                &self.#key
            }

            fn set_key(&mut self, key: String) {
                self.#key = key;
            }

            #system_uid

            #managed
            #soft_delete

            fn copy_field(&mut self, source: &Self, path: &str) {
                match path {
                    #(#copy_arms)*
                    _ => {}
                }
            }

            fn has_field(&self, path: &str) -> bool {
                match path {
                    #(#has_arms)*
                    _ => false,
                }
            }

            fn field_eq(&self, other: &Self, path: &str) -> bool {
                match path {
                    #(#eq_arms)*
                    _ => true,
                }
            }

            #text_rules

            #json_len_bound

            fn sort_value(&self, field: &str) -> ::protoapi_runtime::__private::resource::SortValue {
                use ::protoapi_runtime::__private::resource::SortValue;
                match field {
                    #(#sort_arms)*
                    _ => SortValue::Text(self.#key.clone()),
                }
            }
        }
    }
}

/// The `FieldSpec` of one field: its paths and behaviour.
fn field_spec(field: &Field) -> TokenStream {
    let path = field.path();
    let json_path = field.json_path();
    let behavior = match field.behavior {
        Behavior::Optional => quote!(Optional),
        Behavior::Required => quote!(Required),
        Behavior::OutputOnly => quote!(OutputOnly),
        Behavior::Immutable => quote!(Immutable),
        Behavior::RequiredImmutable => quote!(RequiredImmutable),
    };
    quote! {
        FieldSpec {
            path: #path,
            json_path: #json_path,
            behavior: Behavior::#behavior,
        }
    }
}

/// The `sort_value` arm of each top-level scalar or timestamp field, and of
/// each derived column (`Resource::derived`).
fn sort_arms(resource: &Resource) -> Vec<TokenStream> {
    resource
        .fields
        .iter()
        // `uid` is the storage key's term (the name, for a name-keyed
        // resource whose AIP-148 `uid` is another field): the default arm.
        .filter(|field| field.sortable() && field.name != "uid")
        .filter_map(|field| {
            let json = &field.json_name;
            let name = ident(&field.name);
            let value = match field.kind {
                FieldKind::Timestamp => quote! {
                    SortValue::Int(self.#name.as_ref().map(::protoapi_runtime::__private::time::to_micros).unwrap_or_default())
                },
                FieldKind::Number if field.int64 => quote!(SortValue::Int(self.#name)),
                // Values past `i64::MAX` sort together, last.
                FieldKind::Number if field.uint64 => {
                    quote!(SortValue::Int(i64::try_from(self.#name).unwrap_or(i64::MAX)))
                }
                FieldKind::Number => quote!(SortValue::Int(i64::from(self.#name))),
                FieldKind::Float => quote!(SortValue::Text(format!("{:020.6}", self.#name))),
                FieldKind::Bool => quote!(SortValue::Int(i64::from(self.#name))),
                FieldKind::Text => quote!(SortValue::Text(self.#name.clone())),
                FieldKind::Message | FieldKind::Repeated => return None,
            };
            Some(quote!(#json => #value,))
        })
        .chain(resource.derived.iter().map(|derived| {
            let json = &derived.json_path;
            let value = super::shared::derived_value(&derived.source, &quote!(self));
            match derived.integer() {
                true => quote!(#json => SortValue::Int(#value),),
                false => quote!(#json => SortValue::Text(#value),),
            }
        }))
        .collect()
}

/// The associated constants the annotations set, each left out (to its
/// default in the trait) when not annotated.
fn constants(resource: &Resource) -> TokenStream {
    let page_sizes = resource.page_sizes.map(|(default, max)| {
        quote! {
            const PAGE_SIZES: ::protoapi_runtime::__private::standard::PageSizes =
                ::protoapi_runtime::__private::standard::PageSizes { default: #default, max: #max };
        }
    });
    let filters = (resource.filters != ["children_of", "descendants_of"]).then(|| {
        let filters = &resource.filters;
        quote!(const FILTERS: &'static [&'static str] = &[#(#filters),*];)
    });
    let filterable = resource.filterable();
    let filterable = (!filterable.is_empty())
        .then(|| quote!(const FILTERABLE: &'static [&'static str] = &[#(#filterable),*];));
    let dependents = dependents(resource);
    let references = references(resource);
    let public = resource.public.as_ref().map(|rule| {
        let rule = match rule {
            PublicRule::If(field) => quote!(If(#field)),
            PublicRule::After(field) => quote!(After(#field)),
        };
        quote!(const PUBLIC: Option<::protoapi_runtime::__private::resource::Public> = Some(::protoapi_runtime::__private::resource::Public::#rule);)
    });
    let parent_type = resource
        .parent_type
        .as_ref()
        .map(|parent| quote!(const PARENT_TYPE: Option<&'static str> = Some(#parent);));
    let max_depth = resource
        .max_depth
        .map(proc_macro2::Literal::usize_unsuffixed)
        .map(|levels| quote!(const MAX_DEPTH: usize = #levels;));
    let names = resource.names.as_ref().map(|names| {
        let collections = &names.collections;
        let alternatives = (!names.alternatives.is_empty()).then(|| {
            let alternatives = names.alternatives.iter().map(|c| quote!(&[#(#c),*]));
            quote!(.with_alternatives(&[#(#alternatives),*]))
        });
        quote! {
            const NAMES: Option<::protoapi_runtime::__private::names::Pattern> = Some(
                ::protoapi_runtime::__private::names::Pattern::new(&[#(#collections),*])
                    #alternatives
            );
        }
    });
    let shared = resource.shared.then(|| {
        quote!(
            const SHARED: bool = true;
        )
    });
    quote! {
        #page_sizes
        #filters
        #filterable
        #dependents
        #references
        #public
        #parent_type
        #max_depth
        #shared
        #names
    }
}

/// The field holding an item's storage key: `uid`, or `name` for a
/// resource keyed by resource names (AIP-122).
pub fn key_field(resource: &Resource) -> &'static str {
    match resource.names {
        Some(_) => "name",
        None => "uid",
    }
}

/// `DEPENDENTS`, when something blocks a delete.
fn dependents(resource: &Resource) -> Option<TokenStream> {
    if resource.dependents.is_empty() {
        return None;
    }
    let entries = resource.dependents.iter().map(|d| {
        let (collection, resource_type, field) = (&d.collection, &d.resource_type, &d.field);
        let read_capability = match &d.read_capability {
            Some(capability) => quote!(Some(#capability)),
            None => quote!(None),
        };
        quote! {
            Dependent {
                collection: #collection,
                resource_type: #resource_type,
                field: #field,
                read_capability: #read_capability,
            }
        }
    });
    Some(quote! {
        const DEPENDENTS: &'static [::protoapi_runtime::__private::resource::Dependent] = {
            use ::protoapi_runtime::__private::resource::Dependent;
            &[#(#entries),*]
        };
    })
}

/// `REFERENCES`, when fields hold uids of other collections' items.
fn references(resource: &Resource) -> Option<TokenStream> {
    if resource.references.is_empty() {
        return None;
    }
    let entries = resource.references.iter().map(|r| {
        let (field, collection, resource_type) = (&r.json_name, &r.collection, &r.resource_type);
        let path = format!("{}.{}", resource.singular, r.json_name);
        let reach = match r.reach {
            Reach::Ancestors => quote!(Ancestors),
            Reach::Root => quote!(Root),
            Reach::Anywhere => quote!(Anywhere),
        };
        quote! {
            Reference {
                field: #field,
                path: #path,
                collection: #collection,
                resource_type: #resource_type,
                reach: Reach::#reach,
            }
        }
    });
    Some(quote! {
        const REFERENCES: &'static [::protoapi_runtime::__private::resource::Reference] = {
            use ::protoapi_runtime::__private::resource::{Reach, Reference};
            &[#(#entries),*]
        };
    })
}

/// `TEXT_RULES` and `text_values` from the annotation files' field rules.
fn text_rules(resource: &Resource) -> TokenStream {
    let rules = resource.rules.iter().map(|rule| {
        let field = &rule.json_name;
        let mut settings = vec![quote!(field: #field)];
        if let Some(allowed) = &rule.allowed {
            settings.push(quote!(allowed: Some(&[#(#allowed),*])));
        }
        if rule.uidp {
            settings.push(quote!(uidp: true));
        }
        if let Some(max) = rule.max_length {
            let max = proc_macro2::Literal::usize_unsuffixed(max);
            settings.push(quote!(max_length: Some(#max)));
        }
        if let Some(max) = rule.max_bytes {
            let max = proc_macro2::Literal::usize_unsuffixed(max);
            settings.push(quote!(max_bytes: Some(#max)));
        }
        if rule.printable {
            settings.push(quote!(printable: true));
        }
        if rule.must_hold {
            settings.push(quote!(caller_must_hold: true));
        }
        quote!(TextRule { #(#settings,)* ..TextRule::NONE })
    });
    let arms = resource.rules.iter().map(|rule| {
        let json = &rule.json_name;
        let name = ident(&rule.field);
        if rule.repeated {
            quote!(#json => self.#name.iter().map(String::as_str).collect(),)
        } else {
            quote!(#json if !self.#name.is_empty() => vec![self.#name.as_str()],)
        }
    });
    quote! {
        const TEXT_RULES: &'static [::protoapi_runtime::__private::resource::TextRule] = {
            use ::protoapi_runtime::__private::resource::TextRule;
            &[#(#rules),*]
        };

        fn text_values(&self, field: &str) -> Vec<&str> {
            match field {
                #(#arms)*
                _ => Vec::new(),
            }
        }
    }
}

/// Most bytes canonical JSON spends on one field beyond its encoded value:
/// quotes, colon and comma around the key, and the longest spelling of a
/// scalar (a timestamp, an int64 as a string, an enum's name).
const JSON_FIELD_MARGIN: usize = 48;

/// `json_len_bound`: the encoded size, plus what escaping adds to every
/// string, plus a margin per field (a key and a scalar's spelling).
fn json_len_bound(resource: &Resource, scope: &super::Scope) -> TokenStream {
    let margin: usize = resource
        .fields
        .iter()
        .map(|field| field.json_name.len() + JSON_FIELD_MARGIN)
        .sum();
    let margin = proc_macro2::Literal::usize_unsuffixed(margin);
    let escapes = resource
        .fields
        .iter()
        .filter(|field| field.string)
        .map(|field| {
            let name = ident(&field.name);
            let overhead = |value: TokenStream| match field.kind {
                // Each value also gains a comma beside its quotes.
                FieldKind::Repeated => {
                    quote!(#value.iter().map(|v| escape_overhead(v) + 1).sum::<usize>())
                }
                _ => quote!(escape_overhead(&#value)),
            };
            if let Some(oneof) = &field.oneof {
                // A oneof member is never repeated.
                let (place, variant) = scope.member(oneof);
                return quote! {
                    match &self.#place {
                        Some(#variant(value)) => escape_overhead(value),
                        _ => 0,
                    }
                };
            }
            match &field.parent {
                None if field.optional => quote!(self.#name.as_deref().map_or(0, escape_overhead)),
                None => overhead(quote!(self.#name)),
                Some((parent, _)) => {
                    let parent = ident(parent);
                    let inner = overhead(quote!(m.#name));
                    quote!(self.#parent.as_ref().map_or(0, |m| #inner))
                }
            }
        });
    quote! {
        fn json_len_bound(&self) -> usize {
            use ::protoapi_runtime::__private::json::escape_overhead;
            use ::prost::Message;
            self.encoded_len() #(+ #escapes)* + #margin
        }
    }
}

/// A oneof member named in a mask: set from `source` when it holds this
/// member, cleared when `self` holds it and `source` does not; a sibling
/// member `self` holds is left alone.
fn copy_arm(field: &Field, scope: &super::Scope) -> TokenStream {
    let path = field.path();
    let name = ident(&field.name);
    let copy = matches!(
        field.kind,
        FieldKind::Bool | FieldKind::Number | FieldKind::Float | FieldKind::Timestamp
    );
    if let Some(oneof) = &field.oneof {
        let (place, variant) = scope.member(oneof);
        let value = if copy {
            quote!(*value)
        } else {
            quote!(value.clone())
        };
        return quote! {
            #path => match &source.#place {
                Some(#variant(value)) => self.#place = Some(#variant(#value)),
                _ if matches!(self.#place, Some(#variant(_))) => self.#place = None,
                _ => {}
            },
        };
    }
    match &field.parent {
        None if copy => quote!(#path => self.#name = source.#name,),
        None => quote!(#path => self.#name.clone_from(&source.#name),),
        Some((parent, _)) => {
            let parent = ident(parent);
            let value = if copy {
                quote!(source.#parent.as_ref().map(|m| m.#name).unwrap_or_default())
            } else {
                quote!(source.#parent.as_ref().map(|m| m.#name.clone()).unwrap_or_default())
            };
            quote!(#path => self.#parent.get_or_insert_default().#name = #value,)
        }
    }
}

fn has_arm(field: &Field, scope: &super::Scope) -> TokenStream {
    let path = field.path();
    let name = ident(&field.name);
    if let Some(oneof) = &field.oneof {
        let (place, variant) = scope.member(oneof);
        return quote!(#path => matches!(self.#place, Some(#variant(_))),);
    }
    let test = |value: TokenStream| match field.kind {
        _ if field.optional => quote!(#value.is_some()),
        FieldKind::Text | FieldKind::Repeated => quote!(!#value.is_empty()),
        FieldKind::Bool => quote!(#value),
        FieldKind::Number => quote!(#value != 0),
        FieldKind::Float => quote!(#value != 0.0),
        FieldKind::Timestamp | FieldKind::Message => quote!(#value.is_some()),
    };
    match &field.parent {
        None => {
            let test = test(quote!(self.#name));
            quote!(#path => #test,)
        }
        Some((parent, _)) => {
            let parent = ident(parent);
            let test = test(quote!(m.#name));
            quote!(#path => self.#parent.as_ref().is_some_and(|m| #test),)
        }
    }
}

fn eq_arm(field: &Field, scope: &super::Scope) -> TokenStream {
    let path = field.path();
    let name = ident(&field.name);
    if let Some(oneof) = &field.oneof {
        let (place, variant) = scope.member(oneof);
        return quote! {
            #path => match (&self.#place, &other.#place) {
                (Some(#variant(ours)), Some(#variant(theirs))) => ours == theirs,
                (ours, theirs) => {
                    !matches!(ours, Some(#variant(_))) && !matches!(theirs, Some(#variant(_)))
                }
            },
        };
    }
    match &field.parent {
        None => quote!(#path => self.#name == other.#name,),
        Some((parent, _)) => {
            let parent = ident(parent);
            quote! {
                #path => self.#parent.as_ref().map(|m| &m.#name) == other.#parent.as_ref().map(|m| &m.#name),
            }
        }
    }
}
