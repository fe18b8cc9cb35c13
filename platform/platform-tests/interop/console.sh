#!/usr/bin/env bash
# The web console (`/console/`) walked in a real browser: Debian's Chromium
# driven over WebDriver by Selenium (platform/platform-tests/interop/console_walk.py), against a
# platform-server on a fresh data dir and the widgets example. It checks what a
# person sees and can do: signing in with a token (a bad one is refused),
# browsing from the root organization, creating and editing a group, an
# identity with no sign-in claim made with the form, a save
# from a form opened before someone else's change (refused as ABORTED), a
# refused delete of a group that has children, a role binding made with the
# form's selects, a hostile group name shown literally (no script runs), the
# session cookie's flags and the refusal of POSTs without the CSRF token, a
# viewer who sees no edit/delete/create controls and whose direct POST is
# denied, signing out (the old cookie opens nothing), the security headers,
# and the widgets example's console without authentication.
#
# Needs /usr/bin/chromium and /usr/bin/chromedriver (apt: chromium
# chromium-driver; or $CHROMIUM and $CHROMEDRIVER) and
# `pip install -r platform/platform-tests/interop/requirements.txt`.
#
#   bash platform/platform-tests/interop/console.sh [--screenshots DIR]
set -euo pipefail

walk_args=()
if [[ ${1:-} == --screenshots ]]; then
  [[ -n ${2:-} ]] || { echo "usage: $0 [--screenshots DIR]" >&2; exit 2; }
  mkdir -p "$2"
  walk_args=(--screenshots "$(realpath "$2")")
elif [[ $# -gt 0 ]]; then
  echo "usage: $0 [--screenshots DIR]" >&2
  exit 2
fi
cd "$(dirname "$0")/../../.."

for tool in "${CHROMIUM:-/usr/bin/chromium}" "${CHROMEDRIVER:-/usr/bin/chromedriver}"; do
  [[ -x $tool ]] || { echo "missing $tool (apt-get install chromium chromium-driver)" >&2; exit 1; }
done

binaries=$(bash platform/platform-tests/executables.sh -p platform-server --bin platform-server \
  -p widgets --bin widgets)
server_bin=$(awk '$1 == "platform-server" { print $2 }' <<<"$binaries")
widgets_bin=$(awk '$1 == "widgets" { print $2 }' <<<"$binaries")
[[ -n $server_bin && -n $widgets_bin ]] || { echo "cargo built no binaries: $binaries" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

data=$(mktemp -d)
logs=$(mktemp -d)
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  if [[ $status -ne 0 ]]; then
    for log in "$logs"/*.log; do
      echo "--- $log (last lines)" >&2
      tail -n 40 "$log" >&2 || true
    done
  fi
  rm -rf "$data" "$logs"
}
trap cleanup EXIT

# wait_for PID URL: until the process answers HTTP at URL (any status).
wait_for() {
  for _ in $(seq 100); do
    kill -0 "$1" 2>/dev/null || { echo "process $1 exited before listening" >&2; return 1; }
    curl -s --max-time 5 -o /dev/null "$2" && return 0
    sleep 0.1
  done
  echo "nothing answers at $2" >&2
  return 1
}

port=$(free_port)
"$server_bin" --data-dir "$data" --listen "127.0.0.1:$port" >"$logs/server.log" 2>&1 &
pids+=($!)
wait_for "${pids[0]}" "http://127.0.0.1:$port/console/signin"

widgets_port=$(free_port)
"$widgets_bin" --listen "127.0.0.1:$widgets_port" >"$logs/widgets.log" 2>&1 &
pids+=($!)
wait_for "${pids[1]}" "http://127.0.0.1:$widgets_port/console/signin"

echo "== console in Chromium: platform-server on :$port, widgets on :$widgets_port"
python3 platform/platform-tests/interop/console_walk.py \
  --base "http://127.0.0.1:$port" \
  --admin-token "$data/admin.token" \
  --server-bin "$server_bin" \
  --data-dir "$data" \
  --widgets "http://127.0.0.1:$widgets_port" \
  "${walk_args[@]}"
