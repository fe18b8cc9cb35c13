//! The console's pages: askama templates (`templates/console/`), whose
//! output is HTML-escaped throughout.

use askama::Template;
use serde_json::Value;

use super::call::Failure;
use super::form::FormField;

/// What every page shows around its content.
#[derive(Debug, Default)]
pub struct Chrome {
    pub title: String,
    /// The API's title.
    pub api: &'static str,
    /// Where the console is served, `/console/`.
    pub prefix: &'static str,
    /// The session's CSRF token; empty when signed out.
    pub csrf: String,
    pub crumbs: Vec<Link>,
    /// At most one: what went wrong.
    pub error: Option<Failure>,
    /// What the write that led here did (`Saved.`).
    pub done: Option<&'static str>,
    /// Who is signed in, and where they can go.
    pub badge: Badge,
}

/// The header's account of the caller: who is signed in (a link to their
/// item where the API keeps one) and the top items they reach of the
/// API's hierarchy.
#[derive(Clone, Debug, Default)]
pub struct Badge {
    pub who: Option<Link>,
    /// The caller is the API's administrator.
    pub admin: bool,
    /// What the reachable items are (`Groups`).
    pub reach_title: String,
    pub reach: Vec<Link>,
    /// It reaches more than the header names (the home page lists them).
    pub reach_more: bool,
}

/// A link and its text.
#[derive(Clone, Debug, Default)]
pub struct Link {
    pub href: String,
    pub text: String,
    /// The collection id, for collection links.
    pub id: &'static str,
}

#[derive(Template)]
#[template(path = "console/signin.html")]
pub struct SignIn {
    pub chrome: Chrome,
    pub next: String,
    /// The issuer's name, when sign-in through OIDC is configured.
    pub oidc: Option<String>,
}

/// A section of the home page: the top-level items of one collection.
#[derive(Debug)]
pub struct Roots {
    pub title: String,
    pub items: Vec<Link>,
}

#[derive(Template)]
#[template(path = "console/home.html")]
pub struct Home {
    pub chrome: Chrome,
    pub roots: Vec<Roots>,
    pub collections: Vec<Link>,
}

/// One item of a list.
#[derive(Debug)]
pub struct Row {
    pub href: String,
    pub text: String,
    pub cells: Vec<Cell>,
}

/// One cell of a table: text, or an item named by its label.
#[derive(Debug, Default)]
pub struct Cell {
    pub text: String,
    pub href: Option<String>,
}

impl Cell {
    /// A cell showing `value` as text.
    pub(super) fn text(value: &Value) -> Cell {
        Cell {
            text: super::form::display(value, "text"),
            href: None,
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell { text, href: None }
    }
}

impl From<Link> for Cell {
    fn from(link: Link) -> Cell {
        Cell {
            text: link.text,
            href: Some(link.href),
        }
    }
}

/// A member bound to roles on an item or above it.
#[derive(Debug)]
pub struct Holder {
    pub member: Link,
    pub grants: Vec<Grant>,
}

/// One role a member holds, the binding that grants it, and the ancestor
/// it is bound on when not the item itself.
#[derive(Debug)]
pub struct Grant {
    pub role: Link,
    pub binding: String,
    pub from: Option<Link>,
}

/// Items of another collection that name an item (`Role bindings with
/// this identity`).
#[derive(Debug)]
pub struct Related {
    pub id: &'static str,
    /// The referring field.
    pub field: &'static str,
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
    /// The whole filtered list, when there is more than shown.
    pub more: Option<String>,
}

#[derive(Template)]
#[template(path = "console/list.html")]
pub struct ListPage {
    pub chrome: Chrome,
    pub parent: String,
    pub total: Option<String>,
    /// `(value, text)` of each `order_by` choice.
    pub order_choices: Vec<(String, String)>,
    pub order_by: String,
    pub page_size: u32,
    pub max_page_size: u32,
    /// `(query parameter, value)` of each declared filter.
    pub filters: Vec<(String, String)>,
    /// The AIP-160 filter, when the list takes one.
    pub filter: Option<String>,
    pub create: Option<String>,
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
    pub previous: Option<String>,
    pub next: Option<String>,
}

/// One field of an item page.
#[derive(Debug)]
pub struct Shown {
    pub name: String,
    /// The name in words.
    pub label: String,
    pub value: String,
    /// Where a reference leads.
    pub href: Option<String>,
}

/// A collection under an item, with its first items.
#[derive(Debug)]
pub struct Child {
    pub id: &'static str,
    pub singular: &'static str,
    pub href: String,
    pub text: String,
    pub items: Vec<Link>,
    pub create: Option<String>,
}

#[derive(Template)]
#[template(path = "console/item.html")]
pub struct ItemPage {
    pub chrome: Chrome,
    pub kind: &'static str,
    pub key: String,
    pub edit: Option<String>,
    pub delete: Option<String>,
    pub fields: Vec<Shown>,
    /// Operations still running on the item.
    pub running: Vec<Running>,
    /// Who holds which role on it, where bindings are kept under it.
    pub holders: Option<Vec<Holder>>,
    /// Where a binding on it is created, for those who may.
    pub grant: Option<String>,
    pub related: Vec<Related>,
    pub children: Vec<Child>,
}

#[derive(Template)]
#[template(path = "console/form.html")]
pub struct FormPage {
    pub chrome: Chrome,
    pub action: String,
    pub cancel: String,
    /// An edit form (which carries the values it was opened with).
    pub editing: bool,
    pub etag: String,
    /// Asks for the parent (a create form opened without one).
    pub ask_parent: bool,
    /// The parent typed.
    pub parent: String,
    /// A top-level item may be created (UIDP-keyed, by the administrator).
    pub root_allowed: bool,
    /// The client-chosen id's field, on create.
    pub id_field: Option<&'static str>,
    pub id_value: String,
    pub fields: Vec<FormField>,
    /// After a save refused because the item changed meanwhile: the edit
    /// form again, with the server's values.
    pub reload: Option<String>,
}

#[derive(Template)]
#[template(path = "console/delete.html")]
pub struct DeletePage {
    pub chrome: Chrome,
    pub action: String,
    pub cancel: String,
    pub kind: &'static str,
    pub label: String,
    pub key: String,
    pub etag: String,
}

#[derive(Template)]
#[template(path = "console/message.html")]
pub struct Message {
    pub chrome: Chrome,
    pub back: String,
}

/// After an OIDC sign-in: on to `next` by a same-site navigation.
#[derive(Template)]
#[template(path = "console/continue.html")]
pub struct Continue {
    pub next: String,
}

/// A running operation as an item's page shows it.
#[derive(Debug)]
pub struct Running {
    pub name: String,
    /// What it does (`delete`), from its metadata's AIP-151 `verb`.
    pub verb: String,
    /// When it started, from its metadata's `createTime`.
    pub since: String,
}
