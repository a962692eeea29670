#!/usr/bin/env bash
# Bulk download through the tunnel against a direct run, in one sitting: one 1 GiB body (by default) from
# TestBackend and from an nginx file backend, direct, through one nginx hop, through two chained nginx hops (the
# tunnel's shape: two relay processes) and through Tunnel2, alternating.
set -euo pipefail

LT_NAME=download
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
# shellcheck source=lib/side-by-side.sh
source "$SCRIPT_DIR/lib/side-by-side.sh"

ROUNDS="${DOWNLOAD_ROUNDS:-3}"
BYTES="${DOWNLOAD_BYTES:-1073741824}"
FILE_PORT="${DOWNLOAD_NGINX_PORT:-12120}"
HOP_PORT="${DOWNLOAD_NGINX_HOP_PORT:-12121}"
HOP2_PORT="${DOWNLOAD_NGINX_HOP2_PORT:-12122}"
FILE_SESSION="${DOWNLOAD_NGINX_SESSION:-55555555-5555-5555-5555-555555555555}"
TUNNEL_TOKEN="${COMPARE_TUNNEL_TOKEN:-dev-token-change-me}"
EXTRAS=()

usage() {
  cat <<EOF
Usage: $0 [--rounds N] [--bytes N] [--extra NAME=BASE_URL[@PID,PID...]]...

Per round, for each backend and target in turn, one 'curl -o /dev/null' of BYTES (default 1 GiB):
  testbackend  TestBackend's /loadtest/bytes/BYTES: direct, one nginx hop (:$HOP_PORT), two chained nginx hops
               (:$HOP2_PORT -> :$HOP_PORT, the same nginx, keep-alive upstreams, buffering as the first), Tunnel2
  nginx        a file of BYTES served by nginx (sendfile) on :$FILE_PORT: direct, one nginx hop, two hops, Tunnel2
               (a second TunnelClient, session $FILE_SESSION, relays to it)
  --extra NAME=BASE_URL[@PIDS]  one more TestBackend target at BASE_URL/loadtest/bytes/BYTES, e.g. from
               variant.sh; the PIDS' memory growth and CPU are reported like Tunnel2's, as NAME.1, NAME.2, ...
Prints the median MB/s (10^6 bytes per second), its ratio to direct, the peak RSS growth of each Tunnel2
process during its downloads (sampled every 0.1 s), and the CPU per MB of each process of Tunnel2, of the
nginx hops (master and workers) and of the --extra PIDS (from /proc/PID/stat, in clock ticks).

Uses the running stack, or starts tunnel2-deploy/dev/run-local.sh and stops it at the end.
Environment: DOWNLOAD_ROUNDS ($ROUNDS), DOWNLOAD_BYTES, DOWNLOAD_NGINX_PORT, DOWNLOAD_NGINX_HOP_PORT,
DOWNLOAD_NGINX_HOP2_PORT, DOWNLOAD_NGINX_SESSION, COMPARE_TUNNEL_TOKEN (the dev token by default).
Reports: tunnel2-load-tests/reports/<UTC timestamp>-download/ (summary.txt). Exit 0 when every download
completed with all its bytes, 1 otherwise.
EOF
}

while (($#)); do
  case "$1" in
    --rounds) ROUNDS="$2"; shift ;;
    --bytes) BYTES="$2"; shift ;;
    --extra) EXTRAS+=("$2"); shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ && "$BYTES" =~ ^[1-9][0-9]*$ ]] || die "--rounds and --bytes take positive numbers" 2
parse_extras "direct nginx1 nginx2 tunnel" "${EXTRAS[@]}"

ensure_tool curl curl
ensure_tool nginx nginx
ensure_tool python3 python3

REPORT_DIR="$LT_DIR/reports/$(utc_stamp)-download"
NGINX_DIR="$REPORT_DIR/nginx"
mkdir -p "$REPORT_DIR"
FILE_CLIENT_PID=""
# shellcheck disable=SC2317  # reached through the EXIT trap, which shellcheck does not follow
cleanup() {
  stop_child
  stop_all_nginx
  stop_pid "TunnelClient (nginx file backend)" "$FILE_CLIENT_PID" 15
  stack_stop
  rm -f "$NGINX_DIR/files/loadtest/bytes/$BYTES"   # sparse, but a copy of the reports that does not keep holes would fill up
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stack_ensure 1 1 "$REPORT_DIR/run-local.log"
SERVER_PID="$(stack_pid TunnelServer)"
CLIENT_PID="$(stack_pid TunnelClient)"

# The file backend (sendfile, its own master and two workers) and one hop in front of each backend.
mkdir -p "$NGINX_DIR/files/loadtest/bytes"
truncate -s "$BYTES" "$NGINX_DIR/files/loadtest/bytes/$BYTES"   # sparse: no disk, the page cache serves zeros
printf 'pong' >"$NGINX_DIR/files/loadtest/ping"
nginx_conf files 2 "  sendfile on; tcp_nopush on; default_type application/octet-stream;
  server { listen 127.0.0.1:$FILE_PORT; root $NGINX_DIR/files; }"
start_nginx files "http://127.0.0.1:$FILE_PORT/loadtest/ping"
nginx_conf hop 2 "  proxy_buffering on; proxy_max_temp_file_size 0;
  upstream testbackend { server 127.0.0.1:$BACKEND_PORT; keepalive 16; }
  upstream files { server 127.0.0.1:$FILE_PORT; keepalive 16; }
  server { listen 127.0.0.1:$HOP_PORT;
    location /testbackend/ { proxy_pass http://testbackend/; proxy_http_version 1.1; proxy_set_header Connection \"\"; }
    location /files/ { proxy_pass http://files/; proxy_http_version 1.1; proxy_set_header Connection \"\"; } }
  upstream hop1 { server 127.0.0.1:$HOP_PORT; keepalive 16; }
  server { listen 127.0.0.1:$HOP2_PORT;
    location / { proxy_pass http://hop1; proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"
start_nginx hop "http://127.0.0.1:$HOP2_PORT/files/loadtest/ping"
# The hop nginx's master and workers: their CPU per MB is the hops' (both hops' for nginx2, one nginx serving both).
HOP_PIDS="$(for p in "${NGINX_PIDS[-1]}" $(pgrep -P "${NGINX_PIDS[-1]}" || true); do printf 'nginx-hop:%s,' "$p"; done)"
HOP_PIDS="${HOP_PIDS%,}"
start_session_client "$FILE_SESSION" "http://127.0.0.1:$FILE_PORT" "$TUNNEL_TOKEN" "$REPORT_DIR/client-files.log" "$CLIENT_PID"
FILE_CLIENT_PID=$!
wait_pong "the TunnelClient for the nginx file backend" "$FILE_CLIENT_PID" \
  "http://127.0.0.1:$PUBLIC_PORT/session/$FILE_SESSION/loadtest/ping" 30 "$REPORT_DIR/client-files.log"

# "backend target URL PIDS" per run; PIDS are the Tunnel2 processes whose memory is watched.
RUNS=(
  "testbackend direct $DIRECT_BASE/loadtest/bytes/$BYTES -"
  "testbackend nginx1 http://127.0.0.1:$HOP_PORT/testbackend/loadtest/bytes/$BYTES $HOP_PIDS"
  "testbackend nginx2 http://127.0.0.1:$HOP2_PORT/testbackend/loadtest/bytes/$BYTES $HOP_PIDS"
  "testbackend tunnel $TUNNEL_BASE/loadtest/bytes/$BYTES TunnelServer:$SERVER_PID,TunnelClient:$CLIENT_PID"
)
for e in "${!EXTRA_URL[@]}"; do
  pids="-"
  # NAME.1, NAME.2, ...: the PIDS in their order (the relay pairs': entry, agent)
  [[ -n "${EXTRA_PIDS[$e]}" ]] && pids="$(i=0; for p in ${EXTRA_PIDS[$e]}; do printf '%s.%s:%s,' "$e" $((++i)) "$p"; done)" && pids="${pids%,}"
  RUNS+=("testbackend $e ${EXTRA_URL[$e]}/loadtest/bytes/$BYTES $pids")
done
RUNS+=(
  "nginx direct http://127.0.0.1:$FILE_PORT/loadtest/bytes/$BYTES -"
  "nginx nginx1 http://127.0.0.1:$HOP_PORT/files/loadtest/bytes/$BYTES $HOP_PIDS"
  "nginx nginx2 http://127.0.0.1:$HOP2_PORT/files/loadtest/bytes/$BYTES $HOP_PIDS"
  "nginx tunnel http://127.0.0.1:$PUBLIC_PORT/session/$FILE_SESSION/loadtest/bytes/$BYTES TunnelServer:$SERVER_PID,TunnelClient:$FILE_CLIENT_PID"
)

log "warm-up: one download per target (not measured); reports in $REPORT_DIR"
for run in "${RUNS[@]}"; do
  read -r _ _ url _ <<<"$run"
  curl -s -o /dev/null --max-time 120 "$url" || true
done

errors=0
: >"$REPORT_DIR/runs.txt"   # "backend target round bytes_per_s size name:pid:growth_kib..."
for ((round = 1; round <= ROUNDS; round++)); do
  for run in "${RUNS[@]}"; do
    read -r b t url pids <<<"$run"
    declare -A base=() peak=()
    procs=()
    [[ "$pids" != - ]] && IFS=, read -r -a procs <<<"$pids"
    declare -A ticks=()
    for proc in "${procs[@]}"; do
      base[$proc]=$(rss_kib "${proc##*:}"); base[$proc]=${base[$proc]:-0}; peak[$proc]=${base[$proc]}
      ticks[$proc]=$(stat_ticks "/proc/${proc##*:}/stat")
    done
    # CHILD_PID: cleanup's stop_child ends the download if the script is interrupted.
    curl -s -o /dev/null --max-time 300 -w '%{speed_download} %{size_download}\n' "$url" >"$REPORT_DIR/curl.out" &
    CHILD_PID=$!
    while kill -0 "$CHILD_PID" 2>/dev/null; do
      for proc in "${procs[@]}"; do
        now=$(rss_kib "${proc##*:}")
        ((${now:-0} > peak[$proc])) && peak[$proc]=$now
      done
      sleep 0.1
    done
    wait "$CHILD_PID" || true
    CHILD_PID=""
    read -r speed size <"$REPORT_DIR/curl.out" || { speed=0; size=0; }
    growth=""
    for proc in "${procs[@]}"; do
      growth+=" $proc:$((peak[$proc] - base[$proc])):$(($(stat_ticks "/proc/${proc##*:}/stat") - ticks[$proc]))"
    done
    echo "$b $t $round ${speed%.*} $size$growth" >>"$REPORT_DIR/runs.txt"
    unset base peak ticks
    if [[ "$size" != "$BYTES" ]]; then
      errors=1
      warn "$b $t round $round: $size of $BYTES bytes"
    fi
    log "round $round $b $t: $((${speed%.*} / 1000000)) MB/s"
  done
done

python3 - "$REPORT_DIR/runs.txt" "$(getconf CLK_TCK)" <<'PY' | tee "$REPORT_DIR/summary.txt"
import statistics, sys
rows, growth, cpu = {}, {}, {}
hz = int(sys.argv[2])
for line in open(sys.argv[1]):
    b, t, _, speed, size, *procs = line.split()
    rows.setdefault((b, t), []).append(int(speed) / 1e6)
    for p in procs:
        name, pid, kib, *ticks = p.split(":")
        g = growth.setdefault((b, t), {})
        g[f"{name} (pid {pid})"] = max(g.get(f"{name} (pid {pid})", 0), int(kib))
        if ticks and int(size) > 0:
            # CPU microseconds per MB (10^6 bytes); the processes of one name (nginx's master and workers) summed
            c = cpu.setdefault((b, t), {}).setdefault(name, {})
            c.setdefault(len(rows[(b, t)]), 0)
            c[len(rows[(b, t)])] += int(ticks[0]) * 1e6 / hz / (int(size) / 1e6)
print(f"{'backend/target':<24} {'median MB/s':>12} {'x direct':>9}   runs (MB/s)   peak RSS growth")
for (b, t), speeds in rows.items():
    med, direct = statistics.median(speeds), statistics.median(rows[(b, "direct")])
    grown = ", ".join(f"{k} +{v / 1024:.1f} MiB" for k, v in growth.get((b, t), {}).items())
    print(f"{b + '/' + t:<24} {med:>12,.0f} {med / direct:>9.3f}   {', '.join(f'{s:,.0f}' for s in speeds)}   {grown}")
print(f"\nCPU per MB (median over the rounds, microseconds per 10^6 bytes, from /proc/PID/stat at {hz} ticks/s)")
for (b, t), names in cpu.items():
    per = {n: statistics.median(r.values()) for n, r in names.items()}
    total = statistics.median([sum(names[n].get(i, 0) for n in names) for i in range(1, len(rows[(b, t)]) + 1)])
    print(f"{b + '/' + t:<24} total {total:>7,.0f}   " + ", ".join(f"{n} {v:,.0f}" for n, v in per.items()))
PY
exit "$errors"
