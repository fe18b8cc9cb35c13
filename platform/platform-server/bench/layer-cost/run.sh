#!/usr/bin/env bash
# What a pass-through middleware layer costs: `GET /` of a hello-world with
# no layer, with LAYERS axum `from_fn` layers and with a chain of LAYERS
# links (src/main.rs), under `wrk -t1 -c32 -d5s`, ROUNDS rounds alternating.
# Honours CARGO_TARGET_DIR.
#
#   platform/platform-server/bench/layer-cost/run.sh [LAYERS] [ROUNDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
layers=${1:-10}
rounds=${2:-3}
command -v wrk >/dev/null || bash "$here/../apt-ensure.sh" wrk
target=$(realpath -m "${CARGO_TARGET_DIR:-$here/../../../../target}")/layer-cost
cp "$here/../../../../Cargo.lock" "$here/Cargo.lock"
trap 'rm -f "$here/Cargo.lock"' EXIT
cargo build -q --release --offline --manifest-path "$here/Cargo.toml" --target-dir "$target"
for round in $(seq "$rounds"); do
  for variant in "0 from-fn" "$layers from-fn" "$layers chain"; do
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    # shellcheck disable=SC2086 # LAYERS and the kind
    "$target/release/layer-cost" ${variant% *} "$port" ${variant#* } &
    server=$!
    sleep 0.5
    rate=$(wrk -t1 -c32 -d5s "http://127.0.0.1:$port/" | awk '/Requests\/sec/ {print $2}')
    kill "$server" && wait "$server" 2>/dev/null || true
    echo "round $round, $variant: $rate req/s"
  done
done
