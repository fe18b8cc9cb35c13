//! Arbitrary path templates parse or fail with a column inside the input;
//! arbitrary strings are classified as UIDPs without panicking, and every
//! accepted UIDP's children and descendant range behave: a child is valid
//! exactly while the parent is above the deepest level.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &str| {
    match codegen::template::PathTemplate::parse(input) {
        Ok(template) => assert!(template.prefix().len() <= input.len()),
        Err(error) => assert!(error.column <= input.len()),
    }
    if runtime::uidp::is_valid(input) {
        let child = runtime::uidp::new_child(input);
        let room = runtime::uidp::levels(input) < runtime::uidp::DEFAULT_MAX_DEPTH;
        assert_eq!(runtime::uidp::is_valid(&child), room);
        assert!(runtime::uidp::is_valid_within(&child, runtime::uidp::DEFAULT_MAX_DEPTH + 1));
        let (start, end) = runtime::uidp::descendant_range(input);
        assert!(start.as_str() <= child.as_str() && child.as_str() < end.as_str());
        assert_eq!(runtime::uidp::parent(&child), Some(input));
    }
});
