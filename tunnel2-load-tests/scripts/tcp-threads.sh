#!/usr/bin/env bash
# Where the TunnelServer's switches per Redis GET come from, thread by thread, and which epoll sets watch the TCP
# callers: for each build given, one TunnelServer and one TunnelClient (--tcp) in front of a redis-server, and one
# redis-benchmark GET run through them, the builds alternating over the rounds.
set -euo pipefail

usage() {
  cat <<EOF
Usage: $0 --build NAME=TREE [--build NAME=TREE]... [--rounds N] [--requests N]

Per round and build (the builds in the order given, every round): starts TREE's Release build of TunnelServer
(--tcp-ports) and TunnelClient (--tcp to a redis-server of its own), all on 127.0.0.1; runs 20,000 GETs to warm up,
then 'redis-benchmark -t get -c 50 -n REQUESTS' and prints:
  - each epoll set of the server 1.5 s into the run, with the number of descriptors it watches (/proc/PID/fdinfo:
    the runtime's socket engine has one, each event loop one; a caller's socket in two sets wakes both threads);
  - the GET/s, the server's CPU µs per GET (user + system, /proc/PID/stat);
  - the server's switches per GET (voluntary + involuntary, /proc/PID/task/*/status, the threads alive at the end),
    in all and by thread name (the thread pool's workers summed): '.NET Sockets' is the runtime's epoll thread,
    'server-loop' the server's event loop (its TCP callers and plain uplinks; 'tcp-callers' before stage 3b).
Then stops both processes and the redis-server. TREE may be a checkout or a copy of its src/*/bin/Release.

  --build NAME=TREE  a build to measure (repeat: the "before", the change, an identical copy for the noise)
  --rounds N         rounds (default 2)
  --requests N       redis-benchmark -n per run (default 100000)
Needs redis-server, redis-benchmark (redis-tools), python3 and dotnet on PATH.
Example: $0 --build before=../before --build after=. --build after2=/tmp/after-copy
EOF
}

BUILDS=() ROUNDS=2 REQUESTS=100000
while (($#)); do
  case "$1" in
    --build) BUILDS+=("$2"); shift ;;
    --rounds) ROUNDS="$2"; shift ;;
    --requests) REQUESTS="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
((${#BUILDS[@]})) || { usage >&2; exit 2; }
for tool in redis-server redis-benchmark python3 dotnet; do
  command -v "$tool" >/dev/null || { echo "'$tool' is not on PATH (see --help)" >&2; exit 127; }
done

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PIDS=()
stop_all() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; PIDS=(); }
trap stop_all EXIT

# threads PID: "tid<TAB>name<TAB>voluntary<TAB>involuntary" per thread.
threads() {
  local t name
  for t in /proc/"$1"/task/*; do
    name="$(cat "$t/comm" 2>/dev/null)" || continue
    awk -v n="$name" -v t="${t##*/}" '/^voluntary_ctxt_switches/ {v = $2} /^nonvoluntary_ctxt_switches/ {nv = $2}
      END {print t "\t" n "\t" v "\t" nv}' "$t/status" 2>/dev/null || true
  done
}

epoll_sets() {
  local fd
  for fd in /proc/"$1"/fd/*; do
    [[ "$(readlink "$fd" 2>/dev/null)" == "anon_inode:[eventpoll]" ]] || continue
    echo "  epoll set (fd ${fd##*/}): $(grep -c '^tfd:' "/proc/$1/fdinfo/${fd##*/}") descriptors watched"
  done
}

# wait_for FILE PATTERN: until FILE holds PATTERN (30 s at most); prints the first match.
wait_for() {
  local match
  for _ in $(seq 1 150); do
    match="$(grep -o -m 1 "$2" "$1" 2>/dev/null)" && { echo "$match"; return 0; }
    sleep 0.2
  done
  return 1
}

measure() {
  local name="$1" tree="$2" work redis_port public tunnel base server forwarding port bench ticks0 ticks1
  work="$(mktemp -d "/tmp/tcp-threads-$name.XXXX")"
  redis_port="$(free_port)" public="$(free_port)" tunnel="$(free_port)" base=$(((RANDOM % 500) * 10 + 31000))
  redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no >"$work/redis.log" 2>&1 &
  PIDS+=($!)
  (cd "$tree/src/TunnelServer/bin/Release/net10.0" && exec dotnet TunnelServer.dll --environment Development \
    --public-url "http://127.0.0.1:$public" --tunnel-url "http://127.0.0.1:$tunnel" --tcp-ports "$base-$((base + 9))") \
    >"$work/server.log" 2>&1 &
  server=$!
  PIDS+=("$server")
  wait_for "$work/server.log" "tunnel http://127.0.0.1:$tunnel" >/dev/null || { echo "$name: no server (see $work)" >&2; exit 1; }
  (cd "$tree/src/TunnelClient/bin/Release/net10.0" && exec dotnet TunnelClient.dll --environment Development \
    --server "http://127.0.0.1:$tunnel" --session "tcp-threads-$name" --tcp "127.0.0.1:$redis_port") >"$work/client.log" 2>&1 &
  PIDS+=($!)
  forwarding="$(wait_for "$work/client.log" 'Forwarding tcp://[^ ]*:[0-9]*')" || { echo "$name: no TCP port (see $work)" >&2; exit 1; }
  port="${forwarding##*:}"
  redis-benchmark -p "$port" -t get -c 50 -n 20000 -q >/dev/null 2>&1
  threads "$server" >"$work/before.tsv"
  ticks0="$(awk '{print $14 + $15}' "/proc/$server/stat")"
  redis-benchmark -p "$port" -t get -c 50 -n "$REQUESTS" -q >"$work/bench.txt" 2>&1 &
  bench=$!
  sleep 1.5
  echo "$name:"
  epoll_sets "$server"
  wait "$bench"
  threads "$server" >"$work/after.tsv"
  ticks1="$(awk '{print $14 + $15}' "/proc/$server/stat")"
  echo "  $(tr '\r' '\n' <"$work/bench.txt" | grep 'requests per second' | tail -n 1)"
  python3 - "$work/before.tsv" "$work/after.tsv" "$REQUESTS" "$((ticks1 - ticks0))" "$(getconf CLK_TCK)" <<'PY'
import collections, sys
def load(path):
    rows = {}
    for line in open(path):
        tid, name, vol, invol = line.rstrip("\n").split("\t")
        rows[tid] = (name, int(vol), int(invol))
    return rows
before, after = load(sys.argv[1]), load(sys.argv[2])
n, ticks, hz = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
by_name = collections.defaultdict(lambda: [0, 0])
for tid, (name, vol, invol) in after.items():
    vol0, invol0 = before[tid][1:] if tid in before else (0, 0)
    key = ".NET TP Worker*" if name.startswith(".NET TP Worker") else name
    by_name[key][0] += vol - vol0
    by_name[key][1] += invol - invol0
total = sum(v + i for v, i in by_name.values())
print(f"  server: {ticks * 1e6 / hz / n:.1f} CPU us per GET, {total / n:.2f} switches per GET")
for name, (vol, invol) in sorted(by_name.items(), key=lambda kv: -sum(kv[1])):
    if vol + invol:
        print(f"    {name:18s} {(vol + invol) / n:.3f} per GET (voluntary {vol / n:.3f})")
PY
  stop_all
  rm -rf "$work"
}

echo "tcp-threads: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for ((round = 1; round <= ROUNDS; round++)); do
  echo "== round $round"
  for build in "${BUILDS[@]}"; do measure "${build%%=*}" "${build#*=}"; done
done
echo "done: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
