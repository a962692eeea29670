#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# The slow-reader storm of issue 23: N callers each pull a huge download (or push a huge upload) at a slow fixed
# rate, with a small socket buffer, while one probe a second asks for /loadtest/ping on a fresh connection. Run
# straight at the backend, through one nginx hop and through Tunnel2, one after another in one sitting: how much
# of the rate each caller got, how long the probes waited, and how much memory every process took.
# The engine (callers, probes, RSS sampler, the slow-reading backend for uploads, the report) is lib/storm.py.
set -euo pipefail

LT_NAME=storm
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"
# shellcheck source=lib/side-by-side.sh
source "$SCRIPT_DIR/lib/side-by-side.sh"
STORM_PY="$SCRIPT_DIR/lib/storm.py"

CALLERS=1000
RATE_ARG=64k
DURATION=30
PROBE_INTERVAL=1
PROBE_TIMEOUT=30
DIRECTION=download
TARGETS_ARG="direct nginx tunnel"
BODY_ARG=64m
PLOT=1
PUSH=0
CLIENT_CONCURRENCY="${STORM_CLIENT_CONCURRENCY:-10000}"   # overrides common.sh's 100: the client's limit must not be the cause
SOCKBUF="${STORM_SOCKBUF:-65536}"
HOP_PORT="${STORM_NGINX_PORT:-12130}"
SLOW_PORT="${STORM_BACKEND_PORT:-12131}"
STORM_SESSION="${STORM_SESSION:-44444444-4444-4444-4444-444444444444}"
TUNNEL_TOKEN="${COMPARE_TUNNEL_TOKEN:-dev-token-change-me}"   # the dev stack's token, not a secret
SETTLE="${STORM_SETTLE_SECONDS:-5}"
BASELINE=2
DOWNLOAD_BYTES=1073741824
MAX_DOWNLOAD_BYTES=17179869184   # TestBackend's limit for /loadtest/bytes (16 GiB)

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/storm.sh [--callers N] [--rate BYTES/S] [--seconds S] [--probe-interval S]
         [--direction download|upload] [--targets "direct nginx tunnel"] [--client-concurrency N]
         [--body-bytes BYTES] [--probe-timeout S] [--push] [--no-plot] [--help]

The slow-reader storm of issue 23, per target one after another:
  download  N callers each 'GET /loadtest/bytes/1073741824' from TestBackend, SO_RCVBUF $SOCKBUF set before
            connect, each reading at the rate (token bucket, small reads) for S seconds, then closing.
  upload    N callers each POST a body of --body-bytes (Content-Length) at the rate for S seconds, then closing,
            to a slow backend started here (lib/storm.py on :$SLOW_PORT) that reads each body at the same rate
            through a $SOCKBUF-byte SO_RCVBUF; a second TunnelClient (session $STORM_SESSION) relays to it.
  Beside the callers, one probe 'GET /loadtest/ping' per probe interval on a fresh connection to the same
  backend (timeout --probe-timeout = unanswered), timed by the probe process and at the socket (until the kernel's
  receive time of the answer, so the probe process's own wait for a core on a loaded machine is left out); RSS of
  every process involved every 0.5 s.
Targets:
  direct   straight at the backend (TestBackend :$BACKEND_PORT, or the slow backend)
  nginx    one nginx hop on :$HOP_PORT (proxy_buffering off, proxy_request_buffering off, upstream keepalive)
  tunnel   http://127.0.0.1:$PUBLIC_PORT/session/<id>/... (session $SESSION, or $STORM_SESSION for uploads)

Options (defaults in brackets):
  --callers N              callers at once [$CALLERS]
  --rate R                 bytes per second per caller; suffixes k, m, g (x1024), e.g. 64k, 1m [$RATE_ARG]
  --seconds S              how long each caller reads or sends, whole seconds [$DURATION]
  --probe-interval S       seconds between probes, e.g. 1 or 0.2 [$PROBE_INTERVAL]
  --probe-timeout S        a probe not answered by then is unanswered [$PROBE_TIMEOUT]
  --direction D            download or upload [$DIRECTION]
  --targets "T..."         any of direct nginx tunnel, in the order given [$TARGETS_ARG]
  --client-concurrency N   MaxConcurrency of the TunnelClient(s) this script starts [$CLIENT_CONCURRENCY]
  --body-bytes B           upload body size, more than rate x seconds [$BODY_ARG]
  --push                   upload: each caller sends as fast as its socket takes the bytes (the backend still reads at
                           the rate), so every buffer in front of the backend fills: what a tunnel holds per upload
  --no-plot                do not draw storm.png (drawn only when Debian's python3-matplotlib is there or
                           installable: as root it is installed with apt-get)

Uses the running stack if it answers, otherwise starts tunnel2-deploy/dev/run-local.sh and stops it at the end
(only what it started; nginx, the slow backend and the extra TunnelClient always stop at the end). Raises the
open-file limit (ulimit -n) when N callers need more, or stops with a message.
Environment: STORM_NGINX_PORT ($HOP_PORT), STORM_BACKEND_PORT ($SLOW_PORT), STORM_SESSION, STORM_SOCKBUF ($SOCKBUF),
STORM_SETTLE_SECONDS ($SETTLE, pause between targets), STORM_CLIENT_CONCURRENCY, and the stack's TUNNEL2_* ports.
A stack this script starts gets TestBackend__ListenBacklog=4096 unless set (Kestrel's 512 overflows in a crowd).
Reports: tunnel2-load-tests/reports/<UTC timestamp>-storm/: summary.md (the tables printed at the end),
timeseries.csv (t, process, RSS, probe latencies), callers-<target>.csv, <target>.json, storm.png.
Exit: 0 when every target ran (the numbers are results, read them); 1 a target's run or the set-up failed;
2 bad usage; 127 a missing tool.
EOF
}

# to_bytes VALUE: digits with an optional k/m/g (x1024) suffix, optionally followed by b or ib; prints bytes.
to_bytes() {
  local v="${1,,}" mult=1
  [[ "$v" =~ ^([0-9]{1,9})(k|m|g)?(i?b)?$ ]] || return 1
  case "${BASH_REMATCH[2]}" in
    k) mult=1024 ;;
    m) mult=1048576 ;;
    g) mult=1073741824 ;;
  esac
  echo $((10#${BASH_REMATCH[1]} * mult))
}

# positive_decimal VALUE MIN MAX: a decimal number within [MIN, MAX].
positive_decimal() {
  [[ "$1" =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'
}

while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --no-plot) PLOT=0; shift; continue ;;
    --push) PUSH=1; shift; continue ;;
    --callers|--rate|--seconds|--probe-interval|--probe-timeout|--direction|--targets|--client-concurrency|--body-bytes)
      (($# >= 2)) || die "$1 needs a value (see --help)" 2 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  case "$1" in
    --callers) CALLERS="$2" ;;
    --rate) RATE_ARG="$2" ;;
    --seconds) DURATION="$2" ;;
    --probe-interval) PROBE_INTERVAL="$2" ;;
    --probe-timeout) PROBE_TIMEOUT="$2" ;;
    --direction) DIRECTION="$2" ;;
    --targets) TARGETS_ARG="$2" ;;
    --client-concurrency) CLIENT_CONCURRENCY="$2" ;;
    --body-bytes) BODY_ARG="$2" ;;
  esac
  shift 2
done

{ [[ "$CALLERS" =~ ^[1-9][0-9]{0,4}$ ]] && ((CALLERS <= 20000)); } || die "--callers takes 1 to 20000, got '$CALLERS'" 2
{ RATE="$(to_bytes "$RATE_ARG")" && ((RATE >= 1 && RATE <= 1073741824)); } \
  || die "--rate takes bytes per second from 1 to 1g, with an optional k/m/g suffix (e.g. 64k), got '$RATE_ARG'" 2
{ [[ "$DURATION" =~ ^[1-9][0-9]{0,2}$ ]] && ((DURATION <= 600)); } || die "--seconds takes whole seconds from 1 to 600, got '$DURATION'" 2
positive_decimal "$PROBE_INTERVAL" 0.01 60 || die "--probe-interval takes seconds from 0.01 to 60, got '$PROBE_INTERVAL'" 2
positive_decimal "$PROBE_TIMEOUT" 0.1 120 || die "--probe-timeout takes seconds from 0.1 to 120, got '$PROBE_TIMEOUT'" 2
[[ "$DIRECTION" == download || "$DIRECTION" == upload ]] || die "--direction takes download or upload, got '$DIRECTION'" 2
{ [[ "$CLIENT_CONCURRENCY" =~ ^[1-9][0-9]{0,5}$ ]] && ((CLIENT_CONCURRENCY <= 100000)); } \
  || die "--client-concurrency takes 1 to 100000, got '$CLIENT_CONCURRENCY'" 2
BODY_BYTES="$(to_bytes "$BODY_ARG")" || die "--body-bytes takes bytes with an optional k/m/g suffix, got '$BODY_ARG'" 2
[[ "$SOCKBUF" =~ ^[1-9][0-9]{0,8}$ ]] || die "STORM_SOCKBUF must be a number of bytes, got '$SOCKBUF'" 2
[[ "$SETTLE" =~ ^[0-9]{1,3}$ ]] || die "STORM_SETTLE_SECONDS must be whole seconds, got '$SETTLE'" 2
TARGETS=()
for t in $TARGETS_ARG; do
  [[ "$t" == direct || "$t" == nginx || "$t" == tunnel ]] || die "--targets takes direct, nginx and tunnel, got '$t'" 2
  [[ " ${TARGETS[*]} " == *" $t "* ]] && die "--targets names '$t' twice" 2
  TARGETS+=("$t")
done
((${#TARGETS[@]})) || die "--targets is empty" 2
has_target() { [[ " ${TARGETS[*]} " == *" $1 "* ]]; }

EXPECTED=$((RATE * DURATION))
if [[ "$DIRECTION" == download ]]; then
  # Every caller must still be reading when its seconds are up: ask for more than rate x seconds.
  while ((DOWNLOAD_BYTES <= EXPECTED)); do DOWNLOAD_BYTES=$((DOWNLOAD_BYTES * 2)); done
  ((DOWNLOAD_BYTES <= MAX_DOWNLOAD_BYTES)) || die "rate x seconds ($EXPECTED bytes) is more than TestBackend serves in one download (16 GiB)" 2
  ((DOWNLOAD_BYTES == 1073741824)) || log "rate x seconds is over 1 GiB: each caller asks for $DOWNLOAD_BYTES bytes"
else
  ((BODY_BYTES > EXPECTED)) || die "--body-bytes ($BODY_BYTES) must be more than rate x seconds ($EXPECTED) so that no caller finishes early" 2
fi

# Open files: each caller is one socket in the generator and one or two in every process on its path (an nginx
# worker holds both sides of each caller, and one worker may get them all). Raise the soft limit when it is short.
PROBES_OUT=$(awk -v t="$PROBE_TIMEOUT" -v i="$PROBE_INTERVAL" 'BEGIN { printf "%d", t / i + 2 }')
NEED_FILES=$((2 * CALLERS + PROBES_OUT + 512))
soft="$(ulimit -Sn)"
hard="$(ulimit -Hn)"
if [[ "$soft" != unlimited ]] && ((soft < NEED_FILES)); then
  if [[ "$hard" == unlimited ]] || ((hard >= NEED_FILES)); then
    ulimit -Sn "$NEED_FILES" || die "could not raise the open-file limit to $NEED_FILES (ulimit -n)"
    log "raised the open-file limit from $soft to $NEED_FILES for $CALLERS callers"
  else
    die "$CALLERS callers need $NEED_FILES open files per process, but the hard limit is $hard.
  Raise it (as root: ulimit -Hn $NEED_FILES in this shell, or nofile in /etc/security/limits.conf) or use fewer --callers."
  fi
fi

ensure_tool curl curl
ensure_tool python3 python3
ensure_tool ss iproute2
has_target nginx && ensure_tool nginx nginx

# The plot needs matplotlib in Debian's own python3 (/usr/bin/python3, package python3-matplotlib), which need not
# be the python3 on PATH. Installed (as root) before any load runs; without it the plot is skipped.
PLOT_PY=""
if ((PLOT)); then
  if [[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    PLOT_PY=/usr/bin/python3
  elif [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "matplotlib is missing; installing Debian package python3-matplotlib for the plot"
    if { ((APT_UPDATED)) || DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2; } \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-matplotlib >&2 \
        && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
      APT_UPDATED=1
      PLOT_PY=/usr/bin/python3
    else
      log "python3-matplotlib could not be installed: no plot"
    fi
  else
    log "no plot: matplotlib is not installed (sudo apt-get install python3-matplotlib) and we are not root"
  fi
fi

STAMP="$(utc_stamp)"
STARTED="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
REPORT_DIR="$LT_DIR/reports/$STAMP-storm"
NGINX_DIR="$REPORT_DIR/nginx"
mkdir -p "$REPORT_DIR"
SLOW_PID=""
STORM_CLIENT_PID=""
# shellcheck disable=SC2317  # reached through the EXIT trap, which shellcheck does not follow
cleanup() {
  stop_child
  stop_all_nginx
  stop_pid "TunnelClient (storm session)" "$STORM_CLIENT_PID" 15
  stop_pid "slow backend" "$SLOW_PID" 10
  stack_stop
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "$DIRECTION storm: $CALLERS callers x $RATE B/s x $DURATION s, probes every $PROBE_INTERVAL s; targets ${TARGETS[*]}; reports in $REPORT_DIR"

# --- the stack (not needed for an upload storm without the tunnel target) --------------------------------------
PROCS=()   # NAME=PID of every process whose RSS is sampled
BACKEND_PID="" SERVER_PID="" CLIENT_PID=""
if [[ "$DIRECTION" == download ]] || has_target tunnel; then
  need_direct=0
  [[ "$DIRECTION" == download ]] && need_direct=1
  need_tunnel=0
  has_target tunnel && need_tunnel=1
  # Both proxies open one backend connection per caller as the crowd arrives; with Kestrel's listen queue of 512,
  # thousands of them wait for SYN retransmissions (1, 3, 7 s ...) and every target's first seconds measure that.
  export TestBackend__ListenBacklog="${TestBackend__ListenBacklog:-4096}"
  stack_ensure "$need_direct" "$need_tunnel" "$REPORT_DIR/run-local.log"
  BACKEND_PID="$(stack_pid TestBackend)"
  SERVER_PID="$(stack_pid TunnelServer)"
  CLIENT_PID="$(stack_pid TunnelClient)"
  if [[ -z "$STACK_PID" && "$DIRECTION" == download && -n "$CLIENT_PID" ]]; then
    # A stack we did not start keeps its own client limit; say what it is when it can be read.
    seen="$(tr '\0' '\n' <"/proc/$CLIENT_PID/environ" 2>/dev/null | sed -n 's/^TunnelClient__Limits__MaxConcurrency=//p')"
    cmdline="$(tr '\0' ' ' <"/proc/$CLIENT_PID/cmdline" 2>/dev/null)"
    [[ "$cmdline" =~ --max-concurrency[=\ ]([0-9]+) ]] && seen="${BASH_REMATCH[1]}"
    seen="${seen:-1000}"   # the client's default when neither variable nor switch sets it
    if ((seen < CALLERS)); then
      warn "the running TunnelClient (pid $CLIENT_PID) has MaxConcurrency $seen < $CALLERS callers: its queue, not the tunnel, may be measured"
    fi
  fi
  for pid in $BACKEND_PID $SERVER_PID $CLIENT_PID; do
    lim="$(awk '/^Max open files/ {print $4}' "/proc/$pid/limits" 2>/dev/null || true)"
    [[ "$lim" =~ ^[0-9]+$ ]] && ((lim < CALLERS + 256)) && warn "pid $pid may open only $lim files, fewer than $CALLERS callers need"
  done
fi

# --- the upload's slow backend and its TunnelClient ---------------------------------------------------------------
if [[ "$DIRECTION" == upload ]]; then
  port_in_use "$SLOW_PORT" && die "port $SLOW_PORT (slow backend, STORM_BACKEND_PORT) is already in use"
  $SETSID python3 "$STORM_PY" backend --port "$SLOW_PORT" --rate "$RATE" --rcvbuf "$SOCKBUF" --seconds-hint "$DURATION" \
    </dev/null >"$REPORT_DIR/slow-backend.log" 2>&1 &
  SLOW_PID=$!
  wait_pong "the slow backend" "$SLOW_PID" "http://127.0.0.1:$SLOW_PORT/loadtest/ping" 10 "$REPORT_DIR/slow-backend.log"
  PROCS+=("slow-backend=$SLOW_PID")
  if has_target tunnel; then
    [[ -n "$CLIENT_PID" ]] || die "no TunnelClient of the stack found, so the build of the storm session's client is unknown"
    start_session_client "$STORM_SESSION" "http://127.0.0.1:$SLOW_PORT" "$TUNNEL_TOKEN" "$REPORT_DIR/client-storm.log" "$CLIENT_PID"
    STORM_CLIENT_PID=$!
    wait_pong "the TunnelClient for the slow backend" "$STORM_CLIENT_PID" \
      "http://127.0.0.1:$PUBLIC_PORT/session/$STORM_SESSION/loadtest/ping" 30 "$REPORT_DIR/client-storm.log"
    log "TunnelClient for session $STORM_SESSION -> slow backend: pid $STORM_CLIENT_PID, max concurrency $CLIENT_CONCURRENCY"
  fi
  UPSTREAM="http://127.0.0.1:$SLOW_PORT"
  [[ -n "$SERVER_PID" ]] && PROCS+=("TunnelServer=$SERVER_PID")
  [[ -n "$STORM_CLIENT_PID" ]] && PROCS+=("TunnelClient-storm=$STORM_CLIENT_PID")
  BACKEND_NAME=slow-backend
  CLIENT_NAME=TunnelClient-storm
  TUNNEL_URL_BASE="http://127.0.0.1:$PUBLIC_PORT/session/$STORM_SESSION"
  CALL_PATH=/upload
else
  UPSTREAM="$DIRECT_BASE"
  PROCS+=("TestBackend=$BACKEND_PID")
  has_target tunnel && PROCS+=("TunnelServer=$SERVER_PID" "TunnelClient=$CLIENT_PID")
  BACKEND_NAME=TestBackend
  CLIENT_NAME=TunnelClient
  TUNNEL_URL_BASE="$TUNNEL_BASE"
  CALL_PATH="/loadtest/bytes/$DOWNLOAD_BYTES"
fi

# --- one nginx hop --------------------------------------------------------------------------------------------
NGINX_NAMES=""
if has_target nginx; then
  port_in_use "$HOP_PORT" && die "port $HOP_PORT (nginx hop, STORM_NGINX_PORT) is already in use"
  # Both buffering switches off, so that nginx streams each way like the tunnel does; no body size limit; long
  # timeouts so that a stalled caller is not cut by nginx before its seconds are up.
  nginx_conf hop 2 "  proxy_buffering off; proxy_request_buffering off; client_max_body_size 0;
  proxy_read_timeout 300s; proxy_send_timeout 300s; send_timeout 300s; client_body_timeout 300s;
  upstream storm_backend { server ${UPSTREAM#http://}; keepalive 64; }
  server { listen 127.0.0.1:$HOP_PORT backlog=4096;
    location / { proxy_pass http://storm_backend; proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"
  # nginx_conf allows 4096 connections per worker; one worker may hold both sides of every caller.
  if ((2 * CALLERS + 256 > 4096)); then
    sed -i "s/worker_connections 4096;/worker_connections $((2 * CALLERS + 256));/; 1i worker_rlimit_nofile $NEED_FILES;" \
      "$NGINX_DIR/hop/nginx.conf"
  fi
  start_nginx hop "http://127.0.0.1:$HOP_PORT/loadtest/ping"
  master="${NGINX_PIDS[-1]}"
  PROCS+=("nginx-master=$master")
  NGINX_NAMES="nginx-master"
  n=0
  for pid in $(pgrep -P "$master" || true); do
    n=$((n + 1))
    PROCS+=("nginx-worker-$n=$pid")
    NGINX_NAMES+=" nginx-worker-$n"
  done
  log "nginx hop on :$HOP_PORT in front of $UPSTREAM: master $master, $n workers"
fi

proc_args=()
for p in "${PROCS[@]}"; do
  [[ "$p" =~ ^[A-Za-z0-9-]+=[0-9]+$ ]] && proc_args+=(--proc "$p")
done
log "sampling RSS of: ${PROCS[*]}"

# --- the storms ---------------------------------------------------------------------------------------------
status=0
i=0
for t in "${TARGETS[@]}"; do
  case "$t" in
    direct) base="$UPSTREAM"; path="$BACKEND_NAME" ;;
    nginx)  base="http://127.0.0.1:$HOP_PORT"; path="$NGINX_NAMES $BACKEND_NAME" ;;
    tunnel) base="$TUNNEL_URL_BASE"; path="TunnelServer $CLIENT_NAME $BACKEND_NAME" ;;
  esac
  if ((i > 0 && SETTLE > 0)); then
    log "settling for $SETTLE s before $t"
    sleep "$SETTLE"
  fi
  i=$((i + 1))
  answers "$base/loadtest/ping" pong || warn "$t: $base/loadtest/ping does not answer 'pong' before the storm; running it anyway"
  run=(python3 "$STORM_PY" run --target "$t" --direction "$DIRECTION" --url "$base$CALL_PATH"
    --probe-url "$base/loadtest/ping" --callers "$CALLERS" --rate "$RATE" --seconds "$DURATION"
    --probe-interval "$PROBE_INTERVAL" --probe-timeout "$PROBE_TIMEOUT" --baseline "$BASELINE" --sockbuf "$SOCKBUF"
    --path "$path" --out "$REPORT_DIR/$t.json" "${proc_args[@]}")
  if [[ "$DIRECTION" == upload ]]; then
    run+=(--body-bytes "$BODY_BYTES" --stats-url "http://127.0.0.1:$SLOW_PORT/stats" --run-id "$t$STAMP")
    ((PUSH)) && run+=(--push)
  else
    run+=(--body-bytes "$DOWNLOAD_BYTES")
  fi
  printf '%q ' "${run[@]}" >>"$REPORT_DIR/commands.txt"
  echo >>"$REPORT_DIR/commands.txt"
  # A background job, waited for, so that the INT/TERM trap runs at once (cleanup's stop_child ends it).
  "${run[@]}" &
  CHILD_PID=$!
  rc=0
  wait "$CHILD_PID" || rc=$?
  CHILD_PID=""
  if ((rc != 0)); then
    warn "$t: the storm engine exited with code $rc"
    status=1
  fi
done

commit="$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
[[ -n "$(git -C "$REPO_ROOT" status --porcelain -- src 2>/dev/null)" ]] && commit+=" + uncommitted changes in src/"
stack_note="stack started by this script, TunnelClient MaxConcurrency $CLIENT_CONCURRENCY"
[[ -z "$STACK_PID" ]] && stack_note="stack already running (its own TunnelClient settings)"
[[ "$DIRECTION" == upload ]] && stack_note="storm TunnelClient started by this script, MaxConcurrency $CLIENT_CONCURRENCY"
{ has_target tunnel || [[ "$DIRECTION" == download ]]; } || stack_note="no stack needed"
echo
python3 "$STORM_PY" report --dir "$REPORT_DIR" --targets "${TARGETS[*]}" --stamp "$STARTED" \
  --note "Commit $commit; $(nproc) cores; $stack_note." || status=1
if [[ -n "$PLOT_PY" ]]; then
  "$PLOT_PY" "$STORM_PY" plot --dir "$REPORT_DIR" --targets "${TARGETS[*]}" || log "the plot failed; the tables and CSV are complete"
fi
log "report: $REPORT_DIR (summary.md, timeseries.csv, callers-*.csv)"
exit "$status"
