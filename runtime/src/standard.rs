//! The standard methods (AIP-131..135), written once for every resource.
//!
//! Generated service methods call these to validate a request and shape what
//! storage receives; storage only runs queries.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use prost_types::FieldMask;
use sha2::{Digest, Sha256};

use std::future::Future;
use std::sync::Arc;

use crate::auth::Authorizer;
use crate::context::Caller;
use crate::error::{Code, Error, FieldViolation};
use crate::mask::Update;
use crate::paging::{PageTokens, QueryBinding};
use crate::resource::{Reach, Reference, Resource};
use crate::store::{Hierarchy, ListQuery, Matching, OrderBy, Page, PublicItems, StoreError};
use crate::{time, uidp};

/// Default byte budget of one list page (AIP-158: a page may end early).
pub const LIST_BUDGET_BYTES: usize = 4 << 20;

/// What every generated service needs besides its storage.
#[derive(Clone, Debug)]
pub struct ApiContext {
    /// Signs and verifies page tokens.
    pub page_tokens: PageTokens,
    /// Decides what callers may do.
    pub authorizer: Authorizer,
    /// Parents whose direct items reference fields may name from under any
    /// root (e.g. built-in items shared by everyone).
    shared_scopes: Arc<[String]>,
    /// Largest encoded size of the items of one list page.
    list_budget: usize,
}

impl ApiContext {
    pub fn new(page_tokens: PageTokens, authorizer: Authorizer) -> Self {
        ApiContext {
            page_tokens,
            authorizer,
            shared_scopes: Arc::new([]),
            list_budget: LIST_BUDGET_BYTES,
        }
    }

    /// Lets reference fields under every root name the items directly under
    /// `parent` (e.g. built-in items), whatever their [`Reach`].
    pub fn with_shared_scope(mut self, parent: impl Into<String>) -> Self {
        let mut scopes = self.shared_scopes.to_vec();
        scopes.push(parent.into());
        self.shared_scopes = scopes.into();
        self
    }

    /// Ends list pages before their items' encoded size exceeds `bytes`
    /// (default [`LIST_BUDGET_BYTES`]); a page always holds at least one item.
    pub fn with_list_budget(mut self, bytes: usize) -> Self {
        self.list_budget = bytes;
        self
    }

    /// PERMISSION_DENIED unless `caller` holds every one of `capabilities`
    /// on `target` (no escalation: a caller grants only what it holds).
    pub async fn require_held(
        &self,
        caller: &Caller,
        target: &str,
        capabilities: impl IntoIterator<Item = &str>,
    ) -> Result<(), Error> {
        let capabilities: Vec<&str> = capabilities.into_iter().collect();
        if capabilities.is_empty() {
            return Ok(());
        }
        self.authorizer
            .held(caller, target)
            .await?
            .require(capabilities, target)
    }

    /// Whether `parent` is a shared scope.
    fn is_shared_scope(&self, parent: &str) -> bool {
        self.shared_scopes.iter().any(|scope| scope == parent)
    }

    /// Whether a reference from an item created under `parent` may name
    /// `target`, an item of `T`.
    fn reaches<T: Resource>(&self, reach: Reach, parent: &str, target: &str) -> bool {
        let Some(home) = uidp::parent(target) else {
            return false;
        };
        if T::SHARED && self.is_shared_scope(home) {
            return true;
        }
        match reach {
            Reach::Ancestors => crate::auth::covers(home, parent),
            Reach::Root => uidp::root(home) == uidp::root(parent),
        }
    }

    /// PERMISSION_DENIED for a create, update or delete of an item of a
    /// shared collection directly under a shared scope (`parent`), unless
    /// `caller` is the administrator: items every root may reference are
    /// not any one root's to change, whatever its bindings.
    pub fn require_shared_write<R: Resource>(
        &self,
        caller: &Caller,
        parent: &str,
    ) -> Result<(), Error> {
        if !R::SHARED || !self.is_shared_scope(parent) || caller.is_admin() {
            return Ok(());
        }
        let kind = R::TYPE.rsplit('/').next().unwrap_or(R::TYPE);
        Err(Error::new(
            Code::PermissionDenied,
            "SHARED_SCOPE_READ_ONLY",
            format!("{kind} items shared with every root are changed by the administrator only"),
        )
        .in_domain(R::domain()))
    }

    /// Checks `capability` on `target`; `None` means the method needs no token.
    pub async fn authorize(
        &self,
        caller: &Caller,
        capability: Option<&str>,
        target: &str,
    ) -> Result<(), Error> {
        match capability {
            Some(capability) => self.authorizer.check(caller, capability, target).await,
            None => Ok(()),
        }
    }
}

/// A uid of `R`'s API given in request field `field`, checked before any
/// work that grows with it.
pub fn parse_uid<'a, R: Resource>(field: &str, uid: &'a str) -> Result<&'a str, Error> {
    uidp::parse_within(field, uid, R::MAX_DEPTH)
}

/// INVALID_ARGUMENT for a UIDP-valued field of `resource` (a request body)
/// longer than any uid of `R`'s API may be. Checked before authorization,
/// so such a value is refused alike with or without a token, before any
/// work that grows with it; the other rules are checked once authorized.
pub fn check_uid_lengths<R: Resource>(resource: Option<&R>, body_field: &str) -> Result<(), Error> {
    let Some(resource) = resource else {
        return Ok(());
    };
    let longest = uidp::max_len(R::MAX_DEPTH);
    let mut violations = Vec::new();
    for rule in R::TEXT_RULES.iter().filter(|rule| rule.uidp) {
        let path = crate::json::field_path(body_field, rule.field);
        for value in resource.text_values(rule.field) {
            if value.len() > longest
                && let Err(error) = uidp::parse_within(&path, value, R::MAX_DEPTH)
            {
                violations.extend(error.field_violations().iter().cloned());
            }
        }
    }
    match violations.is_empty() {
        true => Ok(()),
        false => Err(Error::invalid_fields(violations)),
    }
}

/// The parent of a `Create`, checked before any work that grows with it;
/// empty (a root) only where the collection does not require a parent.
pub fn parse_parent<R: Resource>(parent: &str, required: bool) -> Result<(), Error> {
    if parent.is_empty() && !required {
        return Ok(());
    }
    parse_uid::<R>("parent", parent).map(drop)
}

/// `Get`: the item, if `caller` may read it.
///
/// `fetch` runs only once reading is allowed, except for callers denied on
/// collections with public items, who get the item only when it is public,
/// and otherwise the same denial whether or not it exists.
pub async fn get<R: Resource>(
    context: &ApiContext,
    caller: &Caller,
    capability: Option<&str>,
    uid: &str,
    fetch: impl Future<Output = Result<Option<R>, StoreError>>,
) -> Result<R, Error> {
    match context.authorize(caller, capability, uid).await {
        Ok(()) => fetch
            .await
            .map_err(|error| store_error::<R>(error, uid, ""))?
            .ok_or_else(|| not_found::<R>(uid)),
        Err(denied) if R::PUBLIC.is_some() => {
            match fetch
                .await
                .map_err(|error| store_error::<R>(error, uid, ""))?
            {
                Some(item) if item.is_public() => Ok(item),
                _ => Err(denied),
            }
        }
        Err(denied) => Err(denied),
    }
}

/// `Update`, once the caller may update `uid`: plans `mask` over `patch`
/// and answers the mask's problems (unknown, OUTPUT_ONLY or missing paths)
/// without calling `store`, so no lock is taken and the answer is the same
/// whether or not the item exists. For resources whose fields grant
/// capabilities, the update may add only what the caller holds where the
/// item lives. `store` then applies the update atomically ([`Update::apply`]
/// inside its transaction); `None` (no such item) is NOT_FOUND.
pub async fn update<R, F, Fut>(
    context: &ApiContext,
    caller: &Caller,
    uid: &str,
    mask: Option<&FieldMask>,
    patch: R,
    body_field: &'static str,
    store: F,
) -> Result<R, Error>
where
    R: Resource,
    F: FnOnce(Update<R>) -> Fut,
    Fut: Future<Output = Result<Option<R>, StoreError>>,
{
    let mut update = Update::plan(mask, patch, body_field)?;
    if R::grants_capabilities() {
        let scope = uidp::parent(uid).unwrap_or(uid);
        update = update.holding(context.authorizer.held(caller, scope).await?, scope);
    }
    store(update)
        .await
        .map_err(|error| store_error::<R>(error, uid, ""))?
        .ok_or_else(|| not_found::<R>(uid))
}

/// Default and maximum `page_size` of a collection.
#[derive(Clone, Copy, Debug)]
pub struct PageSizes {
    pub default: u32,
    pub max: u32,
}

impl PageSizes {
    /// The contract's defaults: 50 items, at most 200.
    pub const DEFAULT: PageSizes = PageSizes {
        default: 50,
        max: 200,
    };
}

impl Default for PageSizes {
    fn default() -> Self {
        PageSizes::DEFAULT
    }
}

/// A fresh resource for `Create`: validated, with a new uid under `parent`
/// and server-set times and etag.
pub fn prepare_create<R: Resource>(
    caller: &Caller,
    parent: &str,
    resource: Option<R>,
    body_field: &str,
) -> Result<R, Error> {
    let uid = if parent.is_empty() {
        if !caller.is_admin() {
            return Err(Error::new(
                Code::PermissionDenied,
                "ROOT_CREATE_DENIED",
                format!(
                    "only the administrator may create a {} without a parent",
                    R::TYPE.rsplit('/').next().unwrap_or(R::TYPE)
                ),
            ));
        }
        uidp::new_root()
    } else {
        let parent = parse_uid::<R>("parent", parent)?;
        if uidp::levels(parent) >= R::MAX_DEPTH {
            return Err(Error::invalid_field(
                "parent",
                format!(
                    "items may be nested at most {} levels below their root; `{}` is at that depth",
                    R::MAX_DEPTH,
                    crate::error::excerpt(parent)
                ),
            ));
        }
        uidp::new_child(parent)
    };
    let mut resource = resource.unwrap_or_default();
    resource.keep_output_only(None);
    let mut violations: Vec<FieldViolation> = resource
        .missing_required()
        .into_iter()
        .map(|f| FieldViolation::new(crate::json::field_path(body_field, f.json_path), "required"))
        .collect();
    violations.extend(resource.check_values(body_field));
    if !violations.is_empty() {
        return Err(Error::invalid_fields(violations));
    }
    resource.set_uid(uid);
    let now = time::now();
    resource.set_create_time(now);
    resource.set_update_time(now);
    resource.set_etag(etag(&resource));
    Ok(resource)
}

/// Resolves reference field `reference` of an item created under `parent`
/// whose value is `uid`: the target, or the violation to report. `fetch`
/// (reading the target) runs only when the target is within reach, and
/// every failure reads the same, so nothing is learnt about items under
/// other roots.
pub async fn resolve_reference<T: Resource>(
    context: &ApiContext,
    parent: &str,
    reference: &Reference,
    uid: &str,
    fetch: impl Future<Output = Result<Option<T>, StoreError>>,
) -> Result<Result<T, FieldViolation>, Error> {
    let violation = |description: String| Ok(Err(FieldViolation::new(reference.path, description)));
    if uid.is_empty() {
        return violation("required".to_owned());
    }
    if !uidp::is_valid_within(uid, T::MAX_DEPTH)
        || !context.reaches::<T>(reference.reach, parent, uid)
    {
        return violation(unusable(reference));
    }
    match fetch
        .await
        .map_err(|error| store_error::<T>(error, uid, ""))?
    {
        Some(target) => Ok(Ok(target)),
        None => violation(unusable(reference)),
    }
}

fn unusable(reference: &Reference) -> String {
    let kind = reference
        .resource_type
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let place = match reference.reach {
        Reach::Ancestors => "under this parent or one above it",
        Reach::Root => "under the same root",
    };
    format!("must be the uid of an existing {kind} {place}")
}

/// A content hash of the resource (its etag field excluded).
pub fn etag<R: Resource>(resource: &R) -> String {
    let mut unstamped = resource.clone();
    unstamped.set_etag(String::new());
    let digest = Sha256::digest(unstamped.encode_to_vec());
    URL_SAFE_NO_PAD.encode(&digest[..12])
}

/// At most this many uids in one `uidp.ids` filter.
pub const MAX_IDS: usize = 100;

/// The list parameters a `ListX` request carries: the hierarchy filters,
/// the declared filters it has fields for (empty when absent) and paging.
#[derive(Clone, Copy, Debug, Default)]
pub struct ListRequest<'a> {
    pub descendants_of: &'a str,
    pub children_of: &'a str,
    /// `uidp.ancestors_of`: items whose uid is a proper prefix of this one.
    pub ancestors_of: &'a str,
    /// `uidp.in_root`: only root-level items.
    pub in_root: bool,
    /// `uidp.ids`: exactly these uids.
    pub ids: &'a [String],
    /// `id` (legacy versions): exactly this uid.
    pub id: &'a str,
    /// `name`: items with exactly this name.
    pub name: &'a str,
    pub page_size: i32,
    pub page_token: &'a str,
    pub skip: i32,
    pub order_by: &'a str,
}

impl ListRequest<'_> {
    /// The declared filters set in the request, with the field each is read from.
    fn set_filters(&self) -> impl Iterator<Item = (&'static str, &'static str)> {
        [
            (
                "descendants_of",
                "uidp.descendantsOf",
                !self.descendants_of.is_empty(),
            ),
            (
                "children_of",
                "uidp.childrenOf",
                !self.children_of.is_empty(),
            ),
            (
                "ancestors_of",
                "uidp.ancestorsOf",
                !self.ancestors_of.is_empty(),
            ),
            ("in_root", "uidp.inRoot", self.in_root),
            ("ids", "uidp.ids", !self.ids.is_empty()),
            ("id", "id", !self.id.is_empty()),
            ("name", "name", !self.name.is_empty()),
        ]
        .into_iter()
        .filter(|(_, _, set)| *set)
        .map(|(filter, field, _)| (filter, field))
    }

    /// Reports every malformed uid and oversized list among the declared
    /// filters. Uids are checked against `max_depth` by their length first,
    /// so nothing here grows faster than the request.
    fn check_uids(&self, max_depth: usize, violations: &mut Vec<FieldViolation>) {
        if self.ids.len() > MAX_IDS {
            violations.push(FieldViolation::new(
                "uidp.ids",
                format!("at most {MAX_IDS} uids; got {}", self.ids.len()),
            ));
        }
        for (index, uid) in self.ids.iter().enumerate().take(MAX_IDS) {
            checked_uid(&format!("uidp.ids[{index}]"), uid, max_depth, violations);
        }
        for (field, uid) in [("id", self.id), ("uidp.ancestorsOf", self.ancestors_of)] {
            if !uid.is_empty() {
                checked_uid(field, uid, max_depth, violations);
            }
        }
    }

    /// The conditions of the declared filters (the hierarchy ones aside),
    /// once [`Self::check_uids`] found nothing wrong and the caller may list.
    fn matching(&self) -> Matching {
        let mut uids: Option<Vec<String>> = None;
        let mut restrict = |allowed: Vec<&str>| {
            uids = Some(match uids.take() {
                None => allowed.into_iter().map(str::to_owned).collect(),
                Some(previous) => previous
                    .into_iter()
                    .filter(|u| allowed.contains(&u.as_str()))
                    .collect(),
            });
        };
        if !self.ids.is_empty() {
            restrict(self.ids.iter().map(String::as_str).collect());
        }
        if !self.id.is_empty() {
            restrict(vec![self.id]);
        }
        if !self.ancestors_of.is_empty() {
            restrict(uidp::ancestors(self.ancestors_of).collect());
        }
        Matching {
            uids,
            name: Some(self.name)
                .filter(|name| !name.is_empty())
                .map(str::to_owned),
            root_only: self.in_root,
        }
    }
}

/// A validated list request and what is needed to answer it.
#[derive(Debug)]
pub struct ListPlan {
    pub query: ListQuery,
    binding: QueryBinding,
    page_size: usize,
}

impl ListPlan {
    /// Validates a list request for `R`, reporting every problem at once,
    /// then restricts it to what `caller` may see: `capability` on the
    /// filter, the caller's grants without one, public items for anonymous
    /// callers of collections with public items. `None` lists without a token.
    pub async fn new<R: Resource>(
        context: &ApiContext,
        caller: &Caller,
        capability: Option<&str>,
        request: ListRequest<'_>,
    ) -> Result<Self, Error> {
        Self::with_filters::<R>(context, caller, capability, R::FILTERS, request).await
    }

    /// As [`ListPlan::new`], accepting the declared filters `filters`
    /// (those of a legacy version of `R`) instead of `R::FILTERS`.
    pub async fn with_filters<R: Resource>(
        context: &ApiContext,
        caller: &Caller,
        capability: Option<&str>,
        filters: &[&str],
        request: ListRequest<'_>,
    ) -> Result<Self, Error> {
        let sizes = R::PAGE_SIZES;
        let mut violations = Vec::new();
        for (filter, field) in request.set_filters() {
            if !filters.contains(&filter) {
                violations.push(FieldViolation::new(
                    field,
                    format!("{} lists do not take this filter", R::TYPE),
                ));
            }
        }
        request.check_uids(R::MAX_DEPTH, &mut violations);
        let filter = match (request.descendants_of, request.children_of) {
            ("", "") => Hierarchy::All,
            (uid, "") => checked_uid("uidp.descendantsOf", uid, R::MAX_DEPTH, &mut violations)
                .map_or(Hierarchy::All, Hierarchy::DescendantsOf),
            ("", uid) => checked_uid("uidp.childrenOf", uid, R::MAX_DEPTH, &mut violations)
                .map_or(Hierarchy::All, Hierarchy::ChildrenOf),
            _ => {
                violations.push(FieldViolation::new(
                    "uidp",
                    "give `descendants_of` or `children_of`, not both",
                ));
                Hierarchy::All
            }
        };
        let page_size = match request.page_size {
            size if size < 0 => {
                violations.push(FieldViolation::new("pageSize", "must not be negative"));
                0
            }
            0 => sizes.default,
            size => (size as u32).min(sizes.max),
        };
        if request.skip < 0 {
            violations.push(FieldViolation::new("skip", "must not be negative"));
        }
        let order_by = parse_order_by::<R>(request.order_by, &mut violations);
        if !violations.is_empty() {
            return Err(Error::invalid_fields(violations));
        }
        let (filter, public) = match (capability, R::PUBLIC) {
            (None, _) => (filter, None),
            (Some(_), Some(rule)) if caller.is_anonymous() => {
                (filter, Some(PublicItems::Only(rule)))
            }
            (Some(capability), public_rule) => {
                match context
                    .authorizer
                    .list_scope(caller, capability, filter.clone())
                    .await
                {
                    // Without a filter: what the caller's grants cover, and
                    // public items wherever they are.
                    Ok(scope @ Hierarchy::Within(_)) => (scope, public_rule.map(PublicItems::Also)),
                    Ok(scope) => (scope, None),
                    // Public items stay listable by callers denied the filter.
                    Err(denied)
                        if denied.code() == Code::PermissionDenied && public_rule.is_some() =>
                    {
                        (filter, public_rule.map(PublicItems::Only))
                    }
                    Err(denied) => return Err(denied),
                }
            }
        };
        // Filters are expanded only for a caller allowed to list.
        let matching = request.matching();
        let binding = QueryBinding::new(R::TYPE, &filter, &matching, &order_by, public.is_some());
        let after = match request.page_token {
            "" => None,
            token => Some(context.page_tokens.open(token, &binding)?),
        };
        Ok(ListPlan {
            query: ListQuery {
                filter,
                matching,
                order_by,
                after,
                skip: request.skip.max(0) as u64,
                limit: u64::from(page_size) + 1,
                byte_budget: context.list_budget as u64,
                public,
            },
            binding,
            page_size: page_size as usize,
        })
    }

    /// Trims the extra item storage returned, ends the page early when its
    /// items exceed the byte budget, and issues the next page token.
    pub fn finish<R: Resource>(self, context: &ApiContext, page: Page<R>) -> (Vec<R>, String, u64) {
        let Page {
            mut items,
            total_count,
        } = page;
        let mut spent = 0;
        let within_budget = items
            .iter()
            .take(self.page_size)
            .position(|item| {
                spent += item.json_len_bound();
                spent > context.list_budget
            })
            .map_or(self.page_size, |over| over.max(1));
        let next = if items.len() > within_budget {
            items.truncate(within_budget);
            let last = items.last().expect("a page holds at least one item");
            let after = self
                .query
                .order_by
                .iter()
                .map(|term| last.sort_value(&term.field))
                .collect();
            context.page_tokens.issue(&self.binding, after)
        } else {
            String::new()
        };
        (items, next, total_count)
    }
}

impl ListPlan {
    /// A legacy list (e.g. v1): the whole result set, skipping `offset`
    /// items and returning at most `limit` (0: no limit). `None` when the
    /// caller may not list the filter: legacy versions answer that, like a
    /// missing item, with no items.
    pub async fn full<R: Resource>(
        context: &ApiContext,
        caller: &Caller,
        capability: Option<&str>,
        filters: &[&str],
        request: ListRequest<'_>,
        offset: i32,
        limit: i32,
    ) -> Result<Option<Self>, Error> {
        let mut violations = Vec::new();
        if offset < 0 {
            violations.push(FieldViolation::new("offset", "must not be negative"));
        }
        if limit < 0 {
            violations.push(FieldViolation::new("limit", "must not be negative"));
        }
        if !violations.is_empty() {
            return Err(Error::invalid_fields(violations));
        }
        let mut plan =
            match Self::with_filters::<R>(context, caller, capability, filters, request).await {
                Ok(plan) => plan,
                Err(denied) if denied.code() == Code::PermissionDenied => return Ok(None),
                Err(error) => return Err(error),
            };
        plan.query.skip = offset as u64;
        plan.query.limit = match limit {
            0 => i64::MAX as u64,
            limit => limit as u64,
        };
        plan.page_size = usize::MAX;
        Ok(Some(plan))
    }

    /// The items of a [`ListPlan::full`] list, or INVALID_ARGUMENT when they
    /// exceed the list's byte budget (no response is unbounded: the client
    /// windows the list with `offset` and `limit`).
    pub fn finish_full<R: Resource>(
        self,
        context: &ApiContext,
        page: Page<R>,
    ) -> Result<Vec<R>, Error> {
        let spent: usize = page.items.iter().map(Resource::json_len_bound).sum();
        if spent > context.list_budget {
            return Err(Error::invalid_field(
                "limit",
                format!(
                    "the list exceeds the response limit of {} bytes; window it with `offset` and a smaller `limit`",
                    context.list_budget
                ),
            ));
        }
        Ok(page.items)
    }
}

fn checked_uid(
    field: &str,
    uid: &str,
    max_depth: usize,
    violations: &mut Vec<FieldViolation>,
) -> Option<String> {
    match uidp::parse_within(field, uid, max_depth) {
        Ok(uid) => Some(uid.to_owned()),
        Err(error) => {
            violations.extend(error.field_violations().iter().cloned());
            None
        }
    }
}

/// Parses `a desc,b` against `R::ORDER_BY`; appends the `uid` tie-break.
fn parse_order_by<R: Resource>(text: &str, violations: &mut Vec<FieldViolation>) -> Vec<OrderBy> {
    let mut terms: Vec<OrderBy> = Vec::new();
    // Each field once (and `uid`): more terms are refused as a whole.
    let allowed = R::ORDER_BY.len() + 1;
    if text.split(',').nth(allowed).is_some() {
        violations.push(FieldViolation::new(
            "orderBy",
            format!("at most {allowed} terms, one per field"),
        ));
        return terms;
    }
    for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let mut words = term.split_whitespace();
        let name = words.next().unwrap_or_default();
        let descending = match (words.next(), words.next()) {
            (None, _) | (Some("asc"), None) => false,
            (Some("desc"), None) => true,
            _ => {
                violations.push(FieldViolation::new(
                    "orderBy",
                    format!("`{term}` is not `field`, `field asc` or `field desc`"),
                ));
                continue;
            }
        };
        let Some(field) = order_field::<R>(name) else {
            violations.push(FieldViolation::new(
                "orderBy",
                format!(
                    "cannot order by `{name}`; allowed: {}",
                    R::ORDER_BY.join(", ")
                ),
            ));
            continue;
        };
        if terms.iter().any(|t| t.field == field) {
            violations.push(FieldViolation::new(
                "orderBy",
                format!("`{name}` is named twice"),
            ));
            continue;
        }
        terms.push(OrderBy {
            field: field.to_owned(),
            descending,
        });
    }
    if !terms.iter().any(|t| t.field == "uid") {
        terms.push(OrderBy {
            field: "uid".to_owned(),
            descending: false,
        });
    }
    terms
}

/// The canonical (JSON) name of an orderable field given in either spelling.
fn order_field<R: Resource>(name: &str) -> Option<&'static str> {
    if name == "uid" {
        return Some("uid");
    }
    R::ORDER_BY
        .iter()
        .copied()
        .find(|allowed| *allowed == name || R::field(name).is_some_and(|f| f.json_path == *allowed))
}

/// The API error for a storage failure on a resource of type `R`.
pub fn store_error<R: Resource>(error: StoreError, uid: &str, parent: &str) -> Error {
    match error {
        StoreError::ParentNotFound => {
            let error = Error::new(
                Code::NotFound,
                "PARENT_NOT_FOUND",
                format!("parent `{parent}` not found"),
            );
            match R::PARENT_TYPE {
                Some(parent_type) => error.with_resource(parent_type, parent),
                None => error,
            }
        }
        StoreError::AlreadyExists => Error::new(
            Code::AlreadyExists,
            "ALREADY_EXISTS",
            format!("{} `{uid}` already exists", R::TYPE),
        )
        .with_resource(R::TYPE, uid),
        StoreError::HasDependents(dependents) => Error::failed_precondition(
            "HAS_DEPENDENTS",
            format!(
                "{} `{uid}` still has dependent resources; delete them first",
                R::TYPE
            ),
            dependents
                .into_iter()
                .map(|(kind, name)| {
                    crate::error::PreconditionViolation::new(
                        "DEPENDENT_RESOURCE",
                        name,
                        format!("{kind} depends on this resource"),
                    )
                })
                .collect(),
        ),
        StoreError::ReferenceNotFound(field) => {
            match R::REFERENCES.iter().find(|r| r.field == field) {
                Some(reference) => Error::invalid_field(reference.path, unusable(reference)),
                None => Error::internal(format!("unknown reference field `{field}`")),
            }
        }
        StoreError::EtagMismatch => Error::new(
            Code::Aborted,
            "ETAG_MISMATCH",
            "the resource changed since it was read (etag mismatch); read it again",
        )
        .with_resource(R::TYPE, uid),
        StoreError::Rejected(error) => error,
        StoreError::Unimplemented => Error::unimplemented(R::TYPE),
        other => Error::internal(other),
    }
    .in_domain(R::domain())
}

/// The API error for a failed delete of `uid`: as [`store_error`], except
/// that dependents `caller` may not read are counted, not named (no
/// item under another root is revealed).
pub async fn delete_error<R: Resource>(
    context: &ApiContext,
    caller: &Caller,
    error: StoreError,
    uid: &str,
) -> Error {
    let StoreError::HasDependents(dependents) = error else {
        return store_error::<R>(error, uid, "");
    };
    let mut visible = Vec::new();
    let mut hidden = 0;
    for (kind, name) in dependents {
        let capability = R::DEPENDENTS
            .iter()
            .find(|d| d.resource_type == kind)
            .and_then(|d| d.read_capability);
        if context.authorize(caller, capability, &name).await.is_ok() {
            visible.push((kind, name));
        } else {
            hidden += 1;
        }
    }
    let mut error = store_error::<R>(StoreError::HasDependents(visible), uid, "");
    if hidden > 0 {
        error.push_precondition_violation(crate::error::PreconditionViolation::new(
            "DEPENDENT_RESOURCE",
            uid,
            format!("{hidden} more dependent resources the caller cannot see"),
        ));
    }
    error
}

/// `NOT_FOUND` for a uid of type `R`.
pub fn not_found<R: Resource>(uid: &str) -> Error {
    Error::not_found(R::TYPE, uid).in_domain(R::domain())
}
