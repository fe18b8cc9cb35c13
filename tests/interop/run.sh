#!/usr/bin/env bash
# Interoperability checks with reference tools, outside `cargo test` because
# they need software a Rust toolchain does not bring:
# - the protos compile with protoc (Debian's protobuf-compiler);
# - a Python grpcio client that knows only the reflection service drives the
#   running server (pip install -r tests/interop/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/../.."

echo "== protoc compiles every proto"
mapfile -t protos < <(cd proto && find . -name '*.proto' -not -path './google/*' | sort)
out=$(mktemp -d)
(cd proto && protoc -I . --descriptor_set_out="$out/set.pb" --include_imports "${protos[@]}")
echo "ok: ${#protos[@]} files"

echo "== python grpcio client over reflection"
cargo build -q -p platform-server
data=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
./target/debug/platform-server --data-dir "$data" --listen "127.0.0.1:$port" >"$data/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  grep -q listening "$data/server.log" && break
  sleep 0.1
done
python3 tests/interop/reflection_client.py "127.0.0.1:$port" "$data/admin.token"

echo "== SIGTERM stops the server cleanly"
kill -TERM $server
wait $server
grep -q stopped "$data/server.log"
echo "ok"
