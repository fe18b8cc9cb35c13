//! Who a page is shown to: the signed-in request, read from its parts, and
//! the header's account of its caller.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::response::Response;
use http::Method;
use http::request::Parts;

use super::call::Asker;
use super::items::link_to;
use super::names::Names;
use super::paths::PREFIX;
use super::reply::{encode, see_other};
use super::session::Session;
use super::shared::Shared;
use super::view::{Badge, Link};
use super::visit::Visit;
use protoapi_core::context::Caller;

/// Reachable top-level items the header names at most.
const MAX_REACH: usize = 8;

impl FromRequestParts<Arc<Shared>> for Visit {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, shared: &Arc<Shared>) -> Result<Self, Response> {
        let here = parts
            .uri
            .path_and_query()
            .map_or(PREFIX, |p| p.as_str())
            .to_owned();
        let Some(session) = parts.extensions.get::<Session>().cloned() else {
            let next = super::guard::safe_next(&here);
            return Err(see_other(&format!("{PREFIX}signin?next={}", encode(next))));
        };
        let mut visit = Visit {
            session,
            caller: Caller::from_extensions(&parts.extensions),
            asker: Asker::from_request_parts(parts, shared)
                .await
                .unwrap_or_default(),
            same_origin: super::guard::same_origin(&parts.headers, &parts.uri),
            here,
            badge: Badge::default(),
        };
        if parts.method == Method::GET {
            visit.badge = shared.badge(&visit).await;
        }
        Ok(visit)
    }
}

impl Shared {
    /// The header's account of `visit`'s caller: its item (by label) where
    /// the API keeps its members, and the top items of the API's
    /// hierarchy it reaches.
    async fn badge(&self, visit: &Visit) -> Badge {
        let who = match visit.caller.uid() {
            Some(uid) => {
                let members = self.schema.members();
                let found = match members {
                    Some(members) => Names::new(self, visit).find(members, uid).await,
                    None => None,
                };
                Some(found.unwrap_or(Link {
                    href: String::new(),
                    text: uid.to_owned(),
                    id: "",
                }))
            }
            None => None,
        };
        let hierarchy = self
            .schema
            .collections
            .iter()
            .find(|c| c.list.is_some() && c.parent_type == Some(c.resource_type));
        let tops = match hierarchy {
            Some(hierarchy) if who.is_some() => self.tops(visit, hierarchy).await,
            _ => Vec::new(),
        };
        let reach = match hierarchy {
            Some(hierarchy) => tops
                .iter()
                .take(MAX_REACH)
                .map(|item| link_to(hierarchy, item))
                .collect(),
            None => Vec::new(),
        };
        let reach_title = hierarchy.map(crate::words::collection).unwrap_or_default();
        Badge {
            who,
            admin: visit.caller.is_admin(),
            reach_title,
            reach,
            reach_more: tops.len() > MAX_REACH,
        }
    }
}
