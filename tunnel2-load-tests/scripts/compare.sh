#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Throughput, latency and CPU cost of Tunnel2 next to the same backend reached directly, through
# one nginx reverse-proxy hop and through two chained nginx hops (and, when asked, one and two YARP
# hops), in one sitting. Two backends: TestBackend and an nginx server returning a fixed body. Runs
# alternate (direct, nginx1, nginx2, tunnel, direct, ...) so that the machine's noise hits every
# target alike. Two measurements per
# target and round: a closed-loop 'wrk -t2 -c50' run (throughput, p50/p99, CPU per request) and an
# open-model fixed-rate run at each rate given (h2load --h1 --rps, 1000 RPS by default: p50/p99 and added latency;
# with --counts also CPU, context switches and syscalls per request of every process, from perf stat, which do not
# depend on how the load generator shares the cores).
set -euo pipefail

LT_NAME=compare
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
# shellcheck source=lib/loadgen.sh
source "$SCRIPT_DIR/lib/loadgen.sh"
# shellcheck source=lib/side-by-side.sh
source "$SCRIPT_DIR/lib/side-by-side.sh"

ROUNDS="${COMPARE_ROUNDS:-3}"
SECONDS_PER_RUN="${COMPARE_SECONDS:-15}"
RATE="${COMPARE_RATE:-1000}"   # one or more rates, space-separated; 0 = none
COUNTS="${COMPARE_COUNTS:-0}"
RATE_SECONDS="${COMPARE_RATE_SECONDS:-15}"
CONNECTIONS="${COMPARE_CONNECTIONS:-50}"
THREADS="${COMPARE_THREADS:-2}"
ENDPOINT="ping"
WRK_TIMEOUT="${COMPARE_WRK_TIMEOUT:-5s}"
BACKENDS=(testbackend nginx)
TARGETS=(direct nginx1 nginx2 tunnel)
EXTRAS=()   # "NAME=BASE_URL[@PID,PID]"
# What this script starts itself, all on 127.0.0.1.
NGINX1_PORT="${COMPARE_NGINX1_PORT:-12110}"               # hop in front of TestBackend
NGINX2_PORT="${COMPARE_NGINX2_PORT:-12111}"               # second hop in front of the first
NGINX_BACKEND_PORT="${COMPARE_NGINX_BACKEND_PORT:-12112}" # nginx answering a fixed body
NGINX_B1_PORT="${COMPARE_NGINX_B1_PORT:-12113}"           # hop in front of the nginx backend
NGINX_B2_PORT="${COMPARE_NGINX_B2_PORT:-12114}"           # second hop in front of that one
YARP1_PORT="${COMPARE_YARP1_PORT:-12115}"                 # YARP hop in front of TestBackend (targets yarp1, yarp2)
YARP2_PORT="${COMPARE_YARP2_PORT:-12116}"                 # second YARP hop in front of the first
YARP_B1_PORT="${COMPARE_YARP_B1_PORT:-12117}"             # YARP hop in front of the nginx backend
YARP_B2_PORT="${COMPARE_YARP_B2_PORT:-12118}"             # second YARP hop in front of that one
YARP_DLL="$REPO_ROOT/benchmarks/Tunnel2.YarpHop/bin/Release/net10.0/Tunnel2.YarpHop.dll"
NGINX_SESSION="${COMPARE_NGINX_SESSION:-44444444-4444-4444-4444-444444444444}"
TUNNEL_TOKEN="${COMPARE_TUNNEL_TOKEN:-dev-token-change-me}" # the dev stack's token, not a secret

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/compare.sh [--rounds N] [--seconds S] [--rate "RPS..."] [--rate-seconds S] [--counts]
         [--endpoint ping|get|fast|delay/MS] [--backends "testbackend nginx"]
         [--targets "direct nginx1 nginx2 tunnel"] (also: yarp1 yarp2)
         [--extra NAME=BASE_URL[@PID,PID...]]...

Per round, per backend, per target, in turn:
  1. wrk -t$THREADS -c$CONNECTIONS -d\${S}s --latency      closed loop: throughput, p50/p99, CPU per request
  2. h2load --h1 --rps, each RATE for RATE_SECONDS  open model in 10 staggered groups: p50/p99
     (--rate "2000 5000" runs both rates); with --counts, perf stat on every process of the target and
     on the backend during each fixed-rate run: CPU, context switches and syscalls per request
Backends:
  testbackend  TestBackend, http://127.0.0.1:$BACKEND_PORT/loadtest/ENDPOINT
  nginx        nginx answering every request with a fixed 4-byte body, 127.0.0.1:$NGINX_BACKEND_PORT
               (its own master and 2 workers, like a backend on its own)
Targets, each in front of the backend:
  direct   the backend itself
  nginx1   one nginx reverse-proxy hop (:$NGINX1_PORT, or :$NGINX_B1_PORT for the nginx backend)
  nginx2   two chained hops (:$NGINX2_PORT -> :$NGINX1_PORT, or :$NGINX_B2_PORT -> :$NGINX_B1_PORT)
  tunnel   Tunnel2, http://127.0.0.1:$PUBLIC_PORT/session/<id>/loadtest/ENDPOINT; for the nginx
           backend a second TunnelClient (session $NGINX_SESSION) of the stack client's build
  yarp1    one YARP hop (benchmarks/Tunnel2.YarpHop, a process of its own; :$YARP1_PORT, or :$YARP_B1_PORT)
  yarp2    two chained YARP hops, two processes like the tunnel's (:$YARP2_PORT, or :$YARP_B2_PORT)
           (yarp1 and yarp2 run only when named in --targets; build the solution in Release first)
  --extra NAME=BASE_URL[@PIDS]  one more target (TestBackend only) at BASE_URL/loadtest/ENDPOINT,
           e.g. a spike; the CPU of the comma-separated PIDS is reported like Tunnel2's
The nginx hops run from a config generated into the report folder (keep-alive upstreams, HTTP/1.1,
access log off, 2 workers shared by the hops).
Defaults: $ROUNDS rounds; wrk $SECONDS_PER_RUN s; $RATE RPS for $RATE_SECONDS s (--rate 0 skips the fixed-rate runs).
--counts needs perf (Debian's linux-perf; installed when missing and run as root) and permission to attach
to the processes (root, or kernel.perf_event_paranoid <= 0).

Prints, per backend and target: median RPS and its ratio to direct, median p50/p99 under wrk,
median p50/p99 at the fixed rate and what that adds to direct; and per Tunnel2 process the CPU
time per request over the wrk runs (microseconds per request = milliseconds per 1,000 requests),
with the same figure for every other target's processes (the nginx hops, master and workers
together; each YARP hop) and for the backend, so that the tunnel's cost can be set against a
proxy's in the same sitting.

Uses the running stack, or starts tunnel2-deploy/dev/run-local.sh and stops it at the end.
Environment: COMPARE_ROUNDS, COMPARE_SECONDS, COMPARE_RATE, COMPARE_RATE_SECONDS, COMPARE_COUNTS (1 = --counts),
COMPARE_CONNECTIONS, COMPARE_THREADS, COMPARE_WRK_TIMEOUT [5s], COMPARE_NGINX{1,2,_BACKEND,_B1,_B2}_PORT, COMPARE_YARP{1,2,_B1,_B2}_PORT,
COMPARE_NGINX_SESSION, COMPARE_TUNNEL_TOKEN (the dev token by default).
Reports: tunnel2-load-tests/reports/<UTC timestamp>-compare/ (every run's output, summary.txt).
Exit 0 when every run completed without socket errors or non-2xx answers, 1 otherwise.
EOF
}

while (($#)); do
  case "$1" in
    --rounds) ROUNDS="$2"; shift ;;
    --seconds) SECONDS_PER_RUN="$2"; shift ;;
    --rate) RATE="$2"; shift ;;
    --rate-seconds) RATE_SECONDS="$2"; shift ;;
    --counts) COUNTS=1 ;;
    --endpoint) ENDPOINT="$2"; shift ;;
    --backends) read -r -a BACKENDS <<<"$2"; shift ;;
    --targets) read -r -a TARGETS <<<"$2"; shift ;;
    --extra) EXTRAS+=("$2"); shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ && "$SECONDS_PER_RUN" =~ ^[1-9][0-9]*$ ]] || die "--rounds and --seconds take positive numbers" 2
read -r -a RATES <<<"$RATE"
[[ "${RATES[0]:-}" == 0 ]] && RATES=()
for r in "${RATES[@]}"; do [[ "$r" =~ ^[1-9][0-9]*$ ]] || die "--rate takes positive numbers (or 0: none), got '$RATE'" 2; done
[[ "$RATE_SECONDS" =~ ^[1-9][0-9]*$ ]] || die "--rate-seconds takes a positive number" 2
((COUNTS == 0 || ${#RATES[@]} > 0)) || die "--counts needs a fixed rate (--rate)" 2
case "$ENDPOINT" in ping|get|fast|delay/[0-9]*) ;; *) die "--endpoint must be ping, get, fast or delay/MS" 2 ;; esac
for b in "${BACKENDS[@]}"; do
  case "$b" in testbackend|nginx) ;; *) die "unknown backend '$b'" 2 ;; esac
done
for t in "${TARGETS[@]}"; do
  case "$t" in direct|nginx1|nginx2|tunnel|yarp1|yarp2) ;; *) die "unknown target '$t'" 2 ;; esac
done
parse_extras "direct nginx1 nginx2 tunnel yarp1 yarp2" "${EXTRAS[@]}"

ensure_tool wrk wrk
ensure_tool curl curl
ensure_tool python3 python3
((${#RATES[@]} > 0)) && ensure_tool h2load nghttp2-client
((COUNTS)) && ensure_tool perf linux-perf
has_backend() { [[ " ${BACKENDS[*]} " == *" $1 "* ]]; }
has_target() { [[ " ${TARGETS[*]} " == *" $1 "* ]]; }
needs_nginx=0
{ has_target nginx1 || has_target nginx2 || has_backend nginx; } && needs_nginx=1
((needs_nginx)) && ensure_tool nginx nginx
needs_yarp=0
{ has_target yarp1 || has_target yarp2; } && needs_yarp=1
((needs_yarp)) && { [[ -f "$YARP_DLL" ]] || die "$YARP_DLL is missing: build the solution in Release first (dotnet build -c Release)" 2; }

REPORT_DIR="$LT_DIR/reports/$(utc_stamp)-compare"
mkdir -p "$REPORT_DIR"
NGINX_DIR="$REPORT_DIR/nginx"
NGINX_CLIENT_PID=""
NGINX_BACKEND_PID="" NGINX_HOPS_PID=""   # nginx masters; their CPU is counted with their workers'
declare -A YARP_PID=()                    # "testbackend 1" -> pid of that YARP hop

# shellcheck disable=SC2317  # reached through the EXIT trap, which shellcheck does not follow
cleanup() {
  stop_child
  stop_all_nginx
  local hop
  for hop in "${!YARP_PID[@]}"; do stop_pid "YARP hop ($hop)" "${YARP_PID[$hop]}" 15; done
  YARP_PID=()
  stop_pid "TunnelClient (nginx backend)" "$NGINX_CLIENT_PID" 15
  NGINX_CLIENT_PID=""
  stack_stop
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# proxy_server LISTEN_PORT UPSTREAM_NAME UPSTREAM_PORT: an upstream and a hop that proxies to it.
proxy_server() {
  cat <<EOF
  upstream $2 { server 127.0.0.1:$3; keepalive 128; }
  server {
    listen 127.0.0.1:$1;
    location / { proxy_pass http://$2; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
EOF
}

start_all_nginx() {
  local hops=""
  if has_backend nginx; then
    # The backend: its own master with two workers, like a separate backend server.
    nginx_conf backend 2 "  server {
    listen 127.0.0.1:$NGINX_BACKEND_PORT;
    location / { default_type text/plain; return 200 'pong'; }
  }"
    start_nginx backend "http://127.0.0.1:$NGINX_BACKEND_PORT/loadtest/ping"
    NGINX_BACKEND_PID="${NGINX_PIDS[-1]}"
    hops+="$(proxy_server "$NGINX_B1_PORT" nginxbackend "$NGINX_BACKEND_PORT")"$'\n'
    hops+="$(proxy_server "$NGINX_B2_PORT" nginxhop1 "$NGINX_B1_PORT")"$'\n'
  fi
  if has_backend testbackend; then
    hops+="$(proxy_server "$NGINX1_PORT" testbackend "$BACKEND_PORT")"$'\n'
    hops+="$(proxy_server "$NGINX2_PORT" testbackendhop1 "$NGINX1_PORT")"$'\n'
  fi
  # One master and two workers serve all the hops; a two-hop chain goes through them twice.
  nginx_conf hops 2 "$hops"
  if has_backend testbackend; then
    start_nginx hops "http://127.0.0.1:$NGINX2_PORT/loadtest/ping"
  else
    start_nginx hops "http://127.0.0.1:$NGINX_B2_PORT/loadtest/ping"
  fi
  NGINX_HOPS_PID="${NGINX_PIDS[-1]}"
}

# start_yarp BACKEND HOP LISTEN_PORT DESTINATION_PORT: YARP hop number HOP in front of BACKEND, in its own session.
start_yarp() {
  local log="$REPORT_DIR/yarp-$1-$2.log"
  $SETSID dotnet "$YARP_DLL" --listen "http://127.0.0.1:$3" --destination "http://127.0.0.1:$4" </dev/null >"$log" 2>&1 &
  YARP_PID["$1 $2"]=$!
  wait_pong "YARP hop $2 ($1)" $! "http://127.0.0.1:$3/loadtest/ping" 30 "$log"
}

start_all_yarp() {
  if has_backend testbackend; then
    start_yarp testbackend 1 "$YARP1_PORT" "$BACKEND_PORT"
    if has_target yarp2; then start_yarp testbackend 2 "$YARP2_PORT" "$YARP1_PORT"; fi
  fi
  if has_backend nginx; then
    start_yarp nginx 1 "$YARP_B1_PORT" "$NGINX_BACKEND_PORT"
    if has_target yarp2; then start_yarp nginx 2 "$YARP_B2_PORT" "$YARP_B1_PORT"; fi
  fi
}

# A second TunnelClient carries the session whose backend is the nginx one.
start_nginx_client() {
  start_session_client "$NGINX_SESSION" "http://127.0.0.1:$NGINX_BACKEND_PORT" "$TUNNEL_TOKEN" "$REPORT_DIR/client-nginx.log" \
    "$CLIENT_PID"
  NGINX_CLIENT_PID=$!
  wait_pong "the TunnelClient for the nginx backend" "$NGINX_CLIENT_PID" "$(base_of nginx tunnel)/loadtest/ping" 30 \
    "$REPORT_DIR/client-nginx.log"
}

# base_of BACKEND TARGET: the URL prefix under which /loadtest/ENDPOINT is found.
base_of() {
  case "$1/$2" in
    testbackend/direct) echo "$DIRECT_BASE" ;;
    testbackend/nginx1) echo "http://127.0.0.1:$NGINX1_PORT" ;;
    testbackend/nginx2) echo "http://127.0.0.1:$NGINX2_PORT" ;;
    testbackend/tunnel) echo "$TUNNEL_BASE" ;;
    testbackend/yarp1) echo "http://127.0.0.1:$YARP1_PORT" ;;
    testbackend/yarp2) echo "http://127.0.0.1:$YARP2_PORT" ;;
    nginx/yarp1) echo "http://127.0.0.1:$YARP_B1_PORT" ;;
    nginx/yarp2) echo "http://127.0.0.1:$YARP_B2_PORT" ;;
    nginx/direct) echo "http://127.0.0.1:$NGINX_BACKEND_PORT" ;;
    nginx/nginx1) echo "http://127.0.0.1:$NGINX_B1_PORT" ;;
    nginx/nginx2) echo "http://127.0.0.1:$NGINX_B2_PORT" ;;
    nginx/tunnel) echo "http://127.0.0.1:$PUBLIC_PORT/session/$NGINX_SESSION" ;;
    testbackend/*) echo "${EXTRA_URL[$2]}" ;;
  esac
}

# cpu_ticks PID: user+system clock ticks of a process and its children (nginx's workers) so far.
cpu_ticks() {
  local pid total=0
  [[ "$1" =~ ^[1-9][0-9]*$ ]] || { echo 0; return; }
  for pid in "$1" $(pgrep -P "$1"); do
    total=$((total + $(stat_ticks "/proc/$pid/stat")))
  done
  echo "$total"
}

stack_ensure 1 1 "$REPORT_DIR/run-local.log"
SERVER_PID="$(stack_pid TunnelServer)"
CLIENT_PID="$(stack_pid TunnelClient)"
BACKEND_PID="$(stack_pid TestBackend)"
((needs_nginx)) && start_all_nginx
((needs_yarp)) && start_all_yarp
has_backend nginx && has_target tunnel && start_nginx_client

# The runs, in order: "backend target" pairs, and the processes whose CPU each one reports: the target's own
# (PIDS_OF: Tunnel2's two, the figure of the CPU target; the nginx hops; the YARP hops) and the backend's
# (BACKEND_PIDS_OF), so that every target's cost stands next to the others' from the same sitting.
RUNS=()
declare -A PIDS_OF=() BACKEND_PIDS_OF=()
# add_run BACKEND TARGET "NAME:PID...": one run and the target's own processes.
add_run() {
  RUNS+=("$1 $2")
  PIDS_OF["$1 $2"]="$3"
  if [[ "$1" == testbackend ]]; then
    BACKEND_PIDS_OF["$1 $2"]="TestBackend:${BACKEND_PID:-0}"
  else
    BACKEND_PIDS_OF["$1 $2"]="nginx-backend:${NGINX_BACKEND_PID:-0}"
  fi
}
for b in "${BACKENDS[@]}"; do
  for t in "${TARGETS[@]}"; do
    case "$t" in
      direct) own="" ;;
      nginx1|nginx2) own="nginx-hops:${NGINX_HOPS_PID:-0}" ;;
      yarp1) own="yarp-hop1:${YARP_PID["$b 1"]:-0}" ;;
      yarp2) own="yarp-hop2:${YARP_PID["$b 2"]:-0} yarp-hop1:${YARP_PID["$b 1"]:-0}" ;;
      tunnel)
        client="${NGINX_CLIENT_PID:-0}"
        [[ "$b" == testbackend ]] && client="${CLIENT_PID:-0}"
        own="TunnelServer:${SERVER_PID:-0} TunnelClient:$client" ;;
    esac
    add_run "$b" "$t" "$own"
  done
  if [[ "$b" == testbackend ]]; then
    for e in "${!EXTRA_URL[@]}"; do
      own=""
      for pid in ${EXTRA_PIDS[$e]}; do own+=" $e:$pid"; done
      add_run testbackend "$e" "$own"
    done
  fi
done
log "TunnelServer pid ${SERVER_PID:-?}, TunnelClient pid ${CLIENT_PID:-?} (nginx backend: ${NGINX_CLIENT_PID:--}); reports in $REPORT_DIR"

log "warm-up: 3 s of wrk per target (not measured)"
for run in "${RUNS[@]}"; do
  read -r b t <<<"$run"
  wrk -t"$THREADS" -c"$CONNECTIONS" -d3s "$(base_of "$b" "$t")/loadtest/$ENDPOINT" >/dev/null 2>&1 || true
done

errors=0
: >"$REPORT_DIR/cpu.txt"   # "backend target round name:pid ticks requests own|backend" per measured process and wrk run
for ((round = 1; round <= ROUNDS; round++)); do
  for run in "${RUNS[@]}"; do
    read -r b t <<<"$run"
    url="$(base_of "$b" "$t")/loadtest/$ENDPOINT"
    out="$REPORT_DIR/$b.$t.wrk.$round.txt"
    read -r -a own_procs <<<"${PIDS_OF[$run]}"
    backend="${BACKEND_PIDS_OF[$run]}"
    declare -A before=()
    for proc in "${own_procs[@]}" "$backend"; do before[$proc]=$(cpu_ticks "${proc#*:}"); done
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" --timeout "$WRK_TIMEOUT" --latency "$url" >"$out" 2>&1 || true
    requests="$(awk '/requests in/ {print $1; exit}' "$out")"
    for proc in "${own_procs[@]}"; do
      echo "$b $t $round $proc $(($(cpu_ticks "${proc#*:}") - before[$proc])) ${requests:-0} own" >>"$REPORT_DIR/cpu.txt"
    done
    echo "$b $t $round $backend $(($(cpu_ticks "${backend#*:}") - before[$backend])) ${requests:-0} backend" >>"$REPORT_DIR/cpu.txt"
    unset before
    if ! grep -q 'Requests/sec' "$out" || grep -qE 'Socket errors|Non-2xx' "$out"; then
      errors=1
      warn "$b $t round $round (wrk): $(grep -E 'Socket errors|Non-2xx|rror' "$out" | tr -s ' ' | tr '\n' ';')"
    fi
    line="round $round $b $t: $(awk '/Requests\/sec/ {print $2}' "$out") RPS"
    for rate in "${RATES[@]}"; do
      stage="$REPORT_DIR/$b.$t.rate$rate.$round"
      perf_pids=()
      if ((COUNTS)); then
        mkdir -p "$stage"
        for proc in "${own_procs[@]}" "$backend"; do
          kind=own; [[ "$proc" == "$backend" ]] && kind=backend
          # An nginx master does no proxying: its workers (children) do, so they are counted with it.
          targets="$(printf '%s\n' "${proc#*:}" $(pgrep -P "${proc#*:}" 2>/dev/null) | paste -sd, -)"
          perf stat -x, -e task-clock,context-switches,raw_syscalls:sys_enter -p "$targets" \
            -o "$stage/perf.$kind.${proc%%:*}.${proc#*:}.csv" 2>/dev/null &
          perf_pids+=($!)
        done
      fi
      run_stage "$b/$t" "$url" "$ENDPOINT" "$rate" "$RATE_SECONDS" "$stage" "" 2>>"$REPORT_DIR/h2load.log"
      if ((${#perf_pids[@]})); then
        kill -INT "${perf_pids[@]}" 2>/dev/null || true
        wait "${perf_pids[@]}" 2>/dev/null || true
      fi
      if ! python3 "$LOADREPORT" stage-check "$stage" --max-fail-pct 0 --max-p99-ms 100000 >>"$REPORT_DIR/h2load.log" 2>&1; then
        errors=1
        warn "$b $t round $round ($rate RPS): failures or the rate not reached (see $stage)"
      fi
      line+=", $rate RPS done"
    done
    log "$line"
  done
done

python3 - "$REPORT_DIR" "$ROUNDS" "$(getconf CLK_TCK)" "${RATES[*]:-}" "$LT_LIB_DIR" "${RUNS[@]}" <<'PY' | tee "$REPORT_DIR/summary.txt"
import glob, os, re, statistics, sys
folder, rounds, hz, rates, lib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [int(r) for r in sys.argv[4].split()], sys.argv[5]
rate = rates[0] if rates else 0   # the first rate's latency goes into the main table
runs = [tuple(r.split()) for r in sys.argv[6:]]
sys.path.insert(0, lib)
from loadreport import Stage, Totals  # noqa: E402

def ms(value, unit):
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

med = statistics.median
rows = {}
for b, t in runs:
    rps, p50, p99, r50, r99 = [], [], [], [], []
    for r in range(1, rounds + 1):
        text = open(f"{folder}/{b}.{t}.wrk.{r}.txt").read()
        m = re.search(r"Requests/sec:\s+([\d.]+)", text)
        if not m:
            continue
        rps.append(float(m.group(1)))
        for pct, into in (("50", p50), ("99", p99)):
            m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\b", text, re.M)
            into.append(ms(*m.groups()))
        if rate:
            lat = Totals([Stage.load(f"{folder}/{b}.{t}.rate{rate}.{r}")]).latency_ms()
            if lat["p50"] is not None:
                r50.append(lat["p50"]); r99.append(lat["p99"])
    rows[(b, t)] = dict(runs=rps, rps=med(rps) if rps else 0.0, p50=med(p50) if p50 else 0.0,
                        p99=med(p99) if p99 else 0.0, r50=med(r50) if r50 else None, r99=med(r99) if r99 else None)

cpu = {}
for line in open(f"{folder}/cpu.txt"):
    b, t, _, pid, ticks, requests, kind = line.split()
    c = cpu.setdefault((b, t), {})
    ticks_total, req_total, _ = c.get(pid, (0, 0, kind))
    c[pid] = (ticks_total + int(ticks), req_total + int(requests), kind)

print(f"{'backend/target':<20} {'median RPS':>11} {'x direct':>9} {'p50 ms':>7} {'p99 ms':>7}"
      + (f" | {rate} RPS: {'p50 ms':>6} {'p99 ms':>6} {'+p50':>6} {'+p99':>6}" if rate else "") + "   runs (RPS)")
for b, t in runs:
    row, direct = rows[(b, t)], rows.get((b, "direct"))
    ratio = f"{row['rps'] / direct['rps']:.3f}" if direct and direct["rps"] else "-"
    line = f"{b + '/' + t:<20} {row['rps']:>11,.0f} {ratio:>9} {row['p50']:>7.3f} {row['p99']:>7.3f}"
    if rate:
        f = lambda v: f"{v:>6.3f}" if v is not None else f"{'-':>6}"  # noqa: E731
        d50 = row["r50"] - direct["r50"] if direct and None not in (row["r50"], direct["r50"]) else None
        d99 = row["r99"] - direct["r99"] if direct and None not in (row["r99"], direct["r99"]) else None
        line += f" | {'':>{len(str(rate)) + 5}} {f(row['r50'])} {f(row['r99'])} {f(d50)} {f(d99)}"
    print(line + "   " + ", ".join(f"{x:,.0f}" for x in row["runs"]))

for (b, t), per_pid in cpu.items():
    own, backend, total = [], [], 0.0
    for pid, (ticks, requests, kind) in per_pid.items():
        us = ticks / hz * 1e6 / requests if requests else 0.0
        name, _, number = pid.partition(":")
        if kind == "own":
            total += us
            own.append(f"{name} (pid {number}) {us:.1f} us")
        else:
            backend.append(f"{name} {us:.1f} us")
    requests = max(r for _, r, _ in per_pid.values())
    line = f"CPU per request, {b}/{t} wrk runs ({requests:,} requests): "
    if own:
        line += f"{', '.join(own)}; together {total:.1f} us per request = {total:.1f} ms per 1,000 requests; "
    print(line + f"the backend: {', '.join(backend)}")

# perf stat per process and fixed-rate run: per-request counts, median over the rounds.
def perf_counts(path):
    counts = {}
    for row in open(path):
        fields = row.strip().split(",")
        if len(fields) >= 3 and fields[0] and fields[0][0].isdigit():
            counts[fields[2]] = float(fields[0])
    return counts

count_rows = []
for rate_now in rates:
    for b, t in runs:
        per_proc = {}
        for r in range(1, rounds + 1):
            stage = f"{folder}/{b}.{t}.rate{rate_now}.{r}"
            files = glob.glob(f"{stage}/perf.*.csv")
            if not files:
                continue
            responses = Totals([Stage.load(stage)]).responses
            if not responses:
                continue
            for path in files:
                _, kind, name, pid, _ = os.path.basename(path).split(".")
                c = perf_counts(path)
                per_proc.setdefault((kind, name, pid), []).append((
                    c.get("task-clock", 0.0) * 1000 / responses,          # msec -> us per request
                    c.get("context-switches", 0.0) / responses,
                    c.get("raw_syscalls:sys_enter", 0.0) / responses))
        names = [name for _, name, _ in per_proc]
        for (kind, name, pid), values in sorted(per_proc.items()):
            label = name if names.count(name) == 1 else f"{name} pid {pid}"   # an --extra target's processes share its name
            count_rows.append((rate_now, f"{b}/{t}", label + (" (backend)" if kind == "backend" else ""),
                               med(v[0] for v in values), med(v[1] for v in values), med(v[2] for v in values), len(values)))
if count_rows:
    print()
    print("Per request at a fixed rate (perf stat on each process during the h2load run; median over rounds):")
    print(f"{'RPS':>6} {'backend/target':<20} {'process':<24} {'CPU us':>8} {'switches':>9} {'syscalls':>9} {'runs':>5}")
    for rate_now, bt, name, cpu_us, switches, syscalls, n in count_rows:
        print(f"{rate_now:>6} {bt:<20} {name:<24} {cpu_us:>8.1f} {switches:>9.2f} {syscalls:>9.2f} {n:>5}")
PY
exit "$errors"
