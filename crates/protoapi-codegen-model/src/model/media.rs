//! What a method's messages are on the wire beyond one JSON object each:
//! server streaming (a stream of responses), and `google.api.HttpBody`
//! (raw bytes of any media type) as the response, the request, or the
//! request field the rule's `body` names.
//!
//! Client-streaming and bidirectional methods are served over gRPC only: no
//! `google.api.http` rule can carry a stream of requests.

use prost_reflect::{DescriptorPool, Kind, MethodDescriptor};

use super::{HttpRule, JsonShape, Message, NamedField};
use crate::diagnostics::{Diagnostic, Diagnostics, Location};

/// The full name of `google.api.HttpBody`.
pub const HTTP_BODY: &str = "google.api.HttpBody";
/// The Rust path prost gives `google.api.HttpBody`.
pub const HTTP_BODY_PATH: &str = "crate::google::api::HttpBody";

/// How a method's request and response travel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Media {
    /// The method answers a stream of responses (`returns (stream …)`).
    pub server_streaming: bool,
    /// The method reads a stream of requests (`(stream …)`): served over
    /// gRPC only, whatever its HTTP rule says.
    pub client_streaming: bool,
    /// The response is a `google.api.HttpBody`: REST answers its data raw.
    pub raw_response: bool,
    /// Where the raw REST request body goes, if the request takes one.
    pub raw_request: Option<RawRequest>,
}

/// Where a raw request body goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawRequest {
    /// The request is a `google.api.HttpBody` (`body: "*"`).
    Whole,
    /// The request's field of this name (the rule's `body`) is one; path and
    /// query fill the other fields.
    Field(String),
}

impl Media {
    /// Whether REST serves the method with the plain JSON handler.
    pub fn is_plain(&self) -> bool {
        *self == Media::default()
    }

    /// The method's media, with a warning for a client- or bidirectional-
    /// streaming method whose HTTP rule is not served.
    pub(super) fn of(
        method: &MethodDescriptor,
        http: Option<&HttpRule>,
        location: &Location,
        diagnostics: &mut Diagnostics,
    ) -> Media {
        let raw_request = match http.and_then(|http| http.body.as_deref()) {
            Some("*") if method.input().full_name() == HTTP_BODY => Some(RawRequest::Whole),
            Some(field) => method
                .input()
                .get_field_by_name(field)
                .filter(|field| !field.is_list())
                .filter(
                    |field| matches!(field.kind(), Kind::Message(m) if m.full_name() == HTTP_BODY),
                )
                .map(|field| RawRequest::Field(field.name().to_owned())),
            None => None,
        };
        if method.is_client_streaming() && http.is_some() {
            let kind = match method.is_server_streaming() {
                true => "bidirectional streaming",
                false => "client streaming",
            };
            diagnostics.push(
                Diagnostic::warning(
                    location.clone(),
                    format!(
                        "`{}` is {kind} (`stream {}`): it is served over gRPC only, since REST \
                         cannot carry a stream of requests; its `google.api.http` rule is not served",
                        method.name(),
                        method.input().name()
                    ),
                )
                .note("streaming methods are in codegen/README.md, \"Streaming and `HttpBody`\""),
            );
        }
        Media {
            server_streaming: method.is_server_streaming(),
            client_streaming: method.is_client_streaming(),
            raw_response: method.output().full_name() == HTTP_BODY,
            raw_request,
        }
    }
}

/// `google.api.HttpBody`, when a file imports it, as a message of the API
/// (its canonical JSON, for fields of that type and gRPC-only transcoding),
/// written with the messages of its own package.
pub(super) fn http_body_message(pool: &DescriptorPool) -> Option<Message> {
    let message = pool.get_message_by_name(HTTP_BODY)?;
    Some(Message {
        full_name: HTTP_BODY.to_owned(),
        package: message.package_name().to_owned(),
        rust_path: HTTP_BODY_PATH.to_owned(),
        json: JsonShape::of(&message),
        named_fields: NamedField::all(&message),
    })
}
