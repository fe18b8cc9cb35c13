//! One collection's table of an annotation file, beside the resource it
//! annotates.

use prost_reflect::{FieldDescriptor, MessageDescriptor};
use toml::Spanned;

use crate::annotations::{Collection, SourceFile};
use crate::diagnostics::Location;
use crate::model::Resource;

/// One collection's table and the resource it annotates.
pub(super) struct Table<'a> {
    /// The collection id, e.g. `bookCopies`.
    pub(super) id: &'a str,
    pub(super) collection: &'a Collection,
    pub(super) resource: &'a Resource,
    pub(super) message: MessageDescriptor,
}

impl Table<'_> {
    pub(super) fn source(&self) -> &SourceFile {
        &self.collection.source
    }

    /// Where an annotation value sits in its file.
    pub(super) fn at<T>(&self, spanned: &Spanned<T>) -> Location {
        self.collection.source.at(spanned)
    }

    /// The resource's top-level field of that proto or JSON name.
    pub(super) fn field(&self, name: &str) -> Option<FieldDescriptor> {
        self.message
            .get_field_by_name(name)
            .or_else(|| self.message.get_field_by_json_name(name))
    }
}
