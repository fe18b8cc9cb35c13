//! Storage rows: what `#[derive(StorageRow)]` (crate `macros`) implements.
//!
//! A row struct names the fields of a resource that a backend keeps in
//! columns of their own. The derive generates the conversion from (and back
//! into) the message, field-mask application on rows, and sort keys, so a
//! backend author writes only queries.

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
    /// Set by the server; a mask may not name it.
    pub output_only: bool,
}

/// A row of a resource message `Message`.
pub trait Row: Sized {
    type Message;

    /// The columns, in field order (skipped fields excluded).
    const COLUMNS: &'static [ColumnSpec];

    /// The row's values taken from a message (skipped fields default).
    fn from_message(message: &Self::Message) -> Self;

    /// Writes the row's columns into a message.
    fn merge_into(&self, message: &mut Self::Message);

    /// The values of the columns, in [`Self::COLUMNS`] order.
    fn values(&self) -> Vec<SortValue>;

    /// The sort key of a column, by column name or field JSON name.
    fn sort_key(&self, name: &str) -> Option<SortValue>;

    /// Copies the columns named by `paths` (column or JSON names) from
    /// `patch`; fails naming the first unknown or output-only path.
    fn apply_mask(&mut self, patch: &Self, paths: &[&str]) -> Result<(), String>;
}
