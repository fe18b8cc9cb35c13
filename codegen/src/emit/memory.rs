//! Each storage trait implemented for `runtime::memory::MemoryStore`, with
//! the rules the annotation files declare: a parent stored in the API must
//! exist, and declared dependents block deletes. An API runs in memory with
//! no storage code.

use proc_macro2::TokenStream;
use quote::quote;

use super::store::{StoreMethods, trait_name};
use crate::model::{Api, Resource};

pub fn emit(scope: &super::Scope, api: &Api, resource: &Resource) -> TokenStream {
    let name = trait_name(resource);
    let ty = scope.path(&resource.rust_path);
    let StoreMethods {
        insert,
        get,
        list,
        update,
        delete,
    } = StoreMethods::of(resource);
    let parent = resource.parent_type.as_ref().and_then(|parent| {
        api.packages
            .iter()
            .flat_map(|p| &p.resources)
            .find(|r| r.type_name == *parent)
    });
    let parent_exists = match parent {
        Some(parent) => {
            let parent = scope.path(&parent.rust_path);
            quote! {
                uidp::parent(::runtime::resource::Resource::uid(resource))
                    .is_none_or(|parent| self.collection::<#parent>().contains(parent))
            }
        }
        // Parents live outside the API: any will do.
        None => quote!(true),
    };
    let dependents = resource.dependents.iter().filter_map(|dependent| {
        let other = api
            .packages
            .iter()
            .flat_map(|p| &p.resources)
            .find(|r| r.plural == dependent.collection)?;
        let other = scope.path(&other.rust_path);
        let field = &dependent.field;
        Some(quote!(dependents.extend(self.dependents::<#other>(#field, uid));))
    });
    let doc = format!(
        " `{}` in memory, with the parents and dependents the annotation files declare.",
        resource.type_name
    );
    quote! {
        #[doc = #doc]
        impl #name for ::runtime::memory::MemoryStore {
            async fn #insert(&self, resource: &#ty) -> Result<(), StoreError> {
                let _write = self.write_lock();
                let parent_exists = #parent_exists;
                self.collection::<#ty>().insert(resource, parent_exists)
            }

            async fn #get(&self, uid: &str) -> Result<Option<#ty>, StoreError> {
                self.collection::<#ty>().get(uid)
            }

            async fn #list(&self, query: &ListQuery) -> Result<Page<#ty>, StoreError> {
                self.collection::<#ty>().list(query)
            }

            async fn #update(&self, uid: &str, update: &Update<#ty>) -> Result<Option<#ty>, StoreError> {
                self.collection::<#ty>().update(uid, update)
            }

            async fn #delete(&self, uid: &str, etag: Option<&str>) -> Result<bool, StoreError> {
                let _write = self.write_lock();
                #[allow(unused_mut)]
                let mut dependents = Vec::new();
                #(#dependents)*
                self.collection::<#ty>().delete(uid, etag, dependents)
            }
        }
    }
}
