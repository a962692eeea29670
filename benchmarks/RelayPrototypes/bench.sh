#!/usr/bin/env bash
# The relay prototypes (this folder) beside the references, in one sitting of tcp-bench.sh: direct, two nginx stream hops,
# ssh -R, this checkout's Tunnel2 --tcp, and the pairs
#   loop      (a) one thread, own epoll loop, multiplexed (ssh-like frames and windows, 256 KiB per stream)
#   loop-2m   (a) with OpenSSH's 2 MiB window per stream (RELAY_WINDOW_KIB=2048)
#   pool      (b) a data connection per caller from a pre-dialled pool, async two-way copy (default engine)
#   pool1     (b) the same with DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT=1 and ..._INLINE_COMPLETIONS=1
#   splice    (b) on (a)'s loop: a data connection per caller from a pre-dialled pool, relayed with splice(2)
#   mux1      (c) the runtime's async sockets, multiplexed, with THREAD_COUNT=1 and INLINE_COMPLETIONS=1
#   mux       (c) the same on the engine's defaults
#   loop-lib  (a) rebuilt on the Tunnel2.Loops library (src/Tunnel2.Loops): the loop pair's algorithm on EventLoop/LoopSocket
# and, for the noise, two identical ones measured as if they differed: loop-again (the loop pair once more) and
# tunnel-again (a second TunnelServer and TunnelClients from the same build).
# Usage: benchmarks/RelayPrototypes/bench.sh [tcp-bench.sh options, e.g. --rounds 3 --tests "redis-get bulk-up bulk-down"]
# (defaults: 3 rounds of redis-get, bulk-up and bulk-down; --targets may name a subset of the above and of
# direct nginx nginx2 ssh tunnel). Docs: docs/benchmarks/2026-11-29-relay-prototypes.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
DLL="$HERE/bin/Release/net10.0/RelayPrototypes.dll"
dotnet build "$HERE/RelayPrototypes.csproj" -c Release -nologo -v quiet >&2

RUN="dotnet $DLL"
W2M="env RELAY_WINDOW_KIB=2048 dotnet $DLL"
ONE="env DOTNET_SYSTEM_NET_SOCKETS_THREAD_COUNT=1 DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1 dotnet $DLL"
# pair NAME DESIGN RUNNER: tcp-bench.sh's --pair value.
pair() { echo "$1=$3 entry $2 --listen {listen} --link {link}|$3 agent $2 --link 127.0.0.1:{link} --target {target}"; }

args=(--tests "redis-get bulk-up bulk-down" --variant "tunnel-again=$REPO"
  --targets "direct nginx2 ssh tunnel tunnel-again loop loop-again loop-lib loop-2m pool pool1 splice mux1 mux")
exec "$REPO/tunnel2-load-tests/scripts/tcp-bench.sh" "${args[@]}" \
  --pair "$(pair loop loop "$RUN")" --pair "$(pair loop-again loop "$RUN")" --pair "$(pair loop-lib loop-lib "$RUN")" --pair "$(pair loop-2m loop "$W2M")" --pair "$(pair pool pool "$RUN")" --pair "$(pair pool1 pool "$ONE")" --pair "$(pair splice splice "$RUN")" \
  --pair "$(pair mux1 mux "$ONE")" --pair "$(pair mux mux "$RUN")" "$@"
