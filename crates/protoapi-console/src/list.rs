//! List pages: one page of a collection (under a parent, or everywhere
//! the caller may look), with its total, page size, the declared
//! `order_by` choices and filters, and links to the next and previous
//! pages (the tokens of earlier pages ride along in the links).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::Response;
use http::StatusCode;
use serde_json::Value;

use super::call::Failure;
use super::items::link_to;
use super::names::Names;
use super::pages::may_create;
use super::paths::PREFIX;
use super::reply::{encode, query_string, render};
use super::shared::Shared;
use super::view::{Cell, ListPage, Row};
use super::visit::Visit;
use protoapi_client::schema::{Collection, List, Schema};

/// Page tokens of earlier pages a list's links carry, for "previous".
const MAX_TRAIL: usize = 8;
/// Columns shown besides the item's name: fields it may be ordered by.
const COLUMNS: usize = 3;

/// What a list page was asked for.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct ListQuery {
    #[serde(default)]
    parent: String,
    /// Read as text: numbers do not survive `flatten`.
    #[serde(default, rename = "pageSize")]
    page_size: String,
    #[serde(default, rename = "pageToken")]
    page_token: String,
    #[serde(default, rename = "orderBy")]
    order_by: String,
    /// An AIP-160 filter, for a list that takes one.
    #[serde(default)]
    filter: String,
    /// Tokens of the pages before this one, space-separated (`-`: the first).
    #[serde(default)]
    trail: String,
    #[serde(flatten)]
    rest: BTreeMap<String, String>,
}

pub(super) async fn list(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    Query(query): Query<ListQuery>,
    visit: Visit,
) -> Response {
    let collection = match shared
        .collection(&id)
        .and_then(|c| shared.check_parent(c, &query.parent).map(|()| c))
    {
        Ok(collection) => collection,
        Err(failure) => return shared.failure(&visit, failure),
    };
    let Some(list) = collection.list else {
        let failure = Failure::new(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            "this collection cannot be listed",
        );
        return shared.failure(&visit, failure);
    };
    let page_size = query
        .page_size
        .parse()
        .unwrap_or(collection.page_sizes.default)
        .clamp(1, collection.page_sizes.max);
    let filters: Vec<(String, String)> = list
        .filters
        .iter()
        .map(|name| {
            (
                name.to_string(),
                query.rest.get(*name).cloned().unwrap_or_default(),
            )
        })
        .collect();
    let title = crate::words::collection(collection);
    let mut chrome = shared.chrome(&visit, title.clone());
    chrome.crumbs = shared.crumbs_to(&visit, collection, &query.parent).await;
    if let Some(owner) = chrome.crumbs.last().filter(|_| !query.parent.is_empty()) {
        chrome.title = format!("{title} in {}", owner.text);
    }
    let asked = asked(list, &filters, &query, page_size);
    let (items, next, total) = match shared
        .list_page(&visit, collection, &query.parent, &asked)
        .await
    {
        Ok(page) => page,
        Err(failure) => {
            chrome.error = Some(failure);
            (Vec::new(), String::new(), None)
        }
    };
    let links = Links {
        collection,
        filters: &filters,
        query: &query,
        page_size,
    };
    let held = shared.held(&visit, &query.parent).await;
    let create = collection
        .create
        .filter(|create| {
            may_create(
                &visit,
                &held,
                collection,
                create.action.capability,
                &query.parent,
            )
        })
        .map(|_| {
            format!(
                "{PREFIX}{}/new?parent={}",
                collection.id,
                encode(&query.parent)
            )
        });
    let mut names = Names::new(&shared, &visit);
    let (columns, rows) = table(&mut names, shared.schema, collection, &items).await;
    let page = ListPage {
        parent: query.parent.clone(),
        total,
        order_choices: order_choices(collection, list),
        order_by: query.order_by.clone(),
        page_size,
        max_page_size: collection.page_sizes.max,
        create,
        columns,
        rows,
        previous: links.previous(),
        next: links.next(&next),
        filter: list.filter.then(|| query.filter.clone()),
        filters,
        chrome,
    };
    render(StatusCode::OK, &page)
}

/// The query parameters of the API's list call.
fn asked(
    list: List,
    filters: &[(String, String)],
    query: &ListQuery,
    page_size: u32,
) -> Vec<(String, String)> {
    let mut asked = filters.to_vec();
    asked.push(("pageSize".to_owned(), page_size.to_string()));
    asked.push(("pageToken".to_owned(), query.page_token.clone()));
    if list.order_by {
        asked.push(("orderBy".to_owned(), query.order_by.clone()));
    }
    if list.filter {
        asked.push(("filter".to_owned(), query.filter.clone()));
    }
    asked
}

/// `order_by` choices: the default, then each field ascending and descending.
fn order_choices(collection: &Collection, list: List) -> Vec<(String, String)> {
    if !list.order_by {
        return Vec::new();
    }
    let mut choices = vec![(String::new(), "default".to_owned())];
    for field in collection.order_by {
        let label = crate::words::field(collection, field);
        choices.push((field.to_string(), label.clone()));
        choices.push((format!("{field} desc"), format!("{label} (descending)")));
    }
    choices
}

/// The table's headings and rows: the item's name, the items it
/// references (by their names), then a few fields it may be ordered by.
async fn table(
    names: &mut Names<'_>,
    schema: &Schema,
    collection: &'static Collection,
    items: &[Value],
) -> (Vec<String>, Vec<Row>) {
    let references: Vec<&str> = collection.references.iter().map(|r| r.field).collect();
    let shown: Vec<&str> = collection
        .order_by
        .iter()
        .copied()
        .filter(|f| *f != "uid" && !references.contains(f))
        .take(COLUMNS)
        .collect();
    let mut rows = Vec::with_capacity(items.len());
    for item in items {
        let mut cells = Vec::with_capacity(references.len() + shown.len());
        for field in &references {
            let target = names.reference(collection, field, &item[*field]).await;
            cells.push(target.map(Cell::from).unwrap_or_default());
        }
        cells.extend(shown.iter().map(|f| {
            let moment = crate::words::moment_of(schema, collection, f, &item[*f]);
            moment.map_or_else(|| Cell::text(&item[*f]), Cell::from)
        }));
        let link = link_to(collection, item);
        rows.push(Row {
            href: link.href,
            text: link.text,
            cells,
        });
    }
    let columns = std::iter::once(crate::words::label(collection.singular))
        .chain(
            references
                .iter()
                .chain(&shown)
                .map(|f| crate::words::field(collection, f)),
        )
        .collect();
    (columns, rows)
}

/// Links to other pages of the same list.
struct Links<'a> {
    collection: &'a Collection,
    filters: &'a [(String, String)],
    query: &'a ListQuery,
    page_size: u32,
}

impl Links<'_> {
    /// The tokens of the pages before this one.
    fn trail(&self) -> Vec<&str> {
        self.query
            .trail
            .split(' ')
            .filter(|t| !t.is_empty())
            .collect()
    }

    fn to(&self, token: &str, trail: &[&str]) -> String {
        let page_size = self.page_size.to_string();
        let trail = trail.join(" ");
        let fixed = [
            ("parent", self.query.parent.as_str()),
            ("filter", self.query.filter.as_str()),
            ("orderBy", self.query.order_by.as_str()),
            ("pageSize", page_size.as_str()),
            ("pageToken", token),
            ("trail", trail.as_str()),
        ];
        let filters = self.filters.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        format!(
            "{PREFIX}{}?{}",
            self.collection.id,
            query_string(filters.chain(fixed))
        )
    }

    fn previous(&self) -> Option<String> {
        if self.query.page_token.is_empty() {
            return None;
        }
        let trail = self.trail();
        let (back, rest) = trail
            .split_last()
            .map_or(("", &[][..]), |(last, rest)| (*last, rest));
        Some(self.to(if back == "-" { "" } else { back }, rest))
    }

    fn next(&self, token: &str) -> Option<String> {
        if token.is_empty() {
            return None;
        }
        let trail = self.trail();
        let mut forward: Vec<&str> = trail
            .iter()
            .copied()
            .skip(trail.len().saturating_sub(MAX_TRAIL - 1))
            .collect();
        forward.push(match self.query.page_token.as_str() {
            "" => "-",
            current => current,
        });
        Some(self.to(token, &forward))
    }
}
