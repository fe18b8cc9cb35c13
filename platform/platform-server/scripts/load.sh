#!/usr/bin/env bash
# Load measurement: builds the server and the load generator (release),
# starts the server on a temporary data dir and a free port, drives the mixed
# workload (70% GET group, 15% list page, 10% create, 5% PATCH) over 64
# keep-alive connections for 60 s, prints the report, then stops the server
# with SIGTERM and checks that it exits cleanly.
#
#   bash platform/platform-server/scripts/load.sh [--database-url postgres://...]
#       [--duration 60s] [--connections 64] [--profile release] [-- more generator flags]
#
# Exit status: 0 when the targets are met (no errors; server RSS growth
# between 10 s and the end under 10%) and the server stopped cleanly.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source platform/platform-server/scripts/common.sh

run_load mixed 60s 64 "" "$@"
