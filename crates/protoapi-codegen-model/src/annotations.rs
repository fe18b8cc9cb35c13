//! Annotation files: what proto cannot say about a collection.
//!
//! One TOML file per proto package directory (`annotations.toml`), one table
//! per collection (the resource's plural), as documented in `proto/README.md`.
//! Parsing keeps spans so that every mistake is reported as `file:line:col`;
//! the names used are checked against the descriptors when the model is built.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::diagnostics::{Diagnostic, Location};

/// Every annotation file, by collection id.
#[derive(Debug, Default)]
pub struct Annotations {
    pub collections: BTreeMap<String, Collection>,
    /// `["*"]` tables: field rules for every collection that has the field
    /// and states no rules of its own for it.
    pub defaults: Vec<Collection>,
    /// `[collection.legacy]` tables: older messages showing a collection.
    pub views: Vec<ViewDecl>,
}

/// The mixins collections may declare (`mixins`), and the proto file
/// declaring each.
pub const MIXINS: &[(&str, &str)] =
    &[("google.iam.v1.IAMPolicy", "google/iam/v1/iam_policy.proto")];

impl Annotations {
    /// The files declaring the mixins collections name (known ones only),
    /// for the loader to parse beside the API's own.
    pub fn mixin_files(&self) -> Vec<&'static str> {
        let named = (self.collections.values())
            .filter_map(|c| c.mixins.as_ref())
            .flatten();
        let mut files: Vec<&str> = named
            .filter_map(|name| MIXINS.iter().find(|(known, _)| known == name.get_ref()))
            .map(|(_, file)| *file)
            .collect();
        files.dedup();
        files
    }

    /// Whether no annotation file states anything (an API without them).
    pub fn is_empty(&self) -> bool {
        self.collections.is_empty() && self.defaults.is_empty() && self.views.is_empty()
    }
}

/// A `[collection.legacy]` table and where it was declared.
#[derive(Debug)]
pub struct ViewDecl {
    /// The collection id it shows.
    pub collection: String,
    pub rule: LegacyRule,
    pub source: SourceFile,
    pub location: Location,
}

/// The table key of rules for every collection.
pub const EVERY_COLLECTION: &str = "*";

/// The annotations of one collection.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Collection {
    /// What people call the collection (`Shelves`), shown by
    /// generic clients instead of words made from its id.
    pub display_name: Option<Spanned<String>>,
    /// Fields `order_by` accepts (JSON or proto names).
    #[serde(default)]
    pub order_by: Vec<Spanned<String>>,
    pub page_size: Option<Spanned<PageSize>>,
    /// `children_of` and/or `descendants_of`.
    pub filters: Option<Vec<Spanned<String>>>,
    /// Fields an AIP-160 `filter` may compare (JSON or proto names); the
    /// default is those `order_by` accepts.
    pub filterable: Option<Vec<Spanned<String>>>,
    /// Of the filterable fields, those whose columns are indexed (JSON or
    /// proto names); the default is every one. A column other rules look
    /// up (`order_by`, references, dependents, public items) is indexed
    /// whatever this says.
    pub indexed: Option<Vec<Spanned<String>>>,
    /// What keeps an item from being deleted.
    #[serde(default)]
    pub delete_blocked_by: Vec<Spanned<Blocker>>,
    /// Capability each method needs, by method name.
    #[serde(default)]
    pub permissions: BTreeMap<Spanned<String>, Spanned<String>>,
    /// Methods that need no token.
    #[serde(default)]
    pub anonymous: Vec<Spanned<String>>,
    /// Capabilities on the collection's items that the application checks
    /// itself, besides those its methods need, by verb (`pull`:
    /// `<collection>.pull`): roles may grant them, and the crate's
    /// `CAPABILITIES` lists them.
    #[serde(default)]
    pub capabilities: Vec<Spanned<String>>,
    /// A bool field that, when true, makes an item readable without a token.
    pub public_if: Option<Spanned<String>>,
    /// A timestamp field that, once set and not in the future, makes an item
    /// readable without a token (a draft or an embargoed item is not).
    pub public_after: Option<Spanned<String>>,
    /// The collection whose items are the parents of this one's (for the
    /// resource type of a missing parent); `["*"]` may state it for all.
    pub parent: Option<Spanned<String>>,
    /// Items directly under a shared scope are referenced from every root
    /// and written only by the administrator.
    #[serde(default)]
    pub shared: bool,
    /// Levels the API's hierarchy may have below a root (only in `["*"]`).
    pub max_depth: Option<Spanned<usize>>,
    /// A string method option (`acme.v1.required_permission`) whose value
    /// on a method is the capability it needs (only in `["*"]`).
    pub permission_option: Option<Spanned<String>>,
    /// Services of other packages served on this collection's items as
    /// services of their own (a service configuration's `mixins`):
    /// `google.iam.v1.IAMPolicy`, on the collection role bindings are kept
    /// under.
    pub mixins: Option<Vec<Spanned<String>>>,
    /// Rules for individual fields, by field name.
    #[serde(default)]
    pub fields: BTreeMap<Spanned<String>, FieldRules>,
    /// Fields holding the uid of an item of another collection, by field name.
    #[serde(default)]
    pub references: BTreeMap<Spanned<String>, Spanned<ReferenceRule>>,
    /// An older message showing this collection (a legacy version, e.g. v1).
    /// A file may state only this for a collection annotated elsewhere.
    pub legacy: Option<Spanned<LegacyRule>>,
    /// The method that trades identity tokens for API tokens of this
    /// collection's items.
    pub token_exchange: Option<Spanned<ExchangeRule>>,
    /// The file it was declared in, for diagnostics.
    #[serde(skip)]
    pub source: SourceFile,
    /// Where its table starts.
    #[serde(skip)]
    pub location: Location,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageSize {
    pub default: u32,
    pub max: u32,
}

/// Items of `collection` that block a delete: those whose `field` (default:
/// their parent) is the uid being deleted.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Blocker {
    pub collection: String,
    pub field: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldRules {
    /// What people call the field (`Sign-in claim`), shown by generic
    /// clients instead of words made from its name; any kind of field.
    pub display_name: Option<String>,
    /// The only values a string (or repeated string) field may hold.
    pub allowed: Option<Vec<String>>,
    /// The field holds a UIDP.
    #[serde(default)]
    pub uidp: bool,
    /// At most this many characters (per value).
    pub max_length: Option<usize>,
    /// At most this many bytes of UTF-8 (per value).
    pub max_bytes: Option<usize>,
    /// No control characters.
    #[serde(default)]
    pub printable: bool,
    /// The values are capabilities: a caller may add one only if it holds
    /// it at the item's parent.
    #[serde(default)]
    pub caller_must_hold: bool,
}

impl FieldRules {
    /// Whether it states rules on the field's values (those apply to
    /// string fields only), not just a display name.
    pub fn has_value_rules(&self) -> bool {
        self.allowed.is_some()
            || self.uidp
            || self.max_length.is_some()
            || self.max_bytes.is_some()
            || self.printable
            || self.caller_must_hold
    }
}

/// A reference to an item of another collection.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceRule {
    /// The collection id of the target; by default the collection of the
    /// type the field's `google.api.resource_reference` names.
    pub collection: Option<String>,
    /// `ancestors` (the item's parent or above, the default) or `root`
    /// (under the same root).
    pub reach: Option<String>,
    /// A repeated string field of the target holding capabilities that the
    /// reference confers: the caller must hold each of them at the item's group.
    pub grants: Option<String>,
}

/// A method trading an identity token (from a trusted OIDC issuer, sent as
/// the bearer) for an API token of the item whose claim names the token's
/// issuer and subject. Each value names a field, by proto or JSON name.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExchangeRule {
    /// The method's full name, `package.Service.Method`; its service serves
    /// nothing else.
    pub method: Spanned<String>,
    /// The request's string field holding the item's key.
    pub subject: Spanned<String>,
    /// The request's string field naming the API the token is for (its
    /// base URL).
    pub audience: Spanned<String>,
    /// The item's message field whose string fields `issuer` and `subject`
    /// an identity token must carry.
    pub claim: Spanned<String>,
    /// The response's string field that answers the API token.
    pub token: Spanned<String>,
}

/// How a legacy message shows the collection's resource.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LegacyRule {
    /// The legacy message's full proto name.
    pub message: Spanned<String>,
    /// Legacy field name → the resource's field name, for fields whose name
    /// changed; every other field keeps its name.
    #[serde(default)]
    pub rename: BTreeMap<Spanned<String>, Spanned<String>>,
    /// The filters legacy lists accept (`id`, `name`, `children_of`, ...).
    #[serde(default)]
    pub filters: Vec<Spanned<String>>,
}

/// Where a spanned value sits in a file.
#[derive(Debug, Clone, Default)]
pub struct SourceFile {
    pub name: String,
    text: String,
}

impl SourceFile {
    pub fn location(&self, offset: usize) -> Location {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        Location {
            file: self.name.clone(),
            line,
            column,
        }
    }

    pub fn at<T>(&self, spanned: &Spanned<T>) -> Location {
        self.location(spanned.span().start)
    }
}

impl Annotations {
    /// Reads one annotation file; `name` is how diagnostics refer to it.
    pub fn add_file(&mut self, path: &Path, name: &str) -> Result<(), Diagnostic> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Diagnostic::new(
                SourceFile::named(name).location(0),
                format!("cannot read: {e}"),
            )
        })?;
        self.add_source(name, &text)
    }

    /// Parses annotation text.
    pub fn add_source(&mut self, name: &str, text: &str) -> Result<(), Diagnostic> {
        let source = SourceFile {
            name: name.to_owned(),
            text: text.to_owned(),
        };
        let parsed: BTreeMap<Spanned<String>, Collection> =
            toml::from_str(text).map_err(|error| {
                let offset = error.span().map_or(0, |span| span.start);
                Diagnostic::new(source.location(offset), error.message().trim().to_owned())
            })?;
        for (key, mut collection) in parsed {
            collection.location = source.at(&key);
            collection.source = source.clone();
            if let Some(rule) = collection.legacy.take() {
                self.views.push(ViewDecl {
                    collection: key.get_ref().clone(),
                    location: source.at(&rule),
                    rule: rule.into_inner(),
                    source: source.clone(),
                });
                if collection.is_empty() {
                    continue;
                }
            }
            if key.get_ref() == EVERY_COLLECTION {
                self.defaults.push(collection);
                continue;
            }
            if let Some(previous) = self.collections.get(key.get_ref()) {
                return Err(Diagnostic::new(
                    collection.location,
                    format!(
                        "collection `{}` is also annotated at {}",
                        key.get_ref(),
                        previous.location
                    ),
                ));
            }
            self.collections.insert(key.into_inner(), collection);
        }
        Ok(())
    }
}

impl Collection {
    /// Whether the table states nothing (besides, perhaps, a legacy view).
    fn is_empty(&self) -> bool {
        self.order_by.is_empty()
            && self.page_size.is_none()
            && self.filters.is_none()
            && self.filterable.is_none()
            && self.indexed.is_none()
            && self.delete_blocked_by.is_empty()
            && self.permissions.is_empty()
            && self.anonymous.is_empty()
            && self.capabilities.is_empty()
            && self.public_if.is_none()
            && self.public_after.is_none()
            && self.parent.is_none()
            && self.max_depth.is_none()
            && !self.shared
            && self.fields.is_empty()
            && self.references.is_empty()
            && self.token_exchange.is_none()
            && self.mixins.is_none()
    }
}

impl SourceFile {
    fn named(name: &str) -> Self {
        SourceFile {
            name: name.to_owned(),
            text: String::new(),
        }
    }
}
