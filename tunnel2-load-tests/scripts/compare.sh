#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Throughput and latency of Tunnel2 next to the same backend reached directly, through one
# nginx reverse-proxy hop and through two chained nginx hops, in one sitting, with the runs
# alternating (direct, nginx1, nginx2, tunnel, direct, ...) so that the machine's noise hits
# every target alike. Prints the median RPS of each target, its ratio to direct, p50/p99, and
# the CPU time per request of each Tunnel2 process during the tunnel runs.
set -euo pipefail

LT_NAME=compare
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

ROUNDS="${COMPARE_ROUNDS:-3}"
SECONDS_PER_RUN="${COMPARE_SECONDS:-15}"
CONNECTIONS="${COMPARE_CONNECTIONS:-50}"
THREADS="${COMPARE_THREADS:-2}"
ENDPOINT="ping"
NGINX1_PORT="${COMPARE_NGINX1_PORT:-12110}"
NGINX2_PORT="${COMPARE_NGINX2_PORT:-12111}"
TARGETS=(direct nginx1 nginx2 tunnel)

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/compare.sh [--rounds N] [--seconds S] [--endpoint ping|get|fast]
                                              [--targets "direct nginx1 nginx2 tunnel"]

For each round, one 'wrk -t$THREADS -c$CONNECTIONS -d\${S}s --latency' run per target, in turn:
  direct  http://127.0.0.1:$BACKEND_PORT/loadtest/ENDPOINT (TestBackend)
  nginx1  one nginx reverse-proxy hop (127.0.0.1:$NGINX1_PORT) in front of TestBackend
  nginx2  two chained nginx hops (127.0.0.1:$NGINX2_PORT -> :$NGINX1_PORT -> TestBackend)
  tunnel  http://127.0.0.1:$PUBLIC_PORT/session/$SESSION/loadtest/ENDPOINT (Tunnel2)
nginx runs from a config generated into the report folder (keep-alive upstreams, HTTP/1.1,
worker_processes 1 per hop, access log off). Defaults: $ROUNDS rounds of $SECONDS_PER_RUN s.
Prints per target: median RPS, ratio to direct, median p50 and p99 latency; and the CPU
microseconds per request of TunnelServer and TunnelClient over the tunnel runs.

Uses the running stack, or starts tunnel2-deploy/dev/run-local.sh and stops it at the end.
Environment: COMPARE_ROUNDS, COMPARE_SECONDS, COMPARE_CONNECTIONS, COMPARE_THREADS,
COMPARE_NGINX1_PORT ($NGINX1_PORT), COMPARE_NGINX2_PORT ($NGINX2_PORT).
Reports: tunnel2-load-tests/reports/<UTC timestamp>-compare/ (every wrk output, summary.txt).
Exit 0 when every run completed without socket errors or non-2xx answers, 1 otherwise.
EOF
}

while (($#)); do
  case "$1" in
    --rounds) ROUNDS="$2"; shift ;;
    --seconds) SECONDS_PER_RUN="$2"; shift ;;
    --endpoint) ENDPOINT="$2"; shift ;;
    --targets) read -r -a TARGETS <<<"$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ && "$SECONDS_PER_RUN" =~ ^[1-9][0-9]*$ ]] || die "--rounds and --seconds take positive numbers" 2
case "$ENDPOINT" in ping|get|fast) ;; *) die "--endpoint must be ping, get or fast" 2 ;; esac

ensure_tool wrk wrk
ensure_tool curl curl
ensure_tool python3 python3
needs_nginx=0
for t in "${TARGETS[@]}"; do
  case "$t" in
    direct|tunnel) ;;
    nginx1|nginx2) needs_nginx=1 ;;
    *) die "unknown target '$t'" 2 ;;
  esac
done
((needs_nginx)) && ensure_tool nginx nginx

REPORT_DIR="$LT_DIR/reports/$(utc_stamp)-compare"
mkdir -p "$REPORT_DIR"
NGINX_DIR="$REPORT_DIR/nginx"
NGINX_PID=""

cleanup() {
  if [[ -n "$NGINX_PID" ]]; then
    kill -QUIT "$NGINX_PID" 2>/dev/null || true
    NGINX_PID=""
  fi
  stack_stop
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_nginx() {
  mkdir -p "$NGINX_DIR/logs" "$NGINX_DIR/tmp"
  # One master, two servers: each hop has its own worker so that the two-hop chain pays for
  # two proxies, like two separate processes would.
  cat >"$NGINX_DIR/nginx.conf" <<EOF
worker_processes 2;
pid $NGINX_DIR/nginx.pid;
error_log $NGINX_DIR/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $NGINX_DIR/tmp/body;
  proxy_temp_path $NGINX_DIR/tmp/proxy;
  fastcgi_temp_path $NGINX_DIR/tmp/fastcgi;
  uwsgi_temp_path $NGINX_DIR/tmp/uwsgi;
  scgi_temp_path $NGINX_DIR/tmp/scgi;
  keepalive_requests 1000000;
  upstream backend { server 127.0.0.1:$BACKEND_PORT; keepalive 128; }
  upstream hop1 { server 127.0.0.1:$NGINX1_PORT; keepalive 128; }
  server {
    listen 127.0.0.1:$NGINX1_PORT;
    location / { proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
  server {
    listen 127.0.0.1:$NGINX2_PORT;
    location / { proxy_pass http://hop1; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
EOF
  nginx -c "$NGINX_DIR/nginx.conf" -p "$NGINX_DIR" -g 'daemon off;' >"$NGINX_DIR/logs/stdout.log" 2>&1 &
  NGINX_PID=$!
  local deadline=$((SECONDS + 10))
  until answers "http://127.0.0.1:$NGINX2_PORT/loadtest/ping" pong; do
    kill -0 "$NGINX_PID" 2>/dev/null || die "nginx did not start (see $NGINX_DIR/logs)"
    ((SECONDS < deadline)) || die "nginx did not answer within 10 s (see $NGINX_DIR/logs)"
    sleep 0.2
  done
}

url_of() {
  local path="/loadtest/$ENDPOINT"
  case "$1" in
    direct) echo "$DIRECT_BASE$path" ;;
    nginx1) echo "http://127.0.0.1:$NGINX1_PORT$path" ;;
    nginx2) echo "http://127.0.0.1:$NGINX2_PORT$path" ;;
    tunnel) echo "$TUNNEL_BASE$path" ;;
  esac
}

# cpu_ticks PID: user+system clock ticks of a process so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

stack_ensure 1 1 "$REPORT_DIR/run-local.log"
((needs_nginx)) && start_nginx

SERVER_PID="$(stack_pids | awk '$1 == "TunnelServer" {print $2; exit}')"
CLIENT_PID="$(stack_pids | awk '$1 == "TunnelClient" {print $2; exit}')"
log "TunnelServer pid ${SERVER_PID:-?}, TunnelClient pid ${CLIENT_PID:-?}; reports in $REPORT_DIR"

log "warm-up: 3 s per target (not measured)"
for t in "${TARGETS[@]}"; do
  wrk -t"$THREADS" -c"$CONNECTIONS" -d3s "$(url_of "$t")" >/dev/null 2>&1 || true
done

server_ticks=0 client_ticks=0 tunnel_requests=0 errors=0
for ((round = 1; round <= ROUNDS; round++)); do
  for t in "${TARGETS[@]}"; do
    out="$REPORT_DIR/$t.$round.txt"
    if [[ "$t" == tunnel ]]; then
      s0=$(cpu_ticks "${SERVER_PID:-0}") c0=$(cpu_ticks "${CLIENT_PID:-0}")
    fi
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" --latency "$(url_of "$t")" >"$out" 2>&1
    if [[ "$t" == tunnel ]]; then
      server_ticks=$((server_ticks + $(cpu_ticks "${SERVER_PID:-0}") - s0))
      client_ticks=$((client_ticks + $(cpu_ticks "${CLIENT_PID:-0}") - c0))
      tunnel_requests=$((tunnel_requests + $(awk '/requests in/ {print $1; exit}' "$out")))
    fi
    if grep -qE 'Socket errors|Non-2xx' "$out"; then
      errors=1
      warn "$t round $round: $(grep -E 'Socket errors|Non-2xx' "$out" | tr -s ' ' | tr '\n' ';')"
    fi
    log "round $round $t: $(awk '/Requests\/sec/ {print $2}' "$out") RPS"
  done
done

python3 - "$REPORT_DIR" "$ROUNDS" "$(getconf CLK_TCK)" "$server_ticks" "$client_ticks" "$tunnel_requests" "${TARGETS[@]}" <<'PY' | tee "$REPORT_DIR/summary.txt"
import re, statistics, sys
folder, rounds, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
server_ticks, client_ticks, tunnel_requests = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
targets = sys.argv[7:]

def ms(value, unit):
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

rows = {}
for t in targets:
    rps, p50, p99 = [], [], []
    for r in range(1, rounds + 1):
        text = open(f"{folder}/{t}.{r}.txt").read()
        rps.append(float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1)))
        for pct, into in (("50", p50), ("99", p99)):
            m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\b", text, re.M)
            into.append(ms(*m.groups()))
    rows[t] = (rps, statistics.median(rps), statistics.median(p50), statistics.median(p99))

direct = rows.get("direct", (None, None))[1]
print(f"{'target':<8} {'median RPS':>11} {'x direct':>9} {'p50 ms':>8} {'p99 ms':>8}   runs (RPS)")
for t in targets:
    runs, rps, p50, p99 = rows[t]
    ratio = f"{rps / direct:.3f}" if direct else "-"
    print(f"{t:<8} {rps:>11,.0f} {ratio:>9} {p50:>8.3f} {p99:>8.3f}   {', '.join(f'{x:,.0f}' for x in runs)}")
if tunnel_requests:
    per = lambda ticks: ticks / hz * 1e6 / tunnel_requests
    print(f"CPU per request during the tunnel runs: TunnelServer {per(server_ticks):.1f} us, "
          f"TunnelClient {per(client_ticks):.1f} us, both {per(server_ticks + client_ticks):.1f} us "
          f"({tunnel_requests:,} requests)")
PY
exit "$errors"
