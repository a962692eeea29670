#!/usr/bin/env bash
# Measures the prototype (docs/benchmarks/2026-11-29-kestrel-on-loop-prototype.md): two identical copies each of
# (a) Kestrel's socket transport, (b) it with inline scheduling, (c) Kestrel on the loop transport, (d) nginx with one
# worker, all answering GET /ping with "pong"; then the forward hop (--forward) to TestBackend. Per target: CPU from
# /proc ticks and switches from perf stat (and /proc) around h2load at 5,000 req/s, then the saturated rate with wrk.
# KPROTO_EVENTS=ev1,ev2 adds perf events (e.g. syscall tracepoints), printed per request.
# Usage: bench.sh [ROUNDS] [TARGETS...]  (run it under nice -n 10; needs the build of this project and of TestBackend)
set -euo pipefail
ROUNDS="${1:-1}"; shift || true
TARGETS=("${@:-a1 b1 c1 d1 a2 b2 c2 d2}")
read -r -a TARGETS <<< "${TARGETS[*]}"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
APP="$HERE/bin/Release/net10.0/Tunnel2.LoopKestrel.dll"
BACKEND="$ROOT/src/TestBackend/bin/Release/net10.0/TestBackend.dll"
WORK="${KPROTO_WORK:-/tmp/kproto}"
mkdir -p "$WORK"
declare -A PORT=([a1]=13511 [a2]=13512 [b1]=13521 [b2]=13522 [c1]=13531 [c2]=13532 [d1]=13541 [d2]=13542
  [fa]=13561 [fb]=13562 [fc]=13563 [fd]=13564)
declare -A PIDS=()
BACKEND_PORT=13550

start_dotnet() { # name transport [forward]
  local env=() extra=()
  [[ "$2" == inline ]] && env=(DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1 DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT=1)
  [[ -n "${3:-}" ]] && extra=(--forward "$3")
  env "${env[@]}" dotnet "$APP" --port "${PORT[$1]}" --transport "$2" "${extra[@]}" > "$WORK/$1.log" 2>&1 &
  PIDS[$1]=$!
}

start_nginx() { # name [upstream port]
  local dir="$WORK/nginx-$1" location="return 200 pong;" upstream=""
  mkdir -p "$dir"
  if [[ -n "${2:-}" ]]; then
    upstream="upstream backend { server 127.0.0.1:$2; keepalive 64; }"
    location="proxy_pass http://backend/loadtest/; proxy_http_version 1.1; proxy_set_header Connection \"\";"
  fi
  cat > "$dir/nginx.conf" <<CONF
worker_processes 1; daemon off; pid $dir/nginx.pid; error_log $dir/error.log;
events { worker_connections 1024; }
http {
  access_log off; client_body_temp_path $dir; proxy_temp_path $dir; fastcgi_temp_path $dir; uwsgi_temp_path $dir;
  scgi_temp_path $dir; $upstream
  server { listen 127.0.0.1:${PORT[$1]}; location / { $location } }
}
CONF
  nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" &
  PIDS[$1]=$!
}

pids_of() { # the process and, for nginx, its worker
  local p="${PIDS[$1]}"
  echo "$p $(pgrep -P "$p" | tr '\n' ' ')"
}

ticks() { local t=0; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }

switches() { # voluntary + involuntary over every live thread
  cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s}'
}

measure() { # name
  local name="$1" url="http://127.0.0.1:${PORT[$1]}/ping" pids t0 t1 s0 s1 nreq perf_sw perf_ms rate
  read -r -a pids <<< "$(pids_of "$name")"
  t0=$(ticks "${pids[@]}"); s0=0; for p in "${pids[@]}"; do s0=$((s0 + $(switches "$p"))); done
  perf stat -x, -o "$WORK/$name.perf" -e "task-clock,context-switches${KPROTO_EVENTS:+,$KPROTO_EVENTS}" -p "$(IFS=,; echo "${pids[*]}")" -- \
    h2load --h1 -t1 -c50 --rps 100 -D 10 "$url" > "$WORK/$name.h2load" 2>&1
  t1=$(ticks "${pids[@]}"); s1=0; for p in "${pids[@]}"; do s1=$((s1 + $(switches "$p"))); done
  nreq=$(awk '/^requests:/ {print $8}' "$WORK/$name.h2load")
  perf_ms=$(awk -F, '/task-clock/ {print $1}' "$WORK/$name.perf")
  perf_sw=$(awk -F, '/context-switches/ {print $1}' "$WORK/$name.perf")
  t0w=$(ticks "${pids[@]}")
  rate=$(wrk -t2 -c50 -d8s "$url" | awk '/Requests\/sec/ {print $2}')
  t1w=$(ticks "${pids[@]}")
  awk -v n="$name" -v d="$nreq" -v t="$((t1 - t0))" -v pm="$perf_ms" -v ps="$perf_sw" -v s="$((s1 - s0))" \
      -v r="$rate" -v tw="$((t1w - t0w))" -v la="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
    printf "%-3s requests %6d  cpu/req %6.1f us (perf %6.1f)  switches/req %5.2f (/proc %5.2f)  wrk %9.0f req/s  cpu/req under wrk %5.1f us  load %s\n",
      n, d, t * 10000 / d, pm * 1000 / d, ps / d, s / d, r, tw * 10000 / (r * 8), la }'
  [[ -n "${KPROTO_EVENTS:-}" ]] && awk -F, -v d="$nreq" -v n="$name" \
    '$3 != "" && $3 !~ /task-clock|context-switches/ {printf "%-3s   %-32s %6.2f per request\n", n, $3, $1 / d}' "$WORK/$name.perf"
  return 0
}

cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

for t in "${TARGETS[@]}"; do
  case "$t" in
    a?) start_dotnet "$t" sockets ;;
    b?) start_dotnet "$t" inline ;;
    c?) start_dotnet "$t" loop ;;
    d?) start_nginx "$t" ;;
    f?) [[ -z "${BACKEND_PID:-}" ]] && { dotnet "$BACKEND" --urls "http://127.0.0.1:$BACKEND_PORT" > "$WORK/backend.log" 2>&1 & BACKEND_PID=$!; PIDS[backend]=$BACKEND_PID; }
        case "$t" in
          fa) start_dotnet fa sockets "http://127.0.0.1:$BACKEND_PORT/loadtest" ;;
          fb) start_dotnet fb inline "http://127.0.0.1:$BACKEND_PORT/loadtest" ;;
          fc) start_dotnet fc loop "http://127.0.0.1:$BACKEND_PORT/loadtest" ;;
          fd) start_nginx fd "$BACKEND_PORT" ;;
        esac ;;
  esac
done
sleep 4
for t in "${TARGETS[@]}"; do # warm-up: the JIT's tiers and the connection pools, unmeasured
  curl -sf "http://127.0.0.1:${PORT[$t]}/ping" > /dev/null || { echo "$t does not answer" >&2; exit 1; }
  wrk -t1 -c50 -d4s "http://127.0.0.1:${PORT[$t]}/ping" > /dev/null
done
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((round = 1; round <= ROUNDS; round++)); do
  echo "round $round"
  for t in "${TARGETS[@]}"; do measure "$t"; done
done
echo "end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
