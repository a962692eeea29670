#!/usr/bin/env bash
# What one request costs in a cluster of 1 and of 3 nodes behind HAProxy (tunnel2-deploy/cluster/run-cluster.sh):
# CPU per request of each process at a fixed rate, and each process's RSS. On a 2-core machine this compares cost,
# not total throughput.
set -euo pipefail

LT_NAME=cluster-scale
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=lib/cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cluster.sh"

NODE_COUNTS="1 3"
RATE=2000
SECONDS_PER_RUN=20
ROUNDS=2
CONNECTIONS=20

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/cluster-scale.sh [--nodes "1 3"] [--rate RPS] [--seconds S] [--rounds N]

For each node count, in turn and ROUNDS times: starts run-cluster.sh --nodes N (one client, every node in HAProxy),
sends GET /loadtest/ping through HAProxy at RATE req/s (default 2000, h2load --h1, $CONNECTIONS connections) for S
seconds (default 20) after 5 s of warm-up load, and prints per process (each node, the client, HAProxy, TestBackend)
the CPU time per request (from /proc, user + system) and the RSS at the end. Stops the cluster after each run.
Reports: tunnel2-load-tests/reports/<UTC timestamp>-cluster-scale/summary.txt.
EOF
}

while (($#)); do
  case "$1" in
    --nodes) NODE_COUNTS="$2"; shift ;;
    --rate) RATE="$2"; shift ;;
    --seconds) SECONDS_PER_RUN="$2"; shift ;;
    --rounds) ROUNDS="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done
for var in RATE SECONDS_PER_RUN ROUNDS; do
  [[ "${!var}" =~ ^[1-9][0-9]*$ ]] || die "$var must be a positive number, got '${!var}'" 2
done
for n in $NODE_COUNTS; do [[ "$n" =~ ^[1-3]$ ]] || die "--nodes takes counts of 1 to 3, got '$n'" 2; done

ensure_tool h2load nghttp2-client
REPORT_DIR="$LT_DIR/reports/$(utc_stamp)-cluster-scale"
mkdir -p "$REPORT_DIR"
answers "$CLUSTER_URL" pong && die "a cluster already answers on :$CLUSTER_BASE_PORT; stop it first (this script starts its own)"
trap cluster_stop EXIT

ticks_per_second=$(getconf CLK_TCK)

SUMMARY="$REPORT_DIR/summary.txt"
echo "cluster-scale $(date -u +%Y-%m-%dT%H:%M:%SZ): $RATE req/s for ${SECONDS_PER_RUN}s through HAProxy, $ROUNDS round(s)" | tee "$SUMMARY"
printf '%-6s %-5s %-10s %12s %10s\n' nodes round process "CPU us/req" "RSS MiB" | tee -a "$SUMMARY"
for round in $(seq 1 "$ROUNDS"); do
  for n in $NODE_COUNTS; do
    log "round $round: $n node(s)"
    cluster_start "$REPORT_DIR/run-cluster-$n-$round.log" "$n" --no-build --nodes "$n"

    names=(haproxy backend client-1)
    for i in $(seq 1 "$n"); do names+=("node-$i"); done
    per_connection=$(awk -v r="$RATE" -v c="$CONNECTIONS" 'BEGIN {printf "%.2f", r / c}')
    h2load --h1 -c "$CONNECTIONS" --rps "$per_connection" -D 5 "$CLUSTER_URL" >/dev/null 2>&1 || true
    declare -A before=()
    for name in "${names[@]}"; do before[$name]=$(stat_ticks "/proc/$(piece_pid "$name")/stat"); done
    out="$REPORT_DIR/h2load-$n-$round.txt"
    h2load --h1 -c "$CONNECTIONS" --rps "$per_connection" -D "$SECONDS_PER_RUN" "$CLUSTER_URL" >"$out" 2>&1 || true
    ok=$(awk '/^status codes:/ {print $3 + 0}' "$out")
    ((ok > 0)) || die "no request succeeded (see $out)"
    for name in "${names[@]}"; do
      pid=$(piece_pid "$name")
      used=$(( $(stat_ticks "/proc/$pid/stat") - before[$name] ))
      us=$(awk -v t="$used" -v hz="$ticks_per_second" -v r="$ok" 'BEGIN {printf "%.1f", t / hz * 1e6 / r}')
      rss=$(awk -v k="$(rss_kib "$pid")" 'BEGIN {printf "%.0f", k / 1024}')
      printf '%-6s %-5s %-10s %12s %10s\n' "$n" "$round" "$name" "$us" "$rss" | tee -a "$SUMMARY"
    done
    unset before
    cluster_stop
  done
done
log "report: $SUMMARY"
