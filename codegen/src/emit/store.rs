//! One storage trait per resource: the only thing a backend implements.
//!
//! Every method has a default body answering `StoreError::Unimplemented`, so
//! a backend that serves a subset still compiles and adding a method to the
//! contract does not break existing backends.

use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::Resource;

/// The trait name for a resource, e.g. `GroupStore`.
pub fn trait_name(resource: &Resource) -> syn::Ident {
    format_ident!("{}Store", resource.name.to_upper_camel_case())
}

/// The trait's path from the crate root, beside the resource's message.
pub fn trait_path(resource: &Resource) -> String {
    let (module, _) = resource
        .rust_path
        .rsplit_once("::")
        .expect("a qualified path");
    format!("{module}::{}", trait_name(resource))
}

/// Method names: `(insert_group, get_group, list_groups, update_group, delete_group)`.
pub struct StoreMethods {
    pub insert: syn::Ident,
    pub get: syn::Ident,
    pub list: syn::Ident,
    pub update: syn::Ident,
    pub delete: syn::Ident,
    /// `keeps_groups`: whether the backend stores the resource at all.
    pub keeps: syn::Ident,
}

impl StoreMethods {
    pub fn of(resource: &Resource) -> Self {
        let singular = resource.name.to_snake_case();
        let plural = if resource.plural.is_empty() {
            format!("{singular}s")
        } else {
            resource.plural.to_snake_case()
        };
        StoreMethods {
            insert: format_ident!("insert_{singular}"),
            get: format_ident!("get_{singular}"),
            list: format_ident!("list_{plural}"),
            update: format_ident!("update_{singular}"),
            delete: format_ident!("delete_{singular}"),
            keeps: format_ident!("keeps_{plural}"),
        }
    }
}

pub fn emit(scope: &super::Scope, resource: &Resource) -> TokenStream {
    let name = trait_name(resource);
    let ty = scope.path(&resource.rust_path);
    let kind = &resource.name;
    let StoreMethods {
        insert,
        get,
        list,
        update,
        delete,
        keeps,
    } = StoreMethods::of(resource);
    let doc = format!(
        " Storage of [`{kind}`] resources (`{}`).\n\n \
         This is all a backend implements to serve them: the generated service \
         validates every request first, so methods receive well-formed uids and \
         complete resources.",
        resource.type_name
    );
    let insert_doc = format!(
        " Stores a new {kind}. Fails with `ParentNotFound` when the uid's parent \
         does not exist and `AlreadyExists` when the uid is taken."
    );
    let get_doc = format!(" The {kind} with this uid, if stored.");
    let list_doc = format!(
        " One page of {kind} items for a validated query (see [`ListQuery`] for \
         the filter, order and keyset position to honour), with the total count."
    );
    let update_doc = format!(
        " Replaces a stored {kind} by `update.apply(&stored)` atomically (in one \
         transaction, or by compare-and-swap). Returns `None` when no {kind} has \
         this uid; an error from `apply` is returned as `StoreError::Rejected`."
    );
    let delete_doc = format!(
        " Deletes a {kind}; `false` when none has this uid. With `etag`, fails \
         with `EtagMismatch` unless it matches. Fails with `HasDependents` \
         (changing nothing) while other resources depend on it."
    );
    let keeps_doc = format!(
        " Whether this backend stores {kind} items at all (a SQL store without their \
         table does not): the generated `Services` names a served type that is \
         not kept when the router is built, instead of answering `UNIMPLEMENTED` later."
    );
    let delete_forced = forced_delete(resource);
    quote! {
        #[doc = #doc]
        pub trait #name: Send + Sync + 'static {
            #delete_forced

            #[doc = #keeps_doc]
            fn #keeps(&self) -> bool {
                true
            }

            #[doc = #insert_doc]
            fn #insert(&self, resource: &#ty) -> impl Future<Output = Result<(), StoreError>> + Send {
                let _ = resource;
                async { Err(StoreError::Unimplemented) }
            }

            #[doc = #get_doc]
            fn #get(&self, uid: &str) -> impl Future<Output = Result<Option<#ty>, StoreError>> + Send {
                let _ = uid;
                async { Err(StoreError::Unimplemented) }
            }

            #[doc = #list_doc]
            fn #list(&self, query: &ListQuery) -> impl Future<Output = Result<Page<#ty>, StoreError>> + Send {
                let _ = query;
                async { Err(StoreError::Unimplemented) }
            }

            #[doc = #update_doc]
            fn #update(
                &self,
                uid: &str,
                update: &Update<#ty>,
            ) -> impl Future<Output = Result<Option<#ty>, StoreError>> + Send {
                let _ = (uid, update);
                async { Err(StoreError::Unimplemented) }
            }

            #[doc = #delete_doc]
            fn #delete(
                &self,
                uid: &str,
                etag: Option<&str>,
            ) -> impl Future<Output = Result<bool, StoreError>> + Send {
                let _ = (uid, etag);
                async { Err(StoreError::Unimplemented) }
            }
        }
    }
}

/// `delete_forced_book`, for a resource keyed by resource names: what a
/// Delete with `force` (AIP-135) calls.
pub fn forced_delete_name(resource: &Resource) -> Option<syn::Ident> {
    resource
        .names
        .as_ref()
        .map(|_| format_ident!("delete_forced_{}", resource.name.to_snake_case()))
}

/// The storage trait's forced delete, for a resource keyed by names.
fn forced_delete(resource: &Resource) -> Option<TokenStream> {
    let name = forced_delete_name(resource)?;
    let doc = format!(
        " Deletes a {} and every item below it (AIP-135 `force`) in one atomic step; \
         `false` when none has this name. Fails as a delete does on a stale `etag` and \
         while dependents other than its children exist.",
        resource.name
    );
    Some(quote! {
        #[doc = #doc]
        fn #name(
            &self,
            uid: &str,
            etag: Option<&str>,
        ) -> impl Future<Output = Result<bool, StoreError>> + Send {
            let _ = (uid, etag);
            async { Err(StoreError::Unimplemented) }
        }
    })
}
