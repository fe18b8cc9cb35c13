//! Protos whose names stress the generator, generated in `build.rs`. That
//! this crate compiles is the test; `tests/` reads and writes some of it.
//!
//! - `hostile.v1`: `Keywords`, fields named with strict and reserved Rust
//!   keywords (`r#type`), including those that cannot be raw (`self_`,
//!   `super_`, `crate_`, `extern_`, and `Self` in `UpperSelf`), repeated,
//!   map, optional, message and oneof fields among them; messages named
//!   like prelude and generated items (`Result`, `Option`, `Error`,
//!   `Client`, `Services`, `String`, `Vec`, `Box`, `ThingServiceClient`);
//!   `Type`, messages nested five deep with keyword names and an enum with
//!   keyword values; the resource `Thing` with keyword-named fields (ordered
//!   by, with value rules, a keyword-named oneof, a message field `box`
//!   whose keyword-named fields update masks name) served over REST and
//!   gRPC in the package whose messages shadow the prelude; the resource
//!   `Ref` (collection `refs`), whose requests carry it in a field named
//!   with a keyword (`ref`) and whose reference field, naming a thing, is
//!   one too (`fn`).
//! - `hostile.v0`: the older version of `refs`, whose id field is a keyword
//!   (`ref`, renamed from `uid`).
//! - `hostile.other`: an enum `Kind` beside the message `hostile.v1.Kind`.
//! - `hostile.type` (`r#type`): a service `Match` with a custom method
//!   `Move` (`r#move`); `hostile.self` (`self_`): an enum `Option` and a
//!   message `Default`.
//! - `hostile.clash`: names two traits bounding one store share, which the
//!   generated calls disambiguate: a custom method `InsertWidget` beside
//!   the storage method `insert_widget`, and `WidgetHealth` of the pattern
//!   of `Widget`, whose storage methods are named alike (`list_widgets`);
//!   and a List whose parent is held in `name`.
//!
//! Names the generator refuses instead (messages or fields differing only
//! by case, messages named like generated items, a package `<p>.api`) are
//! golden diagnostics in `crates/protoapi-codegen/tests/fixtures/`.

include!(concat!(env!("OUT_DIR"), "/generated.rs"));
