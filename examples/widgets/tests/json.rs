//! The JSON codec generated in build.rs for the widgets API reads and writes
//! what reflection does, on every message: bytes, unsigned, float and
//! fixed-width fields, enums in lists, maps with integer keys, a recursive
//! (boxed) message, timestamps in lists, and a oneof (served through
//! reflection inside a generated message).

#[test]
fn every_message_reads_and_writes_what_reflection_does() {
    assert!(
        widgets::DESCRIPTOR_POOL
            .get_message_by_name("widgets.v1.Specification")
            .is_some()
    );
    protoapi_runtime::json::conformance::check_api(
        &widgets::DESCRIPTOR_POOL,
        widgets::visit_messages,
        24,
    );
}
