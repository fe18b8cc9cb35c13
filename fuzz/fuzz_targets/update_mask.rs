//! An arbitrary `updateMask` query value (and body) goes through REST request
//! assembly and mask planning: errors are fine, panics are not.
#![no_main]

use platform_api::platform::iam::v2::{Group, UpdateGroupRequest};
use libfuzzer_sys::fuzz_target;
use protoapi_runtime::mask::Update;
use protoapi_runtime::rest::RestRequest;

fuzz_target!(|input: (&str, &[u8])| {
    let (mask, body) = input;
    let query = format!("updateMask={}", mask.replace('&', "%26"));
    let request = RestRequest::new::<UpdateGroupRequest>()
        .query(Some(&query))
        .path("uid", "a".repeat(40))
        .body("group", body)
        .decode::<UpdateGroupRequest>();
    if let Ok(request) = request {
        let group = request.group.unwrap_or_default();
        if let Ok(update) = Update::<Group>::plan(request.update_mask.as_ref(), group, "group") {
            let _ = update.apply(&Group::default());
        }
    }
    // Masks given directly (as over gRPC) too.
    let paths = mask.split(',').map(str::to_owned).collect();
    let _ = Update::<Group>::plan(Some(&prost_types::FieldMask { paths }), Group::default(), "group");
});
