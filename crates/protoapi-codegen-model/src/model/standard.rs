//! Which standard method (AIP-131..135) each RPC implements, from its name and shape.

use prost_reflect::MethodDescriptor;

/// Which standard method (AIP-131..135) an RPC implements, on which resource.
#[derive(Clone, Debug)]
pub enum Standard {
    Create {
        resource: String,
        body_field: String,
        /// Whether `parent` is REQUIRED (only root-level items may omit it).
        parent_required: bool,
    },
    Get {
        resource: String,
    },
    List {
        resource: String,
        /// The filters the request has fields for (`children_of`, `ids`,
        /// `name`, `id`, ...).
        filters: Vec<String>,
        paging: Paging,
    },
    Update {
        resource: String,
        /// The request field holding the resource; empty when the request
        /// is the resource itself (a full replacement, `body: "*"`).
        body_field: String,
    },
    Delete {
        resource: String,
    },
    /// `BatchGet<Plural>` (AIP-231), shaped as `model::shapes` checks.
    BatchGet {
        resource: String,
        /// The request's repeated field of keys (`uids` or `names`).
        keys_field: String,
        /// The response's repeated field of resources (plural or `items`).
        items_field: String,
        /// The request has a `parent` all items must be directly under.
        has_parent: bool,
    },
    /// `Undelete<X>` (AIP-164) of a resource with soft deletes, keyed by
    /// `name` or `uid`, answering the resource.
    Undelete {
        resource: String,
    },
    /// A method of `google.longrunning.Operations`, served for an API whose
    /// standard methods run as operations (AIP-151), over its store.
    Operations,
    /// A method of `google.iam.v1.IAMPolicy` declared in a service, answered
    /// from the API's role bindings (`model::policies`).
    Policy(PolicyVerb),
    /// Any other method: implemented by hand through a generated handler trait.
    Custom,
}

/// Which `google.iam.v1.IAMPolicy` method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyVerb {
    Get,
    Set,
    Test,
}

impl PolicyVerb {
    /// The verb of a method taking and answering `google.iam.v1`'s messages
    /// for it, whatever its name.
    pub(super) fn of(method: &MethodDescriptor) -> Option<PolicyVerb> {
        let shape = (
            method.input().full_name().to_owned(),
            method.output().full_name().to_owned(),
        );
        [
            (PolicyVerb::Get, "GetIamPolicyRequest", "Policy"),
            (PolicyVerb::Set, "SetIamPolicyRequest", "Policy"),
            (
                PolicyVerb::Test,
                "TestIamPermissionsRequest",
                "TestIamPermissionsResponse",
            ),
        ]
        .into_iter()
        .find(|(_, input, output)| {
            shape.0 == format!("google.iam.v1.{input}")
                && shape.1 == format!("google.iam.v1.{output}")
        })
        .map(|(verb, _, _)| verb)
    }
}

/// How a list request pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paging {
    /// `page_size`, `page_token`, `skip`, `order_by` (AIP-158).
    Token,
    /// `offset` and `limit` over the whole result set (legacy versions).
    Offset,
}

/// Filters a list request may carry, with the request field each is read from.
pub const LIST_FILTERS: &[(&str, &str)] = &[
    ("children_of", "uidp.children_of"),
    ("descendants_of", "uidp.descendants_of"),
    ("ancestors_of", "uidp.ancestors_of"),
    ("in_root", "uidp.in_root"),
    ("ids", "uidp.ids"),
    ("name", "name"),
    ("id", "id"),
];

impl Standard {
    /// The resource message's full proto name (`None` for custom methods).
    pub fn resource(&self) -> Option<&str> {
        Some(match self {
            Standard::Create { resource, .. }
            | Standard::Get { resource }
            | Standard::List { resource, .. }
            | Standard::Update { resource, .. }
            | Standard::Delete { resource }
            | Standard::Undelete { resource }
            | Standard::BatchGet { resource, .. } => resource,
            Standard::Operations | Standard::Policy(_) | Standard::Custom => return None,
        })
    }
}
