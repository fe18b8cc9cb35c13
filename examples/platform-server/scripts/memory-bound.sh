#!/usr/bin/env bash
# Memory bound of oversized list pages: builds the server and the load
# generator (release), starts the server on a temporary data dir and a free
# port, creates 100 public repos with 64 KiB readmes and 100 groups with
# 1,024-character descriptions under one group, and has 10 connections walk
# every page of pageSize=200 lists for 20 s (repos with the admin token and
# anonymously, groups with the token) while the server's RSS is sampled every
# 50 ms. Then stops the server with SIGTERM and checks that it exits cleanly.
#
#   bash examples/platform-server/scripts/memory-bound.sh [--database-url postgres://...]
#       [--duration 20s] [--connections 10] [--max-rss-mib 400] [-- more generator flags]
#
# Exit status: 0 when the server's peak RSS stayed within the bound, every
# request succeeded, every walk returned all items, and the server stopped
# cleanly. Why 400 MiB: see BENCHMARKS.md ("Memory bound of oversized list
# pages").
set -euo pipefail
cd "$(dirname "$0")/../../.."
source examples/platform-server/scripts/common.sh

database_url="" duration=20s connections=10 max_rss_mib=400
extra=()
while (($#)); do
  case $1 in
    --database-url) database_url=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --max-rss-mib) max_rss_mib=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: $0 [--database-url URL] [--duration 20s] [--connections 10] [--max-rss-mib 400] [-- generator flags]" >&2; exit 2 ;;
  esac
done

build_release
work_dir=$(mktemp -d)
trap 'cleanup_server "$work_dir"' EXIT
start_server "$work_dir" "$database_url"

status=0
"$LOAD_BIN" --mode oversized-lists --url "$SERVER_URL" --token-file "$SERVER_DATA/admin.token" \
  --server-pid "$SERVER_PID" --connections "$connections" --duration "$duration" \
  --max-rss-mib "$max_rss_mib" ${extra[@]+"${extra[@]}"} || status=$?
stop_server "$work_dir" || status=1
exit "$status"
