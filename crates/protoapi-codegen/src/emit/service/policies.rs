//! Access policy methods (`model::policies`): a policy read from the bindings
//! stored under an item, set through the bindings' own Create and Delete,
//! and permissions tested against the caller's grants.

use heck::ToSnakeCase;
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use crate::emit::shared::{StoreMethods, need};
use crate::model::{
    Api, Declared, Method, PolicyBindings, PolicyVerb, Service, Standard, package_module,
};

/// The body of `method`, an access policy method (`google.iam.v1`) of `service`.
pub(super) fn policy_body(
    scope: &crate::emit::Scope,
    api: &Api,
    service: &Service,
    method: &Method,
    verb: PolicyVerb,
) -> TokenStream {
    let Ok(bindings) = api.policy_bindings() else {
        unreachable!("policy methods without bindings are custom methods");
    };
    let holder = scope.path(&bindings.holder.rust_path);
    if verb == PolicyVerb::Test {
        let output = scope.path(&method.output);
        return quote! {
            let resource = standard::parse_uid::<#holder>("resource", &request.resource)?;
            standard::tested_permissions(&self.context, caller, resource, request.permissions)
                .await
                .map(|permissions| #output { permissions })
        };
    }
    let get_holder = StoreMethods::called_by(scope, api, bindings.holder, service);
    let get_holder = get_holder.call(&get_holder.get, quote!(resource));
    let list = StoreMethods::called_by(scope, api, bindings.binding, service);
    let list = list.call(&list.list, quote!(&query));
    let shape = shape(scope, &bindings);
    let need = need(method);
    let read = quote! {
        self.context.authorize(caller, #need, resource).await?;
        standard::get(&self.context, caller, Need::Nothing, resource, #get_holder).await?;
        let list = |query: ::protoapi_runtime::__private::store::ListQuery| async move { #list.await };
    };
    let policy = match verb {
        PolicyVerb::Get => quote! {
            let resource = standard::parse_uid::<#holder>("resource", &request.resource)?;
            standard::check_policy_version(
                request.options.map_or(0, |options| options.requested_policy_version),
            )?;
            #read
            #shape.policy(&standard::policy_bindings(resource, list).await?)
        },
        _ => {
            let writes = writes(scope, api, &bindings);
            quote! {
                let resource = standard::parse_uid::<#holder>("resource", &request.resource)?;
                let shape = #shape;
                let policy = standard::PolicyRequest::parse(
                    &shape,
                    request.policy.map(|policy| ::prost::Message::encode_to_vec(&policy)),
                    request.update_mask.map(|mask| mask.paths),
                )?;
                #read
                #writes
                policy
                    .apply((&self.context, caller), &shape, resource, list, create, delete)
                    .await?
            }
        }
    };
    quote! {
        let policy = { #policy };
        ::prost::Message::decode(policy.as_slice()).map_err(Error::internal)
    }
}

/// `standard::PolicyShape` of the bindings: their role and member
/// references, and what their Create and Delete need.
fn shape(scope: &crate::emit::Scope, bindings: &PolicyBindings) -> TokenStream {
    let ty = scope.path(&bindings.binding.rust_path);
    let [role, member] = [bindings.role, bindings.member].map(Literal::usize_unsuffixed);
    let kind = bindings.member_kind;
    let (create, delete) = (need(bindings.create.method), need(bindings.delete.method));
    quote! {
        standard::PolicyShape {
            role: &<#ty as ::protoapi_runtime::__private::resource::Resource>::REFERENCES[#role],
            member: &<#ty as ::protoapi_runtime::__private::resource::Resource>::REFERENCES[#member],
            member_kind: #kind,
            create: #create,
            delete: #delete,
        }
    }
}

/// `create` and `delete`: the bindings' generated Create and Delete, as
/// the caller.
fn writes(scope: &crate::emit::Scope, api: &Api, bindings: &PolicyBindings) -> TokenStream {
    let Standard::Create { body_field, .. } = &bindings.create.method.standard else {
        unreachable!("the bindings' Create");
    };
    let body_field = format_ident!("{}", body_field.to_snake_case());
    let create = format_ident!("{}", bindings.create.method.rust_name());
    let (create_request, create_rest) = request(
        scope,
        api,
        bindings.create,
        &["parent", &body_field.to_string()],
    );
    let delete = format_ident!("{}", bindings.delete.method.rust_name());
    let (delete_request, delete_rest) = request(scope, api, bindings.delete, &["uid"]);
    let served = |declared| {
        let service = service_api(scope, declared);
        quote!(&#service::new(::std::sync::Arc::clone(&self.store), self.context.clone()))
    };
    let creates = served(bindings.create);
    let deletes = match bindings.create.service.full_name == bindings.delete.service.full_name {
        true => quote!(creates),
        false => served(bindings.delete),
    };
    quote! {
        let creates = #creates;
        let deletes = #deletes;
        let create = |binding| async move {
            creates
                .#create(
                    caller,
                    #create_request {
                        parent: resource.to_owned(),
                        #body_field: Some(binding),
                        #create_rest
                    },
                )
                .await
        };
        let delete = |uid: String| async move {
            deletes.#delete(caller, #delete_request { uid, #delete_rest }).await.map(drop)
        };
    }
}

/// The struct serving `declared`'s service, e.g. `RoleBindingServiceApi`.
fn service_api(scope: &crate::emit::Scope, declared: Declared) -> TokenStream {
    let package = (declared.service.full_name.rsplit_once('.')).map_or("", |(package, _)| package);
    scope.path(&format!(
        "{}::{}Api",
        package_module(package),
        declared.service.name
    ))
}

/// `declared`'s request type, and `..Default::default()` when it has
/// fields besides `given` (a struct literal naming every field has no
/// rest).
fn request(
    scope: &crate::emit::Scope,
    api: &Api,
    declared: Declared,
    given: &[&str],
) -> (TokenStream, Option<TokenStream>) {
    let more = api
        .messages
        .iter()
        .find(|m| m.full_name == declared.method.input_type)
        .is_none_or(|m| {
            m.named_fields
                .iter()
                .any(|f| !given.contains(&f.name.as_str()))
        });
    (
        scope.path(&declared.method.input),
        more.then(|| quote!(..Default::default())),
    )
}
