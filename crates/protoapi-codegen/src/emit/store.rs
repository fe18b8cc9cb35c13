//! One storage trait per resource: the only thing a backend implements.
//!
//! Every method has a default body answering `StoreError::Unimplemented`, so
//! a backend that serves a subset still compiles and adding a method to the
//! contract does not break existing backends.

use proc_macro2::TokenStream;
use quote::quote;

use super::shared::{StoreMethods, forced_delete_name, trait_name};
use crate::model::Resource;

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
        recorded,
        dry_runs,
        ..
    } = StoreMethods::of(resource);
    let key = match &resource.names {
        Some(_) => "its resource name",
        None => "its uid",
    };
    let doc = format!(
        " Storage of [`{kind}`] resources (`{}`), each stored under its key: {key}.\n\n \
         This is all a backend implements to serve them: the generated service \
         validates every request first, so methods receive well-formed keys and \
         complete resources.",
        resource.type_name
    );
    let insert_doc = format!(
        " Stores a new {kind}. Fails with `ParentNotFound` when the key's parent \
         does not exist and `AlreadyExists` when the key is taken."
    );
    let get_doc = format!(" The {kind} with this key, if stored.");
    let list_doc = format!(
        " One page of {kind} items for a validated query (see [`ListQuery`] for \
         the filter, order and keyset position to honour), with the total count."
    );
    let update_doc = format!(
        " Replaces a stored {kind} by `update.apply(&stored)` atomically (in one \
         transaction, or by compare-and-swap). Returns `None` when no {kind} has \
         this key; an error from `apply` is returned as `StoreError::Rejected`."
    );
    let delete_doc = format!(
        " Deletes a {kind}; `false` when none has this key. With `etag`, fails \
         with `EtagMismatch` unless it matches. Fails with `HasDependents` \
         (changing nothing) while other resources depend on it."
    );
    let keeps_doc = format!(
        " Whether this backend stores {kind} items at all (a SQL store without their \
         table does not): the generated `Services` names a served type that is \
         not kept when the router is built, instead of answering `UNIMPLEMENTED` later."
    );
    let (recorded_doc, dry_runs_doc) = write_option_docs(kind);
    let delete_forced = forced_delete(resource);
    quote! {
        #[doc = #doc]
        pub trait #name: Send + Sync + 'static {
            #delete_forced

            #[doc = #keeps_doc]
            fn #keeps(&self) -> bool {
                true
            }

            #[doc = #dry_runs_doc]
            fn #dry_runs(&self) -> bool {
                false
            }

            #[doc = #insert_doc]
            fn #insert(&self, resource: &#ty) -> impl Future<Output = Result<(), StoreError>> + Send {
                let _ = resource;
                async { Err(StoreError::Unimplemented) }
            }

            #[doc = #get_doc]
            fn #get(&self, key: &str) -> impl Future<Output = Result<Option<#ty>, StoreError>> + Send {
                let _ = key;
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
                key: &str,
                update: &Update<#ty>,
            ) -> impl Future<Output = Result<Option<#ty>, StoreError>> + Send {
                let _ = (key, update);
                async { Err(StoreError::Unimplemented) }
            }

            #[doc = #delete_doc]
            fn #delete(
                &self,
                key: &str,
                etag: Option<&str>,
            ) -> impl Future<Output = Result<bool, StoreError>> + Send {
                let _ = (key, etag);
                async { Err(StoreError::Unimplemented) }
            }

            #[doc = #recorded_doc]
            fn #recorded(
                &self,
                key: &str,
            ) -> impl Future<Output = Result<Option<::protoapi_runtime::__private::standard::Recorded>, StoreError>> + Send {
                let _ = key;
                async { Ok(None) }
            }
        }
    }
}

/// The storage trait's forced delete, for a resource keyed by names.
fn forced_delete(resource: &Resource) -> Option<TokenStream> {
    let name = forced_delete_name(resource)?;
    let doc = format!(
        " Deletes a {} and every item below it (AIP-135 `force`) in one atomic step; \
         `false` when none has this key. Fails as a delete does on a stale `etag` and \
         while dependents other than its children exist.",
        resource.name
    );
    Some(quote! {
        #[doc = #doc]
        fn #name(
            &self,
            key: &str,
            etag: Option<&str>,
        ) -> impl Future<Output = Result<bool, StoreError>> + Send {
            let _ = (key, etag);
            async { Err(StoreError::Unimplemented) }
        }
    })
}

/// The docs of the storage trait's methods for write options: what a
/// write under a request id recorded (AIP-155), and whether dry runs change
/// nothing (AIP-163).
fn write_option_docs(kind: &str) -> (String, String) {
    let recorded = format!(
        " What a write of a {kind} recorded under an AIP-155 request id key, unless it \
         expired. A store that records them keeps, in the same atomic step as each write \
         it commits under `RequestId::current()`, the {kind} written (or deleted) with the \
         id's fingerprint, and fails that write with `DuplicateRequest` when the key holds \
         a record already. The default keeps none: retries then write again."
    );
    let dry_runs = format!(
        " Whether writes of {kind} items under `DryRun::current()` (AIP-163 `validate_only`) \
         run every check and change nothing. The generated methods validate through a store \
         that says so, and without storage otherwise (what only storage finds then goes \
         unreported). The default says no."
    );
    (recorded, dry_runs)
}
