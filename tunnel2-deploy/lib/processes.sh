# shellcheck shell=bash
# Process handling shared by tunnel2-deploy/dev/run-local.sh and tunnel2-deploy/cluster/run-cluster.sh: start
# pieces in their own sessions, wait for them, stop them in reverse order on Ctrl-C/SIGTERM or when one dies.
#
# Sourced, not run. The sourcing script sets LOG_NAME (the prefix of its log lines), START_TIMEOUT and
# STOP_TIMEOUT (seconds) first.

log() { printf '[%s] %s\n' "$LOG_NAME" "$*"; }
err() { printf '[%s] error: %s\n' "$LOG_NAME" "$*" >&2; }

# --- processes we started: parallel arrays; cleanup stops them in reverse order -------------
NAMES=()
PIDS=()
LOGS=()
SLEEP_PID=""
CLEANED=0

stop_all() {
  ((CLEANED)) && return 0
  CLEANED=1
  if [[ -n "$SLEEP_PID" ]]; then kill "$SLEEP_PID" 2>/dev/null || true; fi
  local i pid deadline status
  # One at a time, in reverse start order: the clients drop their uplinks first, then the
  # server stops with no uplink left, then the backends. Each gets STOP_TIMEOUT, then SIGKILL.
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    pid="${PIDS[i]}"
    kill -TERM "$pid" 2>/dev/null || true
    deadline=$((SECONDS + STOP_TIMEOUT))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      log "${NAMES[i]} (pid $pid) did not stop within ${STOP_TIMEOUT}s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
    status=0
    wait "$pid" 2>/dev/null || status=$?
    # 0 = clean shutdown; 143 = ended by our SIGTERM without a handler (e.g. gunicorn workers).
    if ((status != 0 && status != 143)); then
      log "warning: ${NAMES[i]} exited with code $status while stopping; see ${LOGS[i]}"
    fi
  done
}

on_signal() {
  trap '' INT TERM HUP
  echo
  log "stopping: ${NAMES[*]:-nothing started}"
  stop_all
  log "stopped"
  exit 0
}

trap on_signal INT TERM HUP
trap stop_all EXIT

# Prints the last lines of a process's log, for start-up failures.
show_log_tail() {
  local name="$1" file="$2"
  err "last lines of $file:"
  if [[ -s "$file" ]]; then tail -n 30 "$file" | sed "s/^/  [$name] /" >&2; else echo "  (empty)" >&2; fi
}

# Fails (exit 1) if any started process has exited.
check_alive() {
  local i status
  for i in "${!PIDS[@]}"; do
    if ! kill -0 "${PIDS[i]}" 2>/dev/null; then
      status=0
      wait "${PIDS[i]}" 2>/dev/null || status=$?
      err "${NAMES[i]} (pid ${PIDS[i]}) exited with code $status"
      show_log_tail "${NAMES[i]}" "${LOGS[i]}"
      unset 'PIDS[i]' 'NAMES[i]' 'LOGS[i]'
      PIDS=("${PIDS[@]}") NAMES=("${NAMES[@]}") LOGS=("${LOGS[@]}")
      return 1
    fi
  done
}

SETSID=""
command -v setsid >/dev/null 2>&1 && SETSID=setsid

# start NAME LOGFILE WORKDIR COMMAND...: runs COMMAND in WORKDIR in the background, output to LOGFILE.
start() {
  local name="$1" file="$2" dir="$3"
  shift 3
  : >"$file"
  # setsid: its own process group, so a terminal's Ctrl-C reaches only this script, which then
  # stops the pieces in order (clients, server, backends) instead of all of them at once.
  (cd "$dir" && exec $SETSID "$@") </dev/null >>"$file" 2>&1 &
  NAMES+=("$name")
  PIDS+=("$!")
  LOGS+=("$file")
  log "started $name (pid $!): $*"
}

# wait_until DESCRIPTION COMMAND...: polls COMMAND until it succeeds, a started process dies
# (exit 1, with its log) or START_TIMEOUT passes (exit 1).
wait_until() {
  local what="$1"
  shift
  local deadline=$((SECONDS + START_TIMEOUT))
  until "$@" >/dev/null 2>&1; do
    check_alive || exit 1
    if ((SECONDS >= deadline)); then
      err "timed out after ${START_TIMEOUT}s waiting for $what"
      local i
      for i in "${!PIDS[@]}"; do show_log_tail "${NAMES[i]}" "${LOGS[i]}"; done
      exit 1
    fi
    sleep 0.2
  done
}

# answers URL EXPECTED: the URL returns 2xx and, if EXPECTED is given, exactly that body.
answers() {
  local body
  body="$(http_body "$1")" || return 1
  [[ -z "${2:-}" || "$body" == "$2" ]]
}

# http_body URL: the body of a 2xx answer within 2 s. Through curl where it is installed; otherwise through bash's
# /dev/tcp (a machine with only the .NET SDK has no curl): plain http://host:port/path, HTTP/1.0, so no chunking.
http_body() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsS --max-time 2 "$1"
    return
  fi
  local rest=${1#http://} host port path response
  [[ "$rest" == */* ]] && path="/${rest#*/}" || path=/
  rest=${rest%%/*}
  host=${rest%:*}
  port=${rest##*:}
  [[ "$host" == localhost ]] && host=127.0.0.1
  # shellcheck disable=SC2016 # expanded by the inner bash, from its arguments
  response="$(timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "GET %s HTTP/1.0\r\nHost: %s:%s\r\n\r\n" "$2" "$0" "$1" >&3
    cat <&3' "$host" "$port" "$path" 2>/dev/null)" || return 1
  [[ "$response" =~ ^HTTP/1\.[01]\ 2[0-9][0-9] ]] || return 1
  printf '%s' "${response#*$'\r\n\r\n'}"
}

port_in_use() {
  # A listener on 127.0.0.1 or 0.0.0.0 accepts the connection; a free port refuses at once.
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

describe_listener() {
  if command -v ss >/dev/null 2>&1; then
    ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*users:((\(.*\)))/\1/p' | head -n 1
  fi
}

# run_until_stopped: returns never; exits 0 on Ctrl-C/SIGTERM (after stopping everything), 1 when a process dies.
run_until_stopped() {
  while true; do
    if ! check_alive; then
      err "stopping the rest of the stack"
      stop_all
      exit 1
    fi
    sleep 1 &
    SLEEP_PID=$!
    wait "$SLEEP_PID" 2>/dev/null || true
    SLEEP_PID=""
  done
}
