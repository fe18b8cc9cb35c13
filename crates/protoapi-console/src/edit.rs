//! Writing pages: create and edit forms, and delete confirmations. Every
//! POST checks the session's CSRF token and the request's `Origin` first.

use std::sync::Arc;

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use http::{Method, StatusCode};
use serde_json::{Map, Value};

use super::call::Failure;
use super::form::{self, FormField};
use super::items::{item_href, item_href_after, key_of, label, parent_key};
use super::paths::PREFIX;
use super::reply::{encode, render, see_other};
use super::shared::Shared;
use super::view::{DeletePage, FormPage};
use super::visit::Visit;
use protoapi_client::schema::{Collection, Keys};

/// Ancestors whose items a reference form lists at most (a hierarchy is
/// at most this deep by default).
const REFERENCE_SCOPES: usize = protoapi_core::uidp::DEFAULT_MAX_DEPTH;

/// The `parent` a create form is for.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct Parent {
    #[serde(default)]
    parent: String,
}

/// A submitted form: its fields in order.
type Fields = Vec<(String, String)>;

fn field<'a>(form: &'a Fields, name: &str) -> &'a str {
    form.iter()
        .find(|(key, _)| key == name)
        .map_or("", |(_, value)| value)
}

/// Refuses a POST whose CSRF token is not its session's, or whose `Origin`
/// is another site.
pub(super) fn check_post(visit: &Visit, form: &Fields) -> Result<(), Failure> {
    if visit.same_origin && visit.session.csrf_matches(field(form, "csrf")) {
        Ok(())
    } else {
        Err(Failure::new(
            StatusCode::FORBIDDEN,
            "CSRF",
            "the form's security token is missing or wrong, or it was posted from another site",
        ))
    }
}

impl Shared {
    /// The form fields of `collection` for an item under `parent`,
    /// references offered as choices (see [`Shared::choices`]).
    async fn form_fields(
        &self,
        visit: &Visit,
        collection: &Collection,
        parent: &str,
        creating: bool,
    ) -> Vec<FormField> {
        let Some(message) = self.pool.get_message_by_name(collection.message) else {
            return Vec::new();
        };
        let mut fields = form::fields(collection, &message, creating);
        for field in fields.iter_mut().filter(|f| !f.read_only) {
            let Some(target) = field.reference.and_then(|id| self.schema.collection(id)) else {
                continue;
            };
            match self.choices(visit, target, parent).await {
                Some(options) => field.options = options,
                None => field.widget = "text",
            }
        }
        fields
    }

    /// The items of `target` a reference from under `parent` may name, as
    /// the caller can list them: those directly under `parent` and under
    /// each of its ancestors (UIDP-keyed; where references reach), then a
    /// first page of all it can see (items shared from elsewhere). `None`
    /// when none of it can be listed: the form asks for a key instead.
    async fn choices(
        &self,
        visit: &Visit,
        target: &Collection,
        parent: &str,
    ) -> Option<Vec<(String, String)>> {
        let query = [("pageSize".to_owned(), target.page_sizes.max.to_string())];
        let mut scopes = Vec::new();
        match target.names {
            None if target.list.is_some_and(|l| l.parent_query.is_some()) => {
                let mut scope = Some(parent).filter(|p| !p.is_empty());
                while let Some(at) = scope.filter(|_| scopes.len() <= REFERENCE_SCOPES) {
                    scopes.push(at.to_owned());
                    scope = protoapi_core::uidp::parent(at);
                }
            }
            Some(pattern) if pattern.has_parent() && pattern.parent_matches(parent) => {
                scopes.push(parent.to_owned());
            }
            _ => {}
        }
        // Everything the caller sees (under every parent, for names).
        scopes.push(String::new());
        let mut options: Vec<(String, String)> = Vec::new();
        let mut listed = false;
        for scope in &scopes {
            let Ok((items, _, _)) = self.list_page(visit, target, scope, &query).await else {
                continue;
            };
            listed = true;
            for item in &items {
                let key = key_of(target, item);
                if options.iter().any(|(known, _)| *known == key) {
                    continue;
                }
                let text = label(target, item);
                let text = if text == key {
                    key.clone()
                } else {
                    format!("{text} ({key})")
                };
                options.push((key, text));
            }
        }
        listed.then_some(options)
    }

    fn form_page(
        &self,
        visit: &Visit,
        collection: &'static Collection,
        title: String,
        action: String,
        cancel: String,
    ) -> FormPage {
        FormPage {
            chrome: self.chrome(visit, title),
            action,
            cancel,
            editing: false,
            ask_parent: false,
            parent: String::new(),
            root_allowed: false,
            etag: String::new(),
            id_field: collection.create.and_then(|c| c.id),
            id_value: String::new(),
            fields: Vec::new(),
            reload: None,
        }
    }
}

/// Marks each violation of `failure` on its field; the rest stay in the
/// failure, shown above the form.
fn mark(fields: &mut [FormField], failure: &Failure, body: &str) {
    for (path, description) in failure.field_violations(body) {
        if let Some(field) = fields.iter_mut().find(|f| {
            f.path == path
                || path.starts_with(&format!("{}.", f.path))
                || path.starts_with(&format!("{}[", f.path))
        }) {
            field.violation = Some(description);
        }
    }
}

/// The method `verb` (`created`, ...) stands for, when the collection has it.
fn offered<T>(method: Option<T>, verb: &str) -> Result<T, Failure> {
    method.ok_or_else(|| {
        let message = format!("items of this collection are not {verb} here");
        Failure::new(StatusCode::NOT_FOUND, "NOT_FOUND", message)
    })
}

/// The collection a POST's path names, once its form's CSRF token and
/// origin are checked; or the page refusing it.
macro_rules! posted {
    ($shared:expr, $visit:expr, $form:expr, $id:expr $(, $key:expr)?) => {{
        let collection = collection!($shared, $visit, $id $(, $key)?);
        if let Err(failure) = check_post(&$visit, &$form) {
            return $shared.failure(&$visit, failure);
        }
        collection
    }};
}

/// The collection a handler's path names (and its item, when the path has
/// a key), or the page saying there is none.
macro_rules! collection {
    ($shared:expr, $visit:expr, $id:expr) => {
        match $shared.collection(&$id) {
            Ok(collection) => collection,
            Err(failure) => return $shared.failure(&$visit, failure),
        }
    };
    ($shared:expr, $visit:expr, $id:expr, $key:expr) => {
        match $shared.keyed(&$id, &$key) {
            Ok(collection) => collection,
            Err(failure) => return $shared.failure(&$visit, failure),
        }
    };
}

pub(super) async fn new_form(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    Query(Parent { parent }): Query<Parent>,
    visit: Visit,
) -> Response {
    let collection = collection!(shared, visit, id);
    if let Err(failure) =
        offered(collection.create, "created").and_then(|_| shared.check_parent(collection, &parent))
    {
        return shared.failure(&visit, failure);
    }
    let mut page = shared.form_page(
        &visit,
        collection,
        format!("New {}", collection.singular),
        visit.here.clone(),
        cancel(collection, &parent),
    );
    page.chrome.crumbs = shared.crumbs_to(&visit, collection, &parent).await;
    page.fields = shared.form_fields(&visit, collection, &parent, true).await;
    page.ask_parent = parent.is_empty();
    page.root_allowed = collection.keys == Keys::Uidp && visit.caller.is_admin();
    render(StatusCode::OK, &page)
}

/// Where leaving a form for an item under `parent` goes.
fn cancel(collection: &Collection, parent: &str) -> String {
    format!("{PREFIX}{}?parent={}", collection.id, encode(parent))
}

pub(super) async fn create(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    Query(Parent { parent }): Query<Parent>,
    visit: Visit,
    Form(submitted): Form<Fields>,
) -> Response {
    let collection = posted!(shared, visit, submitted, id);
    let create = match offered(collection.create, "created") {
        Ok(create) => create,
        Err(failure) => return shared.failure(&visit, failure),
    };
    let asked = parent.is_empty();
    let parent = if asked {
        field(&submitted, "_parent").trim().to_owned()
    } else {
        parent
    };
    // A parent typed into the form is the API's to refuse (beside its
    // field); only a valid one is walked for choices and breadcrumbs.
    let walked = if collection.is_parent(&parent) {
        parent.as_str()
    } else {
        ""
    };
    let mut fields = shared.form_fields(&visit, collection, walked, true).await;
    let (resource, _) = form::read(&mut fields, &submitted);
    let chosen_id = field(&submitted, "_id").trim().to_owned();
    let Some(rule) = create.action.rule() else {
        return shared.failure(&visit, Failure::grpc_only());
    };
    let mut path = rule.template.expand(|_| parent.clone());
    let body = match rule.body {
        Some("*") => {
            let mut request = Map::new();
            request.insert(create.body.to_owned(), Value::Object(resource));
            if let (Some(name), false) = (create.id, chosen_id.is_empty()) {
                request.insert(name.to_owned(), Value::String(chosen_id.clone()));
            }
            if !rule.template.variables.iter().any(|v| v.field == "parent") && !parent.is_empty() {
                request.insert("parent".to_owned(), Value::String(parent.clone()));
            }
            Value::Object(request)
        }
        _ => {
            let query =
                super::reply::query_string(create.id.map(|name| (name, chosen_id.as_str())));
            if !query.is_empty() {
                path = format!("{path}?{query}");
            }
            Value::Object(resource)
        }
    };
    match shared.call(&visit, Method::POST, &path, Some(&body)).await {
        Ok(item) => see_other(&item_href_after(
            collection,
            &key_of(collection, &item),
            "created",
        )),
        Err(failure) => {
            let mut page = shared.form_page(
                &visit,
                collection,
                format!("New {}", collection.singular),
                visit.here.clone(),
                cancel(collection, &parent),
            );
            page.chrome.crumbs = shared.crumbs_to(&visit, collection, walked).await;
            mark(&mut fields, &failure, create.body);
            page.fields = fields;
            page.id_value = chosen_id;
            page.ask_parent = asked;
            page.parent = parent;
            page.root_allowed = collection.keys == Keys::Uidp && visit.caller.is_admin();
            let status = failure.status;
            page.chrome.error = Some(failure);
            render(status, &page)
        }
    }
}

pub(super) async fn edit_form(
    State(shared): State<Arc<Shared>>,
    Path((id, key)): Path<(String, String)>,
    visit: Visit,
) -> Response {
    let collection = collection!(shared, visit, id, key);
    let item = match shared.get_item(&visit, collection, &key).await {
        Ok(item) => item,
        Err(failure) => return shared.failure(&visit, failure),
    };
    let mut page = shared.form_page(
        &visit,
        collection,
        format!("Edit {}", label(collection, &item)),
        visit.here.clone(),
        item_href(collection, &key),
    );
    page.chrome.crumbs = shared
        .crumbs_through(&visit, collection, &key, label(collection, &item))
        .await;
    page.editing = true;
    page.id_field = None;
    page.etag = item["etag"].as_str().unwrap_or_default().to_owned();
    page.fields = shared
        .form_fields(
            &visit,
            collection,
            parent_key(collection, &key).unwrap_or_default(),
            false,
        )
        .await;
    form::fill(&mut page.fields, &item);
    render(StatusCode::OK, &page)
}

pub(super) async fn update(
    State(shared): State<Arc<Shared>>,
    Path((id, key)): Path<(String, String)>,
    visit: Visit,
    Form(submitted): Form<Fields>,
) -> Response {
    let collection = posted!(shared, visit, submitted, id, key);
    let update = match offered(collection.update, "changed") {
        Ok(update) => update,
        Err(failure) => return shared.failure(&visit, failure),
    };
    let mut fields = shared
        .form_fields(
            &visit,
            collection,
            parent_key(collection, &key).unwrap_or_default(),
            false,
        )
        .await;
    let (mut resource, changed) = form::read(&mut fields, &submitted);
    if changed.is_empty() {
        return see_other(&item_href(collection, &key));
    }
    // Only the changed fields are sent, and named in the mask.
    let mut body = Map::new();
    for path in &changed {
        if let Some(value) = take(&mut resource, path) {
            form::insert(&mut body, path, value);
        }
    }
    let etag = field(&submitted, "etag");
    if !etag.is_empty() {
        body.insert("etag".to_owned(), Value::String(etag.to_owned()));
    }
    let Some(rule) = update.action.rule() else {
        return shared.failure(&visit, Failure::grpc_only());
    };
    let mut path = rule.template.expand(|_| key.clone());
    let mask = changed.join(",");
    let body = match (rule.body, update.body.is_empty()) {
        (Some("*"), false) => {
            let mut request = Map::new();
            request.insert(update.body.to_owned(), Value::Object(body));
            if update.mask {
                request.insert("updateMask".to_owned(), Value::String(mask));
            }
            Value::Object(request)
        }
        _ => {
            if update.mask {
                path = format!("{path}?updateMask={}", encode(&mask));
            }
            Value::Object(body)
        }
    };
    match shared.call(&visit, Method::PATCH, &path, Some(&body)).await {
        Ok(_) => see_other(&item_href_after(collection, &key, "saved")),
        Err(failure) => {
            // The item as the server has it now, for the title and the
            // read-only fields (none when it is gone or unreadable).
            let now = shared.get_item(&visit, collection, &key).await.ok();
            let name = now
                .as_ref()
                .map_or_else(|| key.clone(), |item| label(collection, item));
            let mut page = shared.form_page(
                &visit,
                collection,
                format!("Edit {name}"),
                visit.here.clone(),
                item_href(collection, &key),
            );
            page.chrome.crumbs = shared.crumbs_through(&visit, collection, &key, name).await;
            page.editing = true;
            page.id_field = None;
            page.etag = etag.to_owned();
            // The values shown stay the ones typed; the originals stay the
            // ones read, so a stale form stays stale until reloaded.
            restore_originals(&mut fields, &submitted, now.as_ref());
            mark(&mut fields, &failure, update.body);
            page.fields = fields;
            if failure.code == "ABORTED" {
                page.reload = Some(visit.here.clone());
            }
            let status = failure.status;
            page.chrome.error = Some(failure);
            render(status, &page)
        }
    }
}

/// Keeps what the user typed as the values shown; read-only fields show
/// the server's values (`now`), which no form sends.
fn restore_originals(fields: &mut [FormField], submitted: &Fields, now: Option<&Value>) {
    for field in fields.iter_mut().filter(|f| f.read_only) {
        match now {
            Some(item) => form::fill(std::slice::from_mut(field), item),
            None => {
                field.value = self::field(submitted, &format!("orig.{}", field.path)).to_owned();
            }
        }
    }
}

/// Removes the value at a dotted path.
fn take(object: &mut Map<String, Value>, path: &str) -> Option<Value> {
    match path.split_once('.') {
        None => object.remove(path),
        Some((head, rest)) => match object.get_mut(head) {
            Some(Value::Object(inner)) => take(inner, rest),
            _ => None,
        },
    }
}

pub(super) async fn delete_form(
    State(shared): State<Arc<Shared>>,
    Path((id, key)): Path<(String, String)>,
    visit: Visit,
) -> Response {
    let collection = collection!(shared, visit, id, key);
    let item = match shared.get_item(&visit, collection, &key).await {
        Ok(item) => item,
        Err(failure) => return shared.failure(&visit, failure),
    };
    let text = label(collection, &item);
    let mut page = DeletePage {
        chrome: shared.chrome(&visit, format!("Delete {text}")),
        action: visit.here.clone(),
        cancel: item_href(collection, &key),
        kind: collection.singular,
        label: text,
        key: key.clone(),
        etag: item["etag"].as_str().unwrap_or_default().to_owned(),
    };
    page.chrome.crumbs = shared
        .crumbs_through(&visit, collection, &key, page.label.clone())
        .await;
    render(StatusCode::OK, &page)
}

pub(super) async fn delete(
    State(shared): State<Arc<Shared>>,
    Path((id, key)): Path<(String, String)>,
    visit: Visit,
    Form(submitted): Form<Fields>,
) -> Response {
    let collection = posted!(shared, visit, submitted, id, key);
    let delete = match offered(collection.delete, "deleted") {
        Ok(delete) => delete,
        Err(failure) => return shared.failure(&visit, failure),
    };
    let Some(rule) = delete.action.rule() else {
        return shared.failure(&visit, Failure::grpc_only());
    };
    let mut path = rule.template.expand(|_| key.clone());
    let etag = field(&submitted, "etag");
    if delete.etag && !etag.is_empty() {
        path = format!("{path}?etag={}", encode(etag));
    }
    match shared.call(&visit, Method::DELETE, &path, None).await {
        Ok(_) => {
            let parent = parent_key(collection, &key).unwrap_or_default();
            let owner = collection
                .parent_type
                .and_then(|t| shared.schema.of_type(t));
            match owner {
                Some(owner) if !parent.is_empty() => {
                    see_other(&item_href_after(owner, parent, "deleted"))
                }
                _ => see_other(&format!("{PREFIX}{}", collection.id)),
            }
        }
        Err(failure) => {
            let text = match shared.get_item(&visit, collection, &key).await {
                Ok(item) => label(collection, &item),
                Err(_) => key.clone(),
            };
            let mut page = DeletePage {
                chrome: shared.chrome(&visit, format!("Delete {text}")),
                action: visit.here.clone(),
                cancel: item_href(collection, &key),
                kind: collection.singular,
                label: text,
                key: key.clone(),
                etag: etag.to_owned(),
            };
            page.chrome.crumbs = shared
                .crumbs_through(&visit, collection, &key, page.label.clone())
                .await;
            let status = failure.status;
            page.chrome.error = Some(shared.explained(failure));
            render(status, &page)
        }
    }
}
