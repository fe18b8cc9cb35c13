//! `List` (AIP-132, AIP-158): one page, or a legacy version's whole list.

use super::filters::checked_uid;
use super::{ApiContext, ListRequest};
use crate::auth::Need;
use crate::context::Caller;
use crate::error::{Code, Error, FieldViolation};
use crate::paging::QueryBinding;
use crate::resource::Resource;
use crate::store::{Hierarchy, ListQuery, OrderBy, Page, PublicItems};

/// The counter of list pages ended early because their items exceeded the
/// byte budget (`ApiContext::with_list_budget`), in whatever `metrics`
/// recorder the application installed (none: not counted).
pub const LIST_BUDGET_TRUNCATIONS: &str = "list_budget_truncations_total";

/// A validated list request and what is needed to answer it.
#[derive(Debug)]
pub struct ListPlan {
    pub query: ListQuery,
    binding: QueryBinding,
    page_size: usize,
}

impl ListPlan {
    /// Validates a list request for `R`, reporting every problem at once,
    /// then restricts it to what `caller` may see: the capability `need`
    /// names on the filter, the caller's grants without one, public items
    /// for anonymous callers of collections with public items.
    /// [`Need::Nothing`] lists without a token, [`Need::Token`] lists
    /// everything for any authenticated caller.
    pub async fn new<R: Resource>(
        context: &ApiContext,
        caller: &Caller,
        need: Need<'_>,
        request: ListRequest<'_>,
    ) -> Result<Self, Error> {
        Self::with_filters::<R>(context, caller, need, R::FILTERS, request).await
    }

    /// As [`ListPlan::new`], accepting the declared filters `filters`
    /// (those of a legacy version of `R`) instead of `R::FILTERS`.
    pub async fn with_filters<R: Resource>(
        context: &ApiContext,
        caller: &Caller,
        need: Need<'_>,
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
            ("", "") => within(request.within),
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
        let condition = match crate::filter::check::<R>(request.filter) {
            Ok(condition) => condition,
            Err(error) => {
                violations.extend(error.field_violations().iter().cloned());
                None
            }
        };
        if !violations.is_empty() {
            return Err(Error::invalid_fields(violations));
        }
        let (filter, public) = match (need, R::PUBLIC) {
            (Need::Nothing, _) => (filter, None),
            (Need::Token | Need::Capability(_), Some(rule)) if caller.is_anonymous() => {
                (filter, Some(PublicItems::Only(rule)))
            }
            (Need::Token, _) => {
                crate::auth::require_token(caller)?;
                (filter, None)
            }
            (Need::Capability(capability), public_rule) => {
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
        let mut matching = request.matching(condition);
        matching.live_only = R::DELETE_TIME.is_some() && !request.show_deleted;
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
        let over_budget = items.iter().take(self.page_size).position(|item| {
            spent += item.json_len_bound();
            spent > context.list_budget
        });
        let within_budget = over_budget.map_or(self.page_size, |over| over.max(1));
        if within_budget < self.page_size.min(items.len()) {
            #[cfg(feature = "metrics")]
            metrics::counter!(LIST_BUDGET_TRUNCATIONS).increment(1);
        }
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
        need: Need<'_>,
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
        let mut plan = match Self::with_filters::<R>(context, caller, need, filters, request).await
        {
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

/// The hierarchy a name-keyed collection's `parent` scopes a list to.
fn within(scope: Option<(&str, bool)>) -> Hierarchy {
    match scope {
        None => Hierarchy::All,
        Some((name, true)) => Hierarchy::ChildrenOf(name.to_owned()),
        Some((name, false)) => Hierarchy::DescendantsOf(name.to_owned()),
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
