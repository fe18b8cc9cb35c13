//! Compile-time behaviour of `#[derive(Row)]`: passing rows build and
//! behave; every mistake the derive can report is a failing case whose
//! `.stderr` points at the offending field or attribute.
//!
//! After an intended change of messages (or a toolchain bump), re-bless with
//! `TRYBUILD=overwrite cargo test -p macros` and review the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}
