#!/usr/bin/env bash
# Validates and lints the OpenAPI documents of the Platform API (checked in)
# and of every example API (generated here from its protos): each must be a
# valid OpenAPI 3.1 document (the PyPI package openapi-spec-validator) and
# pass Redocly's linter (the npm package @redocly/cli, rules in
# .ci/redocly.yaml) without an error. Run from the repository's root.
set -euo pipefail
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
documents=(platform/platform-api/src/openapi.json)
for proto in examples/*/proto; do
  name=$(basename "$(dirname "$proto")")
  cargo run -q -p protoapi-codegen -- generate --proto "$proto" --out "$out/$name" >/dev/null
  documents+=("$out/$name/openapi.json")
done
python3 - "${documents[@]}" <<'PY'
import json, sys
from openapi_spec_validator import validate
for path in sys.argv[1:]:
    validate(json.load(open(path)))
    print(f"openapi: {path} is a valid OpenAPI 3.1 document")
PY
tools=${PROTOAPI_NPM_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/protoapi-npm-tools}
if [ ! -x "$tools/node_modules/.bin/redocly" ]; then
  mkdir -p "$tools"
  npm install --prefix "$tools" --silent --no-audit --no-fund @redocly/cli@2.12.0 >/dev/null
fi
"$tools/node_modules/.bin/redocly" lint --config .ci/redocly.yaml --format=summary "${documents[@]}"
