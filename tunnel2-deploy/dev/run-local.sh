#!/usr/bin/env bash
# Tunnel2 dev stack without Docker: TestBackend + TunnelServer + TunnelClient on loopback,
# the same ports and sessions as docker-compose.yml, so the load-test scripts run unchanged.
#
#   tunnel2-deploy/dev/run-local.sh [--no-build] [--aot] [--no-httpbin] [--help]
#
# See --help (below) and tunnel2-deploy/README.md.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
readonly SCRIPT_DIR REPO_ROOT

# The dev session of TunnelClient's appsettings.Development.json; the token is NOT here:
# server and clients run with --environment Development and read it from their dev config.
readonly SESSION="22222222-2222-2222-2222-222222222222"
readonly HTTPBIN_SESSION="33333333-3333-3333-3333-333333333333"

PUBLIC_PORT="${TUNNEL2_PUBLIC_PORT:-12000}"
TUNNEL_PORT="${TUNNEL2_TUNNEL_PORT:-12001}"
HTTPBIN_PORT="${TUNNEL2_HTTPBIN_PORT:-12005}"
BACKEND_PORT="${TUNNEL2_BACKEND_PORT:-12007}"
RUN_DIR="${TUNNEL2_RUN_DIR:-/tmp/tunnel2-local}"
START_TIMEOUT="${TUNNEL2_START_TIMEOUT:-60}"
STOP_TIMEOUT="${TUNNEL2_STOP_TIMEOUT:-15}"
HTTPBIN_WORKERS="${TUNNEL2_HTTPBIN_WORKERS:-8}"
CONFIGURATION=Release

BUILD=1
AOT=0
AOT_DIR="$REPO_ROOT/artifacts/aot"
HTTPBIN=auto   # auto: serve httpbin when it is installed locally; off: never

usage() {
  cat <<EOF
Usage: tunnel2-deploy/dev/run-local.sh [--no-build] [--aot] [--no-httpbin] [--help]

Starts the Tunnel2 dev stack without Docker, each piece as 'dotnet X.dll' (with --aot: TunnelServer and
TunnelClient as native executables) on 127.0.0.1:
  TestBackend   http://127.0.0.1:${BACKEND_PORT}
  TunnelServer  public http://127.0.0.1:${PUBLIC_PORT}, tunnel http://127.0.0.1:${TUNNEL_PORT} (dev token)
  TunnelClient  session ${SESSION} -> TestBackend
  httpbin       http://127.0.0.1:${HTTPBIN_PORT} + a second client on session ${HTTPBIN_SESSION},
                only when httpbin and gunicorn are installed (Debian: apt-get install python3-httpbin
                gunicorn python3-gevent); otherwise that session exists only in docker-compose.yml.
Builds Release once first, waits until a request through the tunnel answers, prints the URL,
then runs until Ctrl-C / SIGTERM, stops everything it started and exits 0.

Options:
  --no-build     Do not build; use the existing src/*/bin/${CONFIGURATION}/net10.0/*.dll
  --aot          Run TunnelServer and TunnelClient as Native AOT binaries, published into
                 artifacts/aot/ (needs clang or gcc and zlib1g-dev; about 1 minute each). A third of
                 the memory of the JIT build; see docs/benchmarks/2026-11-23-performance.md.
                 With --no-build, the binaries already in artifacts/aot/ are used.
  --no-httpbin   Do not start httpbin even if it is installed
  -h, --help     Show this help

Environment:
  TUNNEL2_PUBLIC_PORT (12000)  TUNNEL2_TUNNEL_PORT (12001)  TUNNEL2_BACKEND_PORT (12007)
  TUNNEL2_HTTPBIN_PORT (12005) TUNNEL2_HTTPBIN_WORKERS (8)
  TUNNEL2_RUN_DIR (/tmp/tunnel2-local)  logs: backend.log server.log client.log [httpbin.log client-httpbin.log]
  TUNNEL2_START_TIMEOUT (60 s)  TUNNEL2_STOP_TIMEOUT (15 s before SIGKILL)

Exit codes: 0 stopped by Ctrl-C/SIGTERM; 1 start-up failed or a process died; 2 bad usage;
127 dotnet missing (curl is used when installed; without it the checks use bash's /dev/tcp).
EOF
}

while (($#)); do
  case "$1" in
    --no-build) BUILD=0 ;;
    --aot) AOT=1 ;;
    --no-httpbin) HTTPBIN=off ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-local: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

LOG_NAME=run-local
# shellcheck source=../lib/processes.sh
source "$REPO_ROOT/tunnel2-deploy/lib/processes.sh"

for port_var in PUBLIC_PORT TUNNEL_PORT HTTPBIN_PORT BACKEND_PORT START_TIMEOUT STOP_TIMEOUT HTTPBIN_WORKERS; do
  if ! [[ "${!port_var}" =~ ^[0-9]+$ ]]; then
    err "TUNNEL2_${port_var} must be a number, got '${!port_var}'"
    exit 2
  fi
done

if ! command -v dotnet >/dev/null 2>&1; then
  err "'dotnet' was not found on PATH. Install the .NET 10 SDK (https://dot.net) or add it to PATH"
  err "(e.g. export PATH=\"\$HOME/.dotnet:\$PATH\"), then run this script again."
  exit 127
fi

# --- httpbin (optional, only if installed) ---------------------------------------------------
HTTPBIN_PYTHON=""
HTTPBIN_WORKER_ARGS=()
if [[ "$HTTPBIN" == auto ]]; then
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import httpbin, gunicorn' >/dev/null 2>&1; then
      HTTPBIN_PYTHON="$py"
      if "$py" -c 'import gevent' >/dev/null 2>&1; then
        HTTPBIN_WORKER_ARGS=(-k gevent -w "$HTTPBIN_WORKERS" --worker-connections 1000)
      else
        HTTPBIN_WORKER_ARGS=(-w "$HTTPBIN_WORKERS")
      fi
      break
    fi
  done
fi

# --- ports -----------------------------------------------------------------------------------
declare -A PORT_OWNER=(
  ["$PUBLIC_PORT"]="TunnelServer public (TUNNEL2_PUBLIC_PORT)"
  ["$TUNNEL_PORT"]="TunnelServer tunnel (TUNNEL2_TUNNEL_PORT)"
  ["$BACKEND_PORT"]="TestBackend (TUNNEL2_BACKEND_PORT)"
)
[[ -n "$HTTPBIN_PYTHON" ]] && PORT_OWNER["$HTTPBIN_PORT"]="httpbin (TUNNEL2_HTTPBIN_PORT)"
expected_ports=3
[[ -n "$HTTPBIN_PYTHON" ]] && expected_ports=4
if ((${#PORT_OWNER[@]} != expected_ports)); then
  err "two services were given the same port: public=$PUBLIC_PORT tunnel=$TUNNEL_PORT backend=$BACKEND_PORT httpbin=$HTTPBIN_PORT"
  exit 2
fi
busy=0
for port in "${!PORT_OWNER[@]}"; do
  if port_in_use "$port"; then
    holder="$(describe_listener "$port")"
    err "port $port (${PORT_OWNER[$port]}) is already in use${holder:+ by $holder}." \
      "Stop what listens there (another run-local.sh or docker compose?) or choose another port."
    busy=1
  fi
done
((busy)) && exit 1

# --- build -----------------------------------------------------------------------------------
BIN=net10.0
dll() { echo "$REPO_ROOT/src/$1/bin/$CONFIGURATION/$BIN/$1.dll"; }

# native PROJECT: the Native AOT binary that --aot publishes.
native() { echo "$AOT_DIR/$1/$1"; }
TUNNEL_PROJECTS=(TunnelServer TunnelClient)
if ((AOT)); then BUILT_BY_DOTNET_BUILD=(TestBackend); else BUILT_BY_DOTNET_BUILD=(TestBackend "${TUNNEL_PROJECTS[@]}"); fi

if ((BUILD)); then
  log "building $CONFIGURATION (use --no-build to skip)"
  for project in "${BUILT_BY_DOTNET_BUILD[@]}"; do
    if ! dotnet build -c "$CONFIGURATION" --nologo -v minimal "$REPO_ROOT/src/$project/$project.csproj"; then
      err "dotnet build of src/$project failed"
      exit 1
    fi
  done
  if ((AOT)); then
    # Native AOT links with the system's C toolchain and zlib; as root on Debian, install them when missing.
    if ! { command -v clang >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1; } || [[ ! -f /usr/include/zlib.h ]]; then
      if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
        log "--aot: installing gcc and zlib1g-dev (Native AOT links with them)"
        { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
          apt-get install -y -qq --no-install-recommends gcc libc6-dev zlib1g-dev >/dev/null; } \
          || { err "apt-get install gcc libc6-dev zlib1g-dev failed"; exit 1; }
      else
        err "--aot needs clang or gcc and zlib1g-dev: sudo apt-get install gcc zlib1g-dev"
        exit 1
      fi
    fi
    for project in "${TUNNEL_PROJECTS[@]}"; do
      log "publishing $project as Native AOT for this machine into $AOT_DIR/$project"
      if ! dotnet publish -c "$CONFIGURATION" --use-current-runtime -p:PublishAot=true --nologo -v minimal \
          -o "$AOT_DIR/$project" "$REPO_ROOT/src/$project/$project.csproj"; then
        err "Native AOT publish of src/$project failed (it needs clang or gcc, and zlib1g-dev)"
        exit 1
      fi
    done
  fi
fi
for project in "${BUILT_BY_DOTNET_BUILD[@]}"; do
  if [[ ! -f "$(dll "$project")" ]]; then
    err "$(dll "$project") does not exist; run without --no-build (or: dotnet build -c $CONFIGURATION src/$project)"
    exit 1
  fi
done
if ((AOT)); then
  for project in "${TUNNEL_PROJECTS[@]}"; do
    [[ -x "$(native "$project")" ]] || { err "$(native "$project") does not exist; run with --aot but without --no-build"; exit 1; }
  done
  SERVER_CMD=("$(native TunnelServer)")
  CLIENT_CMD=("$(native TunnelClient)")
else
  SERVER_CMD=(dotnet "$(dll TunnelServer)")
  CLIENT_CMD=(dotnet "$(dll TunnelClient)")
fi
# Each program runs in its own folder, where its appsettings*.json are.
SERVER_DIR="$(dirname "${SERVER_CMD[-1]}")"
CLIENT_DIR="$(dirname "${CLIENT_CMD[-1]}")"

# --- start -----------------------------------------------------------------------------------
mkdir -p "$RUN_DIR"
log "logs in $RUN_DIR"

start TestBackend "$RUN_DIR/backend.log" "$(dirname "$(dll TestBackend)")" \
  dotnet "$(dll TestBackend)" --urls "http://127.0.0.1:$BACKEND_PORT"

if [[ -n "$HTTPBIN_PYTHON" ]]; then
  start httpbin "$RUN_DIR/httpbin.log" "$RUN_DIR" \
    "$HTTPBIN_PYTHON" -m gunicorn "${HTTPBIN_WORKER_ARGS[@]}" -b "127.0.0.1:$HTTPBIN_PORT" httpbin:app
fi

start TunnelServer "$RUN_DIR/server.log" "$SERVER_DIR" \
  "${SERVER_CMD[@]}" --environment Development \
  --public-url "http://127.0.0.1:$PUBLIC_PORT" --tunnel-url "http://127.0.0.1:$TUNNEL_PORT"

wait_until "TestBackend on :$BACKEND_PORT" answers "http://127.0.0.1:$BACKEND_PORT/healthz" ok
# A listener on the public port will do here: the real check is the request through the tunnel below.
wait_until "TunnelServer on :$PUBLIC_PORT" port_in_use "$PUBLIC_PORT"

# Session and token come from TunnelClient's appsettings.Development.json.
start TunnelClient "$RUN_DIR/client.log" "$CLIENT_DIR" \
  "${CLIENT_CMD[@]}" --environment Development \
  --server "http://127.0.0.1:$TUNNEL_PORT" --backend "http://127.0.0.1:$BACKEND_PORT"

if [[ -n "$HTTPBIN_PYTHON" ]]; then
  wait_until "httpbin on :$HTTPBIN_PORT" answers "http://127.0.0.1:$HTTPBIN_PORT/get"
  start TunnelClient-httpbin "$RUN_DIR/client-httpbin.log" "$CLIENT_DIR" \
    "${CLIENT_CMD[@]}" --environment Development --session "$HTTPBIN_SESSION" \
    --server "http://127.0.0.1:$TUNNEL_PORT" --backend "http://127.0.0.1:$HTTPBIN_PORT"
fi

URL="http://localhost:$PUBLIC_PORT/session/$SESSION/loadtest/ping"
wait_until "a request through the tunnel ($URL)" answers "$URL" pong
if [[ -n "$HTTPBIN_PYTHON" ]]; then
  wait_until "httpbin through the tunnel" answers "http://localhost:$PUBLIC_PORT/session/$HTTPBIN_SESSION/get"
fi

log "ready: $URL"
log "try:   curl $URL"
log "       curl http://localhost:$PUBLIC_PORT/session/$SESSION/loadtest/get?x=1"
if [[ -n "$HTTPBIN_PYTHON" ]]; then
  log "httpbin: curl http://localhost:$PUBLIC_PORT/session/$HTTPBIN_SESSION/get"
else
  log "note: httpbin (session $HTTPBIN_SESSION) is not installed here, so that session runs only in docker-compose.yml"
  log "      (to serve it locally too: apt-get install python3-httpbin gunicorn python3-gevent)"
fi
log "logs:  $(printf '%s ' "${LOGS[@]}")"
log "press Ctrl-C to stop"

run_until_stopped
