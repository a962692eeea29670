# shellcheck shell=bash disable=SC2034  # EXTRA_URL and EXTRA_PIDS are read by the scripts that source this
# Helpers of the side-by-side scripts (compare.sh, download.sh): nginx from whole configs generated into
# NGINX_DIR, each in the foreground of a background job in its own session (NGINX_PIDS collects them for
# stop_all_nginx); --extra targets; one more TunnelClient for a session. Sourced after lib/common.sh; the caller
# sets NGINX_DIR before it starts nginx.

NGINX_PIDS=()
declare -A EXTRA_URL=() EXTRA_PIDS=()

# parse_extras "BUILT-IN TARGETS" NAME=BASE_URL[@PID,PID...]...: fills EXTRA_URL[NAME] and EXTRA_PIDS[NAME]
# (space-separated); a NAME among the caller's built-in targets is refused.
parse_extras() {
  local e builtin=" $1 "
  shift
  for e in "$@"; do
    [[ "$e" =~ ^([a-z0-9_-]+)=(http://127\.0\.0\.1:[0-9]+[^@]*)(@([0-9,]+))?$ ]] \
      || die "--extra takes NAME=http://127.0.0.1:PORT/...[@PID,PID], got '$e'" 2
    [[ "$builtin" == *" ${BASH_REMATCH[1]} "* ]] && die "--extra: '${BASH_REMATCH[1]}' is a built-in target's name; choose another" 2
    EXTRA_URL[${BASH_REMATCH[1]}]="${BASH_REMATCH[2]%/}"
    EXTRA_PIDS[${BASH_REMATCH[1]}]="${BASH_REMATCH[4]//,/ }"
  done
}

# nginx_conf NAME WORKERS SERVERS: a whole nginx.conf whose http block holds SERVERS.
nginx_conf() {
  local name="$1" workers="$2" servers="$3" dir="$NGINX_DIR/$1"
  mkdir -p "$dir/logs" "$dir/tmp"
  cat >"$dir/nginx.conf" <<EOF
worker_processes $workers;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  keepalive_requests 1000000;
$servers
}
EOF
}

# Every server under test runs in its own session ($SETSID, lib/common.sh), as run-local.sh starts the tunnel's
# processes.

# start_nginx NAME CHECK_URL: runs the config NAME in the foreground of a background job, in its own session.
start_nginx() {
  local name="$1" url="$2" dir="$NGINX_DIR/$1"
  $SETSID nginx -c "$dir/nginx.conf" -p "$dir" -g 'daemon off;' </dev/null >"$dir/logs/stdout.log" 2>&1 &
  NGINX_PIDS+=($!)
  wait_pong "nginx ($name)" $! "$url" 10 "$dir/logs"
}

# wait_pong NAME PID URL SECONDS LOG: until URL answers 'pong'; stops the script if PID exits or time runs out.
wait_pong() {
  local name="$1" pid="$2" url="$3" deadline=$((SECONDS + $4)) where="$5"
  until answers "$url" pong; do
    kill -0 "$pid" 2>/dev/null || die "$name exited (see $where)"
    ((SECONDS < deadline)) || die "$name did not answer $url within $4 s (see $where)"
    sleep 0.2
  done
}

# stop_all_nginx: stops every nginx started here and waits for it, so that its ports are free afterwards.
stop_all_nginx() {
  local pid
  for pid in "${NGINX_PIDS[@]}"; do stop_pid nginx "$pid" 10; done
  NGINX_PIDS=()
}

# start_session_client SESSION BACKEND_URL TOKEN LOG LIKE_PID: one more TunnelClient on the dev stack's server, in its
# own session, as a background job of the caller ($! is its pid). It is the same build as the stack's client
# LIKE_PID: that Native AOT executable (run-local.sh --aot), else this checkout's Release dll.
start_session_client() {
  local exe cmd
  exe="$(readlink "/proc/$5/exe" 2>/dev/null || true)"
  if [[ "$exe" == */TunnelClient ]]; then
    cmd=("$exe")
  else
    cmd=(dotnet "$REPO_ROOT/src/TunnelClient/bin/Release/net10.0/TunnelClient.dll")
    [[ -f "${cmd[1]}" ]] || die "${cmd[1]} is missing: build Release first (dotnet build -c Release)"
  fi
  (cd "$(dirname "${cmd[-1]}")" && exec $SETSID "${cmd[@]}" --server "http://127.0.0.1:$TUNNEL_PORT" \
    --backend "$2" --session "$1" --token "$3" --max-concurrency "$CLIENT_CONCURRENCY") </dev/null >"$4" 2>&1 &
}
