#!/usr/bin/env bash
# Builds the examples kept outside the workspace (examples/bookshelf and
# examples/press, or those named as arguments) as a project outside this
# workspace would: for each, a copy
# in a temporary directory whose path dependencies name the library crates
# (protoapi-codegen, protoapi) by absolute path, with the workspace's Cargo.lock
# (same versions, and --offline: the registry is already fetched). Then its
# tests serve REST and gRPC from the generated code, and clippy and rustfmt
# check it. Their own target directory keeps the workspace's cache clean:
# ${CARGO_TARGET_DIR:-target}/outside (shared by the examples: same versions).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")/outside

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
examples=("$@")
[ $# -gt 0 ] || examples=(bookshelf press)
for example in "${examples[@]}"; do
  crate="$work/$example"
  mkdir -p "$crate"
  (cd "$root/examples/$example" && tar -c --exclude=./target --exclude=./Cargo.lock .) | tar -x -C "$crate"
  sed -i "s#path = \"../../crates/#path = \"$root/crates/#" "$crate/Cargo.toml"
  if grep -q '\.\./\.\.' "$crate/Cargo.toml"; then
    echo "outside-workspace: a relative path is left in Cargo.toml:" >&2
    grep -n '\.\./\.\.' "$crate/Cargo.toml" >&2
    exit 1
  fi
  cp "$root/Cargo.lock" "$crate/Cargo.lock"

  (
    cd "$crate"
    export CARGO_TARGET_DIR="$target"
    cargo fmt --check
    cargo clippy --offline --all-targets -- -D warnings
    cargo test --offline
  )
done
