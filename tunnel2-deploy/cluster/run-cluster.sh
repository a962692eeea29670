#!/usr/bin/env bash
# Tunnel2 as a cluster on loopback: TestBackend, three TunnelServer nodes that share nothing, HAProxy in front of
# their public ports, and TunnelClients that each hold an uplink to every node.
#
#   tunnel2-deploy/cluster/run-cluster.sh [--no-build] [--clients N] [--nodes N] [--help]
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd)"
readonly SCRIPT_DIR REPO_ROOT

# The dev session and token of the Development configuration, as in run-local.sh.
readonly SESSION="22222222-2222-2222-2222-222222222222"

BASE_PORT="${TUNNEL2_CLUSTER_BASE_PORT:-12040}"
RUN_DIR="${TUNNEL2_RUN_DIR:-/tmp/tunnel2-cluster}"
START_TIMEOUT="${TUNNEL2_START_TIMEOUT:-60}"
STOP_TIMEOUT="${TUNNEL2_STOP_TIMEOUT:-15}"
CONFIGURATION=Release
BUILD=1
NODES=3
# A node that starts says it is not ready for this long (ProxyEntry:WarmUp), while the clients reconnect to it; it
# covers the clients' longest reconnect delay, which the cluster's clients keep short.
WARM_UP=00:00:04
CLIENT_RECONNECT_MAX_DELAY=00:00:02
# The clients notice a node that stops answering (frozen, cut off) within this, not the default 45 s.
CLIENT_KEEP_ALIVE_INTERVAL=00:00:02
CLIENT_KEEP_ALIVE_TIMEOUT=00:00:06
CLIENTS=1

usage() {
  local b="$BASE_PORT"
  cat <<EOF
Usage: tunnel2-deploy/cluster/run-cluster.sh [--no-build] [--clients N] [--nodes N] [--help]

Starts on 127.0.0.1, each piece in its own session:
  HAProxy        http://127.0.0.1:$b  (tunnel2-deploy/cluster/haproxy.cfg; its status page :$((b + 9))), and in TCP mode
                 the TCP sessions' ports 127.0.0.1:$((b + 10))-$((b + 19))
  node-1..3      TunnelServer, public :$((b + 1))..$((b + 3)), tunnel :$((b + 4))..$((b + 6)), --node-name node-N,
                 --node-header true (each answer says which node served it in Tunnel2-Node), --warm-up $WARM_UP
                 (after a start, /healthz says 503 while the clients reconnect); TCP ports $((b + 10))-$((b + 19)) on
                 127.0.0.N+1 (127.0.0.2..4: one address per node, so all three can listen on a session's one port)
  TestBackend    http://127.0.0.1:$((b + 7))
  TunnelClient   N clients (default 1) on session $SESSION, each with one uplink to every node
                 (--server given three times), all relaying to TestBackend, over HTTP and as a raw TCP service
                 (--tcp 127.0.0.1:$((b + 7))), reconnecting within $CLIENT_RECONNECT_MAX_DELAY,
                 dropping an uplink whose node is silent for $CLIENT_KEEP_ALIVE_TIMEOUT (pings every $CLIENT_KEEP_ALIVE_INTERVAL)
Builds Release first (unless --no-build), waits until the session answers through every node and through
HAProxy, over HTTP and over its TCP port (written to \$TUNNEL2_RUN_DIR/tcp-port), prints the URLs, then runs
until Ctrl-C / SIGTERM and stops everything in reverse order. A node that
exits (killed, or stopped with SIGTERM after its drain) is started again after 1 s, as a service manager would.
--nodes 1 or 2 starts fewer nodes (HAProxy keeps the others' places, down), to compare cost per node.
Each process's pid is written to \$TUNNEL2_RUN_DIR/<name>.pid for the failure scripts
(tunnel2-load-tests/scripts/cluster-failover.sh).

Needs haproxy (Debian: apt-get install haproxy; installed when missing and run as root), curl and dotnet.

Environment:
  TUNNEL2_CLUSTER_BASE_PORT (12040: the twenty ports from it are used as above)
  TUNNEL2_RUN_DIR (/tmp/tunnel2-cluster)  logs: haproxy.log node-N.log backend.log client-N.log
  TUNNEL2_START_TIMEOUT (60 s)  TUNNEL2_STOP_TIMEOUT (15 s before SIGKILL)

Exit codes: 0 stopped by Ctrl-C/SIGTERM; 1 start-up failed or a process died; 2 bad usage;
127 dotnet, curl or haproxy missing.
EOF
}

while (($#)); do
  case "$1" in
    --no-build) BUILD=0 ;;
    --clients)
      [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || { echo "run-cluster: --clients needs a number of at least 1" >&2; exit 2; }
      CLIENTS="$2"
      shift
      ;;
    --nodes)
      [[ $# -ge 2 && "$2" =~ ^[1-3]$ ]] || { echo "run-cluster: --nodes takes 1, 2 or 3 (haproxy.cfg names three)" >&2; exit 2; }
      NODES="$2"
      shift
      ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-cluster: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

LOG_NAME=run-cluster
# shellcheck source=../lib/processes.sh
source "$REPO_ROOT/tunnel2-deploy/lib/processes.sh"

for number_var in BASE_PORT START_TIMEOUT STOP_TIMEOUT; do
  [[ "${!number_var}" =~ ^[0-9]+$ ]] || { err "$number_var must be a number, got '${!number_var}'"; exit 2; }
done

for tool in dotnet curl; do
  command -v "$tool" >/dev/null 2>&1 || { err "'$tool' was not found on PATH"; exit 127; }
done
if ! command -v haproxy >/dev/null 2>&1; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "haproxy is missing; installing Debian's package"
    (DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends haproxy) >/dev/null || { err "apt-get install haproxy failed"; exit 1; }
  else
    err "haproxy is not installed: sudo apt-get install haproxy"
    exit 127
  fi
fi

HAPROXY_PORT=$BASE_PORT
STATS_PORT=$((BASE_PORT + 9))
BACKEND_PORT=$((BASE_PORT + 7))
TCP_FIRST=$((BASE_PORT + 10))
TCP_LAST=$((BASE_PORT + 19))
public_port() { echo $((BASE_PORT + $1)); }
tunnel_port() { echo $((BASE_PORT + 3 + $1)); }
# Each node's TCP ports listen on an address of its own, as nodes on separate hosts would: 127.0.0.2, .3, .4.
tcp_address() { echo "127.0.0.$(($1 + 1))"; }

busy=0
for port in "$HAPROXY_PORT" "$STATS_PORT" "$BACKEND_PORT" $(seq "$TCP_FIRST" "$TCP_LAST") $(for n in $(seq 1 "$NODES"); do public_port "$n"; tunnel_port "$n"; done); do
  if port_in_use "$port"; then
    holder="$(describe_listener "$port")"
    err "port $port is already in use${holder:+ by $holder} (another run-cluster.sh?); set TUNNEL2_CLUSTER_BASE_PORT"
    busy=1
  fi
done
((busy)) && exit 1

dll() { echo "$REPO_ROOT/src/$1/bin/$CONFIGURATION/net10.0/$1.dll"; }
if ((BUILD)); then
  log "building $CONFIGURATION (use --no-build to skip)"
  for project in TestBackend TunnelServer TunnelClient; do
    dotnet build -c "$CONFIGURATION" --nologo -v minimal "$REPO_ROOT/src/$project/$project.csproj" \
      || { err "dotnet build of src/$project failed"; exit 1; }
  done
fi
for project in TestBackend TunnelServer TunnelClient; do
  [[ -f "$(dll "$project")" ]] || { err "$(dll "$project") does not exist; run without --no-build"; exit 1; }
done

mkdir -p "$RUN_DIR"
rm -f "$RUN_DIR"/*.pid
log "logs in $RUN_DIR"

# start_recorded NAME COMMAND...: start, with the pid in RUN_DIR/NAME.pid and the log in RUN_DIR/NAME.log.
start_recorded() {
  local name="$1" dir="$2"
  shift 2
  start "$name" "$RUN_DIR/$name.log" "$dir" "$@"
  echo "${PIDS[-1]}" >"$RUN_DIR/$name.pid"
}

start_recorded backend "$(dirname "$(dll TestBackend)")" dotnet "$(dll TestBackend)" --urls "http://127.0.0.1:$BACKEND_PORT"

start_node() {
  local n="$1"
  start_recorded "node-$n" "$(dirname "$(dll TunnelServer)")" dotnet "$(dll TunnelServer)" --environment Development \
    --public-url "http://127.0.0.1:$(public_port "$n")" --tunnel-url "http://127.0.0.1:$(tunnel_port "$n")" \
    --node-name "node-$n" --node-header true --warm-up "$WARM_UP" \
    --tcp-ports "$TCP_FIRST-$TCP_LAST" "--TunnelServer:Tcp:BindAddress=$(tcp_address "$n")" \
    --trusted-proxy 127.0.0.1/32  # HAProxy's X-Forwarded-For names the visitor (docs/security.md)
}

servers=()
for n in $(seq 1 "$NODES"); do
  start_node "$n"
  servers+=(--server "http://127.0.0.1:$(tunnel_port "$n")")
done

export TUNNEL2_HAPROXY_BIND="127.0.0.1:$HAPROXY_PORT" TUNNEL2_HAPROXY_STATS="127.0.0.1:$STATS_PORT"
TUNNEL2_NODE1="127.0.0.1:$(public_port 1)" TUNNEL2_NODE2="127.0.0.1:$(public_port 2)" TUNNEL2_NODE3="127.0.0.1:$(public_port 3)"
export TUNNEL2_NODE1 TUNNEL2_NODE2 TUNNEL2_NODE3
export TUNNEL2_HAPROXY_TCP_BIND="127.0.0.1:$TCP_FIRST-$TCP_LAST"
TUNNEL2_TCP_NODE1="$(tcp_address 1)" TUNNEL2_TCP_NODE2="$(tcp_address 2)" TUNNEL2_TCP_NODE3="$(tcp_address 3)"
export TUNNEL2_TCP_NODE1 TUNNEL2_TCP_NODE2 TUNNEL2_TCP_NODE3
haproxy -c -q -f "$SCRIPT_DIR/haproxy.cfg" || { err "haproxy.cfg does not pass 'haproxy -c'"; exit 1; }
# -db: stay in the foreground, so that this script owns it like the other pieces.
start_recorded haproxy "$RUN_DIR" haproxy -db -f "$SCRIPT_DIR/haproxy.cfg"

wait_until "TestBackend on :$BACKEND_PORT" answers "http://127.0.0.1:$BACKEND_PORT/healthz" ok
for n in $(seq 1 "$NODES"); do
  wait_until "node-$n on :$(public_port "$n")" answers "http://127.0.0.1:$(public_port "$n")/healthz"
done

for c in $(seq 1 "$CLIENTS"); do
  start_recorded "client-$c" "$(dirname "$(dll TunnelClient)")" dotnet "$(dll TunnelClient)" --environment Development \
    "${servers[@]}" --backend "http://127.0.0.1:$BACKEND_PORT" --tcp "127.0.0.1:$BACKEND_PORT" "--TunnelClient:Uplink:ReconnectMaxDelay=$CLIENT_RECONNECT_MAX_DELAY" \
    "--TunnelClient:Uplink:KeepAliveInterval=$CLIENT_KEEP_ALIVE_INTERVAL" "--TunnelClient:Uplink:KeepAliveTimeout=$CLIENT_KEEP_ALIVE_TIMEOUT"
done

PATH_PING="/session/$SESSION/loadtest/ping"
for n in $(seq 1 "$NODES"); do
  wait_until "the session through node-$n" answers "http://127.0.0.1:$(public_port "$n")$PATH_PING" pong
done
URL="http://127.0.0.1:$HAPROXY_PORT$PATH_PING"
wait_until "the session through HAProxy ($URL)" answers "$URL" pong

# The session's TCP port, the same on every node (the client asks each for the first one's): TestBackend's own
# /loadtest/ping, with no /session prefix, since the bytes reach it as they are.
session_tcp_port() { sed -n 's/.*Forwarding tcp:\/\/[0-9.]*:\([0-9]*\) .*/\1/p' "$RUN_DIR/client-1.log" | head -n 1; }
tcp_port_known() { [[ -n "$(session_tcp_port)" ]]; }
wait_until "the session's TCP port in client-1.log" tcp_port_known
TCP_PORT="$(session_tcp_port)"
echo "$TCP_PORT" >"$RUN_DIR/tcp-port"
for n in $(seq 1 "$NODES"); do
  wait_until "the session's TCP port on node-$n ($(tcp_address "$n"):$TCP_PORT)" answers "http://$(tcp_address "$n"):$TCP_PORT/loadtest/ping" pong
done
TCP_URL="http://127.0.0.1:$TCP_PORT/loadtest/ping"
wait_until "the session's TCP port through HAProxy ($TCP_URL)" answers "$TCP_URL" pong

log "ready: $URL"
log "try:   curl -i $URL        (Tunnel2-Node says which node answered)"
log "       HAProxy's status page: http://127.0.0.1:$STATS_PORT/"
log "       curl $TCP_URL   (raw TCP: the session's port $TCP_PORT, HAProxy in TCP mode, any node)"
log "a node that exits is started again after 1 s, as a service manager would (Restart=always); any other piece"
log "exiting stops the cluster. Press Ctrl-C to stop"

# Like run_until_stopped, but nodes are supervised: the failure scripts kill and stop them on purpose.
while true; do
  for i in "${!PIDS[@]}"; do
    kill -0 "${PIDS[i]}" 2>/dev/null && continue
    name="${NAMES[i]}"
    status=0
    wait "${PIDS[i]}" 2>/dev/null || status=$?
    if [[ "$name" != node-* ]]; then
      err "$name (pid ${PIDS[i]}) exited with code $status; stopping the rest of the cluster"
      show_log_tail "$name" "${LOGS[i]}"
      unset 'PIDS[i]' 'NAMES[i]' 'LOGS[i]'
      stop_all
      exit 1
    fi
    log "$name (pid ${PIDS[i]}) exited with code $status; starting it again in 1 s"
    unset 'PIDS[i]' 'NAMES[i]' 'LOGS[i]'
    PIDS=("${PIDS[@]}") NAMES=("${NAMES[@]}") LOGS=("${LOGS[@]}")
    sleep 1
    start_node "${name#node-}"
    break
  done
  sleep 0.2 &
  SLEEP_PID=$!
  wait "$SLEEP_PID" 2>/dev/null || true
  SLEEP_PID=""
done
