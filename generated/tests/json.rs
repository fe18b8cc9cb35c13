//! The generated JSON codec of every Platform API message reads and writes
//! what the reflective codec does (`runtime::json::conformance`).

use std::thread::JoinHandle;

use runtime::json::{JsonMessage, MessageVisitor, conformance};

/// Random messages per type; each also checks dozens of variants of its JSON.
const CASES: u32 = 32;

/// Checks each message type on a thread of its own.
#[derive(Default)]
struct Check(Vec<(String, JoinHandle<()>)>);

impl MessageVisitor for Check {
    fn visit<M: JsonMessage + PartialEq + std::fmt::Debug>(&mut self) {
        let name = M::default().descriptor().full_name().to_owned();
        self.0
            .push((name, std::thread::spawn(|| conformance::check::<M>(CASES))));
    }
}

#[test]
fn every_message_reads_and_writes_what_reflection_does() {
    let mut check = Check::default();
    generated::visit_messages(&mut check);
    let mut checked = Vec::new();
    let mut failed = Vec::new();
    for (name, handle) in check.0 {
        if handle.join().is_err() {
            failed.push(name.clone());
        }
        checked.push(name);
    }
    assert!(failed.is_empty(), "mismatches (see above): {failed:?}");
    let mut declared: Vec<String> = generated::DESCRIPTOR_POOL
        .all_messages()
        .filter(|m| !m.package_name().starts_with("google.") && !m.is_map_entry())
        .map(|m| m.full_name().to_owned())
        .collect();
    declared.sort();
    checked.sort();
    assert_eq!(checked, declared, "every declared message is checked");
}
