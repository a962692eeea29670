#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Issue 16's failover benchmark, in the spirit of tgin's: a fixed rate of GETs spread over three replicas for 60 s;
# at 20 s one replica's backend is killed (SIGKILL), at 40 s it is started again. Per second: success rate,
# round-trip p50/p99, and the share the killed replica answered, for three set-ups side by side:
#   direct  the load generator itself takes the three replicas in turn (no balancer, no health: the floor)
#   nginx   one nginx hop with the three as an upstream (passive health, proxy_next_upstream for GETs)
#   tunnel  one TunnelServer, three TunnelClients (one per replica) probing /healthz every --health-interval
#   agent   the same server, one TunnelClient in front of all three (--backend three times, tgin's agent), probing each
# Writes tunnel2-load-tests/reports/<UTC>-failover/{summary.md,failover.png,*-per-second.csv}.
set -euo pipefail

LT_NAME=failover
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
# shellcheck source=lib/side-by-side.sh
source "$SCRIPT_DIR/lib/side-by-side.sh"

PORT_BASE="${FAILOVER_PORT_BASE:-12170}"
REPLICAS=("$PORT_BASE" "$((PORT_BASE + 1))" "$((PORT_BASE + 2))")
PUBLIC=$((PORT_BASE + 3))
TUNNEL=$((PORT_BASE + 4))
HOP=$((PORT_BASE + 5))
RATE=200
SECONDS_TOTAL=60
KILL_AT=20
RESTART_AT=40
HEALTH_INTERVAL=00:00:01
TARGETS="direct nginx tunnel agent"
TOKEN="failover-load-$$-token"
ENGINE="$SCRIPT_DIR/lib/failover.py"
PY=/usr/bin/python3

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/failover.sh [--rate N] [--seconds N] [--kill-at N] [--restart-at N]
       [--health-interval T] [--targets "direct nginx tunnel agent"] [--help]

$RATE GET/s (--rate) of /loadtest/get for $SECONDS_TOTAL s (--seconds) over three TestBackend replicas (ports
${REPLICAS[*]}); the first is killed with SIGKILL at $KILL_AT s and started again at $RESTART_AT s. Targets:
direct (the generator round-robins the three itself), nginx (one hop, upstream of three, port $HOP), tunnel
(TunnelServer ports $PUBLIC/$TUNNEL, three TunnelClients with --health-path /healthz --health-interval $HEALTH_INTERVAL),
agent (the same server, one TunnelClient with the three as --backend, each probed the same way).
Needs a Release build; installs nginx, python3-aiohttp and python3-matplotlib (Debian) when missing and root.
Exit: 0 every target ran (read the numbers); 1 the set-up failed; 2 bad usage; 127 a missing tool.
EOF
}

while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --rate) RATE="${2:?}"; shift ;;
    --seconds) SECONDS_TOTAL="${2:?}"; shift ;;
    --kill-at) KILL_AT="${2:?}"; shift ;;
    --restart-at) RESTART_AT="${2:?}"; shift ;;
    --health-interval) HEALTH_INTERVAL="${2:?}"; shift ;;
    --targets) TARGETS="${2:?}"; shift ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done
for n in RATE SECONDS_TOTAL KILL_AT RESTART_AT; do
  [[ "${!n}" =~ ^[0-9]+$ ]] || die "$n must be a whole number, got '${!n}'" 2
done
((KILL_AT < RESTART_AT && RESTART_AT < SECONDS_TOTAL)) || die "need kill-at < restart-at < seconds" 2

ensure_tool nginx nginx
ensure_tool curl curl
for module in aiohttp matplotlib; do
  if ! $PY -c "import $module" 2>/dev/null; then
    [[ "$(id -u)" == 0 ]] || die "Debian's python3-$module is missing (apt-get install python3-$module)" 127
    log "installing Debian package python3-$module"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "python3-$module" >&2 \
      || die "apt-get install python3-$module failed" 127
  fi
done
for dll in TestBackend TunnelServer TunnelClient; do
  [[ -f "$REPO_ROOT/src/$dll/bin/Release/net10.0/$dll.dll" ]] || die "src/$dll/bin/Release/net10.0/$dll.dll is missing: dotnet build -c Release first"
done
for port in "${REPLICAS[@]}" $PUBLIC $TUNNEL $HOP; do
  port_in_use "$port" && die "port $port is in use (FAILOVER_PORT_BASE moves the six ports)"
done

REPORT_DIR="$LT_DIR/reports/$(utc_stamp)-failover"
NGINX_DIR="$REPORT_DIR/nginx"
mkdir -p "$REPORT_DIR"
PIDS=()
declare -A REPLICA_PID=()
cleanup() {
  stop_all_nginx
  local pid
  for pid in "${PIDS[@]}" "${REPLICA_PID[@]}"; do stop_pid process "$pid" 10; done
}
trap cleanup EXIT

quiet=(--Serilog:MinimumLevel:Default=Warning)
start() { # start NAME DLL ARGS...: a Release dll in its own session; its pid in $STARTED
  local name="$1" dll="$REPO_ROOT/src/$2/bin/Release/net10.0/$2.dll"
  shift 2
  (cd "$(dirname "$dll")" && exec $SETSID dotnet "$dll" "$@") </dev/null >>"$REPORT_DIR/$name.log" 2>&1 &
  STARTED=$!
}
start_replica() {
  start "replica-$1" TestBackend --urls "http://127.0.0.1:$1" "${quiet[@]}"
  REPLICA_PID[$1]=$STARTED
  wait_pong "replica $1" "$STARTED" "http://127.0.0.1:$1/loadtest/ping" 30 "$REPORT_DIR/replica-$1.log"
}
for port in "${REPLICAS[@]}"; do start_replica "$port"; done

start server TunnelServer --public-url "http://127.0.0.1:$PUBLIC" --tunnel-url "http://127.0.0.1:$TUNNEL" --token "$TOKEN" \
  --Serilog:MinimumLevel:Default=Information
PIDS+=("$STARTED")
# --host-header rewrite: the replica that answered is told by the Host it got (its own address), see lib/failover.py.
for port in "${REPLICAS[@]}"; do
  start "client-$port" TunnelClient --server "http://127.0.0.1:$TUNNEL" --session failover --token "$TOKEN" --host-header rewrite \
    --backend "http://127.0.0.1:$port" --health-path /healthz --health-interval "$HEALTH_INTERVAL" --max-concurrency 1000 \
    --Serilog:MinimumLevel:Default=Information
  PIDS+=("$STARTED")
done
agent_backends=()
for port in "${REPLICAS[@]}"; do agent_backends+=(--backend "http://127.0.0.1:$port"); done
start client-agent TunnelClient --server "http://127.0.0.1:$TUNNEL" --session failover-agent --token "$TOKEN" --host-header rewrite \
  "${agent_backends[@]}" --health-path /healthz --health-interval "$HEALTH_INTERVAL" --max-concurrency 1000 \
  --Serilog:MinimumLevel:Default=Information
PIDS+=("$STARTED")

nginx_conf hop 1 "  upstream replicas {
    server 127.0.0.1:${REPLICAS[0]} max_fails=1 fail_timeout=5s;
    server 127.0.0.1:${REPLICAS[1]} max_fails=1 fail_timeout=5s;
    server 127.0.0.1:${REPLICAS[2]} max_fails=1 fail_timeout=5s;
    keepalive 64;
  }
  server { listen 127.0.0.1:$HOP backlog=4096;
    location / {
      proxy_pass http://replicas; proxy_http_version 1.1; proxy_set_header Connection \"\";
      proxy_connect_timeout 1s; proxy_next_upstream error timeout;
      add_header X-Upstream \$upstream_addr always;
    } }"
start_nginx hop "http://127.0.0.1:$HOP/loadtest/ping"

# Every replica answers through the tunnel before the first run (three clients logged in and ready), and through the agent.
for session in failover failover-agent; do
  deadline=$((SECONDS + 30))
  declare -A seen=()
  while ((${#seen[@]} < 3)); do
    ((SECONDS < deadline)) || die "session $session did not reach all three replicas within 30 s (see $REPORT_DIR/*.log)"
    port="$(curl -s --max-time 2 "http://127.0.0.1:$PUBLIC/session/$session/loadtest/get" \
      | $PY -c 'import json, sys; print(json.load(sys.stdin)["url"].split("//")[1].split("/")[0].rsplit(":", 1)[1])' 2>/dev/null || true)"
    [[ -n "$port" ]] && seen[$port]=1
    sleep 0.1
  done
  unset seen
done

KILLED="${REPLICAS[0]}"
for target in $TARGETS; do
  case "$target" in
    direct) urls=(); for port in "${REPLICAS[@]}"; do urls+=(--url "http://127.0.0.1:$port/loadtest/get"); done ;;
    nginx)  urls=(--url "http://127.0.0.1:$HOP/loadtest/get") ;;
    tunnel) urls=(--url "http://127.0.0.1:$PUBLIC/session/failover/loadtest/get") ;;
    agent)  urls=(--url "http://127.0.0.1:$PUBLIC/session/failover-agent/loadtest/get") ;;
    *) die "unknown target '$target'" 2 ;;
  esac
  ready="$REPORT_DIR/$target.started"
  log "$target: $RATE GET/s for $SECONDS_TOTAL s; replica $KILLED killed at $KILL_AT s, restarted at $RESTART_AT s"
  $PY "$ENGINE" run --target "$target" "${urls[@]}" --rate "$RATE" --seconds "$SECONDS_TOTAL" --kill-at "$KILL_AT" \
    --restart-at "$RESTART_AT" --killed "$KILLED" --ready-file "$ready" --out "$REPORT_DIR/$target.json" &
  engine=$!
  deadline=$((SECONDS + 30))
  until [[ -f "$ready" ]]; do ((SECONDS < deadline)) || die "the load generator did not start"; sleep 0.05; done
  sleep "$KILL_AT"
  kill -KILL "${REPLICA_PID[$KILLED]}"
  wait "${REPLICA_PID[$KILLED]}" 2>/dev/null || true # reaped here, so bash does not report the kill as a job
  log "$target: replica $KILLED killed"
  sleep "$((RESTART_AT - KILL_AT))"
  start_replica "$KILLED"
  log "$target: replica $KILLED started again"
  wait "$engine" || die "the load generator failed on $target"
  sleep 3 # health probes and nginx's fail_timeout see the restarted replica before the next target
done

{
  echo "# Failover through three replicas, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, commit $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
  echo "$RATE GET/s of /loadtest/get for $SECONDS_TOTAL s (open model: a request leaves on time whether or not earlier ones answered;"
  echo "5 s timeout); replica $KILLED killed with SIGKILL at $KILL_AT s and started again at $RESTART_AT s (a new process)."
  echo "Tunnel clients probe /healthz every $HEALTH_INTERVAL; nginx: max_fails=1 fail_timeout=5s, proxy_next_upstream error timeout."
  echo
  $PY "$ENGINE" report "$REPORT_DIR"
} >"$REPORT_DIR/summary.md"
$PY "$ENGINE" plot "$REPORT_DIR" --out "$REPORT_DIR/failover.png"
grep -h "passed over\|health probe\|reports its backend\|ejected" "$REPORT_DIR"/server.log "$REPORT_DIR"/client-*.log >"$REPORT_DIR/health-events.log" 2>/dev/null || true
cat "$REPORT_DIR/summary.md"
log "report: $REPORT_DIR"
