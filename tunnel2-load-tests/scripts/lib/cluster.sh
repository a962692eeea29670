# shellcheck shell=bash
# The cluster of tunnel2-deploy/cluster/run-cluster.sh as the cluster scripts see it: its URLs, its nodes' pids and
# HAProxy's view of them, and starting and stopping it. Sourced after lib/common.sh; not run on its own.

CLUSTER_BASE_PORT="${TUNNEL2_CLUSTER_BASE_PORT:-12040}"
CLUSTER_RUN_DIR="${TUNNEL2_CLUSTER_RUN_DIR:-/tmp/tunnel2-cluster}"
[[ "$CLUSTER_BASE_PORT" =~ ^[0-9]+$ ]] || die "TUNNEL2_CLUSTER_BASE_PORT must be a number, got '$CLUSTER_BASE_PORT'" 2
CLUSTER_URL="http://127.0.0.1:$CLUSTER_BASE_PORT/session/$SESSION/loadtest/ping"
CLUSTER_STATS_CSV="http://127.0.0.1:$((CLUSTER_BASE_PORT + 9))/;csv"
CLUSTER_PID=""

# node_url N: the session's ping on node N's own public port. node_pid N / piece_pid NAME: from run-cluster's pid files.
node_url() { echo "http://127.0.0.1:$((CLUSTER_BASE_PORT + $1))/session/$SESSION/loadtest/ping"; }
piece_pid() { cat "$CLUSTER_RUN_DIR/$1.pid" 2>/dev/null; }
node_pid() { piece_pid "node-$1"; }

# tcp_checks: the session's raw TCP port (run-cluster.sh writes it to tcp-port) answers TestBackend's ping through
# HAProxy's TCP frontend and on every node's own address (127.0.0.2..4), so every node listens on that one port.
# Prints one line; returns 1 when any of them did not answer.
tcp_checks() {
  local port ok=1 n line
  port="$(cat "$CLUSTER_RUN_DIR/tcp-port" 2>/dev/null || true)"
  [[ -n "$port" ]] || { echo "tcp: no TCP port (is this run-cluster.sh older than its TCP support?)"; return 1; }
  line="tcp port $port: through HAProxy"
  if answers "http://127.0.0.1:$port/loadtest/ping" pong; then line+=" ok"; else line+=" FAILED"; ok=0; fi
  for n in 1 2 3; do
    if answers "http://127.0.0.$((n + 1)):$port/loadtest/ping" pong; then line+=", node-$n ok"; else line+=", node-$n FAILED"; ok=0; fi
  done
  echo "$line"
  ((ok))
}

# haproxy_status N: node N's state on HAProxy's status page (UP, DOWN, "UP 1/2", ...).
haproxy_status() { curl -fsS --max-time 1 "$CLUSTER_STATS_CSV" 2>/dev/null | awk -F, -v s="node-$1" '$1 == "nodes" && $2 == s {print $18}'; }

# nodes_up COUNT: exactly COUNT nodes are UP in HAProxy (the backend's own summary row is not a node).
nodes_up() { [[ "$(curl -fsS --max-time 1 "$CLUSTER_STATS_CSV" 2>/dev/null | awk -F, '$1 == "nodes" && $2 ~ /^node-/ && $18 == "UP"' | wc -l)" -eq "$1" ]]; }

# cluster_start LOG NODES [ARGS...]: starts run-cluster.sh with ARGS, output to LOG, and waits until the session
# answers through HAProxy with NODES nodes up (STACK_START_TIMEOUT); stop it with cluster_stop.
cluster_start() {
  local logfile="$1" nodes="$2"
  shift 2
  $SETSID "$REPO_ROOT/tunnel2-deploy/cluster/run-cluster.sh" "$@" >"$logfile" 2>&1 &
  CLUSTER_PID=$!
  local deadline=$((SECONDS + STACK_START_TIMEOUT))
  until answers "$CLUSTER_URL" pong && nodes_up "$nodes"; do
    kill -0 "$CLUSTER_PID" 2>/dev/null || { tail -n 20 "$logfile" >&2; CLUSTER_PID=""; die "run-cluster.sh exited (see $logfile)"; }
    ((SECONDS < deadline)) || die "the cluster of $nodes node(s) did not come up within ${STACK_START_TIMEOUT}s"
    sleep 0.5
  done
}

cluster_stop() {
  [[ -n "$CLUSTER_PID" ]] || return 0
  log "stopping the cluster we started (run-cluster.sh pid $CLUSTER_PID)"
  kill -TERM "$CLUSTER_PID" 2>/dev/null || true
  wait "$CLUSTER_PID" 2>/dev/null || true
  CLUSTER_PID=""
}
