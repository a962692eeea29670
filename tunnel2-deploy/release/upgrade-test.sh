#!/usr/bin/env bash
# What callers see while a TunnelServer is upgraded, measured with the release's own executables (no SDK):
# GETs at a fixed rate (fixed_rate.py beside this script, default 200 req/s) through the tunnel while the server's binary is replaced and the
# server restarted as systemd would (`systemctl restart`: SIGTERM, which drains, wait for the exit, start the new
# binary). Each node runs from a link, node-N/current -> releases/<version>, as in docs/deploy.md's tarball layout;
# the upgrade points the link at the other unpacked release and restarts.
#
#   pair    two nodes behind HAProxy (tunnel2-deploy/cluster/haproxy.cfg: /healthz checks, retries of idempotent
#           requests on 503 and refused connections), one TunnelClient with an uplink to each: node-1 is upgraded,
#           serves again, then node-2. The target: 0 failed.
#   single  one node, callers straight at it, no balancer: what the restart costs there (counted, not a target).
#
#   tunnel2-deploy/release/upgrade-test.sh [--release DIR] [--scenario "pair single"] [--rate 200] [--seconds 60] [--keep]
#
# Needs the release (build-release.sh; its linux-x64 archives), python3 (the backend, python3 -m http.server, and the
# load, fixed_rate.py: a new connection per GET, so a refused connection is one failed request), haproxy and curl:
# installed from Debian when missing, as root. Everything runs on
# 127.0.0.1 and is stopped at the end (--keep keeps the logs). All load comes from one address, so the nodes' limit
# per visitor address (100 a second by default, docs/security.md) is turned off; every other setting is the default.
# Exit 0 when the pair scenario had no failed request.
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
repo=$(pwd)
release="$repo/artifacts/release"
scenarios="pair single"
keep=0
rate=200
duration=60
while [ $# -gt 0 ]; do
  case "$1" in
    --release) release=$(realpath -m "$2"); shift 2 ;;
    --scenario) scenarios=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --seconds) duration=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "upgrade-test: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

log() { printf '[upgrade-test %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
give_up() { log "$*"; exit 1; }
wait_for() { # seconds, then a command that succeeds once ready
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do [ "$SECONDS" -ge "$deadline" ] && return 1; sleep 0.2; done
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
answers() { [ "$(curl -s --max-time 2 "$1")" = "$2" ]; }
healthy() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1/healthz")" = 200 ]; }
haproxy_up() { curl -s --max-time 2 "http://$TUNNEL2_HAPROXY_STATS/;csv" | grep -q "^nodes,$1,.*,UP,"; }

missing=()
command -v haproxy >/dev/null || missing+=(haproxy)
command -v curl >/dev/null || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || give_up "missing ${missing[*]} (apt-get install ${missing[*]})"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}") >/dev/null 2>&1 \
    || give_up "apt-get install ${missing[*]} failed"
fi
server_archive=$(find "$release" -maxdepth 1 -name 'tunnel2-server-*-linux-x64.tar.gz' | head -1)
client_archive=$(find "$release" -maxdepth 1 -name 'tunnel2-client-*-linux-x64.tar.gz' | head -1)
{ [ -n "$server_archive" ] && [ -n "$client_archive" ]; } || give_up "no linux-x64 archives in $release (run build-release.sh)"
version=$(basename "$server_archive" -linux-x64.tar.gz); version=${version#tunnel2-server-}

work=$(mktemp -d /tmp/tunnel2-upgrade.XXXXXX)
pids=()
node_pids=()
stop_all() {
  local pid
  for pid in "${node_pids[@]}" "${pids[@]}"; do [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; done
  for pid in "${node_pids[@]}" "${pids[@]}"; do [ -n "$pid" ] && wait "$pid" 2>/dev/null; done
  node_pids=(); pids=()
}
backend_pid=""
trap 'stop_all; [ -n "$backend_pid" ] && kill -TERM "$backend_pid" 2>/dev/null; if [ "$keep" = 1 ]; then log "logs kept in $work"; else rm -rf "$work"; fi' EXIT
trap 'exit 130' INT TERM

# Two unpacked releases: "old" and "new" (the same build here: what is measured is the restart, not a change).
for which in old new; do
  mkdir -p "$work/releases/$which"
  tar -C "$work/releases/$which" --strip-components=1 -xzf "$server_archive" || give_up "cannot unpack $server_archive"
done
mkdir -p "$work/client" && tar -C "$work/client" --strip-components=1 -xzf "$client_archive"
token="upgrade-test-$RANDOM$RANDOM$RANDOM"
session=upgrade
mkdir -p "$work/www" && echo ok >"$work/www/ping.txt"
backend_port=$(free_port)
(cd "$work/www" && exec python3 -m http.server --bind 127.0.0.1 "$backend_port") >"$work/backend.log" 2>&1 &
backend_pid=$!
wait_for 15 answers "http://127.0.0.1:$backend_port/ping.txt" ok || give_up "python3 -m http.server did not start"

# start_node N: node-N from its current link, as systemd's ExecStart would.
start_node() {
  local n=$1
  "$work/node-$n/current/TunnelServer" --token "$token" --node-name "node-$n" --node-header true \
    --public-url "http://127.0.0.1:${public_ports[$n]}" --tunnel-url "http://127.0.0.1:${tunnel_ports[$n]}" \
    --warm-up 00:00:04 --trusted-proxy 127.0.0.1/32 --ProxyEntry:RateLimits:PerVisitor:PerSecond=0 >>"$work/node-$n.log" 2>&1 &
  node_pids[n]=$!
}
# upgrade_node N: the link to the new release, then what `systemctl restart` does: SIGTERM (the drain), wait, start.
upgrade_node() {
  local n=$1 t0=$SECONDS code=0
  ln -sfn "$work/releases/new" "$work/node-$n/current"
  kill -TERM "${node_pids[$n]}"
  wait "${node_pids[$n]}" || code=$?
  log "  node-$n: drained and exited (code $code) after $((SECONDS - t0)) s; starting the new binary"
  start_node "$n"
  wait_for 60 answers "http://127.0.0.1:${public_ports[$n]}/session/$session/ping.txt" ok \
    || { log "  node-$n did not serve the session again within 60 s"; return 1; }
  wait_for 30 healthy "http://127.0.0.1:${public_ports[$n]}" || { log "  node-$n not healthy within 30 s"; return 1; }
  log "  node-$n: serving the session again and healthy, $((SECONDS - t0)) s after its SIGTERM"
  # Behind the balancer, the next node may go only once the balancer sends to this one again.
  if [ "$nodes" -gt 1 ]; then
    wait_for 30 haproxy_up "node-$n" || { log "  HAProxy did not mark node-$n UP within 30 s"; return 1; }
    log "  node-$n: UP in HAProxy again, $((SECONDS - t0)) s after its SIGTERM"
  fi
}

summary=()
pair_failed=""
for scenario in $scenarios; do
  case "$scenario" in pair) nodes=2 ;; single) nodes=1 ;; *) give_up "unknown scenario $scenario" ;; esac
  log "scenario $scenario: $nodes node(s), TunnelServer $version (linux-x64 archive), GETs at $rate req/s for $duration s"
  public_ports=() tunnel_ports=() servers=()
  for n in $(seq 1 "$nodes"); do
    public_ports[n]=$(free_port); tunnel_ports[n]=$(free_port)
    mkdir -p "$work/node-$n"; ln -sfn "$work/releases/old" "$work/node-$n/current"; : >"$work/node-$n.log"
    start_node "$n"
    servers+=(--server "http://127.0.0.1:${tunnel_ports[$n]}")
  done
  for n in $(seq 1 "$nodes"); do
    wait_for 30 healthy "http://127.0.0.1:${public_ports[$n]}" || log "node-$n did not answer /healthz within 30 s"
  done
  "$work/client/TunnelClient" "${servers[@]}" --session "$session" --token "$token" --backend "http://127.0.0.1:$backend_port" \
    --TunnelClient:Uplink:ReconnectMaxDelay=00:00:02 >"$work/client-$scenario.log" 2>&1 &
  pids+=($!)
  url_base="http://127.0.0.1:${public_ports[1]}"
  if [ "$nodes" = 2 ]; then
    haproxy_port=$(free_port); tcp_port=$(free_port); stats_port=$(free_port); absent_port=$(free_port)
    export TUNNEL2_HAPROXY_BIND="127.0.0.1:$haproxy_port" TUNNEL2_HAPROXY_STATS="127.0.0.1:$stats_port" \
      TUNNEL2_NODE1="127.0.0.1:${public_ports[1]}" TUNNEL2_NODE2="127.0.0.1:${public_ports[2]}" \
      TUNNEL2_NODE3="127.0.0.1:$absent_port" TUNNEL2_HAPROXY_TCP_BIND="127.0.0.1:$tcp_port-$tcp_port" \
      TUNNEL2_TCP_NODE1=127.0.0.1 TUNNEL2_TCP_NODE2=127.0.0.1 TUNNEL2_TCP_NODE3=127.0.0.1
    haproxy -db -f tunnel2-deploy/cluster/haproxy.cfg >"$work/haproxy.log" 2>&1 &
    pids+=($!)
    url_base="http://127.0.0.1:$haproxy_port"
  fi
  for n in $(seq 1 "$nodes"); do
    wait_for 30 answers "http://127.0.0.1:${public_ports[$n]}/session/$session/ping.txt" ok || give_up "node-$n does not serve the session"
  done
  wait_for 30 answers "$url_base/session/$session/ping.txt" ok || give_up "the session does not answer at $url_base"
  # Past the warm-up (the nodes' /healthz says 503 for 4 s after a start) and HAProxy's two good checks.
  wait_for 30 healthy "$url_base" || true
  if [ "$nodes" = 2 ]; then
    { wait_for 30 haproxy_up node-1 && wait_for 30 haproxy_up node-2; } || log "HAProxy does not show both nodes UP"
  fi

  command=(python3 tunnel2-deploy/release/fixed_rate.py "$url_base/session/$session/ping.txt" --rate "$rate" --seconds "$duration")
  log "  ${command[*]}"
  "${command[@]}" >"$work/load-$scenario.txt" 2>&1 &
  load_pid=$!
  load_started=$SECONDS
  # A few seconds of steady load before the upgrade (a measurement choice, not a wait for readiness).
  sleep 5
  upgrade_ok=1
  for n in $(seq 1 "$nodes"); do upgrade_node "$n" || upgrade_ok=0; done
  upgraded_at=$((SECONDS - load_started))
  wait "$load_pid"
  [ "$upgraded_at" -lt "$duration" ] || { log "  the upgrade ended after the load ($upgraded_at s): not measured"; upgrade_ok=0; }
  read -r total ok2xx bad < <(sed -n -E 's/^sent ([0-9]+), ok ([0-9]+) \(2xx\), failed ([0-9]+)$/\1 \2 \3/p' "$work/load-$scenario.txt")
  total=${total:-0}; ok2xx=${ok2xx:-0}; bad=${bad:-$total}
  sed 's/^/  /' "$work/load-$scenario.txt"
  line="$scenario: $total requests at $rate req/s over $duration s, $bad failed (not 2xx or no answer), every node upgraded: $([ "$upgrade_ok" = 1 ] && echo yes || echo NO)"
  log "$line"
  summary+=("$line")
  if [ "$scenario" = pair ]; then
    { [ "$bad" -eq 0 ] && [ "$total" -gt 0 ] && [ "$upgrade_ok" = 1 ]; } && pair_failed=0 || pair_failed=1
  fi
  stop_all
done
kill -TERM "$backend_pid" 2>/dev/null; wait "$backend_pid" 2>/dev/null

log "summary (TunnelServer $version):"
printf '  %s\n' "${summary[@]}"
[ "${pair_failed:-0}" = 0 ]
