//! AIP-160 filter expressions on the fields a collection declares
//! filterable ([`Resource::FILTERABLE`]): parsed (the AIP-160 grammar), checked
//! against the fields' types into a [`Condition`] ([`check()`]), and decided
//! on an item ([`Condition::admits`], what the memory store does) or by a
//! SQL store from the same columns it orders by.
//!
//! Cost is bounded before any storage is touched: a filter is at most
//! [`MAX_LENGTH`] bytes, nests at most [`MAX_DEPTH`] levels and holds at
//! most [`MAX_RESTRICTIONS`] comparisons.
//!
//! [`Resource::FILTERABLE`]: crate::resource::Resource::FILTERABLE

mod check;
mod condition;
mod syntax;

pub use check::{check, check_message};
pub use condition::{Comparison, Condition, Op, Within, json_entries, json_values, wildcard};
pub use syntax::literal;

/// The longest filter accepted, in bytes.
pub const MAX_LENGTH: usize = 2048;
/// How deep parentheses and negations nest, at most.
pub const MAX_DEPTH: usize = 12;
/// How many comparisons one filter holds, at most.
pub const MAX_RESTRICTIONS: usize = 32;

/// What is wrong with a filter, and where (a byte offset into it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FilterError {
    pub at: usize,
    pub message: String,
}

impl FilterError {
    fn new(at: usize, message: impl Into<String>) -> Self {
        FilterError {
            at,
            message: message.into(),
        }
    }

    /// The violation of the request's `filter` field, with the position
    /// as a 1-based character count.
    fn violation(&self, filter: &str) -> crate::error::FieldViolation {
        let at = self.at.min(filter.len());
        let character = filter
            .char_indices()
            .take_while(|(offset, _)| *offset < at)
            .count()
            + 1;
        crate::error::FieldViolation::new(
            "filter",
            format!("{} (at character {character})", self.message),
        )
    }
}
