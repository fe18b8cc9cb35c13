# Shared by load.sh, memory-bound.sh and long-uids.sh (sourced, not run):
# builds the server and the load generator (release unless a script is given
# `--profile dev`), starts the server
# on a temporary data dir and a free port, and stops it with SIGTERM, checking
# that it exits cleanly; run_load does all of it around one generator run.
# Honours CARGO_TARGET_DIR (the binaries' paths come from cargo).

# build PROFILE: builds the server and the load generator with the cargo
# profile PROFILE (release, or dev to reuse the tests' build). Sets SERVER_BIN
# and LOAD_BIN.
build() {
  local artifacts
  echo "== build ($1)" >&2
  artifacts=$(bash platform/platform-tests/executables.sh --profile "$1" -p platform-server \
    --bin platform-server --example load)
  SERVER_BIN=$(awk '$1 == "platform-server" { print $2 }' <<<"$artifacts")
  LOAD_BIN=$(awk '$1 == "load" { print $2 }' <<<"$artifacts")
  if [[ -z "${SERVER_BIN:-}" || -z "${LOAD_BIN:-}" ]]; then
    echo "cargo did not report the platform-server and load executables" >&2
    return 1
  fi
}

# start_server WORK_DIR [DATABASE_URL]: starts the server on WORK_DIR/data,
# logging to WORK_DIR/server.log, on a port the kernel picks. Sets
# SERVER_PID, SERVER_URL and SERVER_DATA. More flags from the array
# SERVER_FLAGS (`https://` when they include --tls-cert), the log filter
# from SERVER_LOG (default `info`).
start_server() {
  local work_dir=$1 database_url=${2:-} address="" waited=0 scheme=http
  SERVER_DATA="$work_dir/data"
  local -a flags=(--data-dir "$SERVER_DATA" --listen 127.0.0.1:0 ${SERVER_FLAGS[@]+"${SERVER_FLAGS[@]}"})
  if [[ -n "$database_url" ]]; then
    flags+=(--database-url "$database_url")
  fi
  [[ " ${flags[*]} " == *" --tls-cert "* ]] && scheme=https
  NO_COLOR=1 RUST_LOG=${SERVER_LOG:-info} "$SERVER_BIN" "${flags[@]}" >"$work_dir/server.log" 2>&1 &
  SERVER_PID=$!
  while [[ -z "$address" ]]; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "the server exited during start:" >&2
      cat "$work_dir/server.log" >&2
      return 1
    fi
    if ((waited >= 600)); then
      echo "the server did not log 'listening' within 60 s:" >&2
      cat "$work_dir/server.log" >&2
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
    address=$(sed 's/\x1b\[[0-9;]*m//g' "$work_dir/server.log" |
      sed -n 's/.*listening.* address=\([^ ]*\).*/\1/p' | head -n 1)
  done
  SERVER_URL="$scheme://$address"
  local backend="embedded SQLite"
  if [[ -n "$database_url" ]]; then
    backend="PostgreSQL"
  fi
  echo "== server pid $SERVER_PID listening on $SERVER_URL ($backend)" >&2
}

# stop_server WORK_DIR: SIGTERM, then waits (the drain timeout is 30 s);
# fails unless the server exits with status 0 after logging `stopped`.
stop_server() {
  local work_dir=$1 status=0 waited=0
  kill -TERM "$SERVER_PID"
  while kill -0 "$SERVER_PID" 2>/dev/null && ((waited < 450)); do
    sleep 0.1
    waited=$((waited + 1))
  done
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "== the server did not exit within 45 s of SIGTERM" >&2
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    return 1
  fi
  wait "$SERVER_PID" || status=$?
  SERVER_PID=""
  if ((status != 0)) || ! grep -q "stopped" "$work_dir/server.log"; then
    echo "== the server did not exit cleanly after SIGTERM (status $status):" >&2
    tail -n 20 "$work_dir/server.log" >&2
    return 1
  fi
  echo "== server stopped cleanly after SIGTERM (exit status 0)" >&2
}

# Kills a server left running (by its pid) and removes the work dir.
cleanup_server() {
  local work_dir=$1
  if [[ -n "${SERVER_PID:-}" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$work_dir"
}

# run_load MODE DURATION CONNECTIONS MAX_RSS_MIB [SCRIPT ARGS...]: parses the
# calling script's flags (--database-url, --duration, --connections,
# --profile (release by default), and --max-rss-mib unless MAX_RSS_MIB is
# empty; after `--`, more generator
# flags), whose defaults are the other arguments; builds, starts the server,
# runs the load generator in MODE against it and stops the server. Returns 0
# when the generator met its targets and the server stopped cleanly; exits 2
# on a flag it does not know.
run_load() {
  local mode=$1 duration=$2 connections=$3 max_rss_mib=$4 database_url="" profile=release status=0
  shift 4
  local usage="usage: $0 [--database-url URL] [--duration $duration] [--connections $connections] [--profile release]"
  local -a extra=() bound=()
  if [[ -n "$max_rss_mib" ]]; then
    usage+=" [--max-rss-mib $max_rss_mib]"
  fi
  while (($#)); do
    case $1 in
      --database-url) database_url=$2; shift 2 ;;
      --duration) duration=$2; shift 2 ;;
      --connections) connections=$2; shift 2 ;;
      --profile) profile=$2; shift 2 ;;
      --max-rss-mib) [[ -n "$max_rss_mib" ]] || break; max_rss_mib=$2; shift 2 ;;
      --) shift; extra=("$@"); set --; break ;;
      *) break ;;
    esac
  done
  if (($#)); then
    echo "$usage [-- generator flags]" >&2
    exit 2
  fi
  if [[ -n "$max_rss_mib" ]]; then
    bound=(--max-rss-mib "$max_rss_mib")
  fi

  build "$profile"
  # Global: the EXIT trap reads it once this function has returned.
  work_dir=$(mktemp -d)
  trap 'cleanup_server "$work_dir"' EXIT
  start_server "$work_dir" "$database_url"
  "$LOAD_BIN" --mode "$mode" --url "$SERVER_URL" --token-file "$SERVER_DATA/admin.token" \
    --server-pid "$SERVER_PID" --connections "$connections" --duration "$duration" \
    ${bound[@]+"${bound[@]}"} ${extra[@]+"${extra[@]}"} || status=$?
  stop_server "$work_dir" || status=1
  return "$status"
}
