//! An arbitrary AIP-160 `filter` checked against groups' filterable fields,
//! and the condition it yields decided on a group: errors are fine, panics
//! are not, and the parse bounds its own depth.
#![no_main]

use libfuzzer_sys::fuzz_target;
use platform_api::platform::iam::v2::Group;
use protoapi_runtime::filter;
use protoapi_runtime::resource::Resource;

fuzz_target!(|input: &str| {
    if let Ok(Some(condition)) = filter::check::<Group>(input) {
        let group = Group {
            name: input.to_owned(),
            ..Group::default()
        };
        let _ = condition.admits(&|field| group.sort_value(field));
        let _ = condition.to_string();
    }
});
