#!/usr/bin/env bash
# Walks corpus APIs end to end, as published in google-proto-files: each is
# generated from its own protos into the server of .ci/corpus-walk (with the
# hand-written custom methods of src/<api>.rs), served on SQLite and, when
# E2E_DATABASE_URL names a PostgreSQL server, on PostgreSQL, and walked over
# REST and over gRPC by a client that knows only the reflection service
# (.ci/corpus-walk/walk.py).
#
# Usage: .ci/corpus-walk.sh [API ...] (default: every API walk.py knows).
# Environment: CARGO_TARGET_DIR (builds under its `corpus-walk/`),
# PROTOAPI_CORPUS_CACHE (as .ci/corpus.sh), E2E_DATABASE_URL.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")
tree=$(bash "$root/.ci/corpus-fetch.sh")
apis=("$@")
[ ${#apis[@]} -gt 0 ] || apis=(library scheduler essentialcontacts recommender certificatemanager apphub)
declare -A paths=(
  [library]=google/example/library/v1
  [scheduler]=google/cloud/scheduler/v1
  [essentialcontacts]=google/cloud/essentialcontacts/v1
  [recommender]=google/cloud/recommender/v1
  [certificatemanager]=google/cloud/certificatemanager/v1
  [apphub]=google/cloud/apphub/v1
)

work=$(mktemp -d)
pids=()
databases=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for database in "${databases[@]}"; do
    psql -q "$E2E_DATABASE_URL" -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

for api in "${apis[@]}"; do
  path=${paths[$api]}
  crate="$work/$api"
  mkdir -p "$crate/proto/$(dirname "$path")" "$crate/imports/google"
  cp -r "$root/.ci/corpus-walk/src" "$root/.ci/corpus-walk/build.rs" "$crate/"
  sed "s|@ROOT@|$root|g" "$root/.ci/corpus-walk/Cargo.toml.in" > "$crate/Cargo.toml"
  cp "$root/Cargo.lock" "$crate/"
  ln -s "$tree/$path" "$crate/proto/$path"
  for entry in "$tree"/google/*; do
    [ "$(basename "$entry")" = protobuf ] || ln -s "$entry" "$crate/imports/google/"
  done
  echo "corpus-walk: building $path"
  (cd "$crate" && WALK_PROTO="$crate/proto" WALK_IMPORTS="$crate/imports" \
    CARGO_TARGET_DIR="$target/corpus-walk" cargo build -q --offline --features "$api")
  server="$target/corpus-walk/debug/corpus-walk"
  urls=("sqlite://$work/$api.db?mode=rwc")
  if [ -n "${E2E_DATABASE_URL:-}" ]; then
    # A database of the walk's own on the server, dropped at the end.
    database="corpus_walk_${api}_$$"
    psql -q "$E2E_DATABASE_URL" -c "CREATE DATABASE $database"
    databases+=("$database")
    urls+=("${E2E_DATABASE_URL%/*}/$database")
  fi
  for url in "${urls[@]}"; do
    "$server" "$url" > "$work/$api.address" &
    pids+=($!)
    # Up to a minute: a loaded machine may take a while to migrate a new
    # PostgreSQL database.
    for _ in $(seq 600); do
      [ -s "$work/$api.address" ] && break
      kill -0 "${pids[-1]}" 2>/dev/null || { echo "corpus-walk: the $api server exited on ${url%%:*}" >&2; exit 1; }
      sleep 0.1
    done
    base=$(cat "$work/$api.address")
    [ -n "$base" ] || { echo "corpus-walk: the $api server on ${url%%:*} did not start within a minute" >&2; exit 1; }
    echo "corpus-walk: $path on ${url%%:*} at $base"
    python3 "$root/.ci/corpus-walk/walk.py" "$api" "$base"
    kill "${pids[-1]}"
  done
done
echo "corpus-walk: ${#apis[@]} API(s) walked"
