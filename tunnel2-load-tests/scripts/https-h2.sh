#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The aggressive ramp-up over HTTPS and HTTP/2, side by side: h2load speaks h2 (ALPN) to one nginx TLS hop and to
# the tunnel's HTTPS public port, and h2c straight at TestBackend as the floor. Per stage: requests, failures, p50/p99
# and the CPU per request of each proxy's processes.
set -euo pipefail

LT_NAME=https-h2
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
# shellcheck source=lib/loadgen.sh
source "$SCRIPT_DIR/lib/loadgen.sh"
# shellcheck source=lib/side-by-side.sh
source "$SCRIPT_DIR/lib/side-by-side.sh"

PORT_BASE="${H2_PORT_BASE:-12150}"
BACKEND1=$PORT_BASE          # TestBackend, HTTP/1.1: what nginx and the tunnel client talk to
BACKEND2=$((PORT_BASE + 1))  # TestBackend, h2c only: the direct target
PUBLIC=$((PORT_BASE + 2))    # TunnelServer, HTTPS (h2 + http/1.1 by ALPN)
TUNNEL=$((PORT_BASE + 3))    # TunnelServer's tunnel port
HOP=$((PORT_BASE + 4))       # nginx, HTTPS + http2, proxying HTTP/1.1 with keep-alive
YARP=$((PORT_BASE + 5))      # the YARP hop, HTTPS (h2 + http/1.1 by ALPN), proxying HTTP/1.1 with keep-alive
YARP_DLL="$REPO_ROOT/benchmarks/Tunnel2.YarpHop/bin/Release/net10.0/Tunnel2.YarpHop.dll"
STAGES="$(profile_stages aggressive)"
TOKEN="https-h2-load-$$-token"

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/https-h2.sh [--stages "RATE:SECONDS ..."] [--help]

The aggressive profile's stages ($STAGES) offered by h2load (open model, one request in flight
per connection, $PER_CLIENT_RPS RPS per connection) to GET /loadtest/ping on, one target after another:
  direct   h2c straight at a TestBackend that speaks HTTP/2 only   http://127.0.0.1:$BACKEND2
  nginx    one nginx hop: TLS + HTTP/2 in, HTTP/1.1 keep-alive out  https://127.0.0.1:$HOP
  yarp     one YARP hop (benchmarks/Tunnel2.YarpHop), the same       https://127.0.0.1:$YARP
  tunnel   TunnelServer's HTTPS port (h2 by ALPN) -> TunnelClient -> TestBackend (HTTP/1.1)
           https://127.0.0.1:$PUBLIC/session/h2load
Starts its own processes (a CA and a server certificate made with openssl for the run) and stops them at the end;
needs a Release build (dotnet build -c Release). Ports $PORT_BASE-$((PORT_BASE + 5)) (H2_PORT_BASE).
Reports: tunnel2-load-tests/reports/<UTC timestamp>-https-h2/summary.md.
Exit: 0 every target ran (read the numbers); 1 the set-up failed; 2 bad usage; 127 a missing tool.
EOF
}

while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --stages) (($# >= 2)) || die "--stages needs a value" 2; STAGES="$2"; shift ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done
validate_stages "$STAGES" || die "stages must look like 'RATE:SECONDS RATE:SECONDS', got '$STAGES'" 2

ensure_tool h2load nghttp2-client
ensure_tool nginx nginx
ensure_tool openssl openssl
ensure_tool curl curl
for dll in TestBackend TunnelServer TunnelClient; do
  [[ -f "$REPO_ROOT/src/$dll/bin/Release/net10.0/$dll.dll" ]] || die "src/$dll/bin/Release/net10.0/$dll.dll is missing: dotnet build -c Release first"
done
[[ -f "$YARP_DLL" ]] || die "$YARP_DLL is missing: dotnet build -c Release first"
for port in $BACKEND1 $BACKEND2 $PUBLIC $TUNNEL $HOP $YARP; do
  port_in_use "$port" && die "port $port is in use (H2_PORT_BASE moves the six ports)"
done

REPORT_DIR="$LT_DIR/reports/$(utc_stamp)-https-h2"
NGINX_DIR="$REPORT_DIR/nginx"
TLS="$REPORT_DIR/tls"
mkdir -p "$TLS"
PIDS=()
cleanup() {
  stop_all_nginx
  local pid
  for pid in "${PIDS[@]}"; do stop_pid process "$pid" 10; done
}
trap cleanup EXIT

# A CA and a certificate for 127.0.0.1 it signs: h2load does not verify, but the tunnel and nginx serve the same one.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=h2load test CA" \
  -keyout "$TLS/ca.key" -out "$TLS/ca.pem" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=127.0.0.1" \
  -keyout "$TLS/server.key" -out "$TLS/server.csr" 2>/dev/null
openssl x509 -req -in "$TLS/server.csr" -CA "$TLS/ca.pem" -CAkey "$TLS/ca.key" -CAcreateserial -days 2 \
  -extfile <(printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth') -out "$TLS/server.pem" 2>/dev/null

start() { # start NAME DLL ARGS...: a Release dll in its own session, its pid appended to PIDS
  local name="$1" dll="$REPO_ROOT/src/$2/bin/Release/net10.0/$2.dll"
  shift 2
  (cd "$(dirname "$dll")" && exec $SETSID dotnet "$dll" "$@") </dev/null >"$REPORT_DIR/$name.log" 2>&1 &
  PIDS+=($!)
}
quiet=(--Serilog:MinimumLevel:Default=Warning)
start backend TestBackend --urls "http://127.0.0.1:$BACKEND1" "${quiet[@]}"
start backend-h2c TestBackend --urls "http://127.0.0.1:$BACKEND2" --Kestrel:EndpointDefaults:Protocols=Http2 "${quiet[@]}"
start server TunnelServer --public-url "https://127.0.0.1:$PUBLIC" --tunnel-url "http://127.0.0.1:$TUNNEL" --token "$TOKEN" \
  --certificate "$TLS/server.pem" --certificate-key "$TLS/server.key" "${quiet[@]}"
wait_pong backend "${PIDS[0]}" "http://127.0.0.1:$BACKEND1/loadtest/ping" 30 "$REPORT_DIR/backend.log"
start client TunnelClient --server "http://127.0.0.1:$TUNNEL" --session h2load --token "$TOKEN" \
  --backend "http://127.0.0.1:$BACKEND1" --max-concurrency 1000 "${quiet[@]}"
answers_h2() { [[ "$(curl -sk --max-time 2 "${@:2}" "$1" 2>/dev/null)" == pong ]]; }
deadline=$((SECONDS + 30))
until answers_h2 "https://127.0.0.1:$PUBLIC/session/h2load/loadtest/ping" --http2 \
      && answers_h2 "http://127.0.0.1:$BACKEND2/loadtest/ping" --http2-prior-knowledge; do
  ((SECONDS < deadline)) || die "the tunnel or the h2c backend did not answer within 30 s (see $REPORT_DIR/*.log)"
  sleep 0.3
done

nginx_conf hop 2 "  upstream backend { server 127.0.0.1:$BACKEND1; keepalive 64; }
  server { listen 127.0.0.1:$HOP ssl http2 backlog=4096;
    ssl_certificate $TLS/server.pem; ssl_certificate_key $TLS/server.key;
    location / { proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"
$SETSID nginx -c "$NGINX_DIR/hop/nginx.conf" -p "$NGINX_DIR/hop" -g 'daemon off;' </dev/null >"$NGINX_DIR/hop/logs/stdout.log" 2>&1 &
NGINX_PIDS+=($!)
deadline=$((SECONDS + 10))
until answers_h2 "https://127.0.0.1:$HOP/loadtest/ping" --http2; do
  ((SECONDS < deadline)) || die "nginx did not answer within 10 s (see $NGINX_DIR/hop/logs)"
  sleep 0.2
done
NGINX_WORKERS="$(pgrep -P "${NGINX_PIDS[-1]}" | tr '\n' ' ' || true)"

(cd "$(dirname "$YARP_DLL")" && exec $SETSID dotnet "$YARP_DLL" --listen "https://127.0.0.1:$YARP" --destination "http://127.0.0.1:$BACKEND1" \
  --Kestrel:Certificates:Default:Path="$TLS/server.pem" --Kestrel:Certificates:Default:KeyPath="$TLS/server.key") \
  </dev/null >"$REPORT_DIR/yarp.log" 2>&1 &
PIDS+=($!)
YARP_PID=$!
deadline=$((SECONDS + 30))
until answers_h2 "https://127.0.0.1:$YARP/loadtest/ping" --http2; do
  kill -0 "$YARP_PID" 2>/dev/null || die "the YARP hop exited (see $REPORT_DIR/yarp.log)"
  ((SECONDS < deadline)) || die "the YARP hop did not answer within 30 s (see $REPORT_DIR/yarp.log)"
  sleep 0.3
done

cpu_ticks() { local pid total=0; for pid in "$@"; do total=$((total + $(stat_ticks "/proc/$pid/stat"))); done; echo "$total"; }
HZ="$(getconf CLK_TCK)"
{
  echo "# HTTPS + HTTP/2 ramp-up, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, commit $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
  echo "GET /loadtest/ping, h2load $(h2load --version | head -n 1 | awk '{print $2}'), $PER_CLIENT_RPS RPS per connection, one request in flight each."
  echo
  echo "| target | stage RPS | seconds | requests | failed | reached RPS | p50 ms | p99 ms | CPU µs/req: proxy | backend |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} >"$REPORT_DIR/summary.md"

for target in direct nginx yarp tunnel; do
  case "$target" in
    direct) url="http://127.0.0.1:$BACKEND2/loadtest/ping"; proxy=""; backend="${PIDS[1]}" ;;
    nginx)  url="https://127.0.0.1:$HOP/loadtest/ping"; proxy="$NGINX_WORKERS"; backend="${PIDS[0]}" ;;
    yarp)   url="https://127.0.0.1:$YARP/loadtest/ping"; proxy="$YARP_PID"; backend="${PIDS[0]}" ;;
    tunnel) url="https://127.0.0.1:$PUBLIC/session/h2load/loadtest/ping"; proxy="${PIDS[2]} ${PIDS[3]}"; backend="${PIDS[0]}" ;;
  esac
  # Warm-up, not counted: JIT, connection pools, TLS session set-up.
  h2load -t 1 -c 10 -m 1 -n 3000 "$url" >"$REPORT_DIR/$target-warmup.txt" 2>&1 || warn "$target: warm-up h2load exited $?"
  for stage in $STAGES; do
    rate="${stage%%:*}" seconds="${stage##*:}"
    clients="$(stage_clients ping "$rate")"
    out="$REPORT_DIR/$target-$rate"
    log "$target: $rate RPS for $seconds s ($clients connections) -> $url"
    # shellcheck disable=SC2086 # pid lists split on purpose
    p0="$(cpu_ticks $proxy)" b0="$(cpu_ticks $backend)"
    timeout --kill-after=5 "$((seconds + 60))" h2load -t 1 -c "$clients" -m 1 --rps "$((rate / clients > 0 ? rate / clients : 1))" \
      -D "$seconds" --log-file "$out.log" "$url" >"$out.txt" 2>&1 || warn "$target $rate: h2load exited $?"
    # shellcheck disable=SC2086
    p1="$(cpu_ticks $proxy)" b1="$(cpu_ticks $backend)"
    python3 - "$out.log" "$target" "$rate" "$seconds" "$((p1 - p0))" "$((b1 - b0))" "$HZ" >>"$REPORT_DIR/summary.md" <<'EOF'
import sys
log, target, rate, seconds, proxy, backend, hz = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
ok, failed, times = 0, 0, []
for line in open(log):
    parts = line.split()
    if len(parts) < 3:
        continue
    status, micros = int(parts[1]), int(parts[2])
    if 200 <= status < 300:
        ok += 1
        times.append(micros / 1000)
    else:
        failed += 1
times.sort()
pct = lambda p: f"{times[min(len(times) - 1, int(p * len(times)))]:.2f}" if times else "-"
per = lambda ticks: f"{ticks / hz / max(1, ok) * 1e6:.0f}"
print(f"| {target} | {rate} | {seconds} | {ok + failed} | {failed} | {(ok + failed) / seconds:.0f} | {pct(0.5)} | {pct(0.99)} | "
      f"{per(proxy) if target != 'direct' else '-'} | {per(backend)} |")
EOF
  done
done
{
  echo
  echo "direct is h2c without TLS (the floor); nginx, YARP and the tunnel each end TLS + HTTP/2 and speak HTTP/1.1 keep-alive to"
  echo "the same TestBackend. CPU per request: user+system ticks (1/$HZ s) over the stage, divided by successful requests;"
  echo "proxy = nginx workers, the YARP hop, or TunnelServer + TunnelClient. A failed request is a non-2xx status in h2load's log."
} >>"$REPORT_DIR/summary.md"
cat "$REPORT_DIR/summary.md"
log "report: $REPORT_DIR"
