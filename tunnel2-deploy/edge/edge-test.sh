#!/usr/bin/env bash
# The edge for real, on loopback: Caddy (Debian's caddy) with this folder's Caddyfile in front of TunnelServer, getting
# its certificates from pebble (Let's Encrypt's test ACME server, Debian's pebble) with pebble-challtestsrv as the DNS
# that answers every name with 127.0.0.1. Pebble validates for real (HTTP-01 and TLS-ALPN-01 against Caddy's
# unprivileged ports). Checks: a session host gets a pebble-issued certificate and the backend's answer; HTTP/2 and a
# WebSocket echo through the edge; the visitor's address reaches the backend; an unknown name gets no certificate and
# the ask says no; the ask sits behind TunnelServer's admin token, which Caddy's ask URL carries; a custom domain
# works; the uplink comes through the edge (WebSocket transport); a second request and a restarted Caddy reuse the
# stored certificate with no new order. Installs caddy and pebble with apt-get when
# missing (as root); builds TestBackend, TunnelServer and TunnelClient (Release) when not built. Every wait has a
# timeout; everything started is stopped on exit. Ends with one line "N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
REPO_ROOT=$(pwd)
KIT="$REPO_ROOT/tunnel2-deploy/edge"
LOG_NAME=edge-test
START_TIMEOUT=${TUNNEL2_START_TIMEOUT:-90}
STOP_TIMEOUT=15
# shellcheck source=../lib/processes.sh
. "$REPO_ROOT/tunnel2-deploy/lib/processes.sh"

WORK=$(mktemp -d /tmp/tunnel2-edge.XXXXXX)
passed=0
failed=0
summarized=0
SUFFIX=edge.tunnel2.test         # --host-suffix, and the edge's own name (it names no session)
CUSTOM=app.customer.test          # a custom domain of session demo
TOKEN="edge-test-token-$RANDOM$RANDOM"
ADMIN_TOKEN="edge-test-admin-token-$RANDOM$RANDOM" # the ask behind it too: Caddy's ask URL carries it (TUNNEL2_ASK_QUERY)

summary() {
  ((summarized)) && return 0
  summarized=1
  echo "$passed passed, $failed failed"
}
finish() {
  local status=$?
  stop_all
  if ((failed > 0 || status != 0)) || [[ -n "${TUNNEL2_EDGE_KEEP:-}" ]]; then
    log "logs kept in $WORK"
  else
    rm -rf "$WORK"
  fi
  # A wait that timed out exits from processes.sh's wait_until: count it as a failed check.
  if ((status != 0 && failed == 0)); then failed=1; fi
  summary
}
trap finish EXIT
trap 'log "interrupted"; exit 1' INT TERM HUP

check() { # name, then a command that must succeed
  local name=$1
  shift
  if "$@"; then log "ok: $name"; passed=$((passed + 1)); else log "NOT OK: $name"; failed=$((failed + 1)); fi
}
give_up() { err "$*"; failed=$((failed + 1)); exit 1; }
# free_ports N: N distinct free loopback ports below the kernel's ephemeral range (32768 up), so that no outgoing
# connection of another process takes one as its local port between this choice and the bind.
free_ports() {
  python3 -c '
import random, socket, sys
chosen = []
while len(chosen) < int(sys.argv[1]):
    port = random.randint(20000, 32000)
    if port in chosen:
        continue
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        chosen.append(port)
    except OSError:
        pass
    finally:
        s.close()
print(" ".join(map(str, chosen)))' "$1"
}

# --- packages -------------------------------------------------------------------------------------------------------
missing=()
command -v caddy >/dev/null || missing+=(caddy)
command -v pebble >/dev/null || command -v pebble-challtestsrv >/dev/null || missing+=(pebble)
command -v openssl >/dev/null || missing+=(openssl)
command -v curl >/dev/null || missing+=(curl)
command -v unshare >/dev/null || missing+=(util-linux)
if ((${#missing[@]})); then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    log "installing ${missing[*]} (apt-get)"
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } || give_up "apt-get install ${missing[*]} failed"
  else
    give_up "missing: ${missing[*]} (as root: apt-get install ${missing[*]})"
  fi
fi
[[ "$(id -u)" == 0 ]] || give_up "run as root: TunnelClient runs in a mount namespace of its own whose /etc/hosts names the edge"
log "caddy $(caddy version | cut -d' ' -f1), pebble from Debian $(dpkg-query -W -f='${Version}' pebble 2>/dev/null)"

# --- builds ---------------------------------------------------------------------------------------------------------
dll() { echo "$REPO_ROOT/src/$1/bin/Release/net10.0/$1.dll"; }
for project in TestBackend TunnelServer TunnelClient; do
  if [[ ! -f "$(dll "$project")" || -n "${TUNNEL2_EDGE_BUILD:-}" ]]; then
    log "building src/$project (Release)"
    dotnet build "src/$project" -c Release --nologo -v quiet >"$WORK/build-$project.log" 2>&1 || give_up "dotnet build src/$project failed: $WORK/build-$project.log"
  fi
done

# --- ports, names, the CA that pebble's own HTTPS listener uses ------------------------------------------------------
read -r backend_port public_port tunnel_port admin_port http_port https_port caddy_admin \
  acme_port pebble_mgmt dns_port challtest_mgmt < <(free_ports 11)
log "ports: backend $backend_port, public $public_port, tunnel $tunnel_port, admin $admin_port, caddy http $http_port https $https_port, pebble $acme_port, dns $dns_port"

openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=pebble test listener" \
  -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -keyout "$WORK/pebble-listener.key" -out "$WORK/pebble-listener.pem" \
  >/dev/null 2>&1 || give_up "openssl could not make pebble's listener certificate"
cat >"$WORK/pebble-config.json" <<JSON
{ "pebble": { "listenAddress": "127.0.0.1:$acme_port", "managementListenAddress": "127.0.0.1:$pebble_mgmt",
  "certificate": "$WORK/pebble-listener.pem", "privateKey": "$WORK/pebble-listener.key",
  "httpPort": $http_port, "tlsPort": $https_port, "ocspResponderURL": "", "externalAccountBindingRequired": false } }
JSON
printf '127.0.0.1 localhost\n127.0.0.1 %s\n' "$SUFFIX" >"$WORK/hosts"

# --- pebble and its DNS ---------------------------------------------------------------------------------------------
start challtestsrv "$WORK/challtestsrv.log" "$WORK" pebble-challtestsrv -dns01 "127.0.0.1:$dns_port" -http01 "" -https01 "" \
  -tlsalpn01 "" -management "127.0.0.1:$challtest_mgmt" -defaultIPv4 127.0.0.1 -defaultIPv6 ""
# PEBBLE_VA_NOSLEEP: validate at once instead of after up to 15 s; PEBBLE_WFE_NONCEREJECT=0: no made-up badNonce.
start pebble "$WORK/pebble.log" "$WORK" env PEBBLE_VA_NOSLEEP=1 PEBBLE_WFE_NONCEREJECT=0 \
  pebble -config "$WORK/pebble-config.json" -dnsserver "127.0.0.1:$dns_port"
wait_until "pebble's directory" curl -fsS --max-time 2 --cacert "$WORK/pebble-listener.pem" "https://127.0.0.1:$acme_port/dir"
curl -fsS --max-time 5 --cacert "$WORK/pebble-listener.pem" "https://127.0.0.1:$pebble_mgmt/roots/0" -o "$WORK/pebble-root.pem" \
  || give_up "could not fetch pebble's root certificate"

# --- the tunnel -----------------------------------------------------------------------------------------------------
start TestBackend "$WORK/backend.log" "$(dirname "$(dll TestBackend)")" dotnet "$(dll TestBackend)" --urls "http://127.0.0.1:$backend_port"
start TunnelServer "$WORK/server.log" "$(dirname "$(dll TunnelServer)")" dotnet "$(dll TunnelServer)" --token "$TOKEN" \
  --public-url "http://127.0.0.1:$public_port" --tunnel-url "http://127.0.0.1:$tunnel_port" --admin-url "http://127.0.0.1:$admin_port" \
  --admin-token "$ADMIN_TOKEN" \
  --certificate-ask true --host-suffix "$SUFFIX" "--ProxyEntry:Routing:Hosts:$CUSTOM=demo" --trusted-proxy 127.0.0.1/32
admin_get() { curl -sS --max-time 5 -H "Authorization: Bearer $ADMIN_TOKEN" "http://127.0.0.1:$admin_port$1" "${@:2}"; }
ask_status() { admin_get "/edge/ask?domain=$1" -o /dev/null -w '%{http_code}'; }
wait_until "TunnelServer's admin listener" admin_get /healthz -f

# --- Caddy, with the kit's Caddyfile as it is -----------------------------------------------------------------------
# SSL_CERT_FILE: Caddy (Go) trusts pebble's listener only; nothing else is reachable here anyway.
caddy_env=(env SSL_CERT_FILE="$WORK/pebble-listener.pem" XDG_CONFIG_HOME="$WORK/caddy-config" XDG_DATA_HOME="$WORK/caddy-data"
  TUNNEL2_EDGE_HOST="$SUFFIX" TUNNEL2_PUBLIC_PORT="$public_port" TUNNEL2_TUNNEL_PORT="$tunnel_port" TUNNEL2_ADMIN_PORT="$admin_port"
  TUNNEL2_ASK_QUERY="access_token=$ADMIN_TOKEN"
  TUNNEL2_ACME_CA="https://127.0.0.1:$acme_port/dir" TUNNEL2_EDGE_HTTP_PORT="$http_port" TUNNEL2_EDGE_HTTPS_PORT="$https_port"
  TUNNEL2_EDGE_ADMIN="127.0.0.1:$caddy_admin" TUNNEL2_EDGE_BIND=127.0.0.1 TUNNEL2_EDGE_STORAGE="$WORK/caddy-storage")
start_caddy() { # LOGFILE
  start Caddy "$1" "$WORK" "${caddy_env[@]}" caddy run --config "$KIT/Caddyfile" --adapter caddyfile
}
start_caddy "$WORK/caddy.log"

# edge URL PATH: curl through Caddy for NAME, which resolves to 127.0.0.1, trusting only pebble's root.
edge_curl() {
  local name=$1 path=$2
  shift 2
  curl -sS --max-time 10 --resolve "$name:$https_port:127.0.0.1" --cacert "$WORK/pebble-root.pem" "$@" "https://$name:$https_port$path"
}
answers_pong() { [[ "$(edge_curl "$1" /loadtest/ping 2>/dev/null)" == pong ]]; }
wait_until "Caddy's certificate for its own name ($SUFFIX)" edge_curl "$SUFFIX" /healthz -f

# The client reaches the edge by name: a mount namespace of its own with an /etc/hosts that names it 127.0.0.1.
# shellcheck disable=SC2016 # $0 and $@ are the inner shell's: the hosts file, then the client's command line
start TunnelClient "$WORK/client.log" "$(dirname "$(dll TunnelClient)")" unshare -m sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' \
  "$WORK/hosts" dotnet "$(dll TunnelClient)" --server "https://$SUFFIX:$https_port" --transport websocket \
  --ca-certificate "$WORK/pebble-root.pem" --session demo --token "$TOKEN" --backend "http://127.0.0.1:$backend_port"
wait_until "the client's uplink through the edge" admin_get /api/sessions/demo -f

# --- checks ---------------------------------------------------------------------------------------------------------
orders() { grep -c 'Issued certificate serial' "$WORK/pebble.log"; }
issuer_of() { # NAME: the issuer of the certificate the edge shows for it
  openssl s_client -connect "127.0.0.1:$https_port" -servername "$1" </dev/null 2>/dev/null | openssl x509 -noout -issuer 2>/dev/null
}

check "the uplink came through the edge over TLS (WebSocket transport, seen by TunnelServer as from Caddy)" \
  grep -q '"transport":"websocket"' <<<"$(admin_get /api/sessions/demo)"

before_demo=$(orders)
if wait_until "demo.$SUFFIX through the edge" answers_pong "demo.$SUFFIX"; then :; fi
check "demo.$SUFFIX: the backend's answer over a certificate that verifies against pebble's root" answers_pong "demo.$SUFFIX"
issuer=$(issuer_of "demo.$SUFFIX")
log "demo.$SUFFIX certificate issuer: $issuer"
check "demo.$SUFFIX: the certificate was issued by pebble" grep -q "Pebble Intermediate CA" <<<"$issuer"
check "demo.$SUFFIX: pebble issued one certificate for it (orders $before_demo -> $(orders))" test "$(orders)" -eq $((before_demo + 1))
check "demo.$SUFFIX: the ask said yes" grep -q "Edge certificate ask: yes for demo.$SUFFIX" "$WORK/server.log"

# Real validation (PEBBLE_VA_ALWAYS_VALID is not set): pebble connected to Caddy's ports and Caddy answered the challenge.
check "pebble validated for real: Caddy answered its challenges ($(grep -c 'served key authentication' "$WORK/caddy.log") key authentications served)" \
  grep -q 'served key authentication' "$WORK/caddy.log"

h2=$(edge_curl "demo.$SUFFIX" /loadtest/ping --http2 -o /dev/null -w '%{http_version}' 2>&1)
check "HTTP/2 through the edge (curl --http2 got HTTP/$h2)" test "$h2" = 2

check "a WebSocket echo through the edge (wss://demo.$SUFFIX/loadtest/ws)" \
  python3 "$KIT/ws_echo_check.py" "demo.$SUFFIX" 127.0.0.1 "$https_port" /loadtest/ws "$WORK/pebble-root.pem" "hello through the edge"

# The visitor calls from 127.0.0.2, Caddy from 127.0.0.1: with --trusted-proxy 127.0.0.1/32 the backend sees .2.
forwarded=$(edge_curl "demo.$SUFFIX" /loadtest/get --interface 127.0.0.2 -H 'X-Forwarded-For: 203.0.113.9' 2>&1)
log "the backend saw X-Forwarded-For: $(python3 -c 'import json,sys; print(json.load(sys.stdin)["headers"].get("X-Forwarded-For"))' <<<"$forwarded" 2>&1)"
check "the visitor's address (127.0.0.2) reaches the backend, and a spoofed X-Forwarded-For does not" \
  python3 -c 'import json,sys; v=json.load(sys.stdin)["headers"].get("X-Forwarded-For",""); sys.exit(0 if v.split(",")[-1].strip()=="127.0.0.2" and "203.0.113.9" not in v else 1)' <<<"$forwarded"

before_custom=$(orders)
wait_until "the custom domain $CUSTOM" answers_pong "$CUSTOM"
check "custom domain $CUSTOM: the backend's answer over a pebble certificate" answers_pong "$CUSTOM"
check "custom domain $CUSTOM: one new order (orders $before_custom -> $(orders))" test "$(orders)" -eq $((before_custom + 1))

before_unknown=$(orders)
check "an unknown name (nope.example.net) gets no certificate: the TLS handshake fails" \
  bash -c "! curl -sS --max-time 10 --resolve nope.example.net:$https_port:127.0.0.1 --cacert '$WORK/pebble-root.pem' https://nope.example.net:$https_port/ -o /dev/null 2>/dev/null"
check "an unknown name: the ask says no (404)" \
  test "$(ask_status nope.example.net)" = 404
check "a name under the suffix that is no session (under_score.$SUFFIX): the ask says no (404)" \
  test "$(ask_status "under_score.$SUFFIX")" = 404
check "the ask without the admin token: 401" \
  test "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$admin_port/edge/ask?domain=demo.$SUFFIX")" = 401
check "an unknown name: no order reached pebble (orders $before_unknown -> $(orders))" test "$(orders)" -eq "$before_unknown"
check "an unknown name: pebble never saw it" bash -c "! grep -q nope.example.net '$WORK/pebble.log'"

before_again=$(orders)
check "a second request to demo.$SUFFIX: the backend's answer" answers_pong "demo.$SUFFIX"
check "a second request: no new order (orders $before_again -> $(orders))" test "$(orders)" -eq "$before_again"

# A restarted Caddy has nothing in memory: the certificates must come from its storage, again with no order.
stored=$(find "$WORK/caddy-storage/certificates" -name '*.crt' | wc -l)
log "certificates in Caddy's storage: $stored"
check "Caddy's storage holds the three certificates (edge, demo, custom domain)" test "$stored" -eq 3
for caddy_index in "${!NAMES[@]}"; do [[ "${NAMES[caddy_index]}" == Caddy ]] && break; done
kill -TERM "${PIDS[caddy_index]}" 2>/dev/null
wait "${PIDS[caddy_index]}" 2>/dev/null
unset 'PIDS[caddy_index]' 'NAMES[caddy_index]' 'LOGS[caddy_index]'
PIDS=("${PIDS[@]}") NAMES=("${NAMES[@]}") LOGS=("${LOGS[@]}")
start_caddy "$WORK/caddy-restarted.log"
wait_until "Caddy, restarted, serving demo.$SUFFIX" answers_pong "demo.$SUFFIX"
check "after a Caddy restart: demo.$SUFFIX and $CUSTOM answer from the stored certificates" answers_pong "$CUSTOM"
check "after a Caddy restart: no new order (orders $before_again -> $(orders))" test "$(orders)" -eq "$before_again"
check "after a Caddy restart: Caddy obtained nothing, it loaded from storage" bash -c "! grep -q 'obtaining' '$WORK/caddy-restarted.log'"

if ((failed > 0)); then
  for i in "${!NAMES[@]}"; do show_log_tail "${NAMES[i]}" "${LOGS[i]}"; done
fi
summary
((failed == 0))
