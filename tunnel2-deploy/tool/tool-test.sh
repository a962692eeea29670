#!/usr/bin/env bash
# TunnelClient as a .NET tool, as a user gets it: packs it (package Tunnel2.Client, command tunnel2), installs it
# globally from the local package folder, then checks `tunnel2 --help`, that an unknown option exits 2, and the short
# form `tunnel2 http <port> --server … --token …` against a TunnelServer and a TestBackend on loopback: it must log its
# public URL, and a request there must reach the backend. Everything it starts is stopped, and the tool uninstalled,
# at the end. Ends with one line "N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
work=$(mktemp -d)
pids=()
passed=0
failed=0
token="tool-test-token-$RANDOM$RANDOM"

log() { printf '[tool-test] %s\n' "$*"; }
check() { # name, then the command that must succeed
  local name=$1; shift
  if "$@"; then log "ok: $name"; passed=$((passed + 1)); else log "NOT OK: $name"; failed=$((failed + 1)); fi
}
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  dotnet tool uninstall --global Tunnel2.Client >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { # seconds, then a command that succeeds once ready
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do [ "$SECONDS" -ge "$deadline" ] && return 1; sleep 0.2; done
}

log "packing and installing the tool"
{ dotnet build src/TunnelServer -c Release --nologo -v quiet && dotnet build src/TestBackend -c Release --nologo -v quiet; } >/dev/null || { log "build failed"; echo "0 passed, 1 failed"; exit 1; }
dotnet pack src/TunnelClient -c Release --nologo -v quiet -o "$work/packages" >/dev/null || { log "dotnet pack failed"; echo "0 passed, 1 failed"; exit 1; }
package=$(basename "$work"/packages/Tunnel2.Client.*.nupkg .nupkg)
version=${package#Tunnel2.Client.}
dotnet tool uninstall --global Tunnel2.Client >/dev/null 2>&1
if ! dotnet tool install --global Tunnel2.Client --version "$version" --add-source "$work/packages"; then
  log "dotnet tool install failed"; echo "0 passed, 1 failed"; exit 1
fi
tool="${DOTNET_CLI_HOME:-$HOME}/.dotnet/tools/tunnel2"

check "tunnel2 --help shows the short form" bash -c "'$tool' --help | grep -q 'tunnel2 http <port'"
check "tunnel2 --tokne exits 2 naming it" bash -c "'$tool' --tokne x 2>&1 | grep -q \"unknown option '--tokne'; did you mean '--token'?\"; [ \${PIPESTATUS[0]} -eq 2 ]"

backend_port=$(free_port); public_port=$(free_port); tunnel_port=$(free_port)
dotnet src/TestBackend/bin/Release/net10.0/TestBackend.dll --urls "http://127.0.0.1:$backend_port" >"$work/backend.log" 2>&1 &
pids+=($!)
dotnet src/TunnelServer/bin/Release/net10.0/TunnelServer.dll --token "$token" \
  --public-url "http://127.0.0.1:$public_port" --tunnel-url "http://127.0.0.1:$tunnel_port" >"$work/server.log" 2>&1 &
pids+=($!)
wait_for 30 curl -sf -o /dev/null "http://127.0.0.1:$backend_port/loadtest/ping" || log "the backend did not start"
wait_for 30 curl -s -o /dev/null "http://127.0.0.1:$public_port/" || log "the server did not start"

"$tool" http "$backend_port" --server "http://127.0.0.1:$tunnel_port" --token "$token" >"$work/tool.log" 2>&1 &
pids+=($!)
forwarding() { grep -oE 'Forwarding http://[^ ]+' "$work/tool.log" | head -1 | cut -d' ' -f2; }
check "tunnel2 http <port> logs its public URL" wait_for 30 bash -c "grep -q 'Forwarding http://' '$work/tool.log'"
url=$(forwarding)
log "public URL: ${url:-none}"
check "a request to the public URL reaches the backend" bash -c "[ -n '$url' ] && [ \"\$(curl -s '${url}loadtest/ping')\" = pong ]"

if [ "$failed" -ne 0 ]; then
  log "tool output:"; tail -20 "$work/tool.log"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
