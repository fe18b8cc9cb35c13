//! The standard-method bodies of resources keyed by resource names
//! (AIP-122, `model::names`): the name is checked against the pattern,
//! then the runtime's flows run with it as the storage key.
//!
//! - Create: `parent` must match the parent's pattern (none at the top
//!   level); the id is `{singular}_id` when the request has it and it is
//!   set, else chosen by the server; the name is `parent/collection/id`.
//!   Storage checks the parent exists (when its type is stored).
//! - Get, Update (`resource.name`), Delete: the name must match the pattern.
//! - Delete with a `force` field set deletes the item's descendants too.
//! - List: `parent` scopes the list ([`Flow::within_parent`]).
//!
//! Authorization targets are names as they are uids for UIDP resources:
//! the parent's name on Create and List, the item's name otherwise.

use heck::ToLowerCamelCase;
use proc_macro2::TokenStream;
use quote::quote;

use super::Flow;
use crate::emit::shared::forced_delete_name;
use crate::model::Standard;

impl Flow<'_> {
    /// The body of a standard method of a name-keyed resource; `None` for
    /// UIDP-keyed resources and for List (which differs only in its scope).
    pub(super) fn named(&self, standard: &Standard) -> Option<TokenStream> {
        self.resource.names.as_ref()?;
        match standard {
            Standard::Create { body_field, .. } => Some(self.named_create(body_field)),
            Standard::Get { .. } => Some(self.named_get()),
            Standard::Update { body_field, .. } => Some(self.named_update(body_field)),
            Standard::Delete { .. } if self.method.delete_shape().soft => {
                Some(self.named_lifecycle(false))
            }
            Standard::Delete { .. } => Some(self.named_delete()),
            Standard::Undelete { .. } => Some(self.named_lifecycle(true)),
            // Keys are checked by the runtime's batch flow, either scheme.
            Standard::List { .. }
            | Standard::BatchGet { .. }
            | Standard::Operations
            | Standard::Policy(_)
            | Standard::Custom => None,
        }
    }

    /// `let list = ListRequest { within, ..list };`: the items `parent`
    /// designates, for a List of a name-keyed resource.
    pub(super) fn within_parent(&self) -> Option<TokenStream> {
        self.resource.names.as_ref()?;
        let ty = &self.ty;
        let parent = self.parent();
        Some(quote! {
            let list = ListRequest {
                within: standard::names::list_scope::<#ty>(#parent)?,
                ..list
            };
        })
    }

    /// The request's `parent`, or `""` when it has none (top level).
    fn parent(&self) -> TokenStream {
        match &self.method.names.parent {
            Some(field) => {
                let field = super::super::ident(field);
                quote!(&request.#field)
            }
            None => quote!(""),
        }
    }

    /// Checks the request's field holding the item's name (`name`, or the
    /// one the HTTP rule binds) and sets `uid` to it.
    fn parse_name(&self) -> TokenStream {
        let ty = &self.ty;
        let field = self.method.names.name.as_deref().unwrap_or("name");
        let json = field.to_lower_camel_case();
        let field = super::super::ident(field);
        quote! {
            standard::names::parse_name::<#ty>(#json, &request.#field)?;
            let uid = request.#field.as_str();
        }
    }

    fn named_create(&self, body_field: &str) -> TokenStream {
        let Flow {
            ty,
            capability,
            resource,
            ..
        } = self;
        let field = super::super::ident(body_field);
        let body_json = body_field.to_lower_camel_case();
        let insert = self.store.call(&self.store.insert, quote!(&resource));
        let dry_run = self.dry_create(&quote!(resource));
        let parent = self.parent();
        let (id, checked_id) = match self.method.names.id_field(resource) {
            Some(id_field) => {
                let ident = super::super::ident(id_field);
                let json = id_field.to_lower_camel_case();
                (
                    quote!(&request.#ident),
                    quote!(Some((#json, request.#ident.as_str()))),
                )
            }
            None => (quote!(""), quote!(None)),
        };
        let recall = self.recall(Some(quote!(item)));
        quote! {
            standard::names::parse_create::<#ty>(#parent, #checked_id)?;
            self.context.authorize(caller, #capability, #parent).await?;
            #recall
            let resource = standard::names::prepare_create::<#ty>(#parent, #id, request.#field, #body_json)?;
            #dry_run
            #insert
                .await
                .map_err(|error| standard::store_error::<#ty>(error, &resource.name, #parent))?;
            Ok(resource)
        }
    }

    fn named_get(&self) -> TokenStream {
        let capability = &self.capability;
        let read = self.store.call(&self.store.get, quote!(uid));
        let parse_name = self.parse_name();
        quote! {
            #parse_name
            let item = standard::get(&self.context, caller, #capability, uid, #read).await?;
            Ok(item)
        }
    }

    fn named_update(&self, body_field: &str) -> TokenStream {
        let Flow { ty, capability, .. } = self;
        let field = super::super::ident(body_field);
        let body_json = body_field.to_lower_camel_case();
        let name_path = format!("{body_json}.name");
        let apply = crate::emit::shared::shapes::apply_update(ty, &self.store, &self.method.writes);
        let mask = match self.method.names.update_mask {
            true => quote!(request.update_mask.as_ref()),
            false => quote!(None),
        };
        // A REQUIRED mask (AIP-134) must name fields.
        let required = crate::emit::shared::shapes::required_mask(&self.method.update_shape());
        let recall = self.recall(Some(quote!(item)));
        let (body, tail) = match self.method.writes.upsert {
            true => (
                Some(quote!(let body = request.#field.clone();)),
                self.upsert(apply, &body_json),
            ),
            false => (None, quote!(let updated = #apply?; Ok(updated))),
        };
        quote! {
            #required
            let name = request.#field.as_ref().map(|body| body.name.clone()).unwrap_or_default();
            standard::names::parse_name::<#ty>(#name_path, &name)?;
            let uid = name.as_str();
            self.context.authorize(caller, #capability, uid).await?;
            #recall
            #body
            let update = standard::plan_update(
                &self.context, caller, uid, #mask, request.#field.unwrap_or_default(), #body_json,
            )
            .await?;
            #tail
        }
    }

    /// The end of an Update with `allow_missing` (AIP-134), whose `apply`
    /// answers the updated item: a missing item is created from the
    /// request's `body` under its name, authorized and stored as its Create
    /// would (a dry run, when the request asks one, stores nothing).
    fn upsert(&self, apply: TokenStream, body_json: &str) -> TokenStream {
        let ty = &self.ty;
        let insert = self.store.call(&self.store.insert, quote!(&resource));
        let create = self.create_capability();
        let mut write = quote! {
            #insert
                .await
                .map_err(|error| standard::store_error::<#ty>(error, &resource.name, &parent))?;
        };
        if self.method.writes.validate_only {
            write = quote! {
                if !request.validate_only || standard::DryRun::current() {
                    #write
                }
            };
        }
        quote! {
            match #apply {
                Err(missing) if request.allow_missing && missing.code() == ::protoapi_runtime::Code::NotFound => {
                    let (parent, resource) = standard::names::prepare_upsert::<#ty>(uid, body, #body_json)?;
                    self.context.authorize(caller, #create, &parent).await?;
                    #write
                    Ok(resource)
                }
                updated => updated,
            }
        }
    }

    /// What the resource's Create needs of its caller, as `Need`.
    fn create_capability(&self) -> TokenStream {
        let create = self
            .api
            .packages
            .iter()
            .flat_map(|p| &p.services)
            .flat_map(|s| &s.methods)
            .find(|m| matches!(&m.standard, Standard::Create { resource, .. } if *resource == self.resource.full_name))
            .expect("an upsert's resource has a Create (`Api::check_upserts`)");
        super::need(create)
    }

    /// A soft delete or an undelete (AIP-164) of a name-keyed resource.
    fn named_lifecycle(&self, undelete: bool) -> TokenStream {
        let Flow { ty, capability, .. } = self;
        let etag = match self.method.names.etag {
            true => quote!(Some(request.etag.as_str()).filter(|etag| !etag.is_empty())),
            false => quote!(None),
        };
        let answer =
            (undelete || self.method.delete_shape().returns_resource).then(|| quote!(item));
        let recall = self.recall(answer.clone());
        let rest = crate::emit::shared::shapes::lifecycle(
            ty,
            &self.store,
            &self.method.writes,
            (etag, undelete),
            answer,
        );
        let parse_name = self.parse_name();
        quote! {
            #parse_name
            self.context.authorize(caller, #capability, uid).await?;
            #recall
            #rest
        }
    }

    fn named_delete(&self) -> TokenStream {
        let Flow { ty, capability, .. } = self;
        let delete = self.store.call(&self.store.delete, quote!(uid, etag));
        let names = &self.method.names;
        // The AIP-135 shape: the etag it may carry, whether it answers the item.
        let shape = self.method.delete_shape();
        let etag = crate::emit::shared::shapes::delete_etag(&shape);
        let read = crate::emit::shared::shapes::read_before_delete(&shape, ty, &self.store);
        let answer = match shape.returns_resource {
            true => quote!(item),
            false => quote!(()),
        };
        let result = match forced_delete_name(self.resource).filter(|_| names.force) {
            Some(forced) => quote! {
                if request.force {
                    self.store.#forced(uid, etag).await
                } else {
                    #delete.await
                }
            },
            None => quote!(#delete.await),
        };
        let finish = crate::emit::shared::shapes::finish_delete(
            ty,
            &self.store,
            &self.method.writes,
            result,
            answer,
        );
        let parse_name = self.parse_name();
        let recall = self.recall(shape.returns_resource.then(|| quote!(item)));
        quote! {
            #parse_name
            self.context.authorize(caller, #capability, uid).await?;
            #recall
            let etag = #etag;
            #read
            #finish
        }
    }
}
