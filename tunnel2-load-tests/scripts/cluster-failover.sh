#!/usr/bin/env bash
# Failures of TunnelServer nodes under load through HAProxy (tunnel2-deploy/cluster/run-cluster.sh):
# kill -9 one node, a rolling restart of all three, one node frozen with SIGSTOP. Counts the requests that failed
# and times how long until the cluster serves the session through every node again.
set -euo pipefail

LT_NAME=cluster-failover
# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=lib/cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cluster.sh"

SCENARIOS="kill restart freeze"
RATE=500
SECONDS_PER_RUN=30
FREEZE_SECONDS=10
CONNECTIONS=20

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/cluster-failover.sh [--scenario "kill restart freeze"] [--rate RPS]
         [--seconds S] [--freeze-seconds F]

Through HAProxy in front of three nodes (tunnel2-deploy/cluster/run-cluster.sh; started here, and stopped at the
end, when it is not running), GET /loadtest/ping on the dev session at a fixed RATE (default 500 req/s, h2load
--h1, $CONNECTIONS connections) for S seconds (default 30) per scenario, while:
  kill     node-2 gets SIGKILL a third of the way in; run-cluster.sh starts it again after 1 s
  restart  a rolling restart: each node in turn gets SIGTERM (it drains: /healthz 503, GoAway to its clients),
           is started again, and serves the session again before the next one goes
  freeze   node-2 gets SIGSTOP a third of the way in and SIGCONT F seconds later (default 10); HAProxy's checks
           and the client's keep-alive (6 s in run-cluster.sh) each notice it
Prints per scenario: requests sent and failed (non-2xx, errors, timeouts), the time from the event until HAProxy
marks the node down and until the node serves the session again (directly on its public port), and Tunnel2-Node
counts of who answered. Target for GETs: 0 failed.

Then checks the session's raw TCP port (docs/tcp.md): TestBackend's ping through HAProxy's TCP frontend and on
each node's own TCP address answers, so every node, restarted ones too, listens on the session's one port.

Reports: tunnel2-load-tests/reports/<UTC timestamp>-cluster-failover/ (summary.txt, h2load output per scenario).
Exit 0 when no GET failed and TCP answered everywhere, 1 otherwise.
EOF
}

while (($#)); do
  case "$1" in
    --scenario) SCENARIOS="$2"; shift ;;
    --rate) RATE="$2"; shift ;;
    --seconds) SECONDS_PER_RUN="$2"; shift ;;
    --freeze-seconds) FREEZE_SECONDS="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done
for var in RATE SECONDS_PER_RUN FREEZE_SECONDS; do
  [[ "${!var}" =~ ^[1-9][0-9]*$ ]] || die "$var must be a positive number, got '${!var}'" 2
done
for scenario in $SCENARIOS; do
  [[ "$scenario" =~ ^(kill|restart|freeze)$ ]] || die "unknown scenario '$scenario' (kill, restart, freeze)" 2
done

ensure_tool h2load nghttp2-client
ensure_tool curl curl

REPORT_DIR="$LT_DIR/reports/$(utc_stamp)-cluster-failover"
mkdir -p "$REPORT_DIR"
trap cluster_stop EXIT

if ! answers "$CLUSTER_URL" pong; then
  log "starting tunnel2-deploy/cluster/run-cluster.sh (log: $REPORT_DIR/run-cluster.log)"
  cluster_start "$REPORT_DIR/run-cluster.log" 3
fi

# since START_NANOS: seconds since then, to 0.01 s.
now_ns() { date +%s%N; }
since() { awk -v a="$1" -v b="$(now_ns)" 'BEGIN {printf "%.2f", (b - a) / 1e9}'; }

# wait_for WHAT LIMIT_S COMMAND...: polls every 50 ms; prints the seconds since EVENT_NS when it holds, or "never".
wait_for() {
  local limit="$2"
  shift 2
  local deadline=$((SECONDS + limit))
  until "$@"; do
    ((SECONDS < deadline)) || { echo never; return 0; }
    sleep 0.05
  done
  since "$EVENT_NS"
}
is_down() { [[ "$(haproxy_status "$1")" == DOWN* ]]; }
is_up() { [[ "$(haproxy_status "$1")" == UP ]]; }
serves() { answers "$(node_url "$1")" pong; }
restarted() { [[ "$(node_pid "$1")" != "$2" ]] && serves "$1"; }
# The clients' keep-alive timeouts so far (their logs say "nothing received for N ms (keep-alive timeout)").
keep_alive_timeouts() { cat "$CLUSTER_RUN_DIR"/client-*.log 2>/dev/null | grep -c 'keep-alive timeout' || true; }
client_dropped() { (($(keep_alive_timeouts) > $1)); }

SUMMARY="$REPORT_DIR/summary.txt"
failed_total=0
{
  echo "cluster-failover $(date -u +%Y-%m-%dT%H:%M:%SZ): $RATE req/s for ${SECONDS_PER_RUN}s per scenario through HAProxy ($CLUSTER_URL)"
  printf '%-8s %9s %7s %8s  %s\n' scenario requests failed "2xx" "events (seconds after each)"
} | tee "$SUMMARY"

for scenario in $SCENARIOS; do
  out="$REPORT_DIR/h2load-$scenario.txt"
  per_connection=$(awk -v r="$RATE" -v c="$CONNECTIONS" 'BEGIN {printf "%.2f", r / c}')
  h2load --h1 -c "$CONNECTIONS" --rps "$per_connection" -D "$SECONDS_PER_RUN" -T 10 "$CLUSTER_URL" >"$out" 2>&1 &
  load_pid=$!
  sleep $((SECONDS_PER_RUN / 3))
  events=""
  case "$scenario" in
    kill)
      old=$(node_pid 2)
      EVENT_NS=$(now_ns)
      kill -KILL "$old"
      events="node-2 killed: HAProxy down after $(wait_for down 20 is_down 2) s, serves again after $(wait_for served 60 restarted 2 "$old") s, HAProxy up after $(wait_for up 30 is_up 2) s"
      ;;
    restart)
      for n in 1 2 3; do
        old=$(node_pid "$n")
        EVENT_NS=$(now_ns)
        kill -TERM "$old"
        events+="node-$n: serves again after $(wait_for served 60 restarted "$n" "$old") s, HAProxy up after $(wait_for up 30 is_up "$n") s; "
      done
      ;;
    freeze)
      old=$(node_pid 2)
      timeouts_before=$(keep_alive_timeouts)
      EVENT_NS=$(now_ns)
      kill -STOP "$old"
      down=$(wait_for down "$FREEZE_SECONDS" is_down 2)
      dropped=$(wait_for dropped "$FREEZE_SECONDS" client_dropped "$timeouts_before")
      remaining=$(awk -v f="$FREEZE_SECONDS" -v s="$(since "$EVENT_NS")" 'BEGIN {r = f - s; print (r > 0 ? r : 0)}')
      sleep "$remaining"
      kill -CONT "$old"
      EVENT_NS=$(now_ns)
      events="node-2 frozen ${FREEZE_SECONDS}s: HAProxy down after $down s, the client dropped its uplink after $dropped s; after SIGCONT serves after $(wait_for served 30 serves 2) s, HAProxy up after $(wait_for up 30 is_up 2) s"
      ;;
  esac
  wait "$load_pid" || true
  # h2load's failed, errored and timed-out counts are read past: total - 2xx counts every bad answer.
  read -r total ok_2xx _ _ _ < <(awk '
    /^requests:/ {t = $2; f = $10; e = $12; to = $14}
    /^status codes:/ {s = $3}
    END {print t + 0, s + 0, f + 0, e + 0, to + 0}' "$out")
  bad=$((total - ok_2xx))
  ((bad > 0)) && failed_total=$((failed_total + bad))
  printf '%-8s %9s %7s %8s  %s\n' "$scenario" "$total" "$bad" "$ok_2xx" "$events" | tee -a "$SUMMARY"
  # Let the cluster settle (every node up in HAProxy) before the next scenario.
  for n in 1 2 3; do EVENT_NS=$(now_ns); wait_for up 30 is_up "$n" >/dev/null; done
done

# Raw TCP through HAProxy's TCP mode and on each node's own address, after the kills and restarts: a node that
# came back listens on the session's port again (the client asked it for that port). A second or two at most.
tcp_failed=0
for _ in $(seq 1 20); do tcp_checks >/dev/null && break; sleep 0.5; done
tcp_checks | tee -a "$SUMMARY" >&2 || tcp_failed=1

log "who answered (Tunnel2-Node over 30 requests now):"
for _ in $(seq 1 30); do curl -s -D - -o /dev/null "$CLUSTER_URL" | tr -d '\r' | awk -F': ' 'tolower($1) == "tunnel2-node" {print $2}'; done \
  | sort | uniq -c | sed 's/^/  /' | tee -a "$SUMMARY" >&2
log "report: $SUMMARY"
((failed_total == 0 && tcp_failed == 0))
