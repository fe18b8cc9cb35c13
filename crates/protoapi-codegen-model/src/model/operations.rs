//! What a long-running method's operation holds (AIP-151), as the generated
//! code fills it.

use prost_reflect::{Kind, MessageDescriptor};

use super::proto::rust_path;

/// The `(google.longrunning.operation_info)` of a method served as a
/// long-running standard method.
#[derive(Clone, Debug)]
pub struct LongRunning {
    /// The full proto name of the response (`google.protobuf.Empty` too).
    pub response_type: String,
    /// Its Rust path (`()` for `Empty`).
    pub response: String,
    pub metadata: Option<OperationMetadata>,
}

/// The message an operation's `metadata` holds, and which of its fields the
/// generated code fills.
#[derive(Clone, Debug)]
pub struct OperationMetadata {
    pub type_name: String,
    pub rust_path: String,
    /// Each filled field (its Rust name) with what fills it.
    pub fills: Vec<(String, Progress)>,
    /// Whether it has fields besides those filled.
    pub more: bool,
}

/// What the runtime tells of an operation's progress, for the metadata
/// fields AIP-151's `OperationMetadata` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// `google.protobuf.Timestamp create_time`
    CreateTime,
    /// `google.protobuf.Timestamp end_time`
    EndTime,
    /// `string target`: the key the method acted on.
    Target,
    /// `string verb`: `create`, `update` or `delete`.
    Verb,
}

impl LongRunning {
    pub(super) fn new(response: &MessageDescriptor, metadata: Option<&MessageDescriptor>) -> Self {
        LongRunning {
            response_type: response.full_name().to_owned(),
            response: rust_path(response),
            // A well-known type (`google.protobuf.Empty`) tells nothing.
            metadata: metadata
                .filter(|m| m.package_name() != "google.protobuf")
                .map(OperationMetadata::new),
        }
    }
}

impl OperationMetadata {
    fn new(message: &MessageDescriptor) -> Self {
        let fills: Vec<(String, Progress)> = message
            .fields()
            .filter(|field| !field.is_list() && !field.is_map())
            .filter_map(|field| {
                let timestamp = matches!(field.kind(), Kind::Message(m)
                    if m.full_name() == "google.protobuf.Timestamp");
                let text = matches!(field.kind(), Kind::String);
                let progress = match field.name() {
                    "create_time" if timestamp => Progress::CreateTime,
                    "end_time" if timestamp => Progress::EndTime,
                    "target" if text => Progress::Target,
                    "verb" if text => Progress::Verb,
                    _ => return None,
                };
                Some((super::proto::rust_ident(field.name()), progress))
            })
            .collect();
        OperationMetadata {
            type_name: message.full_name().to_owned(),
            rust_path: rust_path(message),
            more: message.fields().len() > fills.len(),
            fills,
        }
    }
}
