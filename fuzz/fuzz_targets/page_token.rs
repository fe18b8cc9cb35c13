//! Arbitrary page tokens are rejected without panicking, and no token other
//! than one issued for the query opens.
#![no_main]

use libfuzzer_sys::fuzz_target;
use protoapi_runtime::paging::{PageTokens, QueryBinding};
use protoapi_runtime::resource::SortValue;
use protoapi_runtime::store::{Hierarchy, Matching};

fuzz_target!(|input: (&str, &str, i64)| {
    let (token, text, number) = input;
    let tokens = PageTokens::new([1; 32]);
    let binding = QueryBinding::new("t/T", &Hierarchy::All, &Matching::default(), &[], false);
    let _ = tokens.open(token, &binding);

    let after = vec![SortValue::Text(text.to_owned()), SortValue::Int(number)];
    let issued = tokens.issue(&binding, after.clone());
    assert_eq!(tokens.open(&issued, &binding).unwrap(), after);
    if issued != token {
        let other = QueryBinding::new("t/T", &Hierarchy::ChildrenOf(text.to_owned()), &Matching::default(), &[], false);
        assert!(tokens.open(&issued, &other).is_err());
    }
});
