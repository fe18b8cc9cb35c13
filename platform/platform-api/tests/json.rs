//! The generated JSON codec of every Platform API message reads and writes
//! what the reflective codec does (`protoapi_runtime::json::conformance`).

#[test]
fn every_message_reads_and_writes_what_reflection_does() {
    protoapi_runtime::json::conformance::check_api(
        &platform_api::DESCRIPTOR_POOL,
        platform_api::visit_messages,
        32,
    );
}
