#!/usr/bin/env bash
# The 1 GiB HTTP download through the relay pairs (this folder) beside one YARP hop, two nginx hops and Tunnel2, in one
# sitting of download.sh: each pair relays TCP from its entry's port to TestBackend, and curl GETs
# /loadtest/bytes/1073741824 through it. The pairs, all design (a) (one thread, own epoll loop, multiplexed):
#   loop          as it is: 64 KiB frames, 256 KiB window, TCP_NODELAY, the kernel's socket buffers
#   loop-big      the bulk tuning: 256 KiB frames, 2 MiB window, Nagle on, 4 MiB SO_SNDBUF/SO_RCVBUF
#   splice        payloads moved with splice(2) through pipes (SpliceMuxRelay), no copy in user space, as loop
#   splice-big    the same with loop-big's tuning
#   splice-again  splice-big once more, for the noise: two identical pairs measured as if they differed
#   loop-1m, splice-1m  loop-big's and splice-big's tuning with 1 MiB frames (a pipe's size) and a 4 MiB window
#   loop-1m-again, splice-1m-again  once more each, for the noise
# and yarp1, one YARP hop (benchmarks/Tunnel2.YarpHop, in front of TestBackend). download.sh prints MB/s and the CPU per
# MB of every process of each (/proc/PID/stat; a pair's entry as NAME.1, its agent as NAME.2).
# With --factors first, the pairs are loop-1m (twice) and loop-1m with one setting at a time back at loop's: TCP_NODELAY
# on (loop-1m-nodelay), the kernel's socket buffers (loop-1m-autobuf), 256 KiB and 64 KiB frames (loop-256k-w4m,
# loop-64k-w4m).
# With --reads first: loop-1m, loop-256k-w4m and, twice, 1 MiB reads cut into 256 KiB frames (loop-r1m-f256k).
# Usage: benchmarks/RelayPrototypes/download-bench.sh [--factors|--reads] [download.sh options, e.g. --rounds 5]
# Needs the solution built in Release. Docs: docs/benchmarks/2026-11-29-download-splice.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
LT_NAME=download-bench
source "$REPO/tunnel2-load-tests/scripts/lib/common.sh"
source "$REPO/tunnel2-load-tests/scripts/lib/side-by-side.sh"
DLL="$HERE/bin/Release/net10.0/RelayPrototypes.dll"
YARP_DLL="$REPO/benchmarks/Tunnel2.YarpHop/bin/Release/net10.0/Tunnel2.YarpHop.dll"
[[ -f "$DLL" && -f "$YARP_DLL" ]] || die "build the solution in Release first (dotnet build Tunnel2.sln -c Release)" 2
BIG="RELAY_FRAME_KIB=256 RELAY_WINDOW_KIB=2048 RELAY_NODELAY=0 RELAY_SOCKBUF_KIB=4096"
HUGE="RELAY_FRAME_KIB=1024 RELAY_WINDOW_KIB=4096 RELAY_NODELAY=0 RELAY_SOCKBUF_KIB=4096"
YARP_PORT=12115
# NAME|DESIGN|ENV|PORT (the entry's; its link on PORT + 100)
PAIRS=(
  "loop|loop||12130"
  "loop-big|loop|$BIG|12131"
  "splice|loop-splice||12132"
  "splice-big|loop-splice|$BIG|12133"
  "splice-again|loop-splice|$BIG|12134"
  "loop-1m|loop|$HUGE|12135"
  "splice-1m|loop-splice|$HUGE|12136"
  "loop-1m-again|loop|$HUGE|12137"
  "splice-1m-again|loop-splice|$HUGE|12138"
)
if [[ "${1:-}" == --factors ]]; then
  # Which of loop-1m's settings buys what: each left at loop's value in turn.
  shift
  PAIRS=(
    "loop-1m|loop|$HUGE|12135"
    "loop-1m-again|loop|$HUGE|12137"
    "loop-1m-nodelay|loop|${HUGE/RELAY_NODELAY=0/RELAY_NODELAY=1}|12139"
    "loop-1m-autobuf|loop|${HUGE/ RELAY_SOCKBUF_KIB=4096/}|12140"
    "loop-256k-w4m|loop|${HUGE/RELAY_FRAME_KIB=1024/RELAY_FRAME_KIB=256}|12141"
    "loop-64k-w4m|loop|${HUGE/RELAY_FRAME_KIB=1024/RELAY_FRAME_KIB=64}|12142"
  )
fi
if [[ "${1:-}" == --reads ]]; then
  # 1 MiB reads cut into 256 KiB frames (one readv, the headers written into holes) against 1 MiB and 256 KiB frames.
  shift
  R1M="RELAY_READ_KIB=1024 ${HUGE/RELAY_FRAME_KIB=1024/RELAY_FRAME_KIB=256}"
  PAIRS=(
    "loop-1m|loop|$HUGE|12135"
    "loop-256k-w4m|loop|${HUGE/RELAY_FRAME_KIB=1024/RELAY_FRAME_KIB=256}|12141"
    "loop-r1m-f256k|loop|$R1M|12143"
    "loop-r1m-f256k-again|loop|$R1M|12144"
  )
fi
LOGS="$(mktemp -d)"
CHILDREN=()
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  local pid
  for pid in "${CHILDREN[@]}"; do stop_pid "relay or YARP hop" "$pid" 10; done
  stack_stop
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stack_ensure 1 1 "$LOGS/run-local.log"
$SETSID dotnet "$YARP_DLL" --listen "http://127.0.0.1:$YARP_PORT" --destination "http://127.0.0.1:$BACKEND_PORT" \
  </dev/null >"$LOGS/yarp.log" 2>&1 &
CHILDREN+=($!)
wait_pong "YARP hop" $! "http://127.0.0.1:$YARP_PORT/loadtest/ping" 30 "$LOGS/yarp.log"
EXTRAS=(--extra "yarp1=http://127.0.0.1:$YARP_PORT@$!")
for pair in "${PAIRS[@]}"; do
  IFS='|' read -r name design env port <<<"$pair"
  # shellcheck disable=SC2086  # ENV is a list of VAR=VALUE words
  $SETSID env $env dotnet "$DLL" entry "$design" --listen "$port" --link $((port + 100)) </dev/null >"$LOGS/$name-entry.log" 2>&1 &
  entry=$!
  CHILDREN+=("$entry")
  sleep 1   # the entry's link port listens once the runtime has started
  # shellcheck disable=SC2086
  $SETSID env $env dotnet "$DLL" agent "$design" --link "127.0.0.1:$((port + 100))" --target "127.0.0.1:$BACKEND_PORT" \
    </dev/null >"$LOGS/$name-agent.log" 2>&1 &
  CHILDREN+=($!)
  wait_pong "relay pair $name" $! "http://127.0.0.1:$port/loadtest/ping" 30 "$LOGS/$name-agent.log"
  EXTRAS+=(--extra "$name=http://127.0.0.1:$port@$entry,$!")
  log "pair $name ($design${env:+, $env}): entry pid $entry, agent pid $!"
done
log "relay and YARP logs in $LOGS; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
"$REPO/tunnel2-load-tests/scripts/download.sh" "${EXTRAS[@]}" "$@" || status=$?
log "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
# On a noisy machine a round's figures move together: each target's MB/s over yarp1's in the same round, then the median.
REPORT="$(find "$REPO/tunnel2-load-tests/reports" -maxdepth 1 -type d -name '*-download' | sort | tail -1)"   # named by UTC time
python3 - "$REPORT/runs.txt" <<'PY' | tee "$REPORT/ratios.txt"
import statistics, sys
speed = {}
for line in open(sys.argv[1]):
    b, t, r, s, *_ = line.split()
    if b == "testbackend":
        speed[(t, int(r))] = int(s)
rounds = sorted({r for _, r in speed})
print(f"{'target':<18} median of the per-round ratios to yarp1 (per round)")
for t in dict.fromkeys(t for t, _ in speed):
    ratios = [speed[(t, r)] / speed[("yarp1", r)] for r in rounds if (t, r) in speed and speed.get(("yarp1", r))]
    print(f"{t:<18} {statistics.median(ratios):.3f}   ({', '.join(f'{x:.2f}' for x in ratios)})")
PY
exit "$status"
