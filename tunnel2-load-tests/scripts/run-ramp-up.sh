#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Open-model ramp-up load test of Tunnel2: the same stages straight at the TestBackend
# (direct) and then through the tunnel, side by side. The load comes from h2load (nghttp2);
# see tunnel2-load-tests/README.md for why it is not NBomber and how to read the table.
set -euo pipefail

LT_NAME=ramp-up
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
# shellcheck source=lib/loadgen.sh
source "$SCRIPT_DIR/lib/loadgen.sh"

# The WebSocket scenario has an engine of its own (h2load speaks no WebSocket): ws-echo.sh.
if [[ "${1:-}" == websocket ]]; then
  shift
  exec "$SCRIPT_DIR/ws-echo.sh" "$@"
fi
# The aggressive profile over HTTPS + HTTP/2 has its own stack (TLS certificates, an h2c backend, an nginx TLS hop).
if [[ "${1:-}" == https ]]; then
  shift
  exec "$SCRIPT_DIR/https-h2.sh" "$@"
fi

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/run-ramp-up.sh PROFILE [options]

Runs PROFILE's stages direct (http://127.0.0.1:$BACKEND_PORT) and then through the tunnel
(http://127.0.0.1:$PUBLIC_PORT/session/$SESSION), and prints one side-by-side table.
Starts the dev stack with tunnel2-deploy/dev/run-local.sh if nothing answers, and stops it
again at the end (only if it started it).

Profiles (RATE:SECONDS per stage, each stage offered to each target):
  smoke       $(profile_stages smoke)
  moderate    $(profile_stages moderate)
  aggressive  $(profile_stages aggressive)   (56,100 requests per target)
  stress      $(profile_stages stress)
              stops at the first stage with failures > ${STRESS_MAX_FAIL_PCT}%, RPS reached < ${STRESS_MIN_REACHED} x target
              or p99 > ${STRESS_MAX_P99_MS} ms; the last stage within them is the knee;
              up to ${STRESS_MAX_CLIENTS} connections (LOADTEST_STRESS_MAX_CLIENTS)
  soak        $(profile_stages soak)   (LOADTEST_SOAK_SECONDS, at most 7200)
  websocket   WebSockets echoing at a fixed message rate, direct / nginx / tunnel: runs ws-echo.sh
              (its own options: run-ramp-up.sh websocket --help)
  https       the aggressive stages over HTTPS + HTTP/2 (h2load speaks h2), direct h2c / nginx TLS hop /
              tunnel HTTPS port: runs https-h2.sh (its own options: run-ramp-up.sh https --help)

Options:
  --endpoint NAME   ping (default), get, fast, echo (POST ${ECHO_BODY_BYTES} B JSON), delay (/delay/${DELAY_MS})
  --direct-only     only the direct run
  --tunnel-only     only the run through the tunnel
  --stages LIST     custom stages instead of the profile's, e.g. "100:5 200:5"
  -h, --help        this help

Environment: LOADTEST_WARMUP_SECONDS ($WARMUP_SECONDS), LOADTEST_PER_CLIENT_RPS ($PER_CLIENT_RPS),
  LOADTEST_MAX_CLIENTS ($MAX_CLIENTS), LOADTEST_STAGGER_GROUPS ($STAGGER_GROUPS),
  LOADTEST_DELAY_MS ($DELAY_MS), LOADTEST_ECHO_BYTES ($ECHO_BODY_BYTES),
  LOADTEST_STRESS_MAX_FAIL_PCT / _MIN_REACHED / _MAX_P99_MS, TUNNEL2_LOADTEST_CLIENT_CONCURRENCY
  ($CLIENT_CONCURRENCY, used only when this script starts the stack), TUNNEL2_PUBLIC_PORT,
  TUNNEL2_TUNNEL_PORT, TUNNEL2_BACKEND_PORT.

Reports: tunnel2-load-tests/reports/<UTC timestamp>-PROFILE/ (table.txt, stages.txt,
  summary.json, rss.tsv, run.json, and per target and stage: h2load.txt, requests.log).
Exit codes: 0 the run completed (failed requests are results, see the table); 1 a target got
  no response at all or the stack could not be started; 2 bad usage; 127 a tool is missing.
EOF
}

PROFILE=""
ENDPOINT=ping
RUN_DIRECT=1
RUN_TUNNEL=1
CUSTOM_STAGES=""

parse_args() {
  while (($#)); do
    case "$1" in
      --endpoint) [[ $# -ge 2 ]] || die "--endpoint needs a value" 2; ENDPOINT="$2"; shift ;;
      --endpoint=*) ENDPOINT="${1#*=}" ;;
      --direct-only) RUN_TUNNEL=0 ;;
      --tunnel-only) RUN_DIRECT=0 ;;
      --stages) [[ $# -ge 2 ]] || die "--stages needs a value" 2; CUSTOM_STAGES="$2"; shift ;;
      --stages=*) CUSTOM_STAGES="${1#*=}" ;;
      -h|--help) usage; exit 0 ;;
      -*) die "unknown option '$1' (see --help)" 2 ;;
      *) [[ -z "$PROFILE" ]] || die "only one PROFILE, got '$PROFILE' and '$1'" 2; PROFILE="$1" ;;
    esac
    shift
  done
  [[ -n "$PROFILE" ]] || { usage >&2; die "PROFILE is missing (one of: $PROFILES)" 2; }
  profile_stages "$PROFILE" >/dev/null || die "unknown profile '$PROFILE' (one of: $PROFILES)" 2
  endpoint_path "$ENDPOINT" >/dev/null || die "unknown endpoint '$ENDPOINT' (ping, get, fast, echo, delay)" 2
  ((RUN_DIRECT || RUN_TUNNEL)) || die "--direct-only and --tunnel-only exclude each other" 2
  if [[ "$PROFILE" == soak ]]; then
    local soak="${LOADTEST_SOAK_SECONDS:-600}"
    if ! [[ "$soak" =~ ^[1-9][0-9]*$ ]] || ((soak > 7200)); then
      die "LOADTEST_SOAK_SECONDS must be a number of seconds up to 7200, got '$soak'" 2
    fi
  fi
  STAGES="${CUSTOM_STAGES:-$(profile_stages "$PROFILE")}"
  if [[ "$PROFILE" == stress && -z "${LOADTEST_MAX_CLIENTS:-}" ]]; then
    MAX_CLIENTS="$STRESS_MAX_CLIENTS"
  fi
  validate_stages "$STAGES" || die "stages must look like 'RATE:SECONDS RATE:SECONDS', got '$STAGES'" 2
}

cleanup() {
  stop_child
  rss_stop
  stack_stop
}

# write_run_json: what was run, on what, so a report folder explains itself.
write_run_json() {
  local rates=() seconds=0 stage
  for stage in $STAGES; do
    rates+=("${stage%%:*}")
    seconds=$((seconds + ${stage##*:}))
  done
  python3 "$LOADREPORT" stage-meta "$REPORT/run.json" \
    profile="$PROFILE" endpoint="$ENDPOINT" method="$(endpoint_method "$ENDPOINT")" \
    path="$(endpoint_path "$ENDPOINT")" stages="$STAGES" \
    stages_rps="[$(IFS=,; echo "${rates[*]}")]" seconds_per_target="$seconds" \
    warmup_seconds="$WARMUP_SECONDS" per_client_rps="$PER_CLIENT_RPS" max_clients="$MAX_CLIENTS" \
    stagger_groups="$STAGGER_GROUPS" started_utc="$(date -u +%FT%TZ)" \
    stack="$([[ -n "$STACK_PID" ]] && echo "started by this script (run-local.sh), TunnelClient MaxConcurrency $CLIENT_CONCURRENCY" || echo "already running")" \
    git_commit="$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)" \
    h2load="$(h2load --version 2>/dev/null | head -n 1)" dotnet="$(dotnet --version 2>/dev/null || echo unknown)" \
    stress_limits="{\"max_fail_pct\": $STRESS_MAX_FAIL_PCT, \"min_reached\": $STRESS_MIN_REACHED, \"max_p99_ms\": $STRESS_MAX_P99_MS}" \
    knee="$([[ "$PROFILE" == stress ]] && echo true || echo false)"
}

# run_target NAME BASE_URL: warm-up, then every stage; for stress, stop at the first broken stage.
run_target() {
  local target="$1" url
  url="$2$(endpoint_path "$ENDPOINT")"
  local n=0 stage rate seconds dir
  set_phase "$target"
  warm_up "$target" "$url" "$ENDPOINT" "${STAGES%%:*}" "$REPORT/$target-warmup.txt" "$REPORT/echo-body.json"
  for stage in $STAGES; do
    n=$((n + 1))
    rate="${stage%%:*}"
    seconds="${stage##*:}"
    dir="$(printf '%s/%s/stage-%02d-%srps' "$REPORT" "$target" "$n" "$rate")"
    run_stage "$target" "$url" "$ENDPOINT" "$rate" "$seconds" "$dir" "$REPORT/echo-body.json"
    if [[ "$PROFILE" == stress ]]; then
      if ! python3 "$LOADREPORT" stage-check "$dir" --max-fail-pct "$STRESS_MAX_FAIL_PCT" \
          --min-reached "$STRESS_MIN_REACHED" --max-p99-ms "$STRESS_MAX_P99_MS" >&2; then
        log "$target: stage $rate RPS broke the limits; no higher stage for $target"
        break
      fi
    fi
  done
  set_phase idle
}

main() {
  parse_args "$@"
  ensure_tool curl curl
  ensure_tool h2load nghttp2-client
  ensure_tool python3 python3
  ensure_tool ss iproute2
  ensure_tool timeout coreutils

  REPORT="$LT_DIR/reports/$(utc_stamp)-$PROFILE"
  mkdir -p "$REPORT"
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  stack_ensure "$RUN_DIRECT" "$RUN_TUNNEL" "$REPORT/run-local.log"
  [[ "$ENDPOINT" == echo ]] && make_echo_body "$REPORT/echo-body.json"
  write_run_json

  local per_target=0 stage
  for stage in $STAGES; do per_target=$((per_target + ${stage##*:})); done
  log "profile $PROFILE, endpoint $ENDPOINT, stages: $STAGES (${per_target}s per target + ${WARMUP_SECONDS}s warm-up)"
  log "report folder: $REPORT"

  rss_start "$REPORT/rss.tsv"
  ((RUN_DIRECT)) && run_target direct "$DIRECT_BASE"
  ((RUN_TUNNEL)) && run_target tunnel "$TUNNEL_BASE"
  rss_stop

  echo
  python3 "$LOADREPORT" ramp "$REPORT"
  echo
  echo "per stage: $REPORT/stages.txt   all files: $REPORT"

  # A target that got no response at all means the test did not run.
  python3 - "$REPORT" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
sys.exit(1 if any(s[t] is not None and s[t]["responses"] == 0 for t in ("direct", "tunnel")) else 0)
PY
}

main "$@"
