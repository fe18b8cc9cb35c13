#!/usr/bin/env bash
# A/B of two server binaries on the GET and List routes: each round starts
# each binary on a fresh data dir (embedded SQLite, the access log on, as by
# default; its lines to a file), seeds a root group with 100 children, and
# runs `wrk -t2 -c64 -d10s` on GET of one child and on a List page of 50
# children (administrator's token), on the 404 route (`GET /nowhere`, no
# token), and `h2load -t2 -c64 -m1 -D 10s` on gRPC GetGroup of the same child
# (same token). The order alternates between rounds.
#
#   bash platform/platform-server/scripts/ab.sh BIN_A BIN_B [ROUNDS (3)]
#
# Environment: LOG_A, LOG_B (RUST_LOG of each binary, default `info`), to
# compare one binary with and without its access log, say. Prints one line
# per round: req/s of GET, List, 404 and gRPC GetGroup for A, then for B.
set -euo pipefail
cd "$(dirname "$0")/../../.."
[[ $# -ge 2 ]] || { echo "usage: $0 BIN_A BIN_B [ROUNDS]" >&2; exit 2; }
bin_a=$1 bin_b=$2 rounds=${3:-3}
for tool in wrk h2load protoc; do
  command -v $tool >/dev/null ||
    { echo "$0: wrk, h2load and protoc are needed (Debian: wrk nghttp2-client protobuf-compiler)" >&2; exit 2; }
done
seed=platform/platform-server/bench/seed.py

# get_frame UID: a length-prefixed GetGroupRequest (uncompressed), as h2load sends it.
get_frame() {
  protoc --encode=platform.iam.v2.GetGroupRequest -I platform/proto -I crates/protoapi-codegen/proto \
    platform/iam/v2/groups.proto <<<"uid: \"$1\"" |
    python3 -c 'import struct, sys; m = sys.stdin.buffer.read(); sys.stdout.buffer.write(b"\0" + struct.pack(">I", len(m)) + m)'
}

# run BIN LOG: prints "GET-req/s LIST-req/s 404-req/s GRPC-req/s".
run() {
  local bin=$1 level=$2 dir port pid ids root child auth get list missing grpc
  dir=$(mktemp -d)
  port=$((20000 + RANDOM % 20000))
  RUST_LOG=$level NO_COLOR=1 "$bin" --data-dir "$dir" --listen "127.0.0.1:$port" >"$dir/log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  ids=$(python3 "$seed" "http://127.0.0.1:$port" "$dir/admin.token" 100)
  root=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["root"])' <<<"$ids")
  child=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["children"][7])' <<<"$ids")
  auth="Authorization: Bearer $(<"$dir/admin.token")"
  get=$(wrk -t2 -c64 -d10s -H "$auth" "http://127.0.0.1:$port/iam/v2/groups/$child" |
    awk '/Requests\/sec/ { print $2 }')
  list=$(wrk -t2 -c64 -d10s -H "$auth" \
    "http://127.0.0.1:$port/iam/v2/groups?uidp.children_of=$root&pageSize=50" | awk '/Requests\/sec/ { print $2 }')
  missing=$(wrk -t2 -c64 -d10s "http://127.0.0.1:$port/nowhere" | awk '/Requests\/sec/ { print $2 }')
  get_frame "$child" >"$dir/get.bin"
  grpc=$(h2load -t2 -c64 -m1 -D 10 -H 'content-type: application/grpc' -H 'te: trailers' -H "$auth" \
    -d "$dir/get.bin" "http://127.0.0.1:$port/platform.iam.v2.GroupService/GetGroup" |
    awk '/^finished in/ { gsub(",", "", $4); print $4 }')
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
  echo "$get $list $missing $grpc"
}

for ((round = 1; round <= rounds; round++)); do
  if ((round % 2)); then
    a=$(run "$bin_a" "${LOG_A:-info}") b=$(run "$bin_b" "${LOG_B:-info}")
  else
    b=$(run "$bin_b" "${LOG_B:-info}") a=$(run "$bin_a" "${LOG_A:-info}")
  fi
  echo "round $round: A (GET List 404 gRPC) $a  B (GET List 404 gRPC) $b"
done
