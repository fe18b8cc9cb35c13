#!/usr/bin/env bash
# Blob throughput of the registry against the disk it writes to: a 100 MiB
# layer pushed (one monolithic upload, `curl --data-binary`) and pulled
# (`curl -o`) through a server binary on a fresh data dir, next to `cp` of
# the same bytes on the same disk (and `cp` then `sync` of the copy, since
# the registry syncs a blob before it is visible), alternating, ROUNDS
# times; and the
# server's peak resident memory (VmHWM) before and after, to show that blobs
# stream rather than sit in memory.
#
#   bash platform/platform-server/scripts/bench-registry.sh BIN [ROUNDS (3)] [MiB (100)]
#
# Prints one line per round: push s, cp s, cp+sync s, pull s, cp s; then the
# ratios of the medians (throughput over cp's: 1.0 is as fast as cp) and the
# memory.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 BIN [ROUNDS] [MiB]" >&2; exit 2; }
bin=$1 rounds=${2:-3} mib=${3:-100}
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench-registry.XXXXXX")
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
port=$((20000 + RANDOM % 20000))
base=http://127.0.0.1:$port
RUST_LOG=warn "$bin" --data-dir "$dir/data" --listen "127.0.0.1:$port" >"$dir/log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done
auth="Authorization: Bearer $(<"$dir/data/admin.token")"
json() { python3 -c "import json, sys; print(json.load(sys.stdin)$1)"; }
org=$(curl -sf -H "$auth" -d '{"name": "bench"}' "$base/iam/v2/groups/" | json '["uid"]')
repo=$(curl -sf -H "$auth" -d '{"name": "bench"}' "$base/registry/v2/repos/$org" | json '["uid"]')
hwm() { awk '/VmHWM/ { print $2 " " $3 }' "/proc/$pid/status"; }
before=$(hwm)

seconds() { local start=$EPOCHREALTIME; "$@" >/dev/null; python3 -c "print(f'{$EPOCHREALTIME - $start:.3f}')"; }
push_times=() pull_times=() cp_times=() synced_times=()
for round in $(seq "$rounds"); do
  head -c "$((mib << 20))" /dev/urandom >"$dir/layer"
  digest=sha256:$(sha256sum "$dir/layer" | cut -d' ' -f1)
  sync
  push=$(seconds curl -sf -H "$auth" -H 'Content-Type: application/octet-stream' --data-binary "@$dir/layer" \
    "$base/v2/$repo/blobs/uploads/?digest=$digest")
  copy_in=$(seconds cp "$dir/layer" "$dir/copy-in")
  pull=$(seconds curl -sf -H "$auth" -o "$dir/pulled" "$base/v2/$repo/blobs/$digest")
  copy_out=$(seconds cp "$dir/copy-in" "$dir/copy-out")
  synced=$(seconds sh -c "cp '$dir/layer' '$dir/synced' && sync '$dir/synced'")
  cmp -s "$dir/layer" "$dir/pulled" || { echo "round $round: the pulled blob differs" >&2; exit 1; }
  echo "round $round: push $push s, cp $copy_in s, cp+sync $synced s, pull $pull s, cp $copy_out s"
  push_times+=("$push") pull_times+=("$pull") cp_times+=("$copy_in" "$copy_out") synced_times+=("$synced")
  rm -f "$dir/copy-in" "$dir/copy-out" "$dir/pulled" "$dir/synced"
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
push=$(median "${push_times[@]}") pull=$(median "${pull_times[@]}") copy=$(median "${cp_times[@]}")
synced=$(median "${synced_times[@]}")
python3 -c "
mib = $mib
print(f'median: push {$push} s ({mib / $push:.0f} MiB/s), pull {$pull} s ({mib / $pull:.0f} MiB/s), cp {$copy} s ({mib / $copy:.0f} MiB/s)')
print(f'push / cp: {$copy / $push:.2f}; push / (cp+sync, {$synced} s): {$synced / $push:.2f}; pull / cp: {$copy / $pull:.2f}')"
echo "server peak RSS: $before before, $(hwm) after $rounds pushes and pulls of $mib MiB"
