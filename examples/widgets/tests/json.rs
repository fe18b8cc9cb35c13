//! The JSON codec generated in build.rs for the widgets API reads and writes
//! what reflection does, on every message: bytes, unsigned, float and
//! fixed-width fields, enums in lists, maps with integer keys, a recursive
//! (boxed) message, timestamps in lists, and a oneof (served through
//! reflection inside a generated message).

use runtime::json::{JsonMessage, MessageVisitor, conformance};

struct Check(Vec<String>);

impl MessageVisitor for Check {
    fn visit<M: JsonMessage + PartialEq + std::fmt::Debug>(&mut self) {
        conformance::check::<M>(24);
        self.0.push(M::default().descriptor().full_name().to_owned());
    }
}

#[test]
fn every_message_reads_and_writes_what_reflection_does() {
    let mut check = Check(Vec::new());
    widgets::visit_messages(&mut check);
    assert!(check.0.iter().any(|name| name == "widgets.v1.Specification"));
    assert_eq!(check.0.len(), widgets::DESCRIPTOR_POOL.all_messages().filter(|m| {
        !m.package_name().starts_with("google.") && !m.is_map_entry()
    }).count());
}
