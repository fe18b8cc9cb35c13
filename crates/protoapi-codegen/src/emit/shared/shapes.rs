//! The parts of standard-method bodies that follow the method's AIP shape
//! ([`crate::model::Shape`]): which field a list answers its items in and
//! its total, which paging fields its request has, whether an Update's
//! mask is REQUIRED, and what a Delete answers.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::{DeleteShape, ListShape, Total, UpdateShape, WriteOptions};

use super::StoreMethods;

/// The fields of a token-paged list response after its items:
/// `next_page_token`, the total the response reports, and defaults for the
/// rest. Reads `next_page_token` and `total_count` (a `u64`), written in
/// the total's own integer type (saturating).
pub fn list_response_tail(shape: &ListShape) -> TokenStream {
    let (ty, optional) = shape.total_type;
    let ty = format_ident!("{ty}");
    let value = quote!(#ty::try_from(total_count).unwrap_or(#ty::MAX));
    let value = match optional {
        true => quote!(Some(#value)),
        false => value,
    };
    let total = match shape.total {
        Total::Count => quote!(total_count: #value,),
        Total::Size => quote!(total_size: #value,),
        Total::None => quote!(),
    };
    let more = shape.more.then(|| quote!(..Default::default()));
    quote!(next_page_token, #total #more)
}

/// `let _ = total_count;` when the response reports no total.
pub fn unused_total(shape: &ListShape) -> Option<TokenStream> {
    (shape.total == Total::None).then(|| quote!(let _ = total_count;))
}

/// The paging fields of `ListRequest` read from a token-paged request.
pub fn list_paging(shape: &ListShape) -> TokenStream {
    let skip = shape.skip.then(|| quote!(skip: request.skip,));
    let order_by = shape.order_by.then(|| quote!(order_by: &request.order_by,));
    let filter = shape.filter.then(|| quote!(filter: &request.filter,));
    let show_deleted = shape
        .show_deleted
        .then(|| quote!(show_deleted: request.show_deleted,));
    quote! {
        page_size: request.page_size,
        page_token: &request.page_token,
        #skip
        #order_by
        #filter
        #show_deleted
    }
}

/// The refusal of an absent or empty mask, when it is REQUIRED.
pub fn required_mask(shape: &UpdateShape) -> Option<TokenStream> {
    (shape.has_mask && shape.mask_required)
        .then(|| quote!(standard::require_mask(request.update_mask.as_ref())?;))
}

/// The etag a Delete must match, from a request that has one (AIP-154).
pub fn delete_etag(shape: &DeleteShape) -> TokenStream {
    match shape.etag {
        true => quote!(Some(request.etag.as_str()).filter(|etag| !etag.is_empty())),
        false => quote!(None),
    }
}

/// For a Delete answering the resource: reads it first (`let item`), and
/// deletes it under the request's etag or else the one read, so that the
/// item answered is the one deleted (a change in between is ABORTED, as a
/// stale etag is).
pub fn read_before_delete(
    shape: &DeleteShape,
    ty: &TokenStream,
    store: &StoreMethods,
) -> Option<TokenStream> {
    shape.returns_resource.then(|| {
        let read = store.call(&store.get, quote!(uid));
        quote! {
            let item = #read
                .await
                .map_err(|error| standard::store_error::<#ty>(error, uid, ""))?
                .ok_or_else(|| standard::not_found::<#ty>(uid))?;
            let etag = etag.or(Some(::protoapi_runtime::__private::resource::Resource::etag(&item)).filter(|etag| !etag.is_empty()));
        }
    })
}

/// The item `update` makes of the item `uid` (a `Result`): stored, or,
/// when the request asks `validate_only` (AIP-163), applied to the stored
/// item and written nowhere, by the storage methods `store`.
pub fn apply_update(ty: &TokenStream, store: &StoreMethods, writes: &WriteOptions) -> TokenStream {
    let update = store.call(&store.update, quote!(uid, &update));
    let write = quote!(standard::updated(#update.await, uid));
    let read = store.call(&store.get, quote!(uid));
    match writes.validate_only {
        false => write,
        true => quote! {
            if request.validate_only && !standard::DryRun::current() {
                standard::dry_update::<#ty>(#read.await, &update, uid)
            } else {
                #write
            }
        },
    }
}

/// The end of a Delete of the item `uid` by `result` (the store's delete
/// call), once authorized and under `etag`: `answer`, or NOT_FOUND for a
/// missing item unless the request has `allow_missing` (AIP-135). When the
/// request asks `validate_only` (AIP-163), the item is read, not deleted.
pub fn finish_delete(
    ty: &TokenStream,
    store: &StoreMethods,
    writes: &WriteOptions,
    result: TokenStream,
    answer: TokenStream,
) -> TokenStream {
    let write = quote! {
        match #result {
            Ok(deleted) => deleted,
            Err(error) => return Err(standard::delete_error::<#ty>(&self.context, caller, error, uid).await),
        }
    };
    let read = store.call(&store.get, quote!(uid));
    let deleted = match writes.validate_only {
        false => write,
        true => quote! {
            if request.validate_only && !standard::DryRun::current() {
                standard::dry_delete::<#ty>(#read.await, etag, uid)?
            } else {
                #write
            }
        },
    };
    // `allow_missing` is served where the answer is `()`, which a missing
    // item answers too.
    let done = match writes.allow_missing {
        true => quote!(deleted || request.allow_missing),
        false => quote!(deleted),
    };
    quote! {
        let deleted = #deleted;
        if #done { Ok(#answer) } else { Err(standard::not_found::<#ty>(uid)) }
    }
}

/// The rest of a soft delete or an undelete (AIP-164) of the item `uid`,
/// once authorized: an update of the item's delete time, under `etag`,
/// answering the item (`item`) when `answer` is given.
pub fn lifecycle(
    ty: &TokenStream,
    store: &StoreMethods,
    writes: &WriteOptions,
    (etag, undelete): (TokenStream, bool),
    answer: Option<TokenStream>,
) -> TokenStream {
    let plan = match undelete {
        true => quote!(undelete),
        false => quote!(soft_delete),
    };
    let (item, answer) = match answer {
        Some(answer) => (quote!(item), answer),
        None => (quote!(_item), quote!(())),
    };
    let apply = apply_update(ty, store, writes);
    quote! {
        let etag = #etag;
        let update = ::protoapi_runtime::__private::mask::Update::<#ty>::#plan(etag);
        let #item = #apply?;
        Ok(#answer)
    }
}

/// `Resource`'s delete time (AIP-164) of a resource with soft deletes:
/// `DELETE_TIME` and its accessors.
pub fn soft_delete(resource: &crate::model::Resource) -> Option<TokenStream> {
    resource.soft_delete.then(|| {
        quote! {
            const DELETE_TIME: Option<&'static str> = Some("deleteTime");

            fn delete_time(&self) -> Option<&::prost_types::Timestamp> {
                self.delete_time.as_ref()
            }

            fn set_delete_time(&mut self, time: Option<::prost_types::Timestamp>) {
                self.delete_time = time;
            }
        }
    })
}

/// `Resource`'s accessors of the optional managed fields: a resource
/// without `create_time`, `update_time` or `etag` reads them unset and
/// ignores what the standard flows would set (AIP-148, AIP-154).
pub fn managed_accessors(resource: &crate::model::Resource) -> TokenStream {
    let time = |name: &str| {
        let (get, set) = (format_ident!("{name}"), format_ident!("set_{name}"));
        match resource.has_top_field(name) {
            true => quote! {
                fn #get(&self) -> Option<&::prost_types::Timestamp> {
                    self.#get.as_ref()
                }

                fn #set(&mut self, time: ::prost_types::Timestamp) {
                    self.#get = Some(time);
                }
            },
            false => quote! {
                fn #get(&self) -> Option<&::prost_types::Timestamp> {
                    None
                }

                fn #set(&mut self, _: ::prost_types::Timestamp) {}
            },
        }
    };
    let etag = match resource.has_etag() {
        true => quote! {
            fn etag(&self) -> &str {
                &self.etag
            }

            fn set_etag(&mut self, etag: String) {
                self.etag = etag;
            }
        },
        false => quote! {
            fn etag(&self) -> &str {
                ""
            }

            fn set_etag(&mut self, _: String) {}
        },
    };
    let (create_time, update_time) = (time("create_time"), time("update_time"));
    quote! {
        #create_time
        #update_time
        #etag
    }
}

/// The body of `BatchGet` (AIP-231): every key checked first (at most
/// `protoapi_runtime::standard::MAX_BATCH_GET`, each under `parent` when given), then
/// each item read as its Get reads it (authorized on its own), in request
/// order; the first failure (e.g. NOT_FOUND naming the item) answers all.
pub fn batch_get(
    standard: &crate::model::Standard,
    ty: &TokenStream,
    capability: &TokenStream,
    store: &StoreMethods,
    output: &TokenStream,
    shown: TokenStream,
) -> TokenStream {
    let crate::model::Standard::BatchGet {
        keys_field,
        has_parent,
        ..
    } = standard
    else {
        unreachable!("a batch get")
    };
    let keys = crate::emit::ident(keys_field);
    let label = heck::ToLowerCamelCase::to_lower_camel_case(keys_field.as_str());
    let parent = match has_parent {
        true => quote!(&request.parent),
        false => quote!(""),
    };
    let read = store.call(&store.get, quote!(uid));
    quote! {
        let uids = standard::batch_uids::<#ty>(#label, &request.#keys, #parent)?;
        let mut items = Vec::with_capacity(uids.len());
        for uid in uids {
            items.push(standard::get(&self.context, caller, #capability, uid, #read).await?);
        }
        Ok(#output { #shown })
    }
}
