#!/usr/bin/env bash
# Load measurement: builds the server and the load generator (release),
# starts the server on a temporary data dir and a free port, drives the mixed
# workload (70% GET group, 15% list page, 10% create, 5% PATCH) over 64
# keep-alive connections for 60 s, prints the report, then stops the server
# with SIGTERM and checks that it exits cleanly.
#
#   bash examples/platform-server/scripts/load.sh [--database-url postgres://...]
#       [--duration 60s] [--connections 64] [-- more generator flags]
#
# Exit status: 0 when the targets are met (no errors; server RSS growth
# between 10 s and the end under 10%) and the server stopped cleanly.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source examples/platform-server/scripts/common.sh

database_url="" duration=60s connections=64
extra=()
while (($#)); do
  case $1 in
    --database-url) database_url=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: $0 [--database-url URL] [--duration 60s] [--connections 64] [-- generator flags]" >&2; exit 2 ;;
  esac
done

build_release
work_dir=$(mktemp -d)
trap 'cleanup_server "$work_dir"' EXIT
start_server "$work_dir" "$database_url"

status=0
"$LOAD_BIN" --mode mixed --url "$SERVER_URL" --token-file "$SERVER_DATA/admin.token" \
  --server-pid "$SERVER_PID" --connections "$connections" --duration "$duration" \
  ${extra[@]+"${extra[@]}"} || status=$?
stop_server "$work_dir" || status=1
exit "$status"
