#!/usr/bin/env bash
# The systemd units, checked without a running systemd (CI has none): systemd-analyze verify over each unit in a
# temporary root that holds the system's own units, the kit's units and drop-in at their /etc/systemd/system paths,
# and stub executables where ExecStart expects /usr/bin/TunnelServer, /usr/bin/TunnelClient (where the release's .deb
# puts them) and /usr/bin/caddy. A unit passes when verify exits 0 and says nothing (an unknown key is only a warning
# to systemd).
# Then the hardening the kit promises is read back from the files, and a broken copy must fail the same check.
# Installs systemd with apt-get when systemd-analyze is missing (as root). Ends with one line "N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")" || exit 1
KIT=$(pwd)
passed=0
failed=0
ROOT=$(mktemp -d /tmp/tunnel2-systemd.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT

log() { printf '[systemd-test] %s\n' "$*"; }
check() { # name, then a command that must succeed
  local name=$1
  shift
  if "$@"; then log "ok: $name"; passed=$((passed + 1)); else log "NOT OK: $name"; failed=$((failed + 1)); fi
}

if ! command -v systemd-analyze >/dev/null; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends systemd >/dev/null; } || log "apt-get install systemd failed"
  fi
  command -v systemd-analyze >/dev/null || { log "systemd-analyze is missing (apt-get install systemd)"; echo "0 passed, 1 failed"; exit 1; }
fi
log "$(systemd-analyze --version | head -n 1)"

# The temporary root: the system's units (targets such as sysinit.target), the kit's files, stub executables.
mkdir -p "$ROOT/usr/lib/systemd" "$ROOT/etc/systemd/system/caddy.service.d" "$ROOT/etc/tunnel2" "$ROOT/usr/bin"
cp -a /usr/lib/systemd/system "$ROOT/usr/lib/systemd/"
[[ -f "$ROOT/usr/lib/systemd/system/caddy.service" ]] || cat >"$ROOT/usr/lib/systemd/system/caddy.service" <<'UNIT'
# A stand-in for Debian's caddy.service (apt-get install caddy), when caddy is not installed here.
[Unit]
Description=Caddy
After=network.target network-online.target
Requires=network-online.target
[Service]
Type=notify
User=caddy
Group=caddy
ExecStart=/usr/bin/caddy run --environ --config /etc/caddy/Caddyfile
ExecReload=/usr/bin/caddy reload --config /etc/caddy/Caddyfile --force
TimeoutStopSec=5s
AmbientCapabilities=CAP_NET_BIND_SERVICE
[Install]
WantedBy=multi-user.target
UNIT
for stub in usr/bin/TunnelServer usr/bin/TunnelClient usr/bin/caddy; do
  printf '#!/bin/sh\nexit 0\n' >"$ROOT/$stub"
  chmod 755 "$ROOT/$stub"
done
cp "$KIT/tunnel2-server.service" "$ROOT/etc/systemd/system/"
cp "$KIT/tunnel2-client@.service" "$ROOT/etc/systemd/system/"
cp "$KIT/caddy.service.d/tunnel2.conf" "$ROOT/etc/systemd/system/caddy.service.d/"
cp "$KIT/examples/server.env" "$ROOT/etc/tunnel2/server.env"
cp "$KIT/examples/client-demo.env" "$ROOT/etc/tunnel2/client-demo.env"
cp "$KIT/examples/edge.env" "$ROOT/etc/tunnel2/edge.env"

verify() { # UNIT: systemd-analyze verify exits 0 and prints nothing
  local out status
  out=$(cd "$ROOT/etc/systemd/system" && systemd-analyze --root="$ROOT" verify "$1" 2>&1)
  status=$?
  [[ -n "$out" ]] && printf '  %s\n' "$out"
  [[ $status -eq 0 && -z "$out" ]]
}

check "systemd-analyze verify tunnel2-server.service" verify tunnel2-server.service
check "systemd-analyze verify tunnel2-client@demo.service (the template, instance demo)" verify tunnel2-client@demo.service
check "systemd-analyze verify caddy.service with the drop-in caddy.service.d/tunnel2.conf" verify caddy.service

# What the kit promises, read back from the unit files.
has() { grep -qxF "$2" "$KIT/$1"; }
for unit in tunnel2-server.service tunnel2-client@.service; do
  check "$unit: DynamicUser, ProtectSystem=strict, NoNewPrivileges, no capabilities, secrets from an EnvironmentFile, Restart=on-failure" \
    bash -c "$(declare -f has); KIT='$KIT'; has $unit DynamicUser=yes && has $unit ProtectSystem=strict && has $unit NoNewPrivileges=yes \
      && has $unit CapabilityBoundingSet= && has $unit AmbientCapabilities= && grep -q '^EnvironmentFile=/etc/tunnel2/' '$KIT/$unit' \
      && has $unit Restart=on-failure"
  stop=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)s$/\1/p' "$KIT/$unit")
  # The servers' drain is 30 s by default and their host stops at the drain plus 10 s (TunnelServerApp/TunnelClientApp.ShutdownTimeout).
  check "$unit: TimeoutStopSec (${stop:-none} s) is above the default drain's stop budget (30 s + 10 s)" test "${stop:-0}" -gt 40
done

# The check can fail: a copy with a misspelt key is caught.
sed 's/^ProtectSystem=strict$/ProtectSytem=strict/' "$KIT/tunnel2-server.service" >"$ROOT/etc/systemd/system/tunnel2-broken.service"
check "a unit with a misspelt key (ProtectSytem) fails the same verify" bash -c "$(declare -f verify); ROOT='$ROOT'; ! verify tunnel2-broken.service >/dev/null"

echo "$passed passed, $failed failed"
((failed == 0))
