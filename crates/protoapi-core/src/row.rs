//! Storage rows: what the generator emits per resource (`GroupRow`, the
//! fields its annotation files' rules look up) and `#[derive(Row)]`
//! (crate `protoapi-macros`) implements for a row declared by hand.
//!
//! A row struct names the fields of a resource that a backend keeps in
//! columns of their own (to filter and order by). Both generate the
//! column descriptions and the row's values taken from the message, so a
//! backend author writes only queries. Masks are not applied to rows: an
//! update merges whole resources ([`crate::mask::Update::apply`]) and the
//! backend takes the new row from the merged message.

use crate::resource::SortValue;

/// One column of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnSpec {
    /// The column (and row field) name.
    pub name: &'static str,
    /// The message field's JSON name (what `order_by` and dependents name).
    pub field: &'static str,
    /// Integer storage (numbers, booleans, timestamps as microseconds).
    pub integer: bool,
    /// Set by the server (`#[row(output_only)]`). Descriptive only: masks
    /// are checked against the resource's field behaviours.
    pub output_only: bool,
}

/// A row of a resource message `Message`.
pub trait Row: Sized {
    type Message;

    /// The columns, in field order (skipped fields excluded).
    const COLUMNS: &'static [ColumnSpec];

    /// The row's values taken from a message (skipped fields default).
    fn from_message(message: &Self::Message) -> Self;

    /// The values of the columns, in [`Self::COLUMNS`] order.
    fn values(&self) -> Vec<SortValue>;
}

/// How a store describes the table of one resource, built from its row
/// type: what the `tables()` function of a generated API lists, one per
/// resource, marked as the annotation files declare (`protoapi_runtime::sql::Table`
/// implements it).
pub trait TableOf: Sized {
    /// The table of the resource whose columns the row type `W` declares.
    fn of<W: Row>() -> Self
    where
        W::Message: crate::resource::Resource;

    /// Marks a table whose items access decisions derive from, each item
    /// being the subject of its own (a role: what it grants).
    fn guarding_access(self) -> Self;

    /// Marks a table whose items access decisions derive from, the subject
    /// of an item being the uid in its `field` (a role binding: the identity
    /// it grants to).
    fn guarding_access_of(self, field: &'static str) -> Self;

    /// Leaves the columns of `fields` (JSON names) without indexes: a list
    /// filtering on them scans (within the store's budget), and each write
    /// maintains fewer indexes. By default every column is indexed.
    fn unindexed(self, fields: &'static [&'static str]) -> Self {
        let _ = fields;
        self
    }
}
