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
#
# With PROTOAPI_PACKAGES naming a directory of the library crates' packages
# (`cargo package --no-verify` writes them to `<target>/package`), the
# examples build on those packages instead of the source tree, as they would
# on crates.io: the packages are unpacked, every library crate resolves to
# its package (`[patch.crates-io]`), and a crate depending on each of them
# with its default features builds first. That is the build `cargo package`
# verifies, done once for all the crates instead of once per crate.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")/outside

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
crates="$root/crates"
patch=""
if [ -n "${PROTOAPI_PACKAGES:-}" ]; then
  crates="$work/packages"
  mkdir -p "$crates"
  for package in "$PROTOAPI_PACKAGES"/protoapi-*.crate; do
    name=$(basename "$package" .crate)
    tar -xzf "$package" -C "$crates"
    mv "$crates/$name" "$crates/${name%-[0-9]*}"
  done
  patch=$'\n[patch.crates-io]\n'
  dependencies=""
  for crate in "$crates"/*; do
    name=$(basename "$crate")
    patch+="$name = { path = \"$crate\" }"$'\n'
    dependencies+="$name = { path = \"$crate\" }"$'\n'
  done
  mkdir -p "$work/packages-build/src"
  touch "$work/packages-build/src/lib.rs"
  cat > "$work/packages-build/Cargo.toml" <<TOML
[package]
name = "packages-build"
version = "0.1.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
$dependencies$patch
TOML
  cp "$root/Cargo.lock" "$work/packages-build/Cargo.lock"
  (cd "$work/packages-build" && CARGO_TARGET_DIR="$target" cargo build --offline)
fi
examples=("$@")
[ $# -gt 0 ] || examples=(bookshelf press)
for example in "${examples[@]}"; do
  crate="$work/$example"
  mkdir -p "$crate"
  (cd "$root/examples/$example" && tar -c --exclude=./target --exclude=./Cargo.lock .) | tar -x -C "$crate"
  sed -i "s#path = \"../../crates/#path = \"$crates/#" "$crate/Cargo.toml"
  printf '%s' "$patch" >> "$crate/Cargo.toml"
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
