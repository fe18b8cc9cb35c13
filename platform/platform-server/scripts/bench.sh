#!/usr/bin/env bash
# REST benchmark of the generated group routes against baselines: one command
# that builds everything (release), seeds the data and measures every figure
# in one run on this machine, then prints the report as markdown tables.
#
#   bash platform/platform-server/scripts/bench.sh [--quick] [--rounds 3]
#       [--duration 10s] [--connections 64] [--memory-requests 1000000] [--groups 1000]
#       [--caller admin|reader]
#
# Setup: the server with the hand-written baseline routes (examples/baseline.rs)
# on a temporary data dir and a free port, a root group holding --groups child
# groups and a `viewer` identity (bench/seed.py), the grpc-gateway peer (bench/gateway/build.sh): an
# in-memory Go gRPC backend of the same groups behind grpc-gateway, and
# grpc-gateway in front of this server's gRPC service.
#
# Measured with `wrk -t2 -c64 -d10s` (REST) and `h2load -t2 -c64 -m1 -D 10s`
# (gRPC), every target once per round, alternating order between rounds, the
# median req/s kept:
#   a. GET one group: generated `GET /iam/v2/groups/{uid}` vs hand-written
#      `GET /baseline/groups/{uid}` (same process, port, store, middleware and
#      token; their answers are checked to be identical first);
#   b. GET a list page of 50 (`uidp.children_of=<root>&pageSize=50`), same pair;
#   c. generated REST vs grpc-gateway + the Go memory backend (no auth), and vs
#      grpc-gateway in front of this server's gRPC port (token forwarded);
#   d. gRPC GetGroup / ListGroups through the generated tonic service (h2load,
#      length-prefixed request files) vs the generated REST routes; GetGroup
#      also with the same calls in flight multiplexed on one connection per
#      load thread (`-c2 -m32`), as a gRPC client's channel sends them;
#   e. memory: the production binary's RSS (VmRSS) once started and seeded,
#      after 10,000 and after --memory-requests GETs (h2load --h1 -n);
#   f. the 404 route (`GET /nowhere`, no token: the JSON error body) against
#      the peer's GET, and against a minimal axum hello-world (`GET /`,
#      bench/layer-cost with no layer) on the same machine.
# The load generators run on the same 2 cores as the servers.
#
# --quick: 1 round of 5 s, memory after 200,000 requests.
# --caller: whose token every request carries. `admin` (default): the
# platform administrator, whom authorization lets through without reading
# grants, so the routes' own cost weighs most. `reader`: an identity bound to
# `viewer` on the root, authorized from its grants (the grants cache and its
# one-row epoch read per request), like most callers.
#
# Exit status: 0 when every measurement ran, whether or not its target was met
# (the report says); non-zero when a build, start, seed or answer check fails.
# Every process it starts is stopped on exit. Honours CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source platform/platform-server/scripts/common.sh
bench_dir=platform/platform-server/bench

usage="usage: $0 [--quick] [--rounds N] [--duration 10s] [--connections 64] [--memory-requests N] [--groups N] [--caller admin|reader]"
rounds=3 duration=10s connections=64 threads=2 memory_requests=1000000 groups=1000 caller=admin
while (($#)); do
  case $1 in
    --quick) rounds=1 duration=5s memory_requests=200000; shift ;;
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --memory-requests) memory_requests=$2; shift 2 ;;
    --groups) groups=$2; shift 2 ;;
    --caller) caller=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
((memory_requests > 10000)) || { echo "--memory-requests must exceed 10000" >&2; exit 2; }
[[ $caller == admin || $caller == reader ]] || { echo "$usage" >&2; exit 2; }

bash "$bench_dir/apt-ensure.sh" wrk nghttp2-client protobuf-compiler jq curl

work_dir=$(mktemp -d)
peer_pids=()
cleanup() {
  local pid
  for pid in ${peer_pids[@]+"${peer_pids[@]}"}; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  cleanup_server "$work_dir"
}
trap cleanup EXIT

# --- build ------------------------------------------------------------------

build release # SERVER_BIN (production), LOAD_BIN
production_bin=$SERVER_BIN
echo "== build baseline example (release)" >&2
baseline_bin=$(cargo build --release -p platform-server --example baseline \
  --message-format=json-render-diagnostics |
  jq -r 'select(.reason == "compiler-artifact" and .target.name == "baseline") | .executable // empty')
[[ -n $baseline_bin ]] || { echo "cargo did not report the baseline executable" >&2; exit 1; }
bash "$bench_dir/gateway/build.sh" "$work_dir/gateway"
echo "== build hello-world (release)" >&2
hello_target=$(realpath -m "${CARGO_TARGET_DIR:-target}")/layer-cost
cp Cargo.lock "$bench_dir/layer-cost/Cargo.lock"
cargo build -q --release --offline --manifest-path "$bench_dir/layer-cost/Cargo.toml" --target-dir "$hello_target"
rm -f "$bench_dir/layer-cost/Cargo.lock"

# --- start and seed -----------------------------------------------------------

# start_peer LOG COMMAND...: starts a Go peer, waits for its `listening
# address=` line; sets PEER_ADDRESS.
start_peer() {
  local log=$1 waited=0
  shift
  "$@" 2>"$log" &
  peer_pids+=($!)
  PEER_ADDRESS=""
  while [[ -z $PEER_ADDRESS ]]; do
    if ! kill -0 "${peer_pids[-1]}" 2>/dev/null || ((waited++ > 100)); then
      echo "$1 did not start:" >&2
      cat "$log" >&2
      return 1
    fi
    sleep 0.1
    PEER_ADDRESS=$(sed -n 's/.*listening address=\([^ ]*\).*/\1/p' "$log")
  done
}

# seed: a root, $groups children and the reader in the running server; sets
# ROOT, CHILDREN, CHILD (one in the middle) and TOKEN (the --caller's).
seed() {
  local seeded
  echo "== seeding $groups groups" >&2
  seeded=$(python3 "$bench_dir/seed.py" "$SERVER_URL" "$SERVER_DATA/admin.token" "$groups")
  ROOT=$(jq -r .root <<<"$seeded")
  mapfile -t CHILDREN < <(jq -r '.children[]' <<<"$seeded")
  CHILD=${CHILDREN[$((groups / 2))]}
  if [[ $caller == admin ]]; then
    TOKEN=$(<"$SERVER_DATA/admin.token")
  else
    TOKEN=$("$production_bin" mint-token --data-dir "$SERVER_DATA" --base-url "$SERVER_URL" \
      --identity "$(jq -r .reader <<<"$seeded")")
  fi
}

# rss PID: resident set size in kB.
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

mkdir -p "$work_dir/bench" "$work_dir/memory"
SERVER_BIN=$baseline_bin
start_server "$work_dir/bench"
seed
auth="Authorization: Bearer $TOKEN"
server=$SERVER_URL

start_peer "$work_dir/backend.log" "$work_dir/gateway/groups-backend" -groups "$groups"
backend_address=$PEER_ADDRESS
backend_root=$(sed -n 's/.* root=\([^ ]*\).*/\1/p' "$work_dir/backend.log")
backend_child=$(sed -n 's/.* child=\([^ ]*\).*/\1/p' "$work_dir/backend.log")
start_peer "$work_dir/gateway-memory.log" "$work_dir/gateway/grpc-gateway" -backend "$backend_address"
gateway_memory="http://$PEER_ADDRESS"
start_peer "$work_dir/gateway-ours.log" "$work_dir/gateway/grpc-gateway" -backend "${server#http://}"
gateway_ours="http://$PEER_ADDRESS"
hello_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$hello_target/release/layer-cost" 0 "$hello_port" 2>"$work_dir/hello.log" &
peer_pids+=($!)
hello="http://127.0.0.1:$hello_port"
for _ in $(seq 50); do curl -sf "$hello/" >/dev/null && break; sleep 0.1; done

# gRPC request messages, length-prefixed (uncompressed) for h2load.
grpc_frame() {
  protoc --encode="platform.iam.v2.$1" -I platform/proto -I crates/protoapi-codegen/proto platform/iam/v2/groups.proto |
    python3 -c 'import struct, sys; m = sys.stdin.buffer.read(); sys.stdout.buffer.write(b"\0" + struct.pack(">I", len(m)) + m)'
}
grpc_frame GetGroupRequest <<<"uid: \"$CHILD\"" >"$work_dir/get.bin"
grpc_frame ListGroupsRequest <<<"uidp { children_of: \"$ROOT\" } page_size: 50" >"$work_dir/list.bin"

list_query="uidp.children_of=$ROOT&pageSize=50"

# --- the targets ---------------------------------------------------------------

declare -A url tool with_token data h2_connections h2_streams
target() { # NAME TOOL URL TOKEN(yes|no) [GRPC REQUEST FILE [STREAMS PER CONNECTION (1)]]
  url[$1]=$3 tool[$1]=$2 with_token[$1]=$4 data[$1]=${5:-}
  # The same calls in flight as wrk's connections: one per connection, or
  # multiplexed on one connection per load thread as a gRPC channel does.
  h2_streams[$1]=${6:-1}
  h2_connections[$1]=$((connections / ${6:-1}))
}
target rest_get wrk "$server/iam/v2/groups/$CHILD" yes
target baseline_get wrk "$server/baseline/groups/$CHILD" yes
target rest_list wrk "$server/iam/v2/groups?$list_query" yes
target baseline_list wrk "$server/baseline/groups?$list_query" yes
target gateway_memory_get wrk "$gateway_memory/iam/v2/groups/$backend_child" no
target gateway_memory_list wrk "$gateway_memory/iam/v2/groups?uidp.children_of=$backend_root&pageSize=50" no
target gateway_ours_get wrk "$gateway_ours/iam/v2/groups/$CHILD" yes
target gateway_ours_list wrk "$gateway_ours/iam/v2/groups?$list_query" yes
target grpc_get h2load "$server/platform.iam.v2.GroupService/GetGroup" yes "$work_dir/get.bin"
target grpc_get_channel h2load "$server/platform.iam.v2.GroupService/GetGroup" yes "$work_dir/get.bin" \
  $((connections > threads ? connections / threads : 1))
target grpc_list h2load "$server/platform.iam.v2.GroupService/ListGroups" yes "$work_dir/list.bin"
target rest_404 wrk "$server/nowhere" no
target hello wrk "$hello/" no
targets=(rest_get baseline_get rest_list baseline_list gateway_memory_get gateway_memory_list
  gateway_ours_get gateway_ours_list grpc_get grpc_get_channel grpc_list rest_404 hello)

# --- answers are checked before anything is measured ------------------------------

declare -A answer_bytes
# get_json TARGET: the body of one answer (fails unless 200), keys sorted, nulls dropped
# (grpc-gateway writes unset messages as null; canonical JSON leaves them out), a page
# token only noted as present (tokens carry the second they were signed in).
# Notes its size in answer_bytes[TARGET].
get_json() {
  local -a headers=()
  local body
  [[ ${with_token[$1]} == yes ]] && headers=(-H "$auth")
  body=$(curl -sSf ${headers[@]+"${headers[@]}"} "${url[$1]}") || { echo "$1: no answer" >&2; return 1; }
  answer_bytes[$1]=${#body}
  jq -S 'del(.. | nulls) | if (.nextPageToken // "") != "" then .nextPageToken = "<a page token>" else . end' <<<"$body"
}
same_answer() { # TARGET TARGET
  get_json "$1" >"$work_dir/answer-1.json"
  get_json "$2" >"$work_dir/answer-2.json"
  if ! diff "$work_dir/answer-1.json" "$work_dir/answer-2.json" >&2; then
    echo "== $1 and $2 answer differently" >&2
    return 1
  fi
}
# grpc_status TARGET: the grpc-status trailer of one call.
grpc_status() {
  curl -s --http2-prior-knowledge -o /dev/null -D - --data-binary "@${data[$1]}" \
    -H 'content-type: application/grpc' -H 'te: trailers' -H "$auth" "${url[$1]}" |
    tr -d '\r' | sed -n 's/^grpc-status: //p' | tail -n 1
}
echo "== checking answers" >&2
same_answer rest_get baseline_get
same_answer rest_list baseline_list
same_answer rest_get gateway_ours_get
same_answer rest_list gateway_ours_list
get_json gateway_memory_get >/dev/null
for t in rest_list gateway_memory_list; do
  get_json "$t" >"$work_dir/answer.json"
  [[ $(jq '.items | length' "$work_dir/answer.json") == 50 ]] ||
    { echo "$t: the page does not hold 50 groups" >&2; exit 1; }
done
for t in grpc_get grpc_list; do
  [[ $(grpc_status "$t") == 0 ]] || { echo "$t: grpc-status is not 0" >&2; exit 1; }
done
[[ $(curl -s "${url[rest_404]}" | jq -r .error.status) == NOT_FOUND ]] ||
  { echo "rest_404: not the error model's NOT_FOUND" >&2; exit 1; }
curl -sf "${url[hello]}" >/dev/null || { echo "hello: no answer" >&2; exit 1; }

# --- measurements -------------------------------------------------------------------

declare -A rates errors commands
# command_of TARGET: the load command, as printed in the report (token and uids elided).
command_of() {
  local t=$1 shown=${url[$1]} token_flag=""
  shown=${shown//$server/<server>}
  shown=${shown//$gateway_memory/<gateway>}
  shown=${shown//$gateway_ours/<gateway>}
  shown=${shown//$hello/<hello-world>}
  # A child's uid starts with its root's: children first.
  shown=${shown//$CHILD/<child uid>}
  shown=${shown//$backend_child/<child uid>}
  shown=${shown//$ROOT/<root uid>}
  shown=${shown//$backend_root/<root uid>}
  [[ ${with_token[$t]} == yes ]] && token_flag="-H 'Authorization: Bearer <token>' "
  case ${tool[$t]} in
    wrk) echo "wrk -t$threads -c$connections -d$duration $token_flag'$shown'" ;;
    h2load) echo "h2load -t$threads -c${h2_connections[$t]} -m${h2_streams[$t]} -D $duration -H 'content-type: application/grpc' -H 'te: trailers' $token_flag-d <${data[$t]##*/}> '$shown'" ;;
  esac
}

# measure TARGET: one run; appends its req/s to rates[TARGET] and adds its
# failed requests (non-2xx, socket errors; for gRPC, failed streams) to errors[TARGET].
measure() {
  local t=$1 out rate failed
  local -a headers=()
  [[ ${with_token[$t]} == yes ]] && headers=(-H "$auth")
  case ${tool[$t]} in
    wrk)
      out=$(wrk -t"$threads" -c"$connections" -d"$duration" ${headers[@]+"${headers[@]}"} "${url[$t]}")
      rate=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")
      # The 404 route answers 404 by design: only socket errors fail it.
      failed=$(awk -v any_status="$([[ $t == rest_404 ]] && echo 1)" '
        /Non-2xx or 3xx responses:/ && !any_status { n += $5 }
        /Socket errors:/ { gsub(",", ""); n += $4 + $6 + $8 + $10 } END { print n + 0 }' <<<"$out")
      ;;
    h2load)
      out=$(h2load -t"$threads" -c"${h2_connections[$t]}" -m"${h2_streams[$t]}" -D "$duration" -H 'content-type: application/grpc' \
        -H 'te: trailers' ${headers[@]+"${headers[@]}"} -d "${data[$t]}" "${url[$t]}")
      rate=$(awk '/^finished in/ { print $4 }' <<<"$out")
      failed=$(awk '/^requests:/ { print $10 + $12 + $14 }' <<<"$out")
      ;;
  esac
  [[ -n $rate ]] || { echo "$t: no rate in the output:" >&2; echo "$out" >&2; return 1; }
  rates[$t]+="$rate "
  errors[$t]=$((${errors[$t]:-0} + failed))
  commands[$t]=$(command_of "$t")
  printf '== %-20s %10.0f req/s  %s failed\n' "$t" "$rate" "$failed" >&2
}

# Other work on the machine skews every figure; the report shows how busy it was.
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
order=("${targets[@]}")
for ((round = 1; round <= rounds; round++)); do
  echo "== round $round of $rounds" >&2
  for t in "${order[@]}"; do measure "$t"; done
  # The next round runs the targets in reverse order, so each target's
  # median is not always measured at the same point of the run.
  for ((i = ${#order[@]} - 1, j = 0; i >= 0; i--, j++)); do reversed[j]=${order[i]}; done
  order=("${reversed[@]}")
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# --- memory, on the production binary ---------------------------------------------------

echo "== memory: the production binary" >&2
for pid in "${peer_pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
peer_pids=()
stop_server "$work_dir/bench"
SERVER_BIN=$production_bin
start_server "$work_dir/memory"
seed
sleep 1
memory_urls=()
for uid in "${CHILDREN[@]:0:8}"; do memory_urls+=("$SERVER_URL/iam/v2/groups/$uid"); done
# memory_load N: N GETs of 8 seed groups in turn over HTTP/1.1; sets MEMORY_FAILED.
memory_load() {
  local out
  echo "== memory: $1 requests" >&2
  out=$(h2load --h1 -t"$threads" -c"$connections" -n "$1" \
    -H "Authorization: Bearer $TOKEN" "${memory_urls[@]}")
  # h2load's `failed` includes answers that are not 2xx or 3xx.
  MEMORY_FAILED=$((${MEMORY_FAILED:-0} + $(awk '/^requests:/ { print $10 + $12 + $14 }' <<<"$out")))
}
rss_idle=$(rss "$SERVER_PID")
memory_load 10000
rss_10k=$(rss "$SERVER_PID")
memory_load $((memory_requests - 10000))
rss_end=$(rss "$SERVER_PID")
stop_server "$work_dir/memory"

# --- report -------------------------------------------------------------------------------

median() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 }
  END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A med
for t in "${targets[@]}"; do med[$t]=$(median "${rates[$t]}"); done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
met() { awk -v r="$1" -v min="$2" 'BEGIN { print (r >= min ? "yes" : "**no**") }'; }
rate_cell() { printf "%.0f" "$1"; }
# row LABEL BASELINE OURS MIN_RATIO: a table row with the ratio ours / baseline.
row() {
  local r
  r=$(ratio "${med[$3]}" "${med[$2]}")
  echo "| $1 | $(rate_cell "${med[$2]}") | $(rate_cell "${med[$3]}") | $r | ≥ $4 | $(met "$r" "$4") | \`${commands[$2]}\` |"
}

if revision=$(git rev-parse --short HEAD 2>/dev/null); then
  git diff --quiet HEAD 2>/dev/null || revision+=" (with uncommitted changes)"
else
  revision="unknown (not a git checkout)"
fi
if [[ $caller == admin ]]; then
  caller_text="the administrator (authorized without reading grants)"
else
  caller_text="an identity bound to \`viewer\` on the root (authorized from its grants)"
fi
cat <<EOF
# REST benchmark: generated group routes against baselines

Commit $revision, $(date -u +%Y-%m-%dT%H:%MZ),
$(nproc) cores ($(sed -n 's/^model name\t*: //p' /proc/cpuinfo | head -n 1)), release build, embedded SQLite,
$groups groups under one root, caller: $caller_text. Each figure is the median req/s of $rounds run(s) of $duration,
$connections connections, $threads load threads (on the same cores as the servers); ratios are ours / baseline.
Load average (1, 5, 15 min) before the measurements: $load_before; after: $load_after.

## a, b. Generated REST vs hand-written axum handlers (same process, port, store, middleware)

| route | hand-written req/s | generated req/s | ratio | target | met | baseline command (ours: \`/iam/v2/groups\`) |
|---|---|---|---|---|---|---|
$(row "GET one group" baseline_get rest_get 0.95)
$(row "GET list page of 50" baseline_list rest_list 0.95)

## c. Generated REST vs grpc-gateway

| route | grpc-gateway req/s | generated REST req/s | ratio | target | met | baseline command |
|---|---|---|---|---|---|---|
$(row "GET one group, gateway + Go memory backend (no auth)" gateway_memory_get rest_get 2)
$(row "GET list page of 50, gateway + Go memory backend (no auth)" gateway_memory_list rest_list 2.5)
$(row "GET one group, gateway + this server's gRPC (token forwarded)" gateway_ours_get rest_get 2)
$(row "GET list page of 50, gateway + this server's gRPC (token forwarded)" gateway_ours_list rest_list 2)

## d. Generated gRPC (tonic) vs generated REST

| method | gRPC req/s | REST req/s | gRPC / REST | target | met | gRPC command |
|---|---|---|---|---|---|---|
| GetGroup, the calls multiplexed on one connection per load thread (a gRPC channel) | $(rate_cell "${med[grpc_get_channel]}") | $(rate_cell "${med[rest_get]}") | $(ratio "${med[grpc_get_channel]}" "${med[rest_get]}") | ≥ 1 | $(met "$(ratio "${med[grpc_get_channel]}" "${med[rest_get]}")" 1) | \`${commands[grpc_get_channel]}\` |
| GetGroup, one call per connection | $(rate_cell "${med[grpc_get]}") | $(rate_cell "${med[rest_get]}") | $(ratio "${med[grpc_get]}" "${med[rest_get]}") | ≥ 1 | $(met "$(ratio "${med[grpc_get]}" "${med[rest_get]}")" 1) | \`${commands[grpc_get]}\` |
| ListGroups (50) | $(rate_cell "${med[grpc_list]}") | $(rate_cell "${med[rest_list]}") | $(ratio "${med[grpc_list]}" "${med[rest_list]}") | | | \`${commands[grpc_list]}\` |

## e. Memory of the production binary (VmRSS)

| idle (started, seeded) | after 10000 requests | after $memory_requests requests | growth 10k → end | failed | command |
|---|---|---|---|---|---|
| $(awk -v k="$rss_idle" 'BEGIN { printf "%.1f MiB", k / 1024 }') ($(awk -v k="$rss_idle" 'BEGIN { print (k / 1024 < 30 ? "< 30 MiB: yes" : "< 30 MiB: **no**") }')) | $(awk -v k="$rss_10k" 'BEGIN { printf "%.1f MiB", k / 1024 }') | $(awk -v k="$rss_end" 'BEGIN { printf "%.1f MiB", k / 1024 }') | $(awk -v a="$rss_10k" -v b="$rss_end" 'BEGIN { g = (b - a) * 100 / a; printf "%+.1f%% (< 10%%: %s)", g, (g < 10 ? "yes" : "**no**") }') | $MEMORY_FAILED | \`h2load --h1 -t$threads -c$connections -n N -H 'Authorization: Bearer <token>' <8 GET /iam/v2/groups/<uid> URLs>\` |

## f. The 404 route against the peer's GET and a minimal axum hello-world

| route | req/s | / peer's GET (gateway + Go memory backend) | target | met | / hello-world (\`GET /\`, axum, no layer) | command |
|---|---|---|---|---|---|---|
| \`GET /nowhere\` (no token, JSON error body) | $(rate_cell "${med[rest_404]}") | $(ratio "${med[rest_404]}" "${med[gateway_memory_get]}") | ≥ 4.5 | $(met "$(ratio "${med[rest_404]}" "${med[gateway_memory_get]}")" 4.5) | $(ratio "${med[rest_404]}" "${med[hello]}") (hello-world: $(rate_cell "${med[hello]}") req/s) | \`${commands[rest_404]}\` |

## Runs

| target | req/s per run | median | failed requests | answer bytes | command |
|---|---|---|---|---|---|
$(for t in "${targets[@]}"; do
  echo "| $t | $(for r in ${rates[$t]}; do printf "%.0f " "$r"; done)| $(rate_cell "${med[$t]}") | ${errors[$t]} | ${answer_bytes[$t]:-${tool[$t]/wrk/-}} | \`${commands[$t]}\` |"
done)
EOF
