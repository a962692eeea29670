#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# CI smoke load test: the smoke profile through the tunnel only, on /loadtest/ping and then
# /loadtest/get (by default 10 s at 200 RPS each, after a 2 s warm-up: 22 s of load).
# Prints one result line and exits non-zero if any request failed or none ran.
set -euo pipefail

LT_NAME=smoke
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export LOADTEST_WARMUP_SECONDS="${LOADTEST_WARMUP_SECONDS:-2}"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
# shellcheck source=lib/loadgen.sh
source "$SCRIPT_DIR/lib/loadgen.sh"

MAX_LOAD_SECONDS=30
SMOKE_STAGE="$(profile_stages smoke)"
RATE="${SMOKE_STAGE%%:*}"
SECONDS_PER_ENDPOINT="${SMOKE_STAGE##*:}"
ENDPOINTS=(ping get)

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/smoke.sh [--rate RPS] [--seconds S] [--endpoints "ping get"]

Through the tunnel (http://127.0.0.1:$PUBLIC_PORT/session/$SESSION) only: a ${WARMUP_SECONDS}s warm-up,
then S seconds at RPS on each endpoint (default: $SECONDS_PER_ENDPOINT s at $RATE RPS on ${ENDPOINTS[*]}).
The whole load is kept to ${MAX_LOAD_SECONDS}s at most. Uses the running stack, or starts
tunnel2-deploy/dev/run-local.sh and stops it again at the end.

Fails (exit 1) when no request ran, when any request got a non-2xx status or no response,
when a request was sent and never answered (beyond the one per connection that the end of
the run cuts off), or when under 90% of the offered requests could be sent (a connection
stalled or was dropped). Exit 2: bad usage; 127: a tool is missing.
Reports: tunnel2-load-tests/reports/<UTC timestamp>-smoke-ci/
EOF
}

while (($#)); do
  case "$1" in
    --rate) [[ $# -ge 2 ]] || die "--rate needs a value" 2; RATE="$2"; shift ;;
    --seconds) [[ $# -ge 2 ]] || die "--seconds needs a value" 2; SECONDS_PER_ENDPOINT="$2"; shift ;;
    --endpoints) [[ $# -ge 2 ]] || die "--endpoints needs a value" 2; read -r -a ENDPOINTS <<<"$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done

validate_stages "$RATE:$SECONDS_PER_ENDPOINT" || die "--rate and --seconds must be positive integers" 2
((${#ENDPOINTS[@]})) || die "no endpoint given" 2
for e in "${ENDPOINTS[@]}"; do endpoint_path "$e" >/dev/null || die "unknown endpoint '$e'" 2; done
total=$((WARMUP_SECONDS + SECONDS_PER_ENDPOINT * ${#ENDPOINTS[@]}))
((total <= MAX_LOAD_SECONDS)) || die "that is ${total}s of load; the smoke test keeps to ${MAX_LOAD_SECONDS}s" 2

ensure_tool curl curl
ensure_tool h2load nghttp2-client
ensure_tool python3 python3
ensure_tool timeout coreutils

REPORT="$LT_DIR/reports/$(utc_stamp)-smoke-ci"
mkdir -p "$REPORT"
trap 'stop_child; stack_stop' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

stack_ensure 0 1 "$REPORT/run-local.log"
for e in "${ENDPOINTS[@]}"; do [[ "$e" == echo ]] && make_echo_body "$REPORT/echo-body.json"; done

warm_up tunnel "$TUNNEL_BASE$(endpoint_path "${ENDPOINTS[0]}")" "${ENDPOINTS[0]}" "$RATE" \
  "$REPORT/tunnel-warmup.txt" "$REPORT/echo-body.json"
stage_dirs=()
n=0
for e in "${ENDPOINTS[@]}"; do
  n=$((n + 1))
  dir="$(printf '%s/tunnel/stage-%02d-%s' "$REPORT" "$n" "$e")"
  run_stage tunnel "$TUNNEL_BASE$(endpoint_path "$e")" "$e" "$RATE" "$SECONDS_PER_ENDPOINT" "$dir" \
    "$REPORT/echo-body.json"
  stage_dirs+=("$dir")
done

status=0
python3 "$LOADREPORT" smoke "${stage_dirs[@]}" | tee "$REPORT/result.txt" || status=$?
exit "$status"
