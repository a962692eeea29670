#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# CPU time and context switches per request of each process of the running dev stack during one wrk run,
# through the tunnel or straight at TestBackend: where a process's cost per request comes from wake-ups rather
# than from its own work, its switches per request show it.
set -euo pipefail

LT_NAME=switches
# shellcheck source=lib/common.sh
source "$(dirname "$0")/lib/common.sh"

usage() {
  cat <<EOF
Usage: $0 [--target tunnel|direct] [--seconds S] [--connections C]

Runs 'wrk -t2 -cC -dS' at /loadtest/ping through the tunnel ($TUNNEL_BASE) or straight at
TestBackend ($DIRECT_BASE), and prints for TestBackend, TunnelServer and TunnelClient of the
running stack (tunnel2-deploy/dev/run-local.sh, started beforehand): CPU microseconds per request (the whole
process) and context switches per request (voluntary + involuntary, summed over the threads alive at the end
of the run), then the threads that switched most. Reads /proc only; changes nothing.

  --target T       tunnel (default) or direct
  --seconds S      length of the wrk run (default 8)
  --connections C  wrk connections (default 50)
EOF
}

TARGET=tunnel SECONDS_PER_RUN=8 CONNECTIONS=50
while (($#)); do
  case "$1" in
    --target) TARGET="$2"; shift ;;
    --seconds) SECONDS_PER_RUN="$2"; shift ;;
    --connections) CONNECTIONS="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done
case "$TARGET" in
  tunnel) URL="$TUNNEL_BASE/loadtest/ping" ;;
  direct) URL="$DIRECT_BASE/loadtest/ping" ;;
  *) die "--target takes tunnel or direct, got '$TARGET'" 2 ;;
esac
[[ "$SECONDS_PER_RUN" =~ ^[1-9][0-9]*$ && "$CONNECTIONS" =~ ^[1-9][0-9]*$ ]] || die "--seconds and --connections take positive numbers" 2
ensure_tool wrk wrk
ensure_tool python3 python3
answers "$URL" pong || die "nothing answers pong at $URL (start tunnel2-deploy/dev/run-local.sh first)"

# snapshot: one "name pid - process 0 ticks" line per stack process (its CPU, exited threads included) and one
# "name pid tid thread-name switches 0" line per thread alive now (switches are counted per thread only). A thread
# that exits while it is read is left out.
snapshot() {
  local name pid task thread switches
  while read -r name pid; do
    echo "$name $pid - process 0 $(stat_ticks "/proc/$pid/stat")"
    for task in /proc/"$pid"/task/*; do
      thread="$(tr ' ' _ <"$task/comm" 2>/dev/null)" || continue
      switches="$(awk '/^(voluntary|nonvoluntary)_ctxt_switches:/ {s += $2} END {print s + 0}' "$task/status" 2>/dev/null)" \
        || continue
      if [[ -n "$thread" && -n "$switches" ]]; then echo "$name $pid ${task##*/} $thread $switches 0"; fi
    done
  done <<<"$PROCS"
}

PROCS="$(stack_pids)"   # once, so that both snapshots read the same processes
[[ -n "$PROCS" ]] || die "no stack process found"
before="$(mktemp)" after="$(mktemp)" out="$(mktemp)"
trap 'rm -f "$before" "$after" "$out"' EXIT
snapshot >"$before"
wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_PER_RUN}s" "$URL" >"$out" 2>&1 || die "wrk failed: $(tail -2 "$out")"
snapshot >"$after"
requests="$(awk '/requests in/ {print $1; exit}' "$out")"
[[ "${requests:-0}" -gt 0 ]] || die "wrk completed no request: $(tail -2 "$out")"

python3 - "$before" "$after" "$requests" "$(getconf CLK_TCK)" "$TARGET" "$(awk '/Requests\/sec/ {print $2}' "$out")" <<'PY'
import sys
before_file, after_file, requests, hz, target, rps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]

def load(path):
    rows = {}
    for line in open(path):
        name, pid, tid, thread, switches, ticks = line.split()
        rows[(name, pid, tid)] = (thread, int(switches), int(ticks))
    return rows

before, after = load(before_file), load(after_file)
per_process, per_thread = {}, []
for key, (thread, switches, ticks) in after.items():
    _, s0, t0 = before.get(key, (thread, 0, 0))  # a thread born during the run counts from zero
    name, pid, tid = key
    total = per_process.setdefault((name, pid), [0, 0])
    if tid == "-":
        total[1] = ticks - t0
    elif switches > s0:
        total[0] += switches - s0
        per_thread.append((switches - s0, name, pid, thread))

print(f"{target}: {requests:,} requests, {rps} req/s")
print(f"{'process':<14} {'pid':>8} {'CPU us/request':>15} {'switches/request':>17}")
for (name, pid), (switches, ticks) in per_process.items():
    print(f"{name:<14} {pid:>8} {ticks / hz * 1e6 / requests:>15.1f} {switches / requests:>17.2f}")
print("threads that switched most (switches per request):")
for ds, name, pid, thread in sorted(per_thread, reverse=True)[:8]:
    print(f"  {name} {pid} {thread}: {ds / requests:.2f}")
PY
