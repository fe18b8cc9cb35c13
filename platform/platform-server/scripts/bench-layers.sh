#!/usr/bin/env bash
# What the serving layers cost on the GET route: the production server
# started five ways on the same data, each measured with
# `wrk -t2 -c64 -d<duration>` on `GET /iam/v2/groups/{uid}` (admin token),
# every variant once per round, the order reversed between rounds, the
# median req/s kept and reported as a ratio to the plain variant:
#   bare     plain, and no web console (--no-console: no session layer)
#   plain    no access log (RUST_LOG=info,access=off), no metrics, plain HTTP
#            (the console served, as by default)
#   access   the access log on (text, to a file), the default
#   metrics  the access log and --metrics (counted, histogram, in-flight)
#   tls      the access log, --metrics, and TLS (wrk over HTTPS, keep-alive:
#            the handshake is paid once per connection)
#   ratelimit the access log and a per-caller rate limit too high to refuse
#            anything (--rate-limit 1000000 --rate-burst 1000000): the cost
#            of the check
# Each variant's ratio is given to plain and to the default (access).
#
#   bash platform/platform-server/scripts/bench-layers.sh [--quick] [--rounds 3]
#       [--duration 10s] [--connections 64]
#
# --quick: 1 round of 5 s. Honours CARGO_TARGET_DIR. Prints a markdown table.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source platform/platform-server/scripts/common.sh
bench_dir=platform/platform-server/bench

rounds=3 duration=10s connections=64 threads=2
while (($#)); do
  case $1 in
    --quick) rounds=1 duration=5s; shift ;;
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    *) echo "usage: $0 [--quick] [--rounds N] [--duration 10s] [--connections 64]" >&2; exit 2 ;;
  esac
done

bash "$bench_dir/apt-ensure.sh" wrk jq curl openssl

work_dir=$(mktemp -d)
trap 'cleanup_server "$work_dir"' EXIT
build release

# A test CA and a server certificate for 127.0.0.1 (not itself a CA).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=bench-ca \
  -keyout "$work_dir/ca.key" -out "$work_dir/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
  -keyout "$work_dir/server.key" -out "$work_dir/server.csr" 2>/dev/null
openssl x509 -req -in "$work_dir/server.csr" -CA "$work_dir/ca.pem" -CAkey "$work_dir/ca.key" \
  -CAcreateserial -days 1 -out "$work_dir/server.pem" \
  -extfile <(printf 'basicConstraints=critical,CA:FALSE\nsubjectAltName=IP:127.0.0.1\n') 2>/dev/null
chmod 600 "$work_dir/server.key"

# start VARIANT: the server with the variant's flags on the shared data dir.
start() {
  SERVER_LOG=info SERVER_FLAGS=()
  case $1 in
    bare) SERVER_LOG=info,access=off SERVER_FLAGS=(--no-console) ;;
    plain) SERVER_LOG=info,access=off ;;
    access) ;;
    metrics) SERVER_FLAGS=(--metrics) ;;
    tls) SERVER_FLAGS=(--metrics --tls-cert "$work_dir/server.pem" --tls-key "$work_dir/server.key") ;;
    ratelimit) SERVER_FLAGS=(--rate-limit 1000000 --rate-burst 1000000) ;;
  esac
  start_server "$work_dir"
  TOKEN=$(<"$SERVER_DATA/admin.token")
}

# Seed once over plain HTTP: a root and 1000 children; GET one in the middle.
start plain
seeded=$(python3 "$bench_dir/seed.py" "$SERVER_URL" "$SERVER_DATA/admin.token" 1000)
CHILD=$(jq -r '.children[500]' <<<"$seeded")
stop_server "$work_dir"

variants=(bare plain access metrics tls ratelimit)
declare -A rates
measure() { # VARIANT
  local out rate failed
  start "$1"
  curl -sSf --cacert "$work_dir/ca.pem" -H "Authorization: Bearer $TOKEN" \
    "$SERVER_URL/iam/v2/groups/$CHILD" >/dev/null || { echo "$1: GET failed" >&2; return 1; }
  out=$(wrk -t"$threads" -c"$connections" -d"$duration" -H "Authorization: Bearer $TOKEN" \
    "$SERVER_URL/iam/v2/groups/$CHILD")
  rate=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")
  failed=$(awk '/Non-2xx or 3xx responses:/ { n += $5 }
    /Socket errors:/ { gsub(",", ""); n += $4 + $6 + $8 + $10 } END { print n + 0 }' <<<"$out")
  ((failed == 0)) || { echo "$1: $failed failed requests" >&2; echo "$out" >&2; return 1; }
  [[ $1 != access ]] || grep -q 'access' "$work_dir/server.log" || { echo "access: no access line" >&2; return 1; }
  rates[$1]+="$rate "
  printf '== %-8s %10.0f req/s\n' "$1" "$rate" >&2
  stop_server "$work_dir"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
order=("${variants[@]}")
for ((round = 1; round <= rounds; round++)); do
  echo "== round $round of $rounds" >&2
  for v in "${order[@]}"; do measure "$v"; done
  for ((i = ${#order[@]} - 1, j = 0; i >= 0; i--, j++)); do reversed[j]=${order[i]}; done
  order=("${reversed[@]}")
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
plain=$(median "${rates[plain]}")
default=$(median "${rates[access]}")
echo
echo "GET one group, \`wrk -t$threads -c$connections -d$duration\`, $rounds round(s), median req/s"
echo "(load average before $load_before, after $load_after):"
echo
echo "| variant | runs (req/s) | median | ratio to plain | ratio to the default (access) |"
echo "|---|---|---:|---:|---:|"
for v in "${variants[@]}"; do
  m=$(median "${rates[$v]}")
  printf '| %s | %s| %.0f | %.2f | %.2f |\n' "$v" "$(printf '%.0f ' ${rates[$v]})" "$m" \
    "$(awk -v a="$m" -v b="$plain" 'BEGIN { print a / b }')" "$(awk -v a="$m" -v b="$default" 'BEGIN { print a / b }')"
done
