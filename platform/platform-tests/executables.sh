#!/usr/bin/env bash
# Prints `name path` for each binary and example cargo builds with the given
# arguments (`-p platform-server --bin platform-server --example load`, and
# `--profile dev` or `--release` as wanted), building them first. Its
# callers (the interop and console checks, the server's load and memory
# scripts) take their executables' paths from it, so CARGO_TARGET_DIR is
# honoured.
#
# With PLATFORM_TEST_BUILD=1 the arguments are ignored: the executables are
# those of the workspace's test build (`cargo test --workspace --no-run`,
# which builds every binary and example with the tests' features). Run after
# the tests, as CI does, that builds nothing: a build of a few packages would
# resolve other features and compile the runtime and everything above it
# again.
set -euo pipefail
case "${PLATFORM_TEST_BUILD:-}" in
  1) command=(cargo test -q --workspace --no-run) ;;
  *) command=(cargo build -q "$@") ;;
esac
"${command[@]}" --message-format=json-render-diagnostics | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    kinds = message.get("target", {}).get("kind", [])
    if (message.get("reason") == "compiler-artifact" and message.get("executable")
            and not message["profile"]["test"] and {"bin", "example"} & set(kinds)):
        print(message["target"]["name"], message["executable"])
'
