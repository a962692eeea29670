#!/usr/bin/env bash
# Runs the dev stack's compose file for real, as CI does: installs docker.io, docker-compose and debootstrap when they
# are missing (as root, from Debian), starts a Docker engine of its own when none answers (data and exec roots in a
# temp folder, stopped at the end), makes a base image from a Debian root file system (debootstrap --variant=minbase,
# from this machine's Debian source: no image registry is needed), publishes TunnelServer and TunnelClient as Native
# AOT and TestBackend self-contained, builds the images (tunnel2-deploy/docker/Prebuilt.Dockerfile through
# docker-compose.ci.yml), brings up TestBackend, TunnelServer and TunnelClient, waits for their health, runs
# `ab -n 500 -c 50` through the tunnel container and one request per TestBackend endpoint, prints the image sizes; then
# brings up the cluster topology (tunnel2-deploy/cluster/docker-compose.yml: three nodes, HAProxy from an image made
# the same way with Debian's haproxy, a client with an uplink to each) and sends load through HAProxy while a node
# stops; and takes it all down (containers, the projects' networks, the images). Ends with one line "N passed, N failed".
#
#   tunnel2-deploy/dev/compose-test.sh [--keep-engine]
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
root=$(pwd)
compose_dir="$root/tunnel2-deploy/dev"
work=$(mktemp -d /tmp/tunnel2-compose.XXXXXX)
project="tunnel2ci$$"
session=22222222-2222-2222-2222-222222222222
public=http://127.0.0.1:12000
passed=0
failed=0
own_engine_pid=""
had_bridge=0

log() { printf '[compose-test] %s\n' "$*"; }
check() { # name, then a command that must succeed
  local name=$1; shift
  if "$@"; then log "ok: $name"; passed=$((passed + 1)); else log "NOT OK: $name"; failed=$((failed + 1)); fi
}
give_up() { log "$*"; echo "$passed passed, $((failed + 1)) failed"; exit 1; }
# unmount_under DIR: every mount at or below DIR, deepest first. debootstrap can leave its target's /proc mounted (a
# package's script keeping it busy under load): tarring or deleting through a live /proc never ends well.
unmount_under() {
  findmnt -rn -o TARGET | grep -E "^$1(/|\$)" | sort -r | while read -r mounted; do
    umount "$mounted" 2>/dev/null || umount -l "$mounted" 2>/dev/null
  done
}
compose() { docker-compose -p "$project" -f "$compose_dir/docker-compose.yml" -f "$compose_dir/docker-compose.ci.yml" "$@"; }
cluster_dir="$root/tunnel2-deploy/cluster"
cluster() { docker-compose -p "${project}c" -f "$cluster_dir/docker-compose.yml" -f "$cluster_dir/docker-compose.ci.yml" "$@"; }
cluster_started=""

cleanup() {
  if [ -n "$cluster_started" ]; then
    cluster down --volumes --rmi local --timeout 10 >/dev/null 2>&1
  fi
  if [ -n "${TUNNEL2_PREBUILT:-}" ]; then
    compose down --volumes --rmi local --timeout 10 >/dev/null 2>&1
  fi
  if [ -n "$own_engine_pid" ]; then
    kill -TERM "$own_engine_pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$own_engine_pid" 2>/dev/null || break; sleep 0.2; done
    umount "$work"/engine/data/overlay2/*/merged 2>/dev/null
    # The engine leaves its default bridge behind; remove it when this run made it.
    [ "$had_bridge" = 1 ] || ip link delete docker0 2>/dev/null
  fi
  unmount_under "$work"
  rm -rf --one-file-system "$work" 2>/dev/null
}
trap cleanup EXIT

# ---- tools -------------------------------------------------------------------------------------------------------
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)   # the engine; a docker CLI alone (as /usr/local/bin may hold) is not enough
command -v docker-compose >/dev/null || missing+=(docker-compose)
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v ab >/dev/null || missing+=(apache2-utils)
{ command -v clang >/dev/null || command -v gcc >/dev/null; } || missing+=(gcc)
[ -e /usr/include/zlib.h ] || missing+=(zlib1g-dev)
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || give_up "missing ${missing[*]}, and not root to install them (apt-get install ${missing[*]})"
  log "installing ${missing[*]} from Debian"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}") >/dev/null 2>&1 \
    || give_up "apt-get install ${missing[*]} failed"
fi

# ---- engine ------------------------------------------------------------------------------------------------------
if ! docker info >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || give_up "no Docker engine answers, and not root to start one"
  log "starting a Docker engine of its own (data in $work/engine)"
  ip link show docker0 >/dev/null 2>&1 && had_bridge=1
  mkdir -p "$work/engine"
  dockerd --data-root "$work/engine/data" --exec-root "$work/engine/exec" --pidfile "$work/engine/docker.pid" \
    -H "unix://$work/engine/docker.sock" >"$work/engine/dockerd.log" 2>&1 &
  own_engine_pid=$!
  export DOCKER_HOST="unix://$work/engine/docker.sock"
  for _ in $(seq 1 150); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
  docker info >/dev/null 2>&1 || { tail -5 "$work/engine/dockerd.log"; give_up "the Docker engine did not start"; }
fi

# ---- base images: Debian root file systems made here -------------------------------------------------------------
# debian_image IMAGE PACKAGES: debootstrap --variant=minbase with PACKAGES from this machine's Debian source, imported.
debian_image() {
  local image=$1 packages=$2 mirror suite rootfs
  docker image inspect "$image" >/dev/null 2>&1 && return 0
  mirror=$(grep -hoE '^URIs: *http[^ ]*debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | sed 's/^URIs: *//')
  [ -n "$mirror" ] || mirror=$(grep -hoE '^deb +http[^ ]+' /etc/apt/sources.list 2>/dev/null | head -1 | awk '{print $2}')
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
  suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  rootfs="$work/rootfs-${image//[:\/]/-}"
  log "making $image: debootstrap --variant=minbase --include=$packages $suite from $mirror (a few minutes)"
  debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -5 "$work/debootstrap.log"; give_up "debootstrap failed"; }
  # Package caches and lists, translations, manual and info pages: nothing the applications read (copyrights stay).
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
    "$rootfs"/usr/share/locale/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/*
  unmount_under "$rootfs"
  tar -C "$rootfs" --one-file-system -c . | docker import - "$image" >/dev/null || give_up "docker import of $image failed"
  rm -rf "$rootfs"
}
export TUNNEL2_BASE_IMAGE=tunnel2/base:bookworm
debian_image "$TUNNEL2_BASE_IMAGE" wget,ca-certificates

# ---- the applications, published outside Docker ------------------------------------------------------------------
export TUNNEL2_PREBUILT="$work/publish"
mkdir -p "$TUNNEL2_PREBUILT"
cp tunnel2-deploy/docker/Prebuilt.Dockerfile "$TUNNEL2_PREBUILT/"
for app in TunnelServer TunnelClient; do
  log "publishing $app as Native AOT"
  dotnet publish "src/$app" -c Release --use-current-runtime -p:PublishAot=true --nologo -v quiet -o "$TUNNEL2_PREBUILT/$app" >"$work/publish-$app.log" 2>&1 \
    || { tail -20 "$work/publish-$app.log"; give_up "publishing $app failed"; }
  rm -f "$TUNNEL2_PREBUILT/$app"/*.dbg
done
log "publishing TestBackend self-contained"
dotnet publish src/TestBackend -c Release --use-current-runtime --self-contained --nologo -v quiet -o "$TUNNEL2_PREBUILT/TestBackend" >"$work/publish-TestBackend.log" 2>&1 \
  || { tail -20 "$work/publish-TestBackend.log"; give_up "publishing TestBackend failed"; }

# ---- up, health, traffic -----------------------------------------------------------------------------------------
log "building the images and starting test_backend, tunnel_server and tunnel_client (project $project)"
compose build test_backend tunnel_server tunnel_client >"$work/build.log" 2>&1 || { tail -20 "$work/build.log"; give_up "docker-compose build failed"; }
compose up -d test_backend tunnel_server tunnel_client >"$work/up.log" 2>&1 || { tail -20 "$work/up.log"; give_up "docker-compose up failed"; }

healthy() { [ "$(docker inspect -f '{{.State.Health.Status}}' "$(compose ps -q "$1")" 2>/dev/null)" = healthy ]; }
all_healthy() { healthy test_backend && healthy tunnel_server && healthy tunnel_client; }
for _ in $(seq 1 120); do all_healthy && break; sleep 1; done
check "test_backend, tunnel_server and tunnel_client report healthy" all_healthy

ports_on_loopback() { ! docker ps --filter "label=com.docker.compose.project=$project" --format '{{.Ports}}' | grep -q '0\.0\.0\.0:\|:::'; }
check "published ports are bound to 127.0.0.1 only" ports_on_loopback

# ab_run URL N C: all N complete, none failed, none non-2xx.
ab_run() {
  ab -n "$2" -c "$3" -q "$1" >"$work/ab.txt" 2>&1 || return 1
  grep -E '^(Complete|Failed) requests|^Non-2xx|^Requests per second' "$work/ab.txt" | sed 's/^/  /'
  grep -q "^Complete requests: *$2\$" "$work/ab.txt" && grep -q '^Failed requests: *0' "$work/ab.txt" && ! grep -q '^Non-2xx' "$work/ab.txt"
}
check "ab -n 500 -c 50 through the tunnel container: 500 complete, 0 failed" ab_run "$public/session/$session/loadtest/ping" 500 50

endpoints() {
  local base="$public/session/$session" ok=0
  [ "$(curl -s "$base/loadtest/ping")" = pong ] || { log "  /loadtest/ping"; ok=1; }
  curl -sf "$base/loadtest/get?x=1" | grep -q '"x"' || { log "  /loadtest/get"; ok=1; }
  [ "$(curl -s -X POST --data-binary 'echoed' "$base/loadtest/echo")" = echoed ] || { log "  /loadtest/echo"; ok=1; }
  [ "$(curl -s "$base/loadtest/bytes/100000" | wc -c)" -eq 100000 ] || { log "  /loadtest/bytes"; ok=1; }
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/loadtest/status/418")" = 418 ] || { log "  /loadtest/status"; ok=1; }
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/loadtest/delay/50")" = 200 ] || { log "  /loadtest/delay"; ok=1; }
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/loadtest/fast")" = 200 ] || { log "  /loadtest/fast"; ok=1; }
  curl -sf "$base/loadtest/info" | grep -q '/loadtest/ping' || { log "  /loadtest/info"; ok=1; }
  curl -sf "$base/loadtest/stats" | grep -q 'activeWaits' || { log "  /loadtest/stats"; ok=1; }
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/loadtest/ws")" = 426 ] || { log "  /loadtest/ws (a plain GET: 426)"; ok=1; }
  [ "$(curl -s "$base/loadtest/sse?n=2&intervalMs=0" | grep -c '^data:')" -eq 2 ] || { log "  /loadtest/sse"; ok=1; }
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/healthz")" = 200 ] || { log "  /healthz"; ok=1; }
  return $ok
}
check "one request per TestBackend endpoint through the tunnel" endpoints

if [ "$failed" -ne 0 ]; then
  compose logs --tail 20 >"$work/compose.log" 2>&1; tail -40 "$work/compose.log"
fi

# ---- the cluster: three nodes behind HAProxy, a client with an uplink to each -------------------------------------
export TUNNEL2_HAPROXY_IMAGE=tunnel2/haproxy:bookworm
debian_image "$TUNNEL2_HAPROXY_IMAGE" haproxy
log "building and starting the cluster (project ${project}c)"
cluster_started=1
cluster build >"$work/cluster-build.log" 2>&1 || { tail -20 "$work/cluster-build.log"; give_up "docker-compose build of the cluster failed"; }
cluster up -d >"$work/cluster-up.log" 2>&1 || { tail -20 "$work/cluster-up.log"; give_up "docker-compose up of the cluster failed"; }
balancer=http://127.0.0.1:12040/session/$session/loadtest/ping
cluster_healthy() { [ "$(docker inspect -f '{{.State.Health.Status}}' "$(cluster ps -q tunnel_client)" 2>/dev/null)" = healthy ]; }
# Every node up in HAProxy (its checks pass once a node's warm-up is over).
nodes_up() { [ "$(curl -fsS --max-time 2 'http://127.0.0.1:12049/;csv' 2>/dev/null | awk -F, '$1 == "nodes" && $2 ~ /^node-/ && $18 == "UP"' | wc -l)" -eq 3 ]; }
for _ in $(seq 1 120); do cluster_healthy && nodes_up && break; sleep 1; done
check "cluster: the client serves the session through every node, and HAProxy has the three nodes up" eval 'cluster_healthy && nodes_up'
check "cluster: ab -n 500 -c 50 through HAProxy: 500 complete, 0 failed" ab_run "$balancer" 500 50
three_nodes_answer() {
  [ "$(for _ in $(seq 1 30); do curl -s -D - -o /dev/null "$balancer" | tr -d '\r' | awk -F': ' 'tolower($1) == "tunnel2-node" {print $2}'; done | sort -u | wc -l)" -eq 3 ]
}
check "cluster: HAProxy spreads requests over node-1, node-2 and node-3 (Tunnel2-Node)" three_nodes_answer
node_stops_under_load() {
  ab -n 20000 -c 20 -q "$balancer" >"$work/ab-stop.txt" 2>&1 &
  local load=$!
  sleep 1
  cluster stop -t 30 node_2 >/dev/null 2>&1
  wait "$load" || return 1
  cluster start node_2 >/dev/null 2>&1
  grep -E '^(Complete|Failed) requests|^Non-2xx' "$work/ab-stop.txt" | sed 's/^/  /'
  grep -q '^Complete requests: *20000$' "$work/ab-stop.txt" && grep -q '^Failed requests: *0' "$work/ab-stop.txt" && ! grep -q '^Non-2xx' "$work/ab-stop.txt"
}
check "cluster: node_2 stopped (SIGTERM, drain) during ab -n 20000 -c 20 through HAProxy: 0 failed" node_stops_under_load
if [ "$failed" -ne 0 ]; then
  cluster logs --tail 20 >"$work/cluster.log" 2>&1; tail -60 "$work/cluster.log"
fi

log "image sizes:"
docker images --format '  {{.Repository}}:{{.Tag}} {{.Size}}' | grep -E 'tunnel2/' | sort
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
