//! What generated command-line modules call (feature `cli`): the arguments
//! of the standard methods as clap [`Args`], the requests they make as
//! canonical JSON, and the [`Answer`] a command prints.
//!
//! A generated `cli` module declares one subcommand per collection of the
//! API's current version (`widgets list`, `widgets get <UID>`, ...) with
//! these arguments, decodes each request into the typed request message (so
//! a misspelt `--set` field is refused with a field violation before
//! anything is sent) and calls the generated client.
//!
//! clap comes through here ([`clap`]): a crate using the module needs no
//! dependency of its own on it.

pub use clap;
use clap::Args;
use futures_util::{Stream, TryStreamExt};
use serde_json::{Map, Value, json};

use protoapi_core::error::Error;
use protoapi_core::json::{self, JsonMessage};

/// What a command answers, to print as canonical JSON ([`Answer::print`])
/// or any other way.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// One item (get, create, update).
    Item(Value),
    /// One page of a list.
    Page(Page),
    /// Every item of a list (`--all`).
    Items(Vec<Value>),
    /// The uid of a deleted item.
    Deleted(String),
}

/// One page of a list, its items as canonical JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    pub items: Vec<Value>,
    pub next_page_token: String,
    pub total_count: i32,
}

impl Page {
    /// A page of a list response's fields.
    pub fn new<M: JsonMessage>(items: &[M], next_page_token: String, total_count: i32) -> Page {
        Page {
            items: items.iter().map(to_json).collect(),
            next_page_token,
            total_count,
        }
    }
}

impl Page {
    /// What a page followed by others says: how many items it shows of how
    /// many, and how to see the rest.
    pub fn more(&self) -> String {
        let shown = match self.total_count {
            total if total > 0 => format!("{} of {total}", self.items.len()),
            _ => self.items.len().to_string(),
        };
        format!(
            "{shown} shown; more with --all, or --page-token {}",
            // The server's text, never a terminal's escape sequence.
            self.next_page_token.escape_default()
        )
    }
}

impl Answer {
    /// An item answered by a call.
    pub fn item<M: JsonMessage>(message: &M) -> Answer {
        Answer::Item(to_json(message))
    }

    /// The answer as canonical JSON: the item; a page's `items`,
    /// `nextPageToken` and `totalCount`; every item as `items`; `null` for a
    /// delete.
    pub fn to_json(&self) -> Value {
        match self {
            Answer::Item(item) => item.clone(),
            Answer::Page(page) => json!({
                "items": page.items,
                "nextPageToken": page.next_page_token,
                "totalCount": page.total_count,
            }),
            Answer::Items(items) => json!({ "items": items }),
            Answer::Deleted(_) => Value::Null,
        }
    }

    /// Prints the answer as indented canonical JSON on stdout; a delete as
    /// `deleted <uid>` on stderr.
    pub fn print(&self) {
        match self {
            Answer::Deleted(uid) => eprintln!("deleted {uid}"),
            answer => println!(
                "{}",
                serde_json::to_string_pretty(&answer.to_json()).expect("JSON values serialize")
            ),
        }
    }
}

fn to_json<M: JsonMessage>(message: &M) -> Value {
    serde_json::to_value(json::wire::Message(message)).expect("a message serializes to JSON")
}

/// `FIELD=VALUE`, split at the first `=`.
pub fn field_value(text: &str) -> Result<(String, String), String> {
    let (field, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected FIELD=VALUE, got `{text}`"))?;
    Ok((field.to_owned(), value.to_owned()))
}

/// A parser of `--filter FIELD=VALUE` accepting the fields in `filters`.
pub fn filter(
    filters: &'static [&'static str],
) -> impl Fn(&str) -> Result<(String, String), String> + Clone + Send + Sync + 'static {
    move |text| {
        let (field, value) = field_value(text)?;
        if filters.contains(&field.as_str()) {
            Ok((field, value))
        } else {
            Err(format!(
                "`{field}` is not a filter of this list (filters: {})",
                filters.join(", ")
            ))
        }
    }
}

/// Sets `path` (dotted, e.g. `uidp.childrenOf`) of a JSON request to
/// `value`, unless it is absent, empty or false.
pub fn insert(request: &mut Value, path: &str, value: impl Into<Value>) {
    let value = value.into();
    let unset = match &value {
        Value::Null => true,
        Value::Bool(set) => !set,
        Value::Array(items) => items.is_empty(),
        _ => false,
    };
    if !unset {
        set_path(request, path, value);
    }
}

fn set_path(target: &mut Value, path: &str, value: Value) {
    let mut target = target;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            target[part] = value;
            return;
        }
        if !target[part].is_object() {
            target[part] = Value::Object(Map::new());
        }
        target = &mut target[part];
    }
}

/// The arguments every list has besides its filters: order and paging.
#[derive(Args, Clone, Debug, Default)]
pub struct Paging {
    /// Order, e.g. `name` or `name desc`.
    #[arg(long)]
    pub order_by: Option<String>,
    /// Items per page (none: the collection's default).
    #[arg(long)]
    pub page_size: Option<u32>,
    /// Start at this page (a previous answer's `nextPageToken`, which may start with `-`).
    #[arg(long, allow_hyphen_values = true)]
    pub page_token: Option<String>,
    /// Every page to the end.
    #[arg(long)]
    pub all: bool,
    /// Nothing on stderr about pages: no progress with `--all`, no word of
    /// more pages without it.
    #[arg(short, long)]
    pub quiet: bool,
}

impl Paging {
    /// A list request with this order and page, to add filters to.
    pub fn request(&self) -> Value {
        let mut request = Value::Object(Map::new());
        insert(&mut request, "orderBy", self.order_by.clone());
        insert(&mut request, "pageSize", self.page_size);
        insert(&mut request, "pageToken", self.page_token.clone());
        request
    }

    /// The first page of `pages` (saying on stderr, unless `--quiet`, when
    /// more follow), or with `--all` every item of every page, with progress
    /// on stderr unless `--quiet`.
    pub async fn answer<P>(
        &self,
        pages: impl Stream<Item = Result<P, Error>>,
        page: impl Fn(P) -> Page,
    ) -> Result<Answer, Error> {
        let mut pages = std::pin::pin!(pages.map_ok(page));
        if !self.all {
            let first = pages.try_next().await?;
            let first = first.expect("a list answers a first page");
            if !self.quiet && !first.next_page_token.is_empty() {
                eprintln!("{}", first.more());
            }
            return Ok(Answer::Page(first));
        }
        let mut items = Vec::new();
        let mut count = 0;
        while let Some(page) = pages.try_next().await? {
            count += 1;
            items.extend(page.items);
            if !self.quiet {
                eprintln!("page {count}: {} of {}", items.len(), page.total_count);
            }
        }
        Ok(Answer::Items(items))
    }
}

/// `get <UID>`.
#[derive(Args, Clone, Debug)]
pub struct Get {
    /// The item's uid.
    pub uid: String,
}

impl Get {
    /// The request, the uid in field `id_field`.
    pub fn request(&self, id_field: &str) -> Value {
        json!({ id_field: self.uid })
    }
}

/// `create [--parent <UID>] --set FIELD=VALUE...`.
#[derive(Args, Clone, Debug)]
pub struct Create {
    /// The parent (none: an item at the root).
    #[arg(long, default_value = "")]
    pub parent: String,
    /// A field, `field=value`; values starting with `[`, `{` or `"`, and
    /// `true`/`false`, are JSON. Nested fields as `a.b=value`.
    #[arg(long = "set", value_name = "FIELD=VALUE", value_parser = field_value)]
    pub fields: Vec<(String, String)>,
}

impl Create {
    /// The request, the new item in field `body_field`.
    pub fn request(&self, body_field: &str) -> Result<Value, Error> {
        Ok(json!({ "parent": self.parent, body_field: resource(&self.fields)? }))
    }
}

/// `update <UID> --set FIELD=VALUE... [--etag <ETAG>]`.
#[derive(Args, Clone, Debug)]
pub struct Update {
    /// The item's uid.
    pub uid: String,
    /// A field to change, `field=value` (as with `create`); the fields set
    /// are the update mask.
    #[arg(long = "set", value_name = "FIELD=VALUE", value_parser = field_value, required = true)]
    pub fields: Vec<(String, String)>,
    /// Only if the item still has this etag (which may start with `-`).
    #[arg(long, allow_hyphen_values = true)]
    pub etag: Option<String>,
}

impl Update {
    /// The request: the uid in `id_field`, the `--set` fields (and etag) in
    /// `body_field`, and their names as `updateMask`.
    pub fn request(&self, id_field: &str, body_field: &str) -> Result<Value, Error> {
        let mut resource = resource(&self.fields)?;
        insert(&mut resource, "etag", self.etag.clone());
        let mask: Vec<&str> = self
            .fields
            .iter()
            .map(|(field, _)| field.as_str())
            .collect();
        // The key may be a field of the item (`book.name`, AIP-134).
        let mut request = json!({ body_field: resource, "updateMask": mask.join(",") });
        set_path(&mut request, id_field, Value::String(self.uid.clone()));
        Ok(request)
    }
}

/// A write answering an operation (AIP-151): the command's arguments, and
/// whether to print the operation at once (`--async`) rather than wait until
/// it is done and print what it made.
#[derive(Args, Clone, Debug)]
pub struct LongRunning<C: Args> {
    #[command(flatten)]
    pub command: C,
    /// Print the operation as soon as it starts, without waiting for it.
    #[arg(long = "async")]
    pub no_wait: bool,
}

/// `delete <UID> [--etag <ETAG>]`.
#[derive(Args, Clone, Debug)]
pub struct Delete {
    /// The item's uid.
    pub uid: String,
    /// Only if the item still has this etag (which may start with `-`).
    #[arg(long, allow_hyphen_values = true)]
    pub etag: Option<String>,
}

impl Delete {
    /// The request, the uid in field `id_field`.
    pub fn request(&self, id_field: &str) -> Value {
        let mut request = json!({ id_field: self.uid });
        insert(&mut request, "etag", self.etag.clone());
        request
    }
}

/// The item the `--set` fields describe, as JSON.
pub fn resource(fields: &[(String, String)]) -> Result<Value, Error> {
    let mut resource = Value::Object(Map::new());
    for (field, text) in fields {
        let value = if text.starts_with(['[', '{', '"']) || text == "true" || text == "false" {
            serde_json::from_str(text).map_err(|e| {
                Error::invalid_field(field.clone(), format!("`{text}` is not valid JSON: {e}"))
            })?
        } else {
            Value::String(text.clone())
        };
        set_path(&mut resource, field, value);
    }
    Ok(resource)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_fields_nest_and_read_json_values() {
        let fields = [
            ("name".to_owned(), "gear".to_owned()),
            ("spec.certified".to_owned(), "true".to_owned()),
            ("aliases".to_owned(), "[\"g\"]".to_owned()),
        ];
        assert_eq!(
            resource(&fields).unwrap(),
            json!({"name": "gear", "spec": {"certified": true}, "aliases": ["g"]})
        );
        let update = Update {
            uid: "u".into(),
            fields: fields[..1].to_vec(),
            etag: Some("-W1".into()),
        };
        assert_eq!(
            update.request("uid", "widget").unwrap(),
            json!({"uid": "u", "widget": {"name": "gear", "etag": "-W1"}, "updateMask": "name"})
        );
    }

    #[test]
    fn unset_values_stay_out_of_requests() {
        let mut request = json!({});
        insert(&mut request, "uidp.childrenOf", Some("a"));
        insert(&mut request, "uidp.inRoot", false);
        insert(&mut request, "uidp.ids", Vec::<String>::new());
        insert(&mut request, "name", None::<String>);
        assert_eq!(request, json!({"uidp": {"childrenOf": "a"}}));
    }
}
