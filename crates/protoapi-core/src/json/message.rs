//! The trait generated messages implement for canonical JSON.

use prost_reflect::ReflectMessage;
use serde_json::{Map, Value};

use super::field::Field;

/// A JSON object, as generated decoders read it.
pub type JsonObject = Map<String, Value>;

/// Canonical JSON of a generated message, without reflection.
pub trait JsonMessage: ReflectMessage + Default {
    /// Writes the message as canonical JSON (an object).
    fn serialize_json<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error>;

    /// Decodes `object` when every field in it is spelled and shaped as
    /// canonical JSON spells it; `None` leaves the decision to the
    /// [`reflective`](super::reflective) decoder (which accepts more and explains errors).
    fn from_json_object(object: &JsonObject) -> Option<Self>;

    /// The field `name` names, in its JSON (`pageSize`) or proto
    /// (`page_size`) spelling: how REST requests bind path variables and
    /// query parameters without looking the message up by reflection.
    fn json_field(name: &str) -> Option<Field>;
}

/// Something done with each message type of an API, through the generated
/// `visit_messages`.
pub trait MessageVisitor {
    fn visit<M: JsonMessage + PartialEq + std::fmt::Debug>(&mut self);
}

/// `google.protobuf.Empty`, which prost represents as `()`.
impl JsonMessage for () {
    fn serialize_json<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(std::iter::empty::<((), ())>())
    }

    fn from_json_object(object: &JsonObject) -> Option<Self> {
        object.is_empty().then_some(())
    }

    fn json_field(_: &str) -> Option<Field> {
        None
    }
}
