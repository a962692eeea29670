#!/usr/bin/env bash
# A second TunnelServer + TunnelClient, from another checkout's Release build, in front of the running
# dev stack's TestBackend: the "B" of an A/B run with compare.sh --extra, in the same sitting.
set -euo pipefail

LT_NAME=variant
# shellcheck source=lib/common.sh
source "$(dirname "$0")/lib/common.sh"

usage() {
  cat <<EOF
Usage: $0 [--tree DIR] [--public-port P] [--tunnel-port P] [--name NAME]

Starts TunnelServer and TunnelClient from DIR/src/*/bin/Release/net10.0 (build it first), each in its own
session (as run-local.sh does), on 127.0.0.1 with the ports below, the client relaying to the
running TestBackend (127.0.0.1:$BACKEND_PORT) with $CLIENT_CONCURRENCY backend slots. Waits until a ping through
it answers, prints the argument for compare.sh, then runs until SIGTERM/Ctrl-C and stops both.

  --tree DIR          checkout whose build to run (default: this one, $REPO_ROOT)
  --public-port P     the variant's public port (default 12200)
  --tunnel-port P     the variant's tunnel port (default 12201)
  --name NAME         the target's name in compare.sh's output (default: variant)
  --server-arg ARG    one more TunnelServer argument (repeat), e.g. --server-arg --credentials=FILE
  --client-arg ARG    one more TunnelClient argument (repeat), e.g. --client-arg --uplinks=2
Logs go to a new /tmp/tunnel2-variant-* folder, named on start. If either process exits, the other is
stopped and the script exits 1.

Example:
  git worktree add ../b some-branch && (cd ../b && dotnet build -c Release)
  $0 --tree ../b &      # prints: --extra variant=http://127.0.0.1:12200/session/...@PID,PID
  tunnel2-load-tests/scripts/compare.sh --backends testbackend --extra variant=...
EOF
}

TREE="$REPO_ROOT" VARIANT_PUBLIC=12200 VARIANT_TUNNEL=12201 NAME=variant
SERVER_ARGS=()
CLIENT_ARGS=()
while (($#)); do
  case "$1" in
    --tree) TREE="$(cd "$2" && pwd)"; shift ;;
    --public-port) VARIANT_PUBLIC="$2"; shift ;;
    --tunnel-port) VARIANT_TUNNEL="$2"; shift ;;
    --name) NAME="$2"; shift ;;
    --server-arg) SERVER_ARGS+=("$2"); shift ;;
    --client-arg) CLIENT_ARGS+=("$2"); shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done

bin() { echo "$TREE/src/$1/bin/Release/net10.0/$1.dll"; }
for project in TunnelServer TunnelClient; do
  [[ -f "$(bin "$project")" ]] || die "$(bin "$project") is missing: build $TREE in Release first" 2
done
for port in "$VARIANT_PUBLIC" "$VARIANT_TUNNEL"; do
  port_in_use "$port" && die "port $port is in use" 2
done
answers "$DIRECT_BASE/loadtest/ping" pong || die "no TestBackend answers on $DIRECT_BASE (start run-local.sh first)"

LOG_DIR="$(mktemp -d "/tmp/tunnel2-variant-XXXXXX")"
PIDS=()   # server, then client
# The client first, as run-local.sh does, so that it drains against a server that is still there.
stop_all() { local i; for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do stop_pid "variant process" "${PIDS[i]}" 15; done; PIDS=(); }
check_alive() { local pid; for pid in "${PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || die "a variant process exited (logs in $LOG_DIR)"; done; }
trap 'stop_all; exit 0' INT TERM
trap 'stop_all' EXIT

(cd "$(dirname "$(bin TunnelServer)")" && exec $SETSID dotnet "$(bin TunnelServer)" --environment Development \
  --public-url "http://127.0.0.1:$VARIANT_PUBLIC" --tunnel-url "http://127.0.0.1:$VARIANT_TUNNEL" "${SERVER_ARGS[@]}") \
  </dev/null >"$LOG_DIR/server.log" 2>&1 &
PIDS+=($!)
(cd "$(dirname "$(bin TunnelClient)")" && exec $SETSID dotnet "$(bin TunnelClient)" --environment Development \
  --server "http://127.0.0.1:$VARIANT_TUNNEL" --backend "$DIRECT_BASE" --session "$SESSION" \
  --max-concurrency "$CLIENT_CONCURRENCY" "${CLIENT_ARGS[@]}") \
  </dev/null >"$LOG_DIR/client.log" 2>&1 &
PIDS+=($!)

URL="http://127.0.0.1:$VARIANT_PUBLIC/session/$SESSION"
deadline=$((SECONDS + 60))
until answers "$URL/loadtest/ping" pong; do
  check_alive
  ((SECONDS < deadline)) || die "no pong through the variant within 60 s (logs in $LOG_DIR)"
  sleep 0.2
done
log "ready from $TREE (logs in $LOG_DIR)"
echo "--extra $NAME=$URL@${PIDS[0]},${PIDS[1]}"
while :; do
  sleep 1 & wait $!
  check_alive
done
