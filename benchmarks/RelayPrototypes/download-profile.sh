#!/usr/bin/env bash
# Where a relay pair's CPU per MB goes in the 1 GiB download: TestBackend on :12007 (started here unless it answers),
# one pair (DESIGN with the RELAY_* settings given as VAR=VALUE words), `perf record -g` on its entry and agent over
# DOWNLOADS downloads, then each process's flat profile (self time by symbol) and its share by kind.
# Usage: benchmarks/RelayPrototypes/download-profile.sh OUT_DIR DESIGN [DOWNLOADS] [VAR=VALUE...]
#   e.g. download-profile.sh /tmp/prof loop-splice 3 RELAY_FRAME_KIB=1024 RELAY_WINDOW_KIB=4096 RELAY_NODELAY=0
# Needs perf (linux-perf) and root. Docs: docs/benchmarks/2026-11-29-download-splice.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
OUT="$1" DESIGN="$2" DOWNLOADS="${3:-3}"
shift 2; (($#)) && shift
ENV=("$@")
DLL="$HERE/bin/Release/net10.0/RelayPrototypes.dll"
BACKEND="$REPO/src/TestBackend/bin/Release/net10.0/TestBackend.dll"
BYTES=1073741824 PORT=12160 LINK=12260
mkdir -p "$OUT"
PIDS=()
cleanup() { local p; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

if ! curl -sf http://127.0.0.1:12007/healthz >/dev/null; then
  setsid dotnet "$BACKEND" --urls http://127.0.0.1:12007 </dev/null >"$OUT/backend.log" 2>&1 &
  PIDS+=($!)
  until curl -sf http://127.0.0.1:12007/healthz >/dev/null; do sleep 0.2; done
fi
setsid env DOTNET_PerfMapEnabled=1 "${ENV[@]}" dotnet "$DLL" entry "$DESIGN" --listen $PORT --link $LINK </dev/null >"$OUT/entry.log" 2>&1 &
ENTRY=$!
PIDS+=("$ENTRY")
sleep 1
setsid env DOTNET_PerfMapEnabled=1 "${ENV[@]}" dotnet "$DLL" agent "$DESIGN" --link 127.0.0.1:$LINK --target 127.0.0.1:12007 \
  </dev/null >"$OUT/agent.log" 2>&1 &
AGENT=$!
PIDS+=("$AGENT")
until curl -sf http://127.0.0.1:$PORT/loadtest/ping >/dev/null; do sleep 0.2; done
curl -s -o /dev/null "http://127.0.0.1:$PORT/loadtest/bytes/$BYTES"   # warm-up

perf record -g -o "$OUT/perf.data" -p "$ENTRY,$AGENT" >"$OUT/perf-record.log" 2>&1 &
PERF=$!
sleep 1
for ((i = 0; i < DOWNLOADS; i++)); do
  curl -s -o /dev/null -w '%{speed_download}\n' "http://127.0.0.1:$PORT/loadtest/bytes/$BYTES" >>"$OUT/speeds.txt"
done
kill -INT $PERF; wait $PERF || true

for side in entry:$ENTRY agent:$AGENT; do
  perf report -i "$OUT/perf.data" --pid "${side#*:}" --no-children --sort dso,sym --stdio -g none --percentage relative \
    2>/dev/null | grep -v '^#' | grep -v '^$' >"$OUT/${side%%:*}-flat.txt" || true
done
echo "speeds (bytes/s): $(tr '\n' ' ' <"$OUT/speeds.txt")"
perf report -i "$OUT/perf.data" --no-children --sort pid --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -4
python3 - "$OUT/entry-flat.txt" "$OUT/agent-flat.txt" <<'PY'
import re, sys
# A symbol's kind, first match wins; the kinds are what the CPU per MB is spent on.
KINDS = [
    ("user-space copy (memmove)", r"memmove|memcpy|Buffer.Memmove|SpanHelpers"),
    ("kernel copy to/from user", r"copy_user|_copy_to_iter|_copy_from_iter|copy_page_to_iter|copy_page_from_iter|rep_movs|skb_copy_datagram|simple_copy_to_iter"),
    ("splice and pipes", r"splice|pipe|iov_iter_extract|iov_iter_get_pages"),
    ("checksum", r"csum"),
    ("TCP/IP, loopback, netfilter, skbs", r"tcp|^ip_|__ip|_ip_|inet|nf_|ipv4|skb|loopback|net_rx|__netif|netif|dev_|__dev|napi|sock|sk_|__sk|release_sock|lock_sock|__inet|raw_local|process_backlog|__napi"),
    ("memory (slab, pages)", r"kmem_cache|kmalloc|kfree|__alloc|alloc_pages|page_frag|free_unref|__free_pages|folio|get_page|put_page|__page|mem_cgroup|__memcg|memcg|rmqueue|obj_cgroup|refill_obj|__mod_memcg|mod_objcg"),
    ("epoll, syscall entry and exit", r"epoll|ep_|entry_SYSCALL|syscall|do_syscall|__x64_sys|fdget|__fget|fput|__fsnotify|fsnotify|security_|apparmor|rw_verify|ksys_|__sys_|x64_sys"),
    ("scheduling, wake-ups, timers", r"schedule|switch|wake|enqueue|dequeue|update_|pick_next|sched|finish_task|timer|hrtimer|rcu|irq|softirq|do_softirq|__local_bh|_raw_spin|spin_lock|spin_unlock|queued_spin|pv_queued|native_"),
]
def kinds(path):
    tally = {}
    for line in open(path):
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)", line)
        if not m:
            continue
        pct, dso, mark, sym = float(m[1]), m[2], m[3], m[4].strip()
        kind = next((k for k, rx in KINDS if re.search(rx, sym, re.I)), None)
        if kind is None:
            kind = "user space (runtime, JIT code)" if mark == "." else "kernel, other"
        tally[kind] = tally.get(kind, 0) + pct
    return tally
for path in sys.argv[1:]:
    t = kinds(path)
    print(f"== {path.rsplit('/', 1)[-1]}: share of the process's samples by kind")
    for k, v in sorted(t.items(), key=lambda kv: -kv[1]):
        print(f"  {v:5.1f}%  {k}")
    print("  top symbols:")
    for line in open(path).readlines()[:12]:
        print("   " + line.rstrip())
PY
