#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Soak: a mixed open-model load through the tunnel for a long time (default 10 minutes at
# 500 RPS, shared by ping, get, echo and delay at once), then the failures per endpoint and
# the memory of TunnelServer and TunnelClient at the start and the end. Passes when no request
# failed and memory stayed flat.
set -euo pipefail

LT_NAME=soak
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
# shellcheck source=lib/loadgen.sh
source "$SCRIPT_DIR/lib/loadgen.sh"

RATE="${LOADTEST_SOAK_RATE:-500}"
SOAK_SECONDS="${LOADTEST_SOAK_SECONDS:-600}"
ENDPOINTS=(ping get echo delay)
# Memory is "flat" when RSS at the end is at most this much above RSS once the first
# SETTLE_SECONDS are over (JIT, pools and the GC's budget grow in the first minute).
MAX_GROWTH_MIB="${LOADTEST_SOAK_MAX_GROWTH_MIB:-32}"
SETTLE_SECONDS="${LOADTEST_SOAK_SETTLE_SECONDS:-60}"

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/soak.sh [--rate RPS] [--seconds S] [--endpoints "ping get echo delay"]

Through the tunnel only (http://127.0.0.1:$PUBLIC_PORT/session/$SESSION): every endpoint gets
RATE / (number of endpoints) requests per second, all at the same time, for S seconds
(defaults: $RATE RPS, $SOAK_SECONDS s, at most 7200 s). echo posts ${ECHO_BODY_BYTES} bytes
(LOADTEST_ECHO_BYTES), delay waits ${DELAY_MS} ms (LOADTEST_DELAY_MS). RSS of the stack's
processes is sampled every second.

Prints one line per endpoint (responses, failures by kind, RPS, p50/p99) and the RSS of
TunnelServer and TunnelClient at the start, after ${SETTLE_SECONDS} s (LOADTEST_SOAK_SETTLE_SECONDS),
at the peak and at the end, then SOAK PASS or SOAK FAIL. Fails when any request failed or was
never answered, or when a tunnel process ends more than ${MAX_GROWTH_MIB} MiB
(LOADTEST_SOAK_MAX_GROWTH_MIB) above its RSS after the settling time.

Uses the running stack, or starts tunnel2-deploy/dev/run-local.sh and stops it at the end.
Reports: tunnel2-load-tests/reports/<UTC timestamp>-soak/ (h2load outputs, rss.tsv, result.txt).
Exit 0 pass, 1 fail, 2 bad usage, 127 a tool is missing.
EOF
}

while (($#)); do
  case "$1" in
    --rate) [[ $# -ge 2 ]] || die "--rate needs a value" 2; RATE="$2"; shift ;;
    --seconds) [[ $# -ge 2 ]] || die "--seconds needs a value" 2; SOAK_SECONDS="$2"; shift ;;
    --endpoints) [[ $# -ge 2 ]] || die "--endpoints needs a value" 2; read -r -a ENDPOINTS <<<"$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done

validate_stages "$RATE:$SOAK_SECONDS" || die "--rate and --seconds must be positive integers" 2
((SOAK_SECONDS <= 7200)) || die "a soak is bounded to 7200 s" 2
((${#ENDPOINTS[@]})) || die "no endpoint given" 2
for e in "${ENDPOINTS[@]}"; do endpoint_path "$e" >/dev/null || die "unknown endpoint '$e'" 2; done
per_endpoint=$((RATE / ${#ENDPOINTS[@]}))
((per_endpoint > 0)) || die "--rate must be at least the number of endpoints" 2

ensure_tool curl curl
ensure_tool h2load nghttp2-client
ensure_tool python3 python3
ensure_tool timeout coreutils
ensure_tool ss iproute2

REPORT="$LT_DIR/reports/$(utc_stamp)-soak"
mkdir -p "$REPORT"
LOADS=()
# shellcheck disable=SC2317  # reached through the EXIT trap, which shellcheck does not follow
stop_loads() {
  local pid
  for pid in "${LOADS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${LOADS[@]}"; do wait "$pid" 2>/dev/null || true; done
  LOADS=()
}
trap 'stop_loads; rss_stop; stack_stop' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

stack_ensure 0 1 "$REPORT/run-local.log"
make_echo_body "$REPORT/echo-body.json"
for e in "${ENDPOINTS[@]}"; do
  warm_up tunnel "$TUNNEL_BASE$(endpoint_path "$e")" "$e" "$per_endpoint" "$REPORT/warmup-$e.txt" "$REPORT/echo-body.json"
done

rss_start "$REPORT/rss.tsv"
set_phase tunnel
log "soak: ${ENDPOINTS[*]} at $per_endpoint RPS each ($RATE RPS in all) for ${SOAK_SECONDS}s"
stage_dirs=()
for e in "${ENDPOINTS[@]}"; do
  dir="$REPORT/tunnel/$e"
  stage_dirs+=("$dir")
  # Each endpoint's h2load runs in its own subshell, all at once.
  run_stage tunnel "$TUNNEL_BASE$(endpoint_path "$e")" "$e" "$per_endpoint" "$SOAK_SECONDS" "$dir" \
    "$REPORT/echo-body.json" &
  LOADS+=($!)
done
for pid in "${LOADS[@]}"; do wait "$pid" || true; done
LOADS=()
rss_stop

status=0
python3 "$LOADREPORT" smoke "${stage_dirs[@]}" | sed 's/^smoke /soak /; s/^SMOKE /REQUESTS /' \
  | tee "$REPORT/result.txt" || status=$?
python3 - "$REPORT/rss.tsv" "$SETTLE_SECONDS" "$MAX_GROWTH_MIB" <<'PY' | tee -a "$REPORT/result.txt" || status=1
import sys
path, settle, max_growth = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
series = {}
for line in open(path):
    parts = line.split()
    if len(parts) == 5 and parts[1] == "tunnel":
        ts, _, name, pid, kib = parts
        series.setdefault((name, pid), []).append((int(ts), int(kib) / 1024))
bad = []
print(f"{'RSS, MiB':<26} {'start':>7} {'settled':>8} {'peak':>7} {'end':>7} {'growth':>7}")
for (name, pid), points in sorted(series.items()):
    t0 = points[0][0]
    settled = next((mib for ts, mib in points if ts - t0 >= settle), points[-1][1])
    start, end, peak = points[0][1], points[-1][1], max(m for _, m in points)
    growth = end - settled
    print(f"{name + ' (pid ' + pid + ')':<26} {start:>7.1f} {settled:>8.1f} {peak:>7.1f} {end:>7.1f} {growth:>+7.1f}")
    if name in ("TunnelServer", "TunnelClient") and growth > max_growth:
        bad.append(f"{name} grew {growth:.1f} MiB after settling (limit {max_growth:g})")
if not series:
    bad.append("no RSS samples")
print("MEMORY " + ("FAIL: " + "; ".join(bad) if bad else f"FLAT: no tunnel process grew more than {max_growth:g} MiB after settling"))
sys.exit(1 if bad else 0)
PY
if ((status == 0)); then echo "SOAK PASS"; else echo "SOAK FAIL"; fi
exit "$status"
