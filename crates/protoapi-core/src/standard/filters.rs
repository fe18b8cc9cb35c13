//! The parameters of a `List` request (AIP-132, AIP-160): the hierarchy
//! filters and the declared ones.

use crate::error::FieldViolation;
use crate::filter::Condition;
use crate::store::Matching;
use crate::uidp;

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
    /// The AIP-160 `filter` expression (empty: none), on the fields the
    /// collection declares filterable.
    pub filter: &'a str,
    /// For a collection keyed by resource names: the part of the name
    /// space its List's `parent` designates (`standard::names::list_scope`),
    /// the items directly under this name (`true`) or anywhere below it.
    pub within: Option<(&'a str, bool)>,
    pub page_size: i32,
    pub page_token: &'a str,
    pub skip: i32,
    pub order_by: &'a str,
    /// AIP-164 `show_deleted`: soft-deleted items are listed too.
    pub show_deleted: bool,
}

impl ListRequest<'_> {
    /// The declared filters set in the request, with the field each is read from.
    pub(super) fn set_filters(&self) -> impl Iterator<Item = (&'static str, &'static str)> {
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
    pub(super) fn check_uids(&self, max_depth: usize, violations: &mut Vec<FieldViolation>) {
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

    /// The conditions of the declared filters (the hierarchy ones aside)
    /// and of the checked `filter` expression, once [`Self::check_uids`]
    /// found nothing wrong and the caller may list.
    pub(super) fn matching(&self, condition: Option<Condition>) -> Matching {
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
            live_only: false,
            condition,
        }
    }
}

pub(super) fn checked_uid(
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
