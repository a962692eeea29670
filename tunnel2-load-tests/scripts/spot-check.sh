#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Quick closed-model spot check with ApacheBench: ab -n 500 -c 50, without and with
# keep-alive (-k), direct and through the tunnel, side by side with the tunnel/direct RPS
# ratio and mean/p50/p99 latency.
set -euo pipefail

LT_NAME=spot-check
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

REQUESTS="${LOADTEST_AB_REQUESTS:-500}"
CONCURRENCY="${LOADTEST_AB_CONCURRENCY:-50}"
WARMUP_REQUESTS="${LOADTEST_AB_WARMUP:-500}"
WARMUP_SECONDS="${LOADTEST_AB_WARMUP_SECONDS:-2}"
ENDPOINTS=()

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/spot-check.sh [-n REQUESTS] [-c CONCURRENCY] [ENDPOINT...]

ENDPOINT: ping get fast echo delay (default: ping get). For each endpoint, without and then
with keep-alive: ab -l -n $REQUESTS -c $CONCURRENCY straight at the TestBackend
(http://127.0.0.1:$BACKEND_PORT) and then through the tunnel
(http://127.0.0.1:$PUBLIC_PORT/session/$SESSION), after an unmeasured warm-up per target
(at the same concurrency: ${WARMUP_SECONDS}s with keep-alive, then $WARMUP_REQUESTS requests without).
Prints one table: RPS direct and tunnel, the ratio tunnel/direct, and mean/p50/p99 latency
in ms. Environment: LOADTEST_AB_WARMUP_SECONDS, LOADTEST_AB_WARMUP (requests).

Uses the running stack, or starts tunnel2-deploy/dev/run-local.sh and stops it at the end.
Exit 0 when every request got a 2xx; 1 when any failed (or the stack could not be started);
2 bad usage; 127 a tool is missing.
Reports: tunnel2-load-tests/reports/<UTC timestamp>-spot-check/
EOF
}

while (($#)); do
  case "$1" in
    -n) [[ $# -ge 2 ]] || die "-n needs a value" 2; REQUESTS="$2"; shift ;;
    -c) [[ $# -ge 2 ]] || die "-c needs a value" 2; CONCURRENCY="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" 2 ;;
    *) ENDPOINTS+=("$1") ;;
  esac
  shift
done
((${#ENDPOINTS[@]})) || ENDPOINTS=(ping get)
[[ "$REQUESTS" =~ ^[1-9][0-9]*$ && "$CONCURRENCY" =~ ^[1-9][0-9]*$ ]] || die "-n and -c must be positive integers" 2
[[ "$WARMUP_SECONDS" =~ ^[0-9]+$ && "$WARMUP_REQUESTS" =~ ^[0-9]+$ ]] || die "LOADTEST_AB_WARMUP[_SECONDS] must be numbers" 2
((CONCURRENCY <= REQUESTS)) || die "-c ($CONCURRENCY) cannot be larger than -n ($REQUESTS)" 2
((REQUESTS <= 100000)) || die "-n is capped at 100000 to keep a spot check short" 2
for e in "${ENDPOINTS[@]}"; do
  endpoint_path "$e" >/dev/null || die "unknown endpoint '$e' (ping, get, fast, echo, delay)" 2
done

ensure_tool curl curl
ensure_tool ab apache2-utils
ensure_tool python3 python3
ensure_tool timeout coreutils

REPORT="$LT_DIR/reports/$(utc_stamp)-spot-check"
mkdir -p "$REPORT"
trap 'stop_child; stack_stop' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ab_args ENDPOINT: the body for POST /echo; -l because some bodies (/get) vary in length.
ab_args() {
  printf '%s\n' -l -s 30
  if [[ "$1" == echo ]]; then printf '%s\n' -p "$REPORT/echo-body.json" -T application/json; fi
}

# run_ab ENDPOINT ka|noka TARGET BASE_URL
run_ab() {
  local endpoint="$1" ka="$2" target="$3" url
  url="$4$(endpoint_path "$1")"
  local out="$REPORT/$endpoint-$ka-$target" extra=() status=0
  mapfile -t extra < <(ab_args "$endpoint")
  [[ "$ka" == ka ]] && extra+=(-k)
  log "ab ${extra[*]} -n $REQUESTS -c $CONCURRENCY $url"
  echo "ab ${extra[*]} -n $REQUESTS -c $CONCURRENCY -e $out.csv $url" >"$out.cmd"
  run_child "$out.ab.txt" timeout --kill-after=5 300 \
    ab "${extra[@]}" -n "$REQUESTS" -c "$CONCURRENCY" -e "$out.csv" "$url" || status=$?
  if ((status != 0)); then
    warn "ab exited with code $status: $(tail -n 1 "$out.ab.txt")"
  fi
}

# warm_up_ab TARGET BASE_URL ENDPOINT: unmeasured load at the measured concurrency, so the
# first measured run does not pay for a cold process: WARMUP_SECONDS of keep-alive requests
# (long enough for tiered JIT to recompile the hot paths; a few hundred requests are not) and
# WARMUP_REQUESTS without keep-alive (connection set-up and tear-down paths).
warm_up_ab() {
  local extra=() n=$((WARMUP_REQUESTS > CONCURRENCY ? WARMUP_REQUESTS : CONCURRENCY))
  local out="$REPORT/$3-warmup-$1.txt" url
  url="$2$(endpoint_path "$3")"
  mapfile -t extra < <(ab_args "$3")
  if ((WARMUP_SECONDS > 0)); then
    run_child "$out" timeout --kill-after=5 $((WARMUP_SECONDS + 60)) \
      ab "${extra[@]}" -k -t "$WARMUP_SECONDS" -n 1000000 -c "$CONCURRENCY" "$url" \
      || warn "warm-up of $1 $3 failed (see $out)"
  fi
  if ((WARMUP_REQUESTS > 0)); then
    run_child "$out" timeout --kill-after=5 120 ab "${extra[@]}" -n "$n" -c "$CONCURRENCY" "$url" \
      || warn "warm-up of $1 $3 failed (see $out)"
  fi
}

stack_ensure 1 1 "$REPORT/run-local.log"
for e in "${ENDPOINTS[@]}"; do [[ "$e" == echo ]] && make_echo_body "$REPORT/echo-body.json"; done

python3 "$LOADREPORT" stage-meta "$REPORT/run.json" requests="$REQUESTS" concurrency="$CONCURRENCY" \
  endpoints="$(printf '%s\n' "${ENDPOINTS[@]}" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().split()))')" \
  keepalive='["noka", "ka"]' started_utc="$(date -u +%FT%TZ)" \
  git_commit="$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  ab="$(ab -V 2>/dev/null | head -n 1)"

for e in "${ENDPOINTS[@]}"; do
  warm_up_ab direct "$DIRECT_BASE" "$e"
  warm_up_ab tunnel "$TUNNEL_BASE" "$e"
  for ka in noka ka; do
    run_ab "$e" "$ka" direct "$DIRECT_BASE"
    run_ab "$e" "$ka" tunnel "$TUNNEL_BASE"
  done
done

echo
status=0
python3 "$LOADREPORT" ab "$REPORT" || status=$?
echo
echo "all files: $REPORT"
exit "$status"
