#!/usr/bin/env bash
# Memory bound of oversized list pages: builds the server and the load
# generator (release), starts the server on a temporary data dir and a free
# port, creates 100 public repos with 64 KiB readmes and 100 groups with
# 1,024-character descriptions under one group, and has 10 connections walk
# every page of pageSize=200 lists for 20 s (repos with the admin token and
# anonymously, groups with the token) while the server's RSS is sampled every
# 50 ms. Then stops the server with SIGTERM and checks that it exits cleanly.
#
#   bash platform/platform-server/scripts/memory-bound.sh [--database-url postgres://...]
#       [--duration 20s] [--connections 10] [--max-rss-mib 400] [--profile release] [-- more generator flags]
#
# Exit status: 0 when the server's peak RSS stayed within the bound, every
# request succeeded, every walk returned all items, and the server stopped
# cleanly. Why 400 MiB: see BENCHMARKS.md ("Memory bound of oversized list
# pages").
set -euo pipefail
cd "$(dirname "$0")/../../.."
source platform/platform-server/scripts/common.sh

run_load oversized-lists 20s 10 400 "$@"
