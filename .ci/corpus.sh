#!/usr/bin/env bash
# Real APIs nobody here wrote, as published: every API version under
# `google/` in the npm package google-proto-files (pinned, integrity-checked,
# cached) that declares HTTP rules, generated on its own (its directory as
# the API, the rest of the tree as an import root). Prints how many generate
# cleanly, with warnings, with errors (by kind) or panic, and writes one line
# per API to corpus.tsv in the output directory.
#
#   .ci/corpus.sh [PATTERN]    # only APIs whose path contains PATTERN
#
# Environment: CORPUS_JOBS (generators run at once, default one per core),
# CARGO_TARGET_DIR (the generator's build; the compiled sample
# under its `corpus/`), PROTOAPI_CORPUS_CACHE (the package, default
# ~/.cache/protoapi-corpus), CORPUS_OUT (the generated crates and logs,
# default a temporary directory, removed unless set), CORPUS_CHECK (API
# paths, space-separated, whose generated crates are then compiled with
# warnings denied and whose OpenAPI documents are validated with the PyPI
# package openapi-spec-validator; each must have generated without an error;
# `all` for every API that did: about half an hour on two cores, 13 minutes of
# it the check once the dependencies are built),
# CORPUS_RATCHET (a file holding the least number of APIs that must generate
# without an error, warnings allowed: fewer fails, as does any panic; more
# asks to raise it).
#
# CI runs the whole corpus with the sample of .ci/corpus-sample and the
# ratchet .ci/corpus-ratchet.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")
pattern=${1:-}
tree=$(bash "$root/.ci/corpus-fetch.sh")
version=$(basename "$tree" | sed 's/^google-proto-files-//')

cargo build -q -p protoapi-codegen --manifest-path "$root/Cargo.toml"
codegen="$target/debug/protoapi-codegen"

if [ -n "${CORPUS_OUT:-}" ]; then
  out=$(realpath -m "$CORPUS_OUT") && mkdir -p "$out"
else
  out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
fi
# The import root: the whole tree but google/protobuf, whose descriptor.proto
# the loader does not parse (the generator bundles the well-known types).
imports="$out/imports"
rm -rf "$imports" && mkdir -p "$imports/google"
for entry in "$tree"/*; do
  [ "$(basename "$entry")" = google ] || ln -s "$entry" "$imports/"
done
for entry in "$tree"/google/*; do
  [ "$(basename "$entry")" = protobuf ] || ln -s "$entry" "$imports/google/"
done

# An API version: a directory under google/ with a file declaring an HTTP rule
# (an option line, not a mention in a comment, as in google/api/http.proto).
mapfile -t apis < <(cd "$tree" && grep -rlE --include='*.proto' '^\s*option \(google\.api\.http\)' google |
  xargs -n1 dirname | sort -u | grep -F -- "$pattern" || true)
echo "corpus: google-proto-files $version, ${#apis[@]} API versions${pattern:+ matching $pattern}"

# Generates the API `$1` in a directory of its own; its exit code in `outcome`.
generate() {
  local api=$1 work="$out/apis/${1//\//.}"
  rm -rf "$work" && mkdir -p "$work/proto/$(dirname "$api")"
  ln -s "$tree/$api" "$work/proto/$api"
  "$codegen" generate --proto "$work/proto" -I "$imports" --out "$work/src" --title "$api" \
    > "$work/log" 2>&1
  echo -e "$api\t$?" > "$work/outcome"
}
export -f generate
export codegen out tree imports

# One generator per core (CORPUS_JOBS to choose), then the outcomes in order.
started=$(date +%s)
printf '%s\n' "${apis[@]}" | xargs -r -P "${CORPUS_JOBS:-$(nproc)}" -I{} bash -c 'generate "$1"' _ {}
for api in "${apis[@]}"; do cat "$out/apis/${api//\//.}/outcome"; done > "$out/corpus.tsv"
elapsed=$(($(date +%s) - started))

# The package name of the generated crate of `$1`: `corpus-google-example-library-v1`.
package() {
  local name=${1//\//-}
  echo "corpus-${name//./-}"
}
# Compiles the generated crates of the APIs named as arguments as users'
# crates would be built, warnings denied, in one cargo workspace (the
# dependencies build once, the crates side by side), and prints whether each
# compiles. Fails when one does not, or did not generate.
check() {
  local workspace="$out/apis" members="" failed=0 api crate name
  for api in "$@"; do
    crate="$workspace/${api//\//.}"
    if [ ! -d "$crate/src" ]; then
      echo "corpus: $api did not generate; see $crate/log" >&2
      failed=1
      continue
    fi
    name=$(package "$api")
    cat > "$crate/Cargo.toml" <<TOML
[package]
name = "$name"
version = "0.1.0"
edition = "2024"
publish = false

[lints.rust]
warnings = "deny"

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
TOML
    members+="\"$(basename "$crate")\", "
  done
  [ -n "$members" ] || return "$failed"
  printf '[workspace]\nresolver = "3"\nmembers = [%s]\n' "$members" > "$workspace/Cargo.toml"
  cp "$root/Cargo.lock" "$workspace/Cargo.lock"
  local log="$workspace/check.log" compiled=0 refused=0
  if ! (cd "$workspace" && CARGO_TARGET_DIR="$target/corpus" cargo check -q --offline --workspace \
    --all-features --lib --keep-going --message-format short) > "$log" 2>&1; then
    failed=1
  fi
  if grep "could not compile" "$log" | grep -v "could not compile \`corpus-"; then
    echo "corpus: a dependency does not compile, so the generated crates were not checked" >&2
    return 1
  fi
  for api in "$@"; do
    crate="$workspace/${api//\//.}"
    [ -d "$crate/src" ] || continue
    if grep -q "could not compile \`$(package "$api")\`" "$log"; then
      echo "corpus: $api does not compile"
      grep "^${crate#"$workspace/"}/.*error" "$log" | head -5 || true
      refused=$((refused + 1))
    else
      echo "corpus: $api compiles"
      compiled=$((compiled + 1))
    fi
  done
  echo "corpus: $compiled crates compile with warnings denied, $refused do not (cargo's output: $log)"
  # cargo failed before compiling any of them (the lock file, the registry).
  [ "$failed" = 0 ] || [ "$refused" != 0 ] || tail -20 "$log" >&2
  return "$failed"
}
# Validates the generated crate's OpenAPI document of `$1` (OpenAPI 3.1, with
# the PyPI package openapi-spec-validator).
validate() {
  python3 - "$out/apis/${1//\//.}/src/openapi.json" <<'PY'
import json, sys
from openapi_spec_validator import validate
validate(json.load(open(sys.argv[1])))
PY
}
# `all`: every API that generated without an error.
if [ "${CORPUS_CHECK:-}" = all ]; then
  CORPUS_CHECK=$(awk -F'\t' '$2 == 0 {print $1}' "$out/corpus.tsv")
fi
failed=0
# shellcheck disable=SC2086 # API paths, space-separated
check ${CORPUS_CHECK:-} || failed=1
for api in ${CORPUS_CHECK:-}; do
  [ -f "$out/apis/${api//\//.}/src/openapi.json" ] || continue
  if validate "$api"; then echo "corpus: $api's OpenAPI document is valid"; else
    echo "corpus: $api's OpenAPI document is not valid"; failed=1; fi
done

set +e
python3 - "$out" "$elapsed" "${CORPUS_RATCHET:-}" <<'PY'
import collections, pathlib, re, sys

out, elapsed, ratchet = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
outcomes = collections.Counter()
kinds = {"error": collections.Counter(), "warning": collections.Counter()}
panics = []
stable = collections.Counter()
for line in (out / "corpus.tsv").read_text().splitlines():
    api, code = line.split("\t")
    log = (out / "apis" / api.replace("/", ".") / "log").read_text(errors="replace")
    if "panicked" in log or code not in ("0", "1"):
        panics.append(api)
        outcomes["panic"] += 1
        continue
    seen = {"error": 0, "warning": 0}
    for level, message in re.findall(
        r"^(error|warning): (?!aborting due to|\d+ warnings? emitted)(.*)$", log, re.M
    ):
        seen[level] += 1
        # The kind: the message without what it names.
        kinds[level][re.sub(r"`[^`]*`", "`…`", message)[:140]] += 1
    services = out / "apis" / api.replace("/", ".") / "src" / "services.rs"
    # An API that generates without a service serves nothing: not a success.
    empty = code == "0" and "services: &[]," in services.read_text()
    outcome = ("error" if code == "1" else "empty" if empty
               else "warning" if seen["warning"] else "clean")
    outcomes[outcome] += 1
    # Stable versions (`…/v1`, not `v1beta2`), which the ratchet's second number counts.
    if re.search(r"/v\d+$", api):
        stable[outcome] += 1
total = sum(outcomes.values())
generated = outcomes["clean"] + outcomes["warning"]
stable_generated = stable["clean"] + stable["warning"]
print(f"\n{total} API versions in {elapsed} s: {generated} generate ({outcomes['clean']} clean, "
      f"{outcomes['warning']} with warnings only), {outcomes['error']} with errors, "
      f"{outcomes['empty']} without a service, {outcomes['panic']} panicked")
print(f"stable versions: {stable_generated} of {sum(stable.values())} generate "
      f"({stable['clean']} clean)")
for api in panics:
    print(f"  panicked: {api}")
for level in ("error", "warning"):
    if kinds[level]:
        print(f"\n| {level}s (count) | kind |\n|---|---|")
        for kind, count in kinds[level].most_common(25):
            print(f"| {count} | {kind} |")
failed = bool(panics)
if ratchet:
    least = int(pathlib.Path(ratchet).read_text().split()[0])
    if generated < least:
        print(f"\ncorpus: {generated} generate, fewer than the {least} of {ratchet}")
        failed = True
    elif generated > least:
        print(f"\ncorpus: {generated} generate, more than the {least} of {ratchet}: raise it")
sys.exit(1 if failed else 0)
PY
summary=$?
set -e
[ "$summary" = 0 ] || failed=1
exit "$failed"
