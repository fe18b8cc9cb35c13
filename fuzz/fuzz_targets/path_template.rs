//! Arbitrary path templates parse or fail with a column inside the input;
//! arbitrary strings are classified as UIDPs without panicking, and every
//! accepted UIDP's children and descendant range behave: a child is valid
//! exactly while the parent is above the deepest level.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &str| {
    match protoapi_codegen::template::PathTemplate::parse(input) {
        Ok(template) => assert!(template.prefix().len() <= input.len()),
        Err(error) => assert!(error.column <= input.len()),
    }
    if protoapi_runtime::uidp::is_valid(input) {
        let child = protoapi_runtime::uidp::new_child(input);
        let room = protoapi_runtime::uidp::levels(input) < protoapi_runtime::uidp::DEFAULT_MAX_DEPTH;
        assert_eq!(protoapi_runtime::uidp::is_valid(&child), room);
        assert!(protoapi_runtime::uidp::is_valid_within(&child, protoapi_runtime::uidp::DEFAULT_MAX_DEPTH + 1));
        let (start, end) = protoapi_runtime::uidp::descendant_range(input);
        assert!(start.as_str() <= child.as_str() && child.as_str() < end.as_str());
        assert_eq!(protoapi_runtime::uidp::parent(&child), Some(input));
    }
});
