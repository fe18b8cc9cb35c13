#!/usr/bin/env bash
# Interoperability checks with reference tools, outside `cargo test` because
# they need software a Rust toolchain does not bring:
# - the protos compile with protoc (Debian's protobuf-compiler);
# - the generated OpenAPI document validates (openapi-spec-validator) and the
#   served `/openapi.json` matches it;
# - a Python grpcio client that knows only the reflection service drives the
#   running server;
# - schemathesis finds no server error and no response violating the schema;
# - our canonical JSON reads and writes as Python protobuf's json_format does,
#   on random messages of every type.
# Python packages: pip install -r platform/platform-tests/interop/requirements.txt
set -euo pipefail
cd "$(dirname "$0")/../../.."

echo "== protoc compiles every proto"
mapfile -t protos < <(cd platform/proto && find . -name '*.proto' | sort)
out=$(mktemp -d)
# google/api and google/rpc ship with the generator (crates/protoapi-codegen/proto).
(cd platform/proto && protoc -I . -I ../../crates/protoapi-codegen/proto --descriptor_set_out="$out/set.pb" --include_imports "${protos[@]}")
echo "ok: ${#protos[@]} files"

echo "== OpenAPI document validates"
python3 - platform/platform-api/src/openapi.json <<'PY'
import sys
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename
spec, _ = read_from_filename(sys.argv[1])
validate(spec)
print(f"ok: {len(spec['paths'])} paths")
PY

echo "== canonical JSON agrees with Python protobuf's json_format"
corpus=$(mktemp -d)
json_corpus=$(bash platform/platform-tests/executables.sh -p platform-api --example json_corpus \
  | awk '$1 == "json_corpus" { print $2 }')
"$json_corpus" "$corpus" 50
python3 platform/platform-tests/interop/json_crosscheck.py "$corpus"

echo "== python grpcio client over reflection"
server_bin=$(bash platform/platform-tests/executables.sh -p platform-server --bin platform-server \
  | awk '$1 == "platform-server" { print $2 }')
data=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
"$server_bin" --data-dir "$data" --listen "127.0.0.1:$port" >"$data/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  grep -q listening "$data/server.log" && break
  sleep 0.1
done
python3 platform/platform-tests/interop/reflection_client.py "127.0.0.1:$port" "$data/admin.token"

echo "== served /openapi.json is the generated document"
curl -sf "http://127.0.0.1:$port/openapi.json" | cmp - platform/platform-api/src/openapi.json
echo "ok"

echo "== schemathesis: no server errors, no responses outside the schema"
# No example database: every run generates from the seed alone, whatever an
# earlier run left in .hypothesis/ (with one, hypothesis 6.170's shrinker failed
# with an IndexError of its own on the Platform API's document).
schemathesis run "http://127.0.0.1:$port/openapi.json" \
  --header "Authorization: Bearer $(cat "$data/admin.token")" \
  --checks not_a_server_error,response_schema_conformance \
  --phases examples,coverage,fuzzing --max-examples 25 --seed 1 \
  --suppress-health-check filter_too_much --generation-database none

echo "== SIGTERM stops the server cleanly"
kill -TERM $server
wait $server
grep -q stopped "$data/server.log"
echo "ok"
