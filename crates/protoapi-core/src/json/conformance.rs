//! The JSON codec's conformance check (feature `testing`): a generated
//! [`JsonMessage`] must read and write exactly what the [`reflective`] codec
//! does, on messages of random values and on variants of their JSON.
//!
//! ```ignore
//! #[test]
//! fn every_message_reads_and_writes_what_reflection_does() {
//!     protoapi_runtime::json::conformance::check_api(&library::DESCRIPTOR_POOL, library::visit_messages, 32);
//! }
//! ```
//!
//! For each random message (every field kind, nested messages, lists, maps,
//! timestamps, masks, non-finite floats, unknown enum numbers, strings with
//! quotes and control characters):
//! - the encoded bytes equal reflection's (map entries compared as a JSON
//!   object, since reflection writes them in hash order);
//! - decoding that JSON takes the generated path and gives the message back;
//! - every variant of it (proto field names, `null`, numbers as strings and
//!   strings as numbers, enum numbers, wrong types, unknown fields, a second
//!   member of a oneof) decodes to
//!   the same message as reflection decodes it, or fails with the same error.

use std::thread::JoinHandle;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use prost_reflect::{
    DescriptorPool, DynamicMessage, FieldDescriptor, Kind, MapKey, MessageDescriptor,
    ReflectMessage, Value,
};
use serde_json::Value as Json;

use super::wire::FieldKind;
use super::{JsonMessage, MessageVisitor, reflective};

/// Checks every message type the generated `visit_messages` of an API
/// visits, each on a thread of its own, and that it visits every message
/// `pool` declares (outside the generator's own packages, `google.protobuf`,
/// `google.api` and `google.rpc`); panics naming the types that fail.
pub fn check_api(pool: &DescriptorPool, visit_messages: fn(&mut Checks), cases: u32) {
    let mut checks = Checks {
        cases,
        running: Vec::new(),
    };
    visit_messages(&mut checks);
    let mut checked = Vec::new();
    let mut failed = Vec::new();
    for (name, handle) in checks.running {
        if handle.join().is_err() {
            failed.push(name.clone());
        }
        checked.push(name);
    }
    assert!(failed.is_empty(), "mismatches (see above): {failed:?}");
    // The generator's own packages are generated only where the API's
    // messages hold theirs: checked when visited, not required.
    const OWN: &[&str] = &[
        "google.protobuf",
        "google.api",
        "google.rpc",
        "google.rpc.context",
    ];
    let unchecked: Vec<String> = pool
        .all_messages()
        .filter(|m| !OWN.contains(&m.package_name()) && !m.is_map_entry())
        .map(|m| m.full_name().to_owned())
        .filter(|name| !checked.contains(name))
        .collect();
    assert!(
        unchecked.is_empty(),
        "declared messages not checked: {unchecked:?}"
    );
}

/// The checks [`check_api`] starts, one per message type.
pub struct Checks {
    cases: u32,
    running: Vec<(String, JoinHandle<()>)>,
}

impl MessageVisitor for Checks {
    fn visit<M: JsonMessage + PartialEq + std::fmt::Debug>(&mut self) {
        let name = M::default().descriptor().full_name().to_owned();
        let cases = self.cases;
        self.running
            .push((name, std::thread::spawn(move || check::<M>(cases))));
    }
}

/// Checks `M` on `cases` random messages (or `PROPTEST_CASES`, for longer
/// runs); panics with the first mismatch (shrunk to a minimal message).
pub fn check<M: JsonMessage + PartialEq + std::fmt::Debug>(cases: u32) {
    let descriptor = M::default().descriptor();
    if let Err(mismatch) = check_fields::<M>(&descriptor) {
        panic!("{}: {mismatch}", descriptor.full_name());
    }
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(cases);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(
        &message(&descriptor, 2).prop_map(Shown),
        |Shown(dynamic)| {
            let message: M = dynamic
                .transcode_to()
                .map_err(|e| TestCaseError::fail(format!("transcoding: {e}")))?;
            check_one(&message).map_err(TestCaseError::fail)
        },
    );
    if let Err(failure) = result {
        panic!("{}: {failure}", descriptor.full_name());
    }
}

/// Checks that [`JsonMessage::json_field`] names every field of the
/// descriptor in both spellings as reflection describes it, and nothing else.
fn check_fields<M: JsonMessage>(descriptor: &MessageDescriptor) -> Result<(), String> {
    for field in descriptor.fields() {
        let message = match field.kind() {
            Kind::Message(message) if !field.is_map() => Some(message),
            _ => None,
        };
        let type_name = message.as_ref().map_or("", MessageDescriptor::full_name);
        let bool_kind =
            matches!(field.kind(), Kind::Bool) || type_name == "google.protobuf.BoolValue";
        for name in [field.json_name(), field.name()] {
            let found = M::json_field(name).ok_or_else(|| format!("`{name}` is not found"))?;
            let kind = match found.kind {
                FieldKind::Map => field.is_map(),
                FieldKind::Bool => bool_kind,
                FieldKind::FieldMask => type_name == "google.protobuf.FieldMask",
                FieldKind::Enum => matches!(field.kind(), Kind::Enum(_)) && !field.is_map(),
                FieldKind::Message(inner) => message.as_ref().is_some_and(|message| {
                    !type_name.starts_with("google.protobuf.")
                        && message
                            .fields()
                            .all(|f| inner(f.name()).is_some_and(|i| i.json_name == f.json_name()))
                }),
                FieldKind::Text => {
                    !field.is_map()
                        && !matches!(field.kind(), Kind::Enum(_))
                        && !bool_kind
                        && (message.is_none()
                            || type_name.starts_with("google.protobuf.")
                                && type_name != "google.protobuf.FieldMask")
                }
            };
            if !kind || found.json_name != field.json_name() || found.repeated != field.is_list() {
                return Err(format!("`{name}` is described as {found:?}"));
            }
        }
    }
    match M::json_field("no_such_field") {
        Some(found) => Err(format!("an unknown name is found: {found:?}")),
        None => Ok(()),
    }
}

/// A message shown as its JSON in failure reports (the `Debug` of a
/// `DynamicMessage` prints its descriptors, endlessly for recursive types).
#[derive(Clone)]
struct Shown(DynamicMessage);

impl std::fmt::Debug for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(&reflective::to_vec(&self.0)))
    }
}

fn check_one<M: JsonMessage + PartialEq + std::fmt::Debug>(message: &M) -> Result<(), String> {
    let ours = super::to_vec(message);
    let reference = reflective::to_vec(message);
    let parsed: Json = serde_json::from_slice(&ours).map_err(|e| e.to_string())?;
    if has_map(&message.descriptor()) {
        let expected: Json = serde_json::from_slice(&reference).map_err(|e| e.to_string())?;
        if parsed != expected {
            return Err(format!("wrote {parsed}, reflection wrote {expected}"));
        }
    } else if ours != reference {
        return Err(format!(
            "wrote {}, reflection wrote {}",
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&reference)
        ));
    }
    let Json::Object(object) = &parsed else {
        return Err(format!("wrote {parsed}, not an object"));
    };
    let decoded = M::from_json_object(object)
        .ok_or_else(|| format!("the generated decoder refused its own output {parsed}"))?;
    same_message(&decoded, message).map_err(|e| format!("{parsed} read back differently: {e}"))?;
    for variant in variants(&message.descriptor(), &parsed) {
        let fast = super::from_value::<M>(variant.clone());
        let slow = reflective::from_value::<M>(variant.clone());
        match (fast, slow) {
            (Ok(fast), Ok(slow)) => same_message(&fast, &slow)
                .map_err(|e| format!("{variant} decoded differently: {e}"))?,
            (Err(fast), Err(slow)) if format!("{fast:?}") == format!("{slow:?}") => {}
            (fast, slow) => {
                return Err(format!(
                    "{variant}: decoded to {fast:?}, reflection to {slow:?}"
                ));
            }
        }
    }
    Ok(())
}

/// Two messages are the same when reflection writes the same JSON for them
/// (so `NaN` equals `NaN`, and map order does not count).
fn same_message<M: JsonMessage>(a: &M, b: &M) -> Result<(), String> {
    let a: Json = serde_json::from_slice(&reflective::to_vec(a)).map_err(|e| e.to_string())?;
    let b: Json = serde_json::from_slice(&reflective::to_vec(b)).map_err(|e| e.to_string())?;
    if a == b {
        Ok(())
    } else {
        Err(format!("{a} != {b}"))
    }
}

fn has_map(descriptor: &MessageDescriptor) -> bool {
    fn visit(descriptor: &MessageDescriptor, seen: &mut Vec<String>) -> bool {
        if seen.iter().any(|name| name == descriptor.full_name()) {
            return false;
        }
        seen.push(descriptor.full_name().to_owned());
        descriptor.fields().any(|field| {
            field.is_map() || matches!(field.kind(), Kind::Message(inner) if visit(&inner, seen))
        })
    }
    visit(descriptor, &mut Vec::new())
}

/// The JSON of a message changed in one place each: the ways clients write
/// it besides the canonical one, and ways to get it wrong.
fn variants(descriptor: &MessageDescriptor, canonical: &Json) -> Vec<Json> {
    let Json::Object(object) = canonical else {
        return Vec::new();
    };
    let mut out = vec![with(object, "noSuchField", Json::Bool(true))];
    for (key, value) in object {
        let Some(field) = descriptor.get_field_by_json_name(key) else {
            continue;
        };
        let mut renamed = object.clone();
        let moved = renamed.remove(key).unwrap_or(Json::Null);
        renamed.insert(field.name().to_owned(), moved);
        out.push(Json::Object(renamed));
        // A second member of the same oneof, given the same value.
        if let Some(oneof) = field.containing_oneof().filter(|o| !o.is_synthetic()) {
            for sibling in oneof.fields().filter(|f| f.number() != field.number()) {
                out.push(with(object, sibling.json_name(), value.clone()));
            }
        }
        for replacement in replacements(&field, value) {
            out.push(with(object, key, replacement));
        }
        if let (Kind::Message(inner), Json::Object(_)) = (field.kind(), value)
            && !field.is_map()
        {
            for nested in variants(&inner, value) {
                out.push(with(object, key, nested));
            }
        }
    }
    out
}

fn with(object: &serde_json::Map<String, Json>, key: &str, value: Json) -> Json {
    let mut changed = object.clone();
    changed.insert(key.to_owned(), value);
    Json::Object(changed)
}

/// Other JSON for one field's value.
fn replacements(field: &FieldDescriptor, value: &Json) -> Vec<Json> {
    let mut out = vec![
        Json::Null,
        Json::Bool(false),
        Json::String("x".into()),
        Json::Array(vec![value.clone()]),
        Json::Object(serde_json::Map::new()),
        serde_json::json!(1.5),
        serde_json::json!(-1),
    ];
    match value {
        Json::String(text) => {
            if let Ok(number) = text.parse::<i64>() {
                out.push(number.into());
            }
            if let Ok(number) = text.parse::<u64>() {
                out.push(number.into());
            }
        }
        Json::Number(number) => out.push(Json::String(number.to_string())),
        Json::Array(items) if !items.is_empty() => out.push(Json::Array(vec![Json::Null])),
        _ => {}
    }
    if let Kind::Enum(enumeration) = field.kind() {
        out.extend(enumeration.values().map(|value| Json::from(value.number())));
    }
    out
}

/// Random messages of `descriptor`, nesting messages `depth` levels deep.
pub fn message(descriptor: &MessageDescriptor, depth: u32) -> BoxedStrategy<DynamicMessage> {
    let descriptor = descriptor.clone();
    let fields: Vec<_> = descriptor
        .fields()
        .map(|field| field_value(&field, depth).prop_map(move |value| (field.clone(), value)))
        .collect();
    fields
        .prop_map(move |values| {
            let mut message = DynamicMessage::new(descriptor.clone());
            for (field, value) in values {
                if let Some(value) = value {
                    message.set_field(&field, value);
                }
            }
            message
        })
        .boxed()
}

/// A field's value, or `None` to leave it unset.
fn field_value(field: &FieldDescriptor, depth: u32) -> BoxedStrategy<Option<Value>> {
    if field.is_map() {
        let Kind::Message(entry) = field.kind() else {
            unreachable!("a map field's kind is its entry message");
        };
        let key = map_key(&entry.map_entry_key_field().kind());
        let Some(value) = value(&entry.map_entry_value_field().kind(), depth) else {
            return Just(None).boxed();
        };
        return proptest::collection::hash_map(key, value, 0..4)
            .prop_map(|map| Some(Value::Map(map)))
            .boxed();
    }
    let Some(single) = value(&field.kind(), depth) else {
        return Just(None).boxed();
    };
    if field.is_list() {
        proptest::collection::vec(single, 0..4)
            .prop_map(|items| Some(Value::List(items)))
            .boxed()
    } else if field.supports_presence() {
        proptest::option::of(single).boxed()
    } else {
        single.prop_map(Some).boxed()
    }
}

/// Random values of one kind; `None` for messages below the depth limit.
fn value(kind: &Kind, depth: u32) -> Option<BoxedStrategy<Value>> {
    Some(match kind {
        Kind::Double => any::<f64>().prop_map(Value::F64).boxed(),
        Kind::Float => any::<f32>().prop_map(Value::F32).boxed(),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => any::<i32>().prop_map(Value::I32).boxed(),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => any::<i64>().prop_map(Value::I64).boxed(),
        Kind::Uint32 | Kind::Fixed32 => any::<u32>().prop_map(Value::U32).boxed(),
        Kind::Uint64 | Kind::Fixed64 => any::<u64>().prop_map(Value::U64).boxed(),
        Kind::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Kind::String => text().prop_map(Value::String).boxed(),
        Kind::Bytes => proptest::collection::vec(any::<u8>(), 0..12)
            .prop_map(|bytes| Value::Bytes(bytes.into()))
            .boxed(),
        Kind::Enum(enumeration) => {
            let declared: Vec<i32> = enumeration.values().map(|v| v.number()).collect();
            prop_oneof![4 => proptest::sample::select(declared), 1 => any::<i32>()]
                .prop_map(Value::EnumNumber)
                .boxed()
        }
        Kind::Message(inner) => match inner.full_name() {
            "google.protobuf.Timestamp" => timestamp()
                .prop_map(|t| Value::Message(t.transcode_to_dynamic()))
                .boxed(),
            "google.protobuf.FieldMask" => field_mask()
                .prop_map(|m| Value::Message(m.transcode_to_dynamic()))
                .boxed(),
            "google.protobuf.Duration" => duration()
                .prop_map(|d| Value::Message(d.transcode_to_dynamic()))
                .boxed(),
            // Their JSON needs what random fields do not give: a registered
            // type (`Any`), finite numbers (`Value`): left unset.
            "google.protobuf.Any"
            | "google.protobuf.Struct"
            | "google.protobuf.Value"
            | "google.protobuf.ListValue" => return None,
            _ if depth == 0 => return None,
            _ => message(inner, depth - 1).prop_map(Value::Message).boxed(),
        },
    })
}

fn map_key(kind: &Kind) -> BoxedStrategy<MapKey> {
    match kind {
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => any::<i32>().prop_map(MapKey::I32).boxed(),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => any::<i64>().prop_map(MapKey::I64).boxed(),
        Kind::Uint32 | Kind::Fixed32 => any::<u32>().prop_map(MapKey::U32).boxed(),
        Kind::Uint64 | Kind::Fixed64 => any::<u64>().prop_map(MapKey::U64).boxed(),
        Kind::Bool => any::<bool>().prop_map(MapKey::Bool).boxed(),
        _ => text().prop_map(MapKey::String).boxed(),
    }
}

/// Short text: plain, with JSON's escapes, or any Unicode.
fn text() -> BoxedStrategy<String> {
    prop_oneof![
        "[a-z0-9]{0,8}",
        "[\"\\\\/\u{0}-\u{1f}\u{7f}a\u{e9}\u{2028}\u{1f600}]{0,8}",
        any::<String>(),
    ]
    .boxed()
}

/// Timestamps across JSON's range, with 0, 3, 6 or 9 fractional digits.
fn timestamp() -> impl Strategy<Value = prost_types::Timestamp> {
    let nanos = prop_oneof![
        Just(0),
        (0..1_000i32).prop_map(|n| n * 1_000_000),
        (0..1_000_000i32).prop_map(|n| n * 1_000),
        0..1_000_000_000i32,
    ];
    (-62_135_596_800i64..=253_402_300_799, nanos)
        .prop_map(|(seconds, nanos)| prost_types::Timestamp { seconds, nanos })
}

/// Durations across JSON's range (±10,000 years), seconds and nanos of one
/// sign.
fn duration() -> impl Strategy<Value = prost_types::Duration> {
    (-315_576_000_000i64..=315_576_000_000, 0..1_000_000_000i32).prop_map(|(seconds, nanos)| {
        let nanos = if seconds < 0 { -nanos } else { nanos };
        prost_types::Duration { seconds, nanos }
    })
}

/// Masks of snake_case paths that read back from lowerCamelCase.
fn field_mask() -> impl Strategy<Value = prost_types::FieldMask> {
    proptest::collection::vec(
        "[a-z][a-z0-9]{0,4}(_[a-z][a-z0-9]{0,3}){0,2}(\\.[a-z]{1,4}){0,1}",
        0..3,
    )
    .prop_map(|paths| prost_types::FieldMask { paths })
}
