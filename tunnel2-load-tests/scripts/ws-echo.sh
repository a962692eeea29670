#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# WebSocket echo at a fixed message rate, side by side: straight at TestBackend's /loadtest/ws, through one nginx
# hop, through two chained nginx hops (the tunnel's shape), through one YARP hop, and through the tunnel. Round trips p50/p90/p99 and CPU per message of the processes on each path.
set -euo pipefail

LT_NAME=ws-echo
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
# shellcheck source=lib/side-by-side.sh
source "$SCRIPT_DIR/lib/side-by-side.sh"
WS_PY="$SCRIPT_DIR/lib/ws_echo.py"

SOCKETS=100
RATE=10
DURATION=20
SIZE=64
TARGETS_ARG="direct nginx nginx2 yarp tunnel"
HOP_PORT="${WS_NGINX_PORT:-12140}"
HOP2_PORT="${WS_NGINX2_PORT:-12142}"
YARP_PORT="${WS_YARP_PORT:-12141}"
YARP_DLL="$REPO_ROOT/benchmarks/Tunnel2.YarpHop/bin/Release/net10.0/Tunnel2.YarpHop.dll"
SETTLE="${WS_SETTLE_SECONDS:-3}"
WARM=5

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/ws-echo.sh [--sockets N] [--rate MSGS/S] [--seconds S] [--size BYTES]
         [--warm-up S] [--targets "direct nginx nginx2 yarp tunnel"] [--help]
       (also: tunnel2-load-tests/scripts/run-ramp-up.sh websocket [the same options])

N WebSockets connect to TestBackend's echo (/loadtest/ws), then each sends one binary message of --size bytes every
1/RATE s for S seconds (on schedule, whether or not the last echo came back) and reads the echoes; each message
carries its send time, so each echo is one round trip. The client is aiohttp (Debian's python3-aiohttp, installed
with apt-get when missing and run as root). Per target, one after another:
  direct   ws://127.0.0.1:$BACKEND_PORT/loadtest/ws
  nginx    one nginx hop on :$HOP_PORT (proxy_http_version 1.1, Upgrade and Connection passed, as its docs say)
  nginx2   two chained nginx hops, :$HOP2_PORT -> :$HOP_PORT, in the same nginx (each hop configured as the first)
  yarp     one YARP hop on :$YARP_PORT (benchmarks/Tunnel2.YarpHop, which forwards upgrades by default)
  tunnel   ws://127.0.0.1:$PUBLIC_PORT/session/$SESSION/loadtest/ws

Before each target's measured run, an unmeasured one of --warm-up seconds with the same sockets and rate: the .NET
processes (TestBackend, the YARP hop, the tunnel) compile their paths then, so the CPU per message counts the
steady state, not the JIT (0 skips it).

Options (defaults in brackets): --sockets [$SOCKETS] --rate [$RATE] --seconds [$DURATION] --size [$SIZE]
  --warm-up [$WARM] --targets [$TARGETS_ARG]
Uses the running stack if it answers, otherwise starts tunnel2-deploy/dev/run-local.sh and stops it at the end.
Environment: WS_NGINX_PORT, WS_NGINX2_PORT, WS_YARP_PORT, WS_SETTLE_SECONDS ($SETTLE, pause between targets), the stack's TUNNEL2_* ports.
Reports: tunnel2-load-tests/reports/<UTC timestamp>-ws-echo/: summary.md, <target>.json.
Exit: 0 every target ran (read the numbers); 1 a run or the set-up failed; 2 bad usage; 127 a missing tool.
EOF
}

while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --sockets|--rate|--seconds|--size|--warm-up|--targets) (($# >= 2)) || die "$1 needs a value (see --help)" 2 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  case "$1" in
    --sockets) SOCKETS="$2" ;;
    --rate) RATE="$2" ;;
    --seconds) DURATION="$2" ;;
    --size) SIZE="$2" ;;
    --warm-up) WARM="$2" ;;
    --targets) TARGETS_ARG="$2" ;;
  esac
  shift 2
done

{ [[ "$SOCKETS" =~ ^[1-9][0-9]{0,4}$ ]] && ((SOCKETS <= 10000)); } || die "--sockets takes 1 to 10000, got '$SOCKETS'" 2
[[ "$RATE" =~ ^[1-9][0-9]{0,3}$ ]] || die "--rate takes whole messages per second from 1 to 9999, got '$RATE'" 2
{ [[ "$DURATION" =~ ^[1-9][0-9]{0,2}$ ]] && ((DURATION <= 600)); } || die "--seconds takes 1 to 600, got '$DURATION'" 2
{ [[ "$SIZE" =~ ^[0-9]{1,8}$ ]] && ((SIZE >= 8)); } || die "--size takes 8 bytes or more, got '$SIZE'" 2
{ [[ "$WARM" =~ ^[0-9]{1,3}$ ]] && ((WARM <= 600)); } || die "--warm-up takes 0 to 600 seconds, got '$WARM'" 2
TARGETS=()
for t in $TARGETS_ARG; do
  [[ " direct nginx nginx2 yarp tunnel " == *" $t "* ]] || die "--targets takes direct, nginx, nginx2, yarp and tunnel, got '$t'" 2
  TARGETS+=("$t")
done
((${#TARGETS[@]})) || die "--targets is empty" 2
has_target() { [[ " ${TARGETS[*]} " == *" $1 "* ]]; }

if ! /usr/bin/python3 -c 'import aiohttp' 2>/dev/null; then
  [[ "$(id -u)" == 0 ]] || die "Debian's python3-aiohttp is missing (sudo apt-get install python3-aiohttp)" 127
  log "installing Debian's python3-aiohttp"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-aiohttp >&2 || die "apt-get install python3-aiohttp failed" 127
fi
if has_target nginx || has_target nginx2; then ensure_tool nginx nginx; fi
if has_target yarp; then
  [[ -f "$YARP_DLL" ]] || die "$YARP_DLL is missing: build the solution in Release first (dotnet build -c Release)" 2
fi

STAMP="$(utc_stamp)"
REPORT_DIR="$LT_DIR/reports/$STAMP-ws-echo"
NGINX_DIR="$REPORT_DIR/nginx"
mkdir -p "$REPORT_DIR"
YARP_PID=""
# shellcheck disable=SC2317  # reached through the EXIT trap, which shellcheck does not follow
cleanup() {
  stop_child
  stop_all_nginx
  stop_pid "YARP hop" "$YARP_PID" 10
  stack_stop
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stack_ensure 1 "$(has_target tunnel && echo 1 || echo 0)" "$REPORT_DIR/run-local.log"
BACKEND_PID="$(stack_pid TestBackend)"
SERVER_PID="$(stack_pid TunnelServer)"
CLIENT_PID="$(stack_pid TunnelClient)"
NGINX_WORKERS=""
if has_target nginx || has_target nginx2; then
  port_in_use "$HOP_PORT" && die "port $HOP_PORT (nginx hop, WS_NGINX_PORT) is already in use"
  port_in_use "$HOP2_PORT" && die "port $HOP2_PORT (second nginx hop, WS_NGINX2_PORT) is already in use"
  # hop_server PORT UPSTREAM: a WebSocket-passing hop on PORT to the upstream UPSTREAM.
  hop_server() {
    echo "  server { listen 127.0.0.1:$1 backlog=4096;
    location / { proxy_pass http://$2; proxy_http_version 1.1;
      proxy_set_header Upgrade \$http_upgrade; proxy_set_header Connection \$connection_upgrade;
      proxy_read_timeout 300s; proxy_send_timeout 300s; } }"
  }
  nginx_conf hop 2 "  upstream ws_backend { server 127.0.0.1:$BACKEND_PORT; keepalive 64; }
  upstream ws_hop1 { server 127.0.0.1:$HOP_PORT; keepalive 64; }
  map \$http_upgrade \$connection_upgrade { default upgrade; '' ''; }
$(hop_server "$HOP_PORT" ws_backend)
$(hop_server "$HOP2_PORT" ws_hop1)"
  start_nginx hop "http://127.0.0.1:$HOP2_PORT/loadtest/ping"
  NGINX_WORKERS="$(pgrep -P "${NGINX_PIDS[-1]}" | tr '\n' ' ' || true)"
fi

if has_target yarp; then
  port_in_use "$YARP_PORT" && die "port $YARP_PORT (YARP hop, WS_YARP_PORT) is already in use"
  $SETSID dotnet "$YARP_DLL" --listen "http://127.0.0.1:$YARP_PORT" --destination "http://127.0.0.1:$BACKEND_PORT" \
    </dev/null >"$REPORT_DIR/yarp.log" 2>&1 &
  YARP_PID=$!
  wait_pong "YARP hop" "$YARP_PID" "http://127.0.0.1:$YARP_PORT/loadtest/ping" 30 "$REPORT_DIR/yarp.log"
fi

# cpu_ticks PID...: user+system clock ticks of the processes, summed.
cpu_ticks() {
  local pid total=0
  for pid in "$@"; do total=$((total + $(stat_ticks "/proc/$pid/stat"))); done
  echo "$total"
}

HZ="$(getconf CLK_TCK)"
status=0
i=0
{
  echo "# WebSocket echo, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, commit $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
  echo "$SOCKETS sockets x $RATE msg/s x $DURATION s, $SIZE-byte binary messages (aiohttp client, TestBackend echo)."
  echo
  echo "| target | connected | sent | echoed | p50 ms | p90 ms | p99 ms | max ms | CPU µs/msg: backend | proxy |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} >"$REPORT_DIR/summary.md"
for t in "${TARGETS[@]}"; do
  case "$t" in
    direct) url="ws://127.0.0.1:$BACKEND_PORT/loadtest/ws"; proxy_pids="" ;;
    nginx)  url="ws://127.0.0.1:$HOP_PORT/loadtest/ws"; proxy_pids="$NGINX_WORKERS" ;;
    nginx2) url="ws://127.0.0.1:$HOP2_PORT/loadtest/ws"; proxy_pids="$NGINX_WORKERS" ;;
    yarp)   url="ws://127.0.0.1:$YARP_PORT/loadtest/ws"; proxy_pids="$YARP_PID" ;;
    tunnel) url="ws://127.0.0.1:$PUBLIC_PORT/session/$SESSION/loadtest/ws"; proxy_pids="$SERVER_PID $CLIENT_PID" ;;
  esac
  if ((i++ > 0 && SETTLE > 0)); then sleep "$SETTLE"; fi
  if ((WARM > 0)); then
    log "$t: warm-up, $WARM s (not measured)"
    run_child "$REPORT_DIR/$t-warm-up.log" /usr/bin/python3 "$WS_PY" --target "$t" --url "$url" --sockets "$SOCKETS" --rate "$RATE" \
      --seconds "$WARM" --size "$SIZE" --out "$REPORT_DIR/$t-warm-up.json" || { warn "$t: the warm-up failed"; status=1; continue; }
  fi
  log "$t: $SOCKETS sockets x $RATE msg/s x $DURATION s -> $url"
  # shellcheck disable=SC2086 # pid lists split on purpose
  backend_before="$(cpu_ticks $BACKEND_PID)" proxy_before="$(cpu_ticks $proxy_pids)" client_before="$(cpu_ticks $CLIENT_PID)"
  run_child "$REPORT_DIR/$t.log" /usr/bin/python3 "$WS_PY" --target "$t" --url "$url" --sockets "$SOCKETS" --rate "$RATE" \
    --seconds "$DURATION" --size "$SIZE" --out "$REPORT_DIR/$t.json" || { warn "$t: the engine failed"; status=1; continue; }
  # shellcheck disable=SC2086
  backend_after="$(cpu_ticks $BACKEND_PID)" proxy_after="$(cpu_ticks $proxy_pids)" client_after="$(cpu_ticks $CLIENT_PID)"
  # The tunnel's proxy figure split into its two processes (issue 52 compares the client's alone too).
  [[ "$t" != tunnel ]] || CLIENT_SPLIT="$((client_after - client_before)) $((proxy_after - proxy_before)) $t.json"
  /usr/bin/python3 - "$REPORT_DIR/$t.json" "$((backend_after - backend_before))" "$((proxy_after - proxy_before))" "$HZ" \
    >>"$REPORT_DIR/summary.md" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
backend, proxy, hz = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
echoed = max(1, r["received"])
fmt = lambda v: "-" if v is None else f"{v:.2f}"
per = lambda ticks: f"{ticks / hz / echoed * 1e6:.0f}"
print(f"| {r['target']} | {r['connected']}/{r['sockets']} | {r['sent']} | {r['received']} | {fmt(r['p50_ms'])} | "
      f"{fmt(r['p90_ms'])} | {fmt(r['p99_ms'])} | {fmt(r['max_ms'])} | {per(backend)} | {per(proxy) if r['target'] != 'direct' else '-'} |")
EOF
done
echo >>"$REPORT_DIR/summary.md"
if [[ -n "${CLIENT_SPLIT:-}" ]]; then
  read -r client_ticks proxy_ticks json <<<"$CLIENT_SPLIT"
  /usr/bin/python3 - "$REPORT_DIR/$json" "$client_ticks" "$proxy_ticks" "$HZ" >>"$REPORT_DIR/summary.md" <<'EOF'
import json, sys
echoed = max(1, json.load(open(sys.argv[1]))["received"])
client, proxy, hz = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
per = lambda ticks: f"{ticks / hz / echoed * 1e6:.0f}"
print(f"The tunnel's proxy CPU split: TunnelServer {per(proxy - client)} µs/msg, TunnelClient {per(client)} µs/msg.")
print()
EOF
fi
echo "CPU per message: user+system ticks (1/$HZ s) of the backend and of the proxy's processes (nginx workers; the YARP hop; TunnelServer + TunnelClient) over the measured run (after a $WARM s warm-up), divided by echoed messages." >>"$REPORT_DIR/summary.md"
cat "$REPORT_DIR/summary.md"
log "report: $REPORT_DIR"
exit "$status"
