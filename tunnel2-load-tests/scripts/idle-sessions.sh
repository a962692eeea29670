#!/usr/bin/env bash
# What an idle connected session costs the TunnelServer in memory (issue #7: 1,000 idle sessions
# at most 50 KB each). For each GC mode and each N: starts a TunnelServer alone (Release build, or
# --server-binary; loopback, its own ports), samples its VmRSS with no session, opens N idle uplinks with
# benchmarks/Tunnel2.IdleSessions (one real login and session id each), waits until the server
# has logged all N logins, samples VmRSS again over the idle period, then stops both.
# Prints baseline RSS, RSS with N sessions and KiB per session = (after - before) / N.
set -euo pipefail

LT_NAME=idle-sessions
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

# A server of its own, not the dev stack's: its own ports override common.sh's.
PUBLIC_PORT="${IDLE_PUBLIC_PORT:-12300}"
TUNNEL_PORT="${IDLE_TUNNEL_PORT:-12301}"
SESSION_COUNTS="100 1000"
GC_MODES="default server"
SETTLE_SECONDS=15        # after start, before the baseline samples
IDLE_SECONDS=30          # RSS is sampled over this long once every session is registered
SAMPLES=4                # samples over the idle period
START_TIMEOUT=60         # until the server answers /healthz
REGISTER_TIMEOUT=120     # until the server has logged every login
MAX_SECONDS="${IDLE_MAX_SECONDS:-1800}"   # the whole run, builds included
STOP_TIMEOUT=15
BUILD=auto
SERVER_BINARY=""   # --server-binary: another TunnelServer executable (e.g. the Native AOT one)
TOKEN="idle-sessions-local-token"   # loopback only; the server gets it with --token

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/idle-sessions.sh [options]

Measures the TunnelServer's memory per idle connected session. For each GC mode and each N it
starts a TunnelServer alone from its Release build (or --server-binary) on 127.0.0.1:$PUBLIC_PORT (public) and
127.0.0.1:$TUNNEL_PORT (tunnel), waits until /healthz answers, lets it settle ${SETTLE_SECONDS}s with no
session and samples VmRSS (baseline), then runs benchmarks/Tunnel2.IdleSessions with N uplinks,
each a real login with its own session id that answers keep-alive pings and sends nothing else.
Once the server has logged all N logins it samples VmRSS $SAMPLES times over ${IDLE_SECONDS}s of idle,
stops the tool and the server, and prints one row: baseline, RSS with N (median of the idle
samples) and KiB per session = (after - before) / N.

Options:
  --sessions "N ..."   Session counts, one server run each       [default "$SESSION_COUNTS"]
  --gc "MODE ..."      GC modes: default (what the build sets: workstation GC since 2026-11-23), workstation
                       (DOTNET_gcServer=0), server (DOTNET_gcServer=1: the Web SDK's server GC with DATAS),
                       server-no-datas (DOTNET_gcServer=1 DOTNET_GCDynamicAdaptationMode=0)
                                                                 [default "$GC_MODES"]
  --settle S           Seconds with no session before the baseline [default $SETTLE_SECONDS]
  --idle S             Seconds of idle sampling with N sessions    [default $IDLE_SECONDS]
  --samples K          RSS samples over the idle period            [default $SAMPLES]
  --no-build           Use the existing Release build (fails if it is missing)
  --server-binary PATH Run this TunnelServer executable instead of the Release dll, e.g. the Native AOT
                       build artifacts/aot/TunnelServer/TunnelServer (tunnel2-deploy/dev/run-local.sh --aot)
  --build              Build Release even if the dlls exist
  -h, --help           Show this help

Environment: IDLE_PUBLIC_PORT ($PUBLIC_PORT), IDLE_TUNNEL_PORT ($TUNNEL_PORT), IDLE_MAX_SECONDS ($MAX_SECONDS:
the whole run is stopped after this long). Everything runs on loopback; the script stops every
process it started, on success, failure or Ctrl-C. Others on this machine run benchmarks too:
run it under the shared lock, e.g.  flock /tmp/tunnel2-bench.lock $0

Reports (server and tool logs, results.tsv): tunnel2-load-tests/reports/<UTC timestamp>-idle-sessions/
Exit codes: 0 done; 1 a run failed (server did not start, logins missing, an uplink dropped,
time limit); 2 bad usage; 127 dotnet or curl missing.
EOF
}

positive() { [[ "$1" =~ ^[1-9][0-9]*$ ]]; }

while (($#)); do
  case "$1" in
    --sessions) [[ $# -ge 2 ]] || die "--sessions needs a value" 2; SESSION_COUNTS="$2"; shift ;;
    --gc) [[ $# -ge 2 ]] || die "--gc needs a value" 2; GC_MODES="$2"; shift ;;
    --settle) [[ $# -ge 2 ]] || die "--settle needs a value" 2; SETTLE_SECONDS="$2"; shift ;;
    --idle) [[ $# -ge 2 ]] || die "--idle needs a value" 2; IDLE_SECONDS="$2"; shift ;;
    --samples) [[ $# -ge 2 ]] || die "--samples needs a value" 2; SAMPLES="$2"; shift ;;
    --no-build) BUILD=no ;;
    --server-binary) [[ $# -ge 2 ]] || die "--server-binary needs a value" 2; SERVER_BINARY="$2"; shift ;;
    --build) BUILD=yes ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done

for n in $SESSION_COUNTS; do positive "$n" || die "--sessions takes positive whole numbers, not '$n'" 2; done
[[ -n "${SESSION_COUNTS// /}" ]] || die "--sessions is empty" 2
for mode in $GC_MODES; do
  case "$mode" in default|workstation|server|server-no-datas) ;; *) die "unknown GC mode '$mode' (see --help)" 2 ;; esac
done
[[ -n "${GC_MODES// /}" ]] || die "--gc is empty" 2
for v in SETTLE_SECONDS IDLE_SECONDS SAMPLES PUBLIC_PORT TUNNEL_PORT MAX_SECONDS; do
  positive "${!v}" || die "$v must be a positive whole number, got '${!v}'" 2
done
((PUBLIC_PORT != TUNNEL_PORT)) || die "IDLE_PUBLIC_PORT and IDLE_TUNNEL_PORT must differ" 2

command -v dotnet >/dev/null 2>&1 || die "'dotnet' is not on PATH (the .NET 10 SDK is needed)" 127
ensure_tool curl curl

SERVER_DLL="$REPO_ROOT/src/TunnelServer/bin/Release/net10.0/TunnelServer.dll"
if [[ -n "$SERVER_BINARY" ]]; then
  [[ -x "$SERVER_BINARY" ]] || die "--server-binary: '$SERVER_BINARY' is not an executable file" 2
  SERVER_BINARY="$(cd "$(dirname "$SERVER_BINARY")" && pwd)/$(basename "$SERVER_BINARY")"
  SERVER_CMD=("$SERVER_BINARY")
else
  SERVER_CMD=(dotnet "$SERVER_DLL")
fi
TOOL_DLL="$REPO_ROOT/benchmarks/Tunnel2.IdleSessions/bin/Release/net10.0/Tunnel2.IdleSessions.dll"
DEADLINE=$((SECONDS + MAX_SECONDS))

# --- processes we started; cleanup stops the tool first, then the server ----------------------
SERVER_PID=""
TOOL_PID=""

# shellcheck disable=SC2317  # reached through the EXIT trap, which shellcheck does not follow
stop_all() {
  stop_pid Tunnel2.IdleSessions "$TOOL_PID" "$STOP_TIMEOUT"
  TOOL_PID=""
  stop_pid TunnelServer "$SERVER_PID" "$STOP_TIMEOUT"
  SERVER_PID=""
}

trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

check_deadline() {
  ((SECONDS < DEADLINE)) || die "the run took longer than IDLE_MAX_SECONDS=${MAX_SECONDS}s; stopped"
}

# wait_for DESCRIPTION TIMEOUT COMMAND...: polls COMMAND every 0.2 s until it succeeds; fails when
# the server or the tool has exited, or after TIMEOUT seconds.
wait_for() {
  local what="$1" timeout="$2"
  shift 2
  local until=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if [[ -n "$SERVER_PID" ]] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
      tail -n 20 "$SERVER_LOG" | sed 's/^/  | /' >&2
      die "TunnelServer exited while waiting for $what (log: $SERVER_LOG)"
    fi
    if [[ -n "$TOOL_PID" ]] && ! kill -0 "$TOOL_PID" 2>/dev/null; then
      tail -n 20 "$TOOL_LOG" | sed 's/^/  | /' >&2
      die "Tunnel2.IdleSessions exited while waiting for $what (log: $TOOL_LOG)"
    fi
    ((SECONDS < until)) || die "timed out after ${timeout}s waiting for $what"
    check_deadline
    sleep 0.2
  done
}

# shellcheck disable=SC2317  # called by name through wait_for, which shellcheck does not follow
server_answers() { curl -fsS --max-time 2 -o /dev/null "http://127.0.0.1:$PUBLIC_PORT/healthz"; }
# server_rss: the server's VmRSS in KiB; stops the script if the server has exited (run_one runs without
# set -e, so an empty sample would otherwise end up in the results).
server_rss() {
  kill -0 "$SERVER_PID" 2>/dev/null || die "TunnelServer exited (log: $SERVER_LOG)"
  SERVER_RSS="$(rss_kib "$SERVER_PID")"
  [[ -n "$SERVER_RSS" ]] || die "no VmRSS for TunnelServer pid $SERVER_PID"
}
logins_logged() { grep -c 'Uplink connected: session' "$SERVER_LOG" || true; }
disconnects_logged() { grep -c 'Uplink disconnected: session' "$SERVER_LOG" || true; }
# shellcheck disable=SC2317  # called by name through wait_for, which shellcheck does not follow
has_all_logins() { (($(logins_logged) >= $1)); }
median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2] + a[NR/2+1]) / 2)}'; }

# --- build ----------------------------------------------------------------------------------
build() {
  log "building Release: src/TunnelServer and benchmarks/Tunnel2.IdleSessions"
  dotnet build -c Release --nologo -v quiet "$REPO_ROOT/src/TunnelServer/TunnelServer.csproj" >&2 \
    || die "dotnet build of src/TunnelServer failed"
  dotnet build -c Release --nologo -v quiet "$REPO_ROOT/benchmarks/Tunnel2.IdleSessions/Tunnel2.IdleSessions.csproj" >&2 \
    || die "dotnet build of benchmarks/Tunnel2.IdleSessions failed"
}
case "$BUILD" in
  yes) build ;;
  auto) [[ (-n "$SERVER_BINARY" || -f "$SERVER_DLL") && -f "$TOOL_DLL" ]] || build ;;
  no) ;;
esac
[[ -n "$SERVER_BINARY" || -f "$SERVER_DLL" ]] || die "$SERVER_DLL does not exist; run without --no-build"
[[ -f "$TOOL_DLL" ]] || die "$TOOL_DLL does not exist; run without --no-build"

for port in "$PUBLIC_PORT" "$TUNNEL_PORT"; do
  port_in_use "$port" && die "port $port is already in use; set IDLE_PUBLIC_PORT / IDLE_TUNNEL_PORT to free ports (12300+)"
done

REPORT="$LT_DIR/reports/$(utc_stamp)-idle-sessions"
mkdir -p "$REPORT"
RESULTS="$REPORT/results.tsv"
printf 'sessions\tgc\tbaseline_kib\tidle_samples_kib\twith_sessions_kib\tkib_per_session\tdisconnects\n' >"$RESULTS"
log "reports in $REPORT"

# run_one N GC_MODE: one server run; appends a row to results.tsv.
run_one() {
  local n="$1" mode="$2"
  local env_args=(-u DOTNET_gcServer -u DOTNET_GCDynamicAdaptationMode)
  case "$mode" in
    workstation) env_args+=(DOTNET_gcServer=0) ;;
    server) env_args+=(DOTNET_gcServer=1) ;;
    server-no-datas) env_args+=(DOTNET_gcServer=1 DOTNET_GCDynamicAdaptationMode=0) ;;
  esac
  SERVER_LOG="$REPORT/server-$mode-$n.log"
  TOOL_LOG="$REPORT/tool-$mode-$n.log"
  : >"$SERVER_LOG"
  : >"$TOOL_LOG"

  log "[$mode, N=$n] starting TunnelServer on :$PUBLIC_PORT/:$TUNNEL_PORT"
  (cd "$(dirname "${SERVER_CMD[-1]}")" && exec env "${env_args[@]}" "${SERVER_CMD[@]}" --token "$TOKEN" \
    --public-url "http://127.0.0.1:$PUBLIC_PORT" --tunnel-url "http://127.0.0.1:$TUNNEL_PORT" \
    --drain-timeout 00:00:00 "--TunnelServer:Limits:MaxUplinksPerAddress=$((n + 100))") </dev/null >"$SERVER_LOG" 2>&1 &
  SERVER_PID=$!
  wait_for "TunnelServer /healthz on :$PUBLIC_PORT" "$START_TIMEOUT" server_answers

  log "[$mode, N=$n] server pid $SERVER_PID answers; settling ${SETTLE_SECONDS}s with no session"
  sleep "$SETTLE_SECONDS"   # a settle period, not a synchronisation: the server is up and has no session
  local baseline_samples=() i
  for i in 1 2 3; do
    server_rss
    baseline_samples+=("$SERVER_RSS")
    if ((i < 3)); then sleep 1; fi
  done
  local before
  before="$(echo "${baseline_samples[*]}" | median)"
  log "[$mode, N=$n] baseline VmRSS ${baseline_samples[*]} KiB -> $before KiB"

  local ready="$REPORT/ready-$mode-$n"
  rm -f "$ready"
  env -u DOTNET_gcServer -u DOTNET_GCDynamicAdaptationMode dotnet "$TOOL_DLL" \
    --server "http://127.0.0.1:$TUNNEL_PORT" --token "$TOKEN" --sessions "$n" \
    --session-prefix "idle-$n-" --hold $((IDLE_SECONDS + REGISTER_TIMEOUT + 60)) \
    --report-every 10 --server-pid "$SERVER_PID" --ready-file "$ready" </dev/null >"$TOOL_LOG" 2>&1 &
  TOOL_PID=$!
  wait_for "the tool's $n logins" "$REGISTER_TIMEOUT" test -s "$ready"
  wait_for "the server to log $n logins" "$REGISTER_TIMEOUT" has_all_logins "$n"
  local connected
  connected="$(tr -d '[:space:]' <"$ready")"
  ((connected == n)) || die "only $connected of $n logins succeeded (log: $TOOL_LOG)"
  log "[$mode, N=$n] server has all $n sessions ($(logins_logged) logins logged); sampling VmRSS $SAMPLES times over ${IDLE_SECONDS}s"

  local samples=() interval
  interval=$(awk -v t="$IDLE_SECONDS" -v k="$SAMPLES" 'BEGIN {printf "%.2f", t / k}')
  for ((i = 1; i <= SAMPLES; i++)); do
    sleep "$interval"   # spacing of the samples over the idle period
    check_deadline
    kill -0 "$TOOL_PID" 2>/dev/null || die "the tool exited during the idle period (log: $TOOL_LOG)"
    server_rss
    samples+=("$SERVER_RSS")
  done
  local disconnects after per
  disconnects="$(disconnects_logged)"
  ((disconnects == 0)) || warn "[$mode, N=$n] the server logged $disconnects disconnects while idle (see $SERVER_LOG)"
  after="$(echo "${samples[*]}" | median)"
  per=$(awk -v a="$after" -v b="$before" -v n="$n" 'BEGIN {printf "%.1f", (a - b) / n}')
  log "[$mode, N=$n] idle VmRSS ${samples[*]} KiB -> $after KiB; $per KiB per session"

  stop_pid Tunnel2.IdleSessions "$TOOL_PID" "$STOP_TIMEOUT"
  TOOL_PID=""
  grep -q 'every uplink stayed up' "$TOOL_LOG" || warn "[$mode, N=$n] the tool did not report every uplink up (see $TOOL_LOG)"
  stop_pid TunnelServer "$SERVER_PID" "$STOP_TIMEOUT"
  SERVER_PID=""
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$mode" "$before" "${samples[*]}" "$after" "$per" "$disconnects" >>"$RESULTS"
  ((disconnects == 0)) || return 1
}

failed=0
for mode in $GC_MODES; do
  for n in $SESSION_COUNTS; do
    check_deadline
    run_one "$n" "$mode" || failed=1
  done
done

echo
printf '%-8s %-16s %14s %16s %12s\n' N "GC mode" "baseline RSS" "RSS with N" "KiB/session"
tail -n +2 "$RESULTS" | while IFS=$'\t' read -r n mode before _ after per _; do
  printf '%-8s %-16s %10.1f MiB %12.1f MiB %12s\n' "$n" "$mode" "$(awk -v k="$before" 'BEGIN {print k / 1024}')" \
    "$(awk -v k="$after" 'BEGIN {print k / 1024}')" "$per"
done
# The slope between two counts removes what a first session costs once (pools, JIT, first-use caches).
for mode in $GC_MODES; do
  awk -F'\t' -v m="$mode" 'NR > 1 && $2 == m {n[++c] = $1; d[c] = $5 - $3}
    END {if (c >= 2) printf "slope %-16s between N=%s and N=%s: %.1f KiB per session\n", m, n[1], n[c], (d[c] - d[1]) / (n[c] - n[1])}' "$RESULTS"
done
echo "results: $RESULTS"
exit "$failed"
