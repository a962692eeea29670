# shellcheck shell=bash disable=SC2034  # variables are used by the scripts that source this
# Shared helpers for the Tunnel2 load-test scripts: logging, tool installs, the local stack
# (detect it, or start tunnel2-deploy/dev/run-local.sh and stop only what we started) and
# the RSS sampler, CPU ticks from /proc. Sourced by every script here; not run on its own.
#
# Every target is on loopback: the host is fixed to 127.0.0.1, only the ports can be changed.

LT_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LT_DIR="$(cd "$LT_LIB_DIR/../.." && pwd)"          # tunnel2-load-tests/
REPO_ROOT="$(cd "$LT_DIR/.." && pwd)"
RUN_LOCAL="$REPO_ROOT/tunnel2-deploy/dev/run-local.sh"
LOADREPORT="$LT_LIB_DIR/loadreport.py"

# Ports of the dev stack (same variables as run-local.sh). The host is always 127.0.0.1.
PUBLIC_PORT="${TUNNEL2_PUBLIC_PORT:-12000}"
TUNNEL_PORT="${TUNNEL2_TUNNEL_PORT:-12001}"
BACKEND_PORT="${TUNNEL2_BACKEND_PORT:-12007}"
SESSION="${TUNNEL2_LOADTEST_SESSION:-22222222-2222-2222-2222-222222222222}"
DIRECT_BASE="http://127.0.0.1:$BACKEND_PORT"
TUNNEL_BASE="http://127.0.0.1:$PUBLIC_PORT/session/$SESSION"

# When we start the stack ourselves, the TunnelClient gets this many backend slots (its
# default of 10 would make the client's queue, not the tunnel, the thing being measured).
CLIENT_CONCURRENCY="${TUNNEL2_LOADTEST_CLIENT_CONCURRENCY:-100}"
STACK_START_TIMEOUT="${TUNNEL2_LOADTEST_START_TIMEOUT:-600}"   # includes a Release build

LT_NAME="${LT_NAME:-loadtest}"   # prefix of log lines, set by each script

# Servers under test start in a session of their own, as run-local.sh starts the tunnel's processes: with the
# kernel's autogroup scheduling (sched_autogroup_enabled=1, the Debian default) each session is one scheduling
# group with an equal share of the CPU, so a server left in the measuring script's session would share wrk's
# share and a comparison would favour whichever side runs in more groups.
SETSID=""
command -v setsid >/dev/null 2>&1 && SETSID=setsid

log()  { printf '[%s] %s\n' "$LT_NAME" "$*" >&2; }
warn() { printf '[%s] warning: %s\n' "$LT_NAME" "$*" >&2; }
die()  { printf '[%s] error: %s\n' "$LT_NAME" "$1" >&2; exit "${2:-1}"; }   # die MESSAGE [EXIT_CODE]

for _port_var in PUBLIC_PORT TUNNEL_PORT BACKEND_PORT CLIENT_CONCURRENCY STACK_START_TIMEOUT; do
  [[ "${!_port_var}" =~ ^[0-9]+$ ]] || die "$_port_var must be a number, got '${!_port_var}'" 2
done
unset _port_var

# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------
APT_UPDATED=0

# ensure_tool COMMAND DEBIAN_PACKAGE: installs the package with apt-get when the command is
# missing and we are root; otherwise stops and says how to install it.
ensure_tool() {
  local cmd="$1" pkg="$2"
  command -v "$cmd" >/dev/null 2>&1 && return 0
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "'$cmd' is missing; installing Debian package $pkg"
    if ((!APT_UPDATED)); then
      DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || die "apt-get update failed"
      APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >&2 \
      || die "apt-get install $pkg failed"
    command -v "$cmd" >/dev/null 2>&1 || die "$pkg was installed but '$cmd' is still not on PATH"
  else
    die "'$cmd' is not installed. Install it with: sudo apt-get install $pkg" 127
  fi
}

# ---------------------------------------------------------------------------------------------
# The stack
# ---------------------------------------------------------------------------------------------
STACK_PID=""        # run-local.sh, when this script started it
STACK_LOG=""

# answers URL [EXPECTED_BODY]: 2xx within 2 s and, if given, exactly that body.
answers() {
  local body
  body="$(curl -fsS --max-time 2 "$1" 2>/dev/null)" || return 1
  [[ -z "${2:-}" || "$body" == "$2" ]]
}

direct_answers() { answers "$DIRECT_BASE/loadtest/ping" pong; }
tunnel_answers() { answers "$TUNNEL_BASE/loadtest/ping" pong; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# True when the Release dlls exist and no source or build file under src/ is newer than them:
# then run-local.sh can skip its build (--no-build).
release_build_is_fresh() {
  local project dll
  for project in TestBackend TunnelServer TunnelClient; do
    dll="$REPO_ROOT/src/$project/bin/Release/net10.0/$project.dll"
    [[ -f "$dll" ]] || return 1
    if [[ -n "$(find "$REPO_ROOT/src" "$REPO_ROOT"/Directory.*.props "$REPO_ROOT/global.json" \
        \( -path '*/bin' -o -path '*/obj' \) -prune -o -type f -newer "$dll" \
        \( -name '*.cs' -o -name '*.csproj' -o -name '*.props' -o -name '*.targets' -o -name '*.json' \) \
        -print -quit 2>/dev/null)" ]]; then
      return 1
    fi
  done
}

# stack_ensure NEED_DIRECT NEED_TUNNEL LOGFILE
# Uses the stack if what is needed already answers. If nothing listens on the stack's ports,
# starts run-local.sh in the background (its output to LOGFILE) and waits until the needed
# URLs answer. A half-running stack (a port taken, but ping does not answer) is an error:
# we cannot start run-local.sh over it and will not stop somebody else's processes.
stack_ensure() {
  local need_direct="$1" need_tunnel="$2" logfile="$3"
  local ok=1
  ((need_direct)) && ! direct_answers && ok=0
  ((need_tunnel)) && ! tunnel_answers && ok=0
  if ((ok)); then
    # A stack asked for with other options (e.g. --aot) must be the one measured, not whatever already runs.
    [[ -z "${TUNNEL2_STACK_ARGS:-}" ]] || die "TUNNEL2_STACK_ARGS='$TUNNEL2_STACK_ARGS' asks for a stack of its own, but one \
already answers on :$PUBLIC_PORT/:$BACKEND_PORT; stop it first"
    log "using the stack that is already running (direct $DIRECT_BASE, tunnel $TUNNEL_BASE)"
    return 0
  fi

  local busy=() port
  for port in "$PUBLIC_PORT" "$TUNNEL_PORT" "$BACKEND_PORT"; do
    port_in_use "$port" && busy+=("$port")
  done
  if ((${#busy[@]})); then
    local silent=()
    ((need_direct)) && ! direct_answers && silent+=("$DIRECT_BASE/loadtest/ping")
    ((need_tunnel)) && ! tunnel_answers && silent+=("$TUNNEL_BASE/loadtest/ping")
    die "the stack is only partly up: port(s) ${busy[*]} in use, but ${silent[*]} did not answer 'pong'.
  Start the whole stack (tunnel2-deploy/dev/run-local.sh) or stop what holds those ports, then retry."
  fi

  [[ -x "$RUN_LOCAL" || -f "$RUN_LOCAL" ]] || die "nothing answers on :$PUBLIC_PORT/:$BACKEND_PORT and $RUN_LOCAL does not exist.
  Start the stack by hand (see tunnel2-load-tests/README.md, 'Starting the stack by hand') and retry."
  command -v dotnet >/dev/null 2>&1 || die "'dotnet' is not on PATH; run-local.sh needs the .NET 10 SDK" 127

  # TUNNEL2_STACK_ARGS: more run-local.sh options for a stack started here, e.g. --aot (which always publishes).
  local args=(--no-httpbin) extra=()
  read -r -a extra <<<"${TUNNEL2_STACK_ARGS:-}"
  args+=("${extra[@]}")
  if [[ " ${extra[*]} " == *" --aot "* ]]; then
    log "starting the stack: run-local.sh ${args[*]} (it publishes the Native AOT binaries first: a few minutes)"
  elif release_build_is_fresh; then
    args+=(--no-build)
    log "starting the stack: run-local.sh ${args[*]} (Release build is up to date)"
  else
    log "starting the stack: run-local.sh ${args[*]} (it builds Release first; this can take a few minutes)"
  fi
  STACK_LOG="$logfile"
  # TunnelClient__Limits__MaxConcurrency reaches the TunnelClient through the environment (.NET config).
  TunnelClient__Limits__MaxConcurrency="$CLIENT_CONCURRENCY" \
    bash "$RUN_LOCAL" "${args[@]}" </dev/null >"$STACK_LOG" 2>&1 &
  STACK_PID=$!
  log "run-local.sh pid $STACK_PID, log $STACK_LOG, TunnelClient max concurrency $CLIENT_CONCURRENCY"

  local deadline=$((SECONDS + STACK_START_TIMEOUT))
  while :; do
    if ! kill -0 "$STACK_PID" 2>/dev/null; then
      wait "$STACK_PID" 2>/dev/null
      local status=$?
      STACK_PID=""
      tail -n 25 "$STACK_LOG" | sed 's/^/  | /' >&2
      die "run-local.sh exited with code $status before the stack was ready (log above: $STACK_LOG)"
    fi
    if grep -q 'ready:' "$STACK_LOG" 2>/dev/null; then
      ok=1
      ((need_direct)) && ! direct_answers && ok=0
      ((need_tunnel)) && ! tunnel_answers && ok=0
      ((ok)) && break
    fi
    ((SECONDS < deadline)) || die "the stack was not ready after ${STACK_START_TIMEOUT}s (see $STACK_LOG)"
    sleep 1
  done
  log "stack ready ($((SECONDS - deadline + STACK_START_TIMEOUT)) s)"
}

# Stops run-local.sh if (and only if) this script started it; run-local.sh stops its children.
stack_stop() {
  [[ -n "$STACK_PID" ]] || return 0
  local pid="$STACK_PID"
  STACK_PID=""
  log "stopping the stack we started (run-local.sh pid $pid)"
  stop_pid run-local.sh "$pid" 60
}

# stop_pid NAME PID SECONDS: SIGTERM, up to SECONDS for it to exit, then SIGKILL; reaps it.
stop_pid() {
  local name="$1" pid="$2" timeout="$3" deadline
  [[ -n "$pid" ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  deadline=$((SECONDS + timeout))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    warn "$name (pid $pid) did not stop in ${timeout}s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# ---------------------------------------------------------------------------------------------
# Processes and their memory
# ---------------------------------------------------------------------------------------------

# pids_listening PORT: pids of processes that listen on 127.0.0.1:PORT (or any address).
pids_listening() {
  ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u
}

# pids_connected_to PORT: pids with an established connection to PORT (the TunnelClient's uplink).
pids_connected_to() {
  ss -Htnp state established "dport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u
}

# stack_pids: prints "NAME PID" lines for TunnelServer, TunnelClient(s) and TestBackend.
# Found by the sockets they own (robust when other dotnet processes run); pgrep as a fallback.
stack_pids() {
  local pid found
  found="$(pids_listening "$PUBLIC_PORT")"
  [[ -n "$found" ]] || found="$(pgrep -f 'TunnelServer(\.dll)?( |$)' || true)"
  for pid in $found; do echo "TunnelServer $pid"; done
  found="$(pids_connected_to "$TUNNEL_PORT")"
  [[ -n "$found" ]] || found="$(pgrep -f 'TunnelClient(\.dll)?( |$)' || true)"
  for pid in $found; do echo "TunnelClient $pid"; done
  found="$(pids_listening "$BACKEND_PORT")"
  [[ -n "$found" ]] || found="$(pgrep -f 'TestBackend\.dll' || true)"
  for pid in $found; do echo "TestBackend $pid"; done
}

# stat_ticks FILE: user+system clock ticks in a /proc/PID/stat or /proc/PID/task/TID/stat file; 0 once it is gone.
# The fields are counted after the name's closing parenthesis, since a name may hold spaces.
stat_ticks() {
  local stat fields
  stat="$(cat "$1" 2>/dev/null)" || { echo 0; return; }
  read -r -a fields <<<"${stat##*) }"
  echo $((${fields[11]:-0} + ${fields[12]:-0}))
}

# rss_kib PID: the process's VmRSS in KiB; prints nothing once the process is gone.
rss_kib() { awk '/^VmRSS:/ {print $2; exit}' "/proc/$1/status" 2>/dev/null || true; }

# stack_pid NAME: the first pid of NAME (TunnelServer, TunnelClient or TestBackend) in stack_pids.
stack_pid() { stack_pids | awk -v name="$1" '$1 == name {print $2; exit}'; }

RSS_PID=""
PHASE_FILE=""

# rss_start OUTFILE: samples VmRSS of the stack's processes every second into OUTFILE as
# "epoch_seconds phase name pid rss_kib"; the phase is whatever set_phase wrote last.
rss_start() {
  local out="$1"
  PHASE_FILE="$out.phase"
  echo start >"$PHASE_FILE"
  local procs
  procs="$(stack_pids)"
  [[ -n "$procs" ]] || { warn "no stack process found; RSS is not recorded"; return 0; }
  log "sampling RSS every second: $(echo "$procs" | tr '\n' ' ')"
  (
    trap 'exit 0' TERM
    while :; do
      phase="$(cat "$PHASE_FILE" 2>/dev/null || echo '?')"
      now="$(date +%s)"
      while read -r name pid; do
        rss="$(rss_kib "$pid")"
        [[ -n "$rss" ]] && echo "$now $phase $name $pid $rss"
      done <<<"$procs"
      sleep 1
    done
  ) >>"$out" 2>/dev/null &
  RSS_PID=$!
}

set_phase() { [[ -n "$PHASE_FILE" ]] && echo "$1" >"$PHASE_FILE"; return 0; }

rss_stop() {
  [[ -n "$RSS_PID" ]] || return 0
  set_phase end
  sleep 1.1   # one last sample in the "end" phase
  kill -TERM "$RSS_PID" 2>/dev/null || true
  wait "$RSS_PID" 2>/dev/null || true
  RSS_PID=""
}

# ---------------------------------------------------------------------------------------------
# Endpoints
# ---------------------------------------------------------------------------------------------
DELAY_MS="${LOADTEST_DELAY_MS:-20}"
ECHO_BODY_BYTES="${LOADTEST_ECHO_BYTES:-1024}"

# endpoint_path NAME: the backend path of a named endpoint (without /session/... prefix).
endpoint_path() {
  case "$1" in
    ping)  echo /loadtest/ping ;;
    get)   echo /loadtest/get ;;
    fast)  echo /loadtest/fast ;;
    echo)  echo /loadtest/echo ;;
    delay) echo "/loadtest/delay/$DELAY_MS" ;;
    *) return 1 ;;
  esac
}

endpoint_method() { [[ "$1" == echo ]] && echo POST || echo GET; }

# make_echo_body FILE: a JSON body of ECHO_BODY_BYTES bytes for POST /loadtest/echo.
make_echo_body() {
  python3 - "$1" "$ECHO_BODY_BYTES" <<'PY'
import sys
path, size = sys.argv[1], int(sys.argv[2])
head, tail = '{"payload":"', '"}'
fill = max(0, size - len(head) - len(tail))
with open(path, "w") as f:
    f.write(head + ("abcdefghijklmnopqrstuvwxyz0123456789" * (fill // 36 + 1))[:fill] + tail)
PY
}

utc_stamp() { date -u +%Y%m%dT%H%M%SZ; }

# ---------------------------------------------------------------------------------------------
# Load-tool processes
# ---------------------------------------------------------------------------------------------
CHILD_PID=""

# run_child OUTFILE COMMAND...: runs COMMAND with its output appended to OUTFILE and waits for
# it. Waiting on a background job (not a foreground command) lets the script's INT/TERM trap
# run at once; stop_child then ends the tool. Returns COMMAND's exit status.
run_child() {
  local out="$1" status=0
  shift
  "$@" >>"$out" 2>&1 &
  CHILD_PID=$!
  wait "$CHILD_PID" || status=$?
  CHILD_PID=""
  return "$status"
}

stop_child() {
  [[ -n "$CHILD_PID" ]] || return 0
  kill -TERM "$CHILD_PID" 2>/dev/null || true   # timeout(1) passes the signal on to the tool
  wait "$CHILD_PID" 2>/dev/null || true
  CHILD_PID=""
}
