#!/usr/bin/env bash
# The generator's command line run as an installed tool would be: from a
# directory outside the workspace, on a Google-style API (a `google.example`
# package with `google.type`, `google.api` and `google.rpc` fields, no
# annotation file: crates/protoapi-codegen/tests/fixtures/google_package), with relative
# `--proto` and `--out`. The crate it writes must build, and the generated
# JSON codec of every message (the common types' included) must read and
# write what the reflective codec does. Its own target directory keeps the
# workspace's cache clean: ${CARGO_TARGET_DIR:-target}/outside (shared with
# .ci/outside-workspace.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")
cargo build -q --offline -p protoapi-codegen --manifest-path "$root/Cargo.toml"
codegen="$target/debug/protoapi-codegen"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/library/protos"
(cd "$root/crates/protoapi-codegen/tests/fixtures/google_package" && tar -c --exclude=./expected .) \
  | tar -x -C "$work/library/protos"

cd "$work/library"
"$codegen" generate --proto protos --out src --title "Library API"
"$codegen" check --proto protos --out src --title "Library API"
cat > Cargo.toml <<TOML
[package]
name = "library-api"
version = "0.1.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
prost = "0.14.1"
prost-types = "0.14.1"
prost-reflect = "0.16.2"
protoapi-runtime = { path = "$root/crates/protoapi-runtime" }
tonic = "0.14.2"
tonic-prost = "0.14.2"

[features]
default = ["server", "client"]
server = ["client", "protoapi-runtime/server"]
client = ["protoapi-runtime/client"]
cli = ["client", "protoapi-runtime/cli"]

[dev-dependencies]
protoapi-runtime = { path = "$root/crates/protoapi-runtime", features = ["testing"] }
TOML
mkdir -p tests
cat > tests/json.rs <<'RS'
#[test]
fn every_message_reads_and_writes_what_reflection_does() {
    protoapi_runtime::json::conformance::check_api(
        &library_api::DESCRIPTOR_POOL,
        library_api::visit_messages,
        32,
    );
}
RS
cp "$root/Cargo.lock" Cargo.lock
export CARGO_TARGET_DIR="$target/outside"
# The generated code builds without a warning (only the crate itself is
# held to it: its dependencies keep their build).
cargo rustc --offline --all-features --lib -- -D warnings
cargo test --offline
