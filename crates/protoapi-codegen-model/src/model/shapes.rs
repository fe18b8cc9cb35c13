//! The shapes the AIPs allow a standard method's messages, beside the
//! method it is ([`super::Standard`]): which field of a list response holds
//! the items and which totals and paging fields it has (AIP-132, AIP-158),
//! whether an Update's mask is REQUIRED (AIP-134), what a Delete answers and
//! whether it takes an etag (AIP-135, AIP-154), and soft deletes (AIP-164:
//! a resource with `delete_time` whose API declares `Undelete<X>`, a list's
//! `show_deleted`). Shapes the generator cannot serve are diagnostics naming
//! the field and the shape expected.

use super::Method;

/// How a standard method's messages are shaped (see the module docs).
#[derive(Clone, Debug, Default)]
pub enum Shape {
    /// Create, Get and custom methods: nothing to choose.
    #[default]
    Fixed,
    List(ListShape),
    Update(UpdateShape),
    Delete(DeleteShape),
}

/// A list's response and request fields.
#[derive(Clone, Debug)]
pub struct ListShape {
    /// The response's repeated field of resources: the resource's plural
    /// (`books`, AIP-132) or `items`.
    pub items: String,
    /// The total the response reports, if any.
    pub total: Total,
    /// The total's Rust type (`i32`, `i64`, `u32` or `u64`), and whether
    /// it is `optional` (an `Option` in Rust).
    pub total_type: (&'static str, bool),
    /// The request has `skip` (AIP-158).
    pub skip: bool,
    /// The request has `order_by` (AIP-132).
    pub order_by: bool,
    /// The request has an AIP-160 `string filter`.
    pub filter: bool,
    /// The response has fields the generated list leaves at their defaults
    /// (e.g. AIP-217's `unreachable`).
    pub more: bool,
    /// The request has AIP-164 `bool show_deleted` (the resource soft-deletes).
    pub show_deleted: bool,
}

/// The total number of items a list response reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Total {
    None,
    /// `int32 total_size` (AIP-132).
    Size,
    /// `int32 total_count` (beside `items` and `skip`, another convention).
    Count,
}

/// An Update's request.
#[derive(Clone, Copy, Debug)]
pub struct UpdateShape {
    /// The request has `update_mask`.
    pub has_mask: bool,
    /// `update_mask` is REQUIRED: an absent or empty mask is refused.
    pub mask_required: bool,
    /// The resource has an `etag` (AIP-154), checked when the body sets it.
    pub etag: bool,
}

/// A Delete's request and answer (an Undelete's too: it answers the
/// resource, and may take an etag).
#[derive(Clone, Copy, Debug)]
pub struct DeleteShape {
    /// It answers the deleted resource (AIP-135 allows it) rather than
    /// `google.protobuf.Empty`.
    pub returns_resource: bool,
    /// The request has an `etag` (optional, AIP-154).
    pub etag: bool,
    /// The resource soft-deletes (AIP-164): a Delete sets `delete_time`.
    pub soft: bool,
}

impl Method {
    /// The list's shape (`items`, `total_count`, `skip` and `order_by` when the method is no list).
    pub fn list_shape(&self) -> ListShape {
        match &self.shape {
            Shape::List(shape) => shape.clone(),
            _ => ListShape {
                items: "items".to_owned(),
                total: Total::Count,
                total_type: ("i32", false),
                skip: true,
                order_by: true,
                filter: false,
                more: false,
                show_deleted: false,
            },
        }
    }

    /// The Update's shape (a mask, optional, when the method is no update).
    pub fn update_shape(&self) -> UpdateShape {
        match &self.shape {
            Shape::Update(shape) => *shape,
            _ => UpdateShape {
                has_mask: true,
                mask_required: false,
                etag: true,
            },
        }
    }

    /// Whether an Update or Delete takes an etag (`If-Match` over REST):
    /// its resource has one, or its request (AIP-154).
    pub fn takes_etag(&self) -> bool {
        match &self.shape {
            Shape::Update(shape) => shape.etag,
            Shape::Delete(shape) => shape.etag,
            _ => true,
        }
    }

    /// The Delete's shape (`Empty` and an etag when the method is no delete).
    pub fn delete_shape(&self) -> DeleteShape {
        match &self.shape {
            Shape::Delete(shape) => *shape,
            _ => DeleteShape {
                returns_resource: false,
                etag: true,
                soft: false,
            },
        }
    }
}
