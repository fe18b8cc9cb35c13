//! Each storage trait implemented for every `protoapi_runtime::store::Backend` (the
//! library's memory and SQL stores). The backend keeps the rules the
//! resource declares (parents, references, dependents) from its `Resource`
//! implementation, so an API is stored with no storage code.

use proc_macro2::TokenStream;
use quote::quote;

use super::shared::{StoreMethods, trait_name};
use crate::model::Resource;

pub fn emit(scope: &super::Scope, resource: &Resource) -> TokenStream {
    let name = trait_name(resource);
    let ty = scope.path(&resource.rust_path);
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
    let doc = format!(
        " `{}` in any of the library's storage backends, with the rules the annotation files declare.",
        resource.type_name
    );
    let delete_forced = super::shared::forced_delete_name(resource).map(|forced| {
        quote! {
            fn #forced(&self, key: &str, etag: Option<&str>) -> impl Future<Output = Result<bool, StoreError>> + Send {
                Backend::delete_forced::<#ty>(self, key, etag)
            }
        }
    });
    quote! {
        #[doc = #doc]
        impl<B: Backend> #name for B {
            #delete_forced

            fn #keeps(&self) -> bool {
                Backend::keeps(self, <#ty as ::protoapi_runtime::__private::resource::Resource>::TYPE)
            }

            fn #dry_runs(&self) -> bool {
                Backend::dry_runs(self)
            }

            fn #insert(&self, resource: &#ty) -> impl Future<Output = Result<(), StoreError>> + Send {
                Backend::insert(self, resource)
            }

            fn #get(&self, key: &str) -> impl Future<Output = Result<Option<#ty>, StoreError>> + Send {
                Backend::get(self, key)
            }

            fn #list(&self, query: &ListQuery) -> impl Future<Output = Result<Page<#ty>, StoreError>> + Send {
                Backend::list(self, query)
            }

            fn #update(
                &self,
                key: &str,
                update: &Update<#ty>,
            ) -> impl Future<Output = Result<Option<#ty>, StoreError>> + Send {
                Backend::update(self, key, update)
            }

            fn #delete(&self, key: &str, etag: Option<&str>) -> impl Future<Output = Result<bool, StoreError>> + Send {
                Backend::delete::<#ty>(self, key, etag)
            }

            fn #recorded(
                &self,
                key: &str,
            ) -> impl Future<Output = Result<Option<::protoapi_runtime::__private::standard::Recorded>, StoreError>> + Send {
                Backend::recorded(self, key)
            }
        }
    }
}
