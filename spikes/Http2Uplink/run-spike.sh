#!/usr/bin/env bash
# Starts the HTTP/2-uplink spike (server + client) in front of an already running backend, waits until
# /session/<id>/loadtest/ping answers 'pong' through it, prints BASE_URL=... and PIDS=<server> <client>,
# then runs until Ctrl-C / SIGTERM and stops both (client first).
#
#   spikes/Http2Uplink/run-spike.sh [--no-build] [--backend-port N] [--public-port N] [--tunnel-port N] [--session ID]
#
# Environment (the switches win): H2SPIKE_BACKEND_PORT (12007) H2SPIKE_PUBLIC_PORT (12200)
# H2SPIKE_TUNNEL_PORT (12201) H2SPIKE_SESSION (22222222-2222-2222-2222-222222222222)
# H2SPIKE_RUN_DIR (/tmp/h2spike-run: build.log server.log client.log) H2SPIKE_START_TIMEOUT (60 s)
# H2SPIKE_BUILD_LOCK: a file to flock(1) around the build only (e.g. /tmp/tunnel2-bench.lock on a shared machine)
# Exit codes: 0 stopped by a signal; 1 start-up failed or a process died; 2 bad usage.
set -euo pipefail

readonly SPIKE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BACKEND_PORT="${H2SPIKE_BACKEND_PORT:-12007}"
PUBLIC_PORT="${H2SPIKE_PUBLIC_PORT:-12200}"
TUNNEL_PORT="${H2SPIKE_TUNNEL_PORT:-12201}"
SESSION="${H2SPIKE_SESSION:-22222222-2222-2222-2222-222222222222}"
RUN_DIR="${H2SPIKE_RUN_DIR:-/tmp/h2spike-run}"
START_TIMEOUT="${H2SPIKE_START_TIMEOUT:-60}"
STOP_TIMEOUT=15
BUILD=1
BUILD_LOCK="${H2SPIKE_BUILD_LOCK:-}"

usage() { sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while (($#)); do
  case "$1" in
    --no-build) BUILD=0 ;;
    --backend-port) BACKEND_PORT="${2:?}"; shift ;;
    --public-port) PUBLIC_PORT="${2:?}"; shift ;;
    --tunnel-port) TUNNEL_PORT="${2:?}"; shift ;;
    --session) SESSION="${2:?}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-spike: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
for v in BACKEND_PORT PUBLIC_PORT TUNNEL_PORT START_TIMEOUT; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "run-spike: $v must be a number, got '${!v}'" >&2; exit 2; }
done

log() { printf '[run-spike] %s\n' "$*"; }
err() { printf '[run-spike] error: %s\n' "$*" >&2; }

NAMES=() PIDS=() LOGS=()
SLEEP_PID="" CLEANED=0
stop_all() {
  ((CLEANED)) && return 0
  CLEANED=1
  [[ -n "$SLEEP_PID" ]] && kill "$SLEEP_PID" 2>/dev/null || true
  local i pid deadline
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do   # client first, then server
    pid="${PIDS[i]}"
    kill -TERM "$pid" 2>/dev/null || true
    deadline=$((SECONDS + STOP_TIMEOUT))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { log "${NAMES[i]} (pid $pid) did not stop; killing it"; kill -KILL "$pid" 2>/dev/null || true; }
    wait "$pid" 2>/dev/null || true
  done
}
on_signal() { trap '' INT TERM HUP; log "stopping ${NAMES[*]:-nothing}"; stop_all; log "stopped"; exit 0; }
trap on_signal INT TERM HUP
trap stop_all EXIT

check_alive() {
  local i
  for i in "${!PIDS[@]}"; do
    if ! kill -0 "${PIDS[i]}" 2>/dev/null; then
      err "${NAMES[i]} (pid ${PIDS[i]}) exited; last lines of ${LOGS[i]}:"
      tail -n 20 "${LOGS[i]}" | sed "s/^/  /" >&2
      return 1
    fi
  done
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$PUBLIC_PORT" "$TUNNEL_PORT"; do
  port_in_use "$p" && { err "port $p is already in use"; exit 1; }
done
port_in_use "$BACKEND_PORT" || { err "nothing listens on the backend port $BACKEND_PORT (start TestBackend first)"; exit 1; }

DLL="$SPIKE_DIR/src/bin/Release/net10.0/H2Spike.dll"
mkdir -p "$RUN_DIR"
if ((BUILD)); then
  log "building Release"
  ${BUILD_LOCK:+flock "$BUILD_LOCK"} dotnet build -c Release --nologo -v minimal "$SPIKE_DIR/src/H2Spike.csproj" >"$RUN_DIR/build.log" 2>&1 \
    || { err "build failed, see $RUN_DIR/build.log"; tail -n 20 "$RUN_DIR/build.log" >&2; exit 1; }
fi
[[ -f "$DLL" ]] || { err "$DLL does not exist; run without --no-build"; exit 1; }

SETSID=""
command -v setsid >/dev/null 2>&1 && SETSID=setsid
start() {  # start NAME LOGFILE COMMAND...
  local name="$1" file="$2"; shift 2
  : >"$file"
  (cd "$(dirname "$DLL")" && exec $SETSID "$@") </dev/null >>"$file" 2>&1 &
  NAMES+=("$name") PIDS+=("$!") LOGS+=("$file")
  log "started $name (pid $!): $*"
}

start server "$RUN_DIR/server.log" dotnet "$DLL" server \
  --public "127.0.0.1:$PUBLIC_PORT" --tunnel "127.0.0.1:$TUNNEL_PORT"
# The client runs with workstation GC, as TunnelClient does (a console app); the server with server GC, as TunnelServer.
start client "$RUN_DIR/client.log" env DOTNET_gcServer=0 dotnet "$DLL" client \
  --server "127.0.0.1:$TUNNEL_PORT" --session "$SESSION" --backend "http://127.0.0.1:$BACKEND_PORT"

BASE_URL="http://127.0.0.1:$PUBLIC_PORT/session/$SESSION"
deadline=$((SECONDS + START_TIMEOUT))
until [[ "$(curl -fsS --max-time 2 "$BASE_URL/loadtest/ping" 2>/dev/null)" == pong ]]; do
  check_alive || exit 1
  ((SECONDS < deadline)) || { err "no 'pong' through the spike after ${START_TIMEOUT}s"; exit 1; }
  sleep 0.2
done

log "ready: $BASE_URL/loadtest/ping answers pong"
echo "BASE_URL=$BASE_URL"
echo "PIDS=${PIDS[0]} ${PIDS[1]}"

while check_alive; do
  sleep 1 &
  SLEEP_PID=$!
  wait "$SLEEP_PID" 2>/dev/null || true
  SLEEP_PID=""
done
err "stopping the rest"
exit 1
