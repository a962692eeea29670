#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Raw TCP tunnels (docs/tcp.md) next to the same servers reached directly, through one and two chained nginx `stream`
# hops and through OpenSSH's reverse forward (`ssh -R`, the tunnel's own shape: two relay processes, one multiplexed
# connection between them), in one sitting: redis-benchmark (SET and GET, 50 clients), pgbench (select-only, 10
# clients) and 1 GiB each way with iperf3. Starts everything it measures itself (redis-server, a scratch PostgreSQL, an
# iperf3 server, nginx, a loopback sshd with throwaway keys, and a TunnelServer with one TunnelClient per service) and
# stops it at the end. Runs alternate between the targets, in a different order each round, so that the machine's
# noise hits every target alike.
set -euo pipefail

LT_NAME=tcp-bench
SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$SCRIPT_DIR/lib/common.sh"

ROUNDS="${TCP_BENCH_ROUNDS:-3}"
REQUESTS="${TCP_BENCH_REQUESTS:-100000}"    # redis-benchmark -n, per test (SET, GET)
PG_SECONDS="${TCP_BENCH_PG_SECONDS:-5}"     # pgbench -T
PG_SCALE="${TCP_BENCH_PG_SCALE:-1}"         # pgbench -i -s
PG_THREADS="${TCP_BENCH_PG_THREADS:-2}"     # pgbench -j
BYTES="${TCP_BENCH_BYTES:-1073741824}"      # iperf3 -n, each way
TESTS=(redis-set redis-get pgbench bulk-up bulk-down)
TARGETS=(direct nginx nginx2 ssh tunnel)
VARIANTS=()      # "NAME=TREE"
PAIRS=()         # "NAME=ENTRY_COMMAND|AGENT_COMMAND"
BUILD=1
TOOL_TIMEOUT=180 # seconds any one benchmark run may take

usage() {
  cat <<EOF
Usage: tunnel2-load-tests/scripts/tcp-bench.sh [--rounds N] [--requests N] [--pg-seconds S] [--bytes N]
         [--tests "redis-set redis-get pgbench bulk-up bulk-down"] [--targets "..."] [--variant NAME=TREE]...
         [--pair NAME='ENTRY_COMMAND|AGENT_COMMAND']... [--no-build]

Per round, per test, per target (the targets' order turns each round):
  redis-set, redis-get  redis-benchmark -q -t set (then -t get) -c 50 -n REQUESTS     requests/s
  pgbench               pgbench -n -S -c 10 -j $PG_THREADS -T PG_SECONDS (scale $PG_SCALE)     transactions/s
  bulk-up               iperf3 -n BYTES: the caller sends to the target                 MB/s (10^6 bytes/s)
  bulk-down             iperf3 -n BYTES -R: the target sends to the caller               MB/s
Targets, all on 127.0.0.1 and on free ports:
  direct   redis-server, PostgreSQL (initdb into a scratch folder; run as user postgres under root), iperf3 -s
  nginx    one nginx 'stream' hop (proxy_pass, 2 workers, Debian's libnginx-mod-stream) in front of each
  nginx2   two chained stream hops in the same nginx (caller -> hop 2 -> hop 1 -> server): a tunnel's shape
  ssh      OpenSSH's reverse forward, per service: Debian's sshd on a free loopback port with a host key and a
           throwaway user key made in the report folder, and 'ssh -N -c aes128-gcm@openssh.com -R PORT:SERVER'
           as the current user; CPU counts the ssh client and every sshd process (the sessions' children)
  tunnel   this checkout's Release build: one TunnelServer (--tcp-ports) and one TunnelClient per service
           (--tcp), each a process in its own session, the client's TCP port read from its log
  --variant NAME=TREE  one more TunnelServer + TunnelClients from TREE's Release build (another checkout, or a
           copy of one's src/*/bin/Release), e.g. the "before" of an A/B run, or an identical build for the noise
  --pair NAME='ENTRY_COMMAND|AGENT_COMMAND'  one more relay pair per service, e.g. a prototype: ENTRY_COMMAND
           listens for callers on {listen} and for its agent on {link}; AGENT_COMMAND dials {link} and the server
           at {target} (host:port). The placeholders are replaced, then each command is split at spaces (no
           quoting; use 'env NAME=VALUE ...' for environment). CPU is counted as 'entry' and 'agent'.
Prints per test and target: the median, its ratio to direct, to one and two nginx hops and to ssh (and to
tunnel, with variants), the runs, and per operation (request, transaction or MB) the CPU µs and the context
switches (voluntary + involuntary, of the threads alive at the end of a run) of each relay process: the tunnel's,
nginx's workers, ssh's, a pair's; from /proc over the runs. Then the data-plane issue's targets: redis GET and
bulk both ways >= ssh and >= two nginx hops.

  --rounds N        rounds (default $ROUNDS)
  --requests N      redis-benchmark -n per test (default $REQUESTS)
  --pg-seconds S    pgbench -T (default $PG_SECONDS)
  --bytes N         iperf3 -n per direction (default $BYTES, 1 GiB)
  --tests "..."     a subset of the tests above
  --targets "..."   a subset of direct, nginx, nginx2, ssh, tunnel and the variants' and pairs' names (default: all)
  --no-build        use the Release build as it is (default: dotnet build TunnelServer and TunnelClient first,
                    unless no source file is newer than their dlls)
With the defaults a sitting takes about 8 minutes (one warm-up run per test and target first, not measured).
Environment: TCP_BENCH_ROUNDS, TCP_BENCH_REQUESTS, TCP_BENCH_PG_SECONDS, TCP_BENCH_PG_SCALE, TCP_BENCH_PG_THREADS,
TCP_BENCH_BYTES.
Needs (installed with apt-get when missing and run as root): redis-server, redis-tools, postgresql, nginx,
libnginx-mod-stream, iperf3, openssh-server, openssh-client, python3; and the .NET 10 SDK. Only what the chosen
tests and targets use is started (PostgreSQL only for pgbench, sshd only for ssh, the tunnel only for tunnel).
Reports: tunnel2-load-tests/reports/<UTC timestamp>-tcp-bench/ (runs.txt, summary.txt, every process's log).
Exit 0 when every run completed (all requests, transactions and bytes), 1 otherwise.
EOF
}

TARGETS_ASKED=""
while (($#)); do
  case "$1" in
    --rounds) ROUNDS="$2"; shift ;;
    --requests) REQUESTS="$2"; shift ;;
    --pg-seconds) PG_SECONDS="$2"; shift ;;
    --bytes) BYTES="$2"; shift ;;
    --tests) read -r -a TESTS <<<"$2"; shift ;;
    --targets) TARGETS_ASKED="$2"; shift ;;
    --variant) VARIANTS+=("$2"); shift ;;
    --pair) PAIRS+=("$2"); shift ;;
    --no-build) BUILD=0 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
  shift
done
for n in ROUNDS REQUESTS PG_SECONDS PG_SCALE PG_THREADS BYTES; do
  [[ "${!n}" =~ ^[1-9][0-9]*$ ]] || die "$n must be a positive number, got '${!n}'" 2
done
for t in "${TESTS[@]}"; do
  [[ " redis-set redis-get pgbench bulk-up bulk-down " == *" $t "* ]] || die "unknown test '$t' (see --help)" 2
done

# Tunnel builds by target name: "tunnel" is this checkout, each --variant another tree.
declare -A TREE=([tunnel]="$REPO_ROOT")
for v in "${VARIANTS[@]}"; do
  [[ "$v" =~ ^([a-z0-9_-]+)=(.+)$ ]] || die "--variant takes NAME=TREE, got '$v'" 2
  name="${BASH_REMATCH[1]}"
  [[ -z "${TREE[$name]:-}" && " ${TARGETS[*]} " != *" $name "* ]] || die "--variant: '$name' is taken; choose another name" 2
  [[ -d "${BASH_REMATCH[2]}" ]] || die "--variant $name: '${BASH_REMATCH[2]}' is not a folder" 2
  TREE[$name]="$(cd "${BASH_REMATCH[2]}" && pwd)"
  TARGETS+=("$name")
done
declare -A PAIR=()   # name -> "ENTRY_COMMAND|AGENT_COMMAND"
for p in "${PAIRS[@]}"; do
  [[ "$p" =~ ^([a-z0-9_-]+)=([^|]+)\|([^|]+)$ ]] || die "--pair takes NAME='ENTRY_COMMAND|AGENT_COMMAND', got '$p'" 2
  name="${BASH_REMATCH[1]}"
  [[ " ${TARGETS[*]} " != *" $name "* ]] || die "--pair: '$name' is taken; choose another name" 2
  [[ "${BASH_REMATCH[2]}" == *"{listen}"* && "${BASH_REMATCH[2]}" == *"{link}"* && "${BASH_REMATCH[3]}" == *"{link}"* \
    && "${BASH_REMATCH[3]}" == *"{target}"* ]] || die "--pair $name: the entry needs {listen} and {link}, the agent {link} and {target}" 2
  PAIR[$name]="${BASH_REMATCH[2]}|${BASH_REMATCH[3]}"
  TARGETS+=("$name")
done
if [[ -n "$TARGETS_ASKED" ]]; then
  read -r -a asked <<<"$TARGETS_ASKED"
  for t in "${asked[@]}"; do
    [[ " ${TARGETS[*]} " == *" $t "* ]] || die "unknown target '$t' (direct, nginx, nginx2, ssh, tunnel, a --variant's or --pair's name)" 2
  done
  TARGETS=("${asked[@]}")
fi
TUNNELS=()
for t in "${TARGETS[@]}"; do [[ -n "${TREE[$t]:-}" ]] && TUNNELS+=("$t"); done
has_target() { [[ " ${TARGETS[*]} " == *" $1 "* ]]; }
service_of() { case "$1" in redis-*) echo redis ;; pgbench) echo pg ;; bulk-*) echo bulk ;; esac; }
SERVICES=()   # the servers the chosen tests need: redis, pg, bulk
for t in "${TESTS[@]}"; do
  s="$(service_of "$t")"
  [[ " ${SERVICES[*]} " == *" $s "* ]] || SERVICES+=("$s")
done
has_service() { [[ " ${SERVICES[*]} " == *" $1 "* ]]; }

dll() { echo "$1/src/$2/bin/Release/net10.0/$2.dll"; }

# ---------------------------------------------------------------------------------------------------------------------
# Tools and the build
# ---------------------------------------------------------------------------------------------------------------------
ensure_tool python3 python3
has_service redis && ensure_tool redis-server redis-server && ensure_tool redis-benchmark redis-tools
has_service bulk && ensure_tool iperf3 iperf3
ensure_tool setsid util-linux
if ((${#PAIRS[@]})); then ensure_tool ss iproute2; fi
PG_BIN=""
if has_service pg; then
  PG_BIN="$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)"
  if [[ -z "$PG_BIN" || ! -x "$PG_BIN/initdb" ]]; then
    ensure_tool pg_ctlcluster postgresql
    PG_BIN="$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d | sort -V | tail -n 1)"
  fi
  [[ -x "$PG_BIN/initdb" && -x "$PG_BIN/pgbench" ]] || die "no PostgreSQL server programs under /usr/lib/postgresql/*/bin" 127
fi
if has_target ssh; then
  ensure_tool ssh openssh-client
  ensure_tool ssh-keygen openssh-client
  [[ -x /usr/sbin/sshd ]] || ensure_tool /usr/sbin/sshd openssh-server
fi
NGINX_STREAM_MODULE=/usr/lib/nginx/modules/ngx_stream_module.so
if { has_target nginx || has_target nginx2; } && ensure_tool nginx nginx && [[ ! -f "$NGINX_STREAM_MODULE" ]]; then
  [[ "$(id -u)" == 0 ]] || die "nginx's stream module is missing. Install it with: sudo apt-get install libnginx-mod-stream" 127
  log "nginx's stream module is missing; installing Debian package libnginx-mod-stream"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libnginx-mod-stream >&2 \
    || die "apt-get install libnginx-mod-stream failed"
fi

# True when both dlls exist and no source or build file under src/ is newer than them.
tunnel_build_is_fresh() {
  local project dll
  for project in TunnelServer TunnelClient; do
    dll="$(dll "$REPO_ROOT" "$project")"
    [[ -f "$dll" ]] || return 1
    [[ -z "$(find "$REPO_ROOT/src" "$REPO_ROOT"/Directory.*.props \( -path '*/bin' -o -path '*/obj' \) -prune -o \
      -type f -newer "$dll" \( -name '*.cs' -o -name '*.csproj' -o -name '*.props' -o -name '*.json' \) -print -quit)" ]] || return 1
  done
}
if [[ -n "${TREE[tunnel]:-}" && " ${TUNNELS[*]} " == *" tunnel "* ]] && ((BUILD)) && ! tunnel_build_is_fresh; then
  command -v dotnet >/dev/null 2>&1 || die "'dotnet' is not on PATH; the build needs the .NET 10 SDK" 127
  log "building TunnelServer and TunnelClient (Release)"
  for project in TunnelServer TunnelClient; do
    dotnet build "$REPO_ROOT/src/$project/$project.csproj" -c Release -nologo -v quiet >&2 || die "the build of $project failed"
  done
fi
for t in "${TUNNELS[@]}"; do
  for project in TunnelServer TunnelClient; do
    [[ -f "$(dll "${TREE[$t]}" "$project")" ]] || die "$(dll "${TREE[$t]}" "$project") is missing: build ${TREE[$t]} in Release first" 2
  done
done

# ---------------------------------------------------------------------------------------------------------------------
# Processes started here
# ---------------------------------------------------------------------------------------------------------------------
REPORT_DIR="$LT_DIR/reports/$(utc_stamp)-tcp-bench"
mkdir -p "$REPORT_DIR"
STARTED=()     # "name pid", stopped in reverse order at the end
PG_DIR=""

# start_server NAME LOG DIR COMMAND...: COMMAND in DIR, in a session of its own (lib/common.sh), in the background.
start_server() {
  local name="$1" logfile="$2" dir="$3"
  shift 3
  (cd "$dir" && exec $SETSID "$@") </dev/null >"$logfile" 2>&1 &
  STARTED+=("$name $!")
}

last_pid() { local last="${STARTED[-1]}"; echo "${last##* }"; }

# PostgreSQL's server programs refuse to run as root; under root they run as user postgres.
AS_POSTGRES=()
[[ "$(id -u)" == 0 ]] && AS_POSTGRES=(runuser -u postgres --)
as_postgres() { "${AS_POSTGRES[@]}" "$@"; }

# shellcheck disable=SC2317  # reached through the EXIT trap, which shellcheck does not follow
cleanup() {
  local i
  stop_child
  [[ -n "$PG_DIR" && -d "$PG_DIR/data" ]] && as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
  for ((i = ${#STARTED[@]} - 1; i >= 0; i--)); do
    stop_pid "${STARTED[i]% *}" "${STARTED[i]##* }" 15   # "name (may have spaces) pid"
  done
  STARTED=()
  [[ -n "$PG_DIR" ]] && rm -rf "$PG_DIR"
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_ports N: N loopback ports nobody listens on now.
free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# wait_port NAME PID PORT SECONDS LOG: until PORT accepts a connection; stops the script if PID exits or time runs out.
wait_port() {
  local name="$1" pid="$2" port="$3" deadline=$((SECONDS + $4))
  until port_in_use "$port"; do
    kill -0 "$pid" 2>/dev/null || die "$name exited (see $5)"
    ((SECONDS < deadline)) || die "$name did not listen on :$port within $4 s (see $5)"
    sleep 0.2
  done
}

read -r REDIS_PORT PG_PORT IPERF_PORT <<<"$(free_ports 3)"
declare -A PORT=()   # "target service" -> the port a caller dials
PORT[direct redis]=$REDIS_PORT PORT[direct pg]=$PG_PORT PORT[direct bulk]=$IPERF_PORT
declare -A CPU_PIDS=()  # "target service" -> "name:pid ..." whose CPU is counted

log "reports in $REPORT_DIR"
if has_service redis; then
  start_server redis-server "$REPORT_DIR/redis.log" "$REPORT_DIR" \
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no
  wait_port redis-server "$(last_pid)" "$REDIS_PORT" 10 "$REPORT_DIR/redis.log"
fi

if has_service bulk; then
  start_server iperf3 "$REPORT_DIR/iperf3-server.log" "$REPORT_DIR" iperf3 -s -B 127.0.0.1 -p "$IPERF_PORT"
  wait_port "iperf3 -s" "$(last_pid)" "$IPERF_PORT" 10 "$REPORT_DIR/iperf3-server.log"
fi

if has_service pg; then
  PG_DIR="$(mktemp -d /tmp/tunnel2-tcp-bench-pg-XXXXXX)"
  [[ "$(id -u)" == 0 ]] && chown postgres:postgres "$PG_DIR"
  as_postgres "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U postgres --no-sync >"$REPORT_DIR/initdb.log" 2>&1 \
    || die "initdb failed (see $REPORT_DIR/initdb.log)"
  start_server postgres "$REPORT_DIR/postgres.log" "$PG_DIR" "${AS_POSTGRES[@]}" "$PG_BIN/postgres" -D "$PG_DIR/data" \
    -p "$PG_PORT" -k "$PG_DIR" -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200
  wait_port postgres "$(last_pid)" "$PG_PORT" 30 "$REPORT_DIR/postgres.log"
  log "pgbench -i -s $PG_SCALE"
  "$PG_BIN/pgbench" -i -q -s "$PG_SCALE" -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres >"$REPORT_DIR/pgbench-init.log" 2>&1 \
    || die "pgbench -i failed (see $REPORT_DIR/pgbench-init.log)"
fi

# nginx: one master with two workers holds every hop; two hops chain through it twice (hop 2 -> hop 1 -> server).
if has_target nginx || has_target nginx2; then
  mkdir -p "$REPORT_DIR/nginx/logs"
  servers=""
  for service in "${SERVICES[@]}"; do
    read -r hop1 hop2 <<<"$(free_ports 2)"
    PORT[nginx $service]=$hop1 PORT[nginx2 $service]=$hop2
    servers+="  server { listen 127.0.0.1:$hop1; proxy_pass 127.0.0.1:${PORT[direct $service]}; }
  server { listen 127.0.0.1:$hop2; proxy_pass 127.0.0.1:$hop1; }
"
  done
  cat >"$REPORT_DIR/nginx/nginx.conf" <<CONF
load_module $NGINX_STREAM_MODULE;
worker_processes 2;
pid $REPORT_DIR/nginx/nginx.pid;
error_log $REPORT_DIR/nginx/logs/error.log warn;
events { worker_connections 4096; }
stream {
$servers}
CONF
  start_server nginx "$REPORT_DIR/nginx/logs/stdout.log" "$REPORT_DIR/nginx" \
    nginx -c "$REPORT_DIR/nginx/nginx.conf" -p "$REPORT_DIR/nginx" -g 'daemon off;'
  nginx_pid="$(last_pid)"
  wait_port nginx "$nginx_pid" "${PORT[nginx2 ${SERVICES[-1]}]}" 10 "$REPORT_DIR/nginx/logs"
  workers="$(pgrep -P "$nginx_pid" | sed 's/^/nginx:/' | tr '\n' ' ')"
  for service in "${SERVICES[@]}"; do CPU_PIDS[nginx $service]="$workers" CPU_PIDS[nginx2 $service]="$workers"; done
fi

# descendants PID: the pids of PID's children, their children, and so on.
descendants() {
  local child
  for child in $(pgrep -P "$1" || true); do
    echo "$child"
    descendants "$child"
  done
}

# ssh -R: Debian's sshd on a free loopback port, configured and keyed from the report folder, and per service one
# 'ssh -N -R' (its own connection) as the current user with a throwaway key, AES-128-GCM as the issue measured it.
if has_target ssh; then
  SSH_DIR="$REPORT_DIR/ssh"
  mkdir -p "$SSH_DIR"
  chmod 700 "$SSH_DIR"
  ssh-keygen -q -t ed25519 -N "" -f "$SSH_DIR/host_key" -C tcp-bench-host
  ssh-keygen -q -t ed25519 -N "" -f "$SSH_DIR/user_key" -C tcp-bench-user
  cp "$SSH_DIR/user_key.pub" "$SSH_DIR/authorized_keys"
  read -r SSHD_PORT <<<"$(free_ports 1)"
  cat >"$SSH_DIR/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $SSHD_PORT
HostKey $SSH_DIR/host_key
PidFile $SSH_DIR/sshd.pid
AuthorizedKeysFile $SSH_DIR/authorized_keys
AllowUsers $(id -un)
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowTcpForwarding remote
GatewayPorts no
X11Forwarding no
PrintMotd no
Ciphers aes128-gcm@openssh.com
Compression no
CONF
  [[ "$(id -u)" == 0 ]] && mkdir -p /run/sshd   # the privilege separation folder, which only the service unit makes
  start_server sshd "$SSH_DIR/sshd.log" "$SSH_DIR" /usr/sbin/sshd -D -e -f "$SSH_DIR/sshd_config"
  sshd_pid="$(last_pid)"
  wait_port sshd "$sshd_pid" "$SSHD_PORT" 10 "$SSH_DIR/sshd.log"
  ssh_pids=""
  for service in "${SERVICES[@]}"; do
    read -r forwarded <<<"$(free_ports 1)"
    start_server "ssh -R ($service)" "$SSH_DIR/ssh-$service.log" "$SSH_DIR" ssh -N -F /dev/null -p "$SSHD_PORT" \
      -i "$SSH_DIR/user_key" -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no \
      -o UserKnownHostsFile="$SSH_DIR/known_hosts" -o ExitOnForwardFailure=yes -o Compression=no \
      -c aes128-gcm@openssh.com -R "127.0.0.1:$forwarded:127.0.0.1:${PORT[direct $service]}" "$(id -un)@127.0.0.1"
    wait_port "ssh -R ($service)" "$(last_pid)" "$forwarded" 20 "$SSH_DIR/ssh-$service.log"
    PORT[ssh $service]=$forwarded
    ssh_pids+="ssh:$(last_pid) "
  done
  sshd_pids="$(descendants "$sshd_pid" | sed 's/^/sshd:/' | tr '\n' ' ')"
  for service in "${SERVICES[@]}"; do CPU_PIDS[ssh $service]="$sshd_pids$ssh_pids"; done
  log "ssh -R ready: sshd :$SSHD_PORT, $(for s in "${SERVICES[@]}"; do printf '%s :%s ' "$s" "${PORT[ssh $s]}"; done)"
fi

# wait_listening NAME PID PORT SECONDS LOG: like wait_port, but from the kernel's table of listening sockets, without
# connecting: a pair's entry would take a probe's connection for its agent's link, or for a caller.
wait_listening() {
  local name="$1" pid="$2" port="$3" deadline=$((SECONDS + $4))
  until [[ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ]]; do
    kill -0 "$pid" 2>/dev/null || die "$name exited (see $5)"
    ((SECONDS < deadline)) || die "$name did not listen on :$port within $4 s (see $5)"
    sleep 0.2
  done
}

# start_pair NAME: PAIR[NAME]'s entry and agent per service, each a process in its own session.
start_pair() {
  local name="$1" entry="" agent="" service listen link cmd words
  for service in "${SERVICES[@]}"; do
    read -r listen link <<<"$(free_ports 2)"
    entry=""
    for cmd in "${PAIR[$name]%%|*}" "${PAIR[$name]#*|}"; do
      cmd="${cmd//\{listen\}/$listen}" cmd="${cmd//\{link\}/$link}"
      cmd="${cmd//\{target\}/127.0.0.1:${PORT[direct $service]}}"
      read -r -a words <<<"$cmd"
      if [[ -z "$entry" ]]; then
        start_server "$name entry ($service)" "$REPORT_DIR/$name-entry-$service.log" "$REPORT_DIR" "${words[@]}"
        entry="$(last_pid)"
        wait_listening "$name entry ($service)" "$entry" "$link" 60 "$REPORT_DIR/$name-entry-$service.log"
      else
        start_server "$name agent ($service)" "$REPORT_DIR/$name-agent-$service.log" "$REPORT_DIR" "${words[@]}"
        agent="$(last_pid)"
      fi
    done
    wait_listening "$name entry ($service)" "$entry" "$listen" 60 "$REPORT_DIR/$name-entry-$service.log"
    sleep 1   # the agent's link (and a pool's connections) up before the warm-up
    kill -0 "$agent" 2>/dev/null || die "$name's agent for $service exited (see $REPORT_DIR/$name-agent-$service.log)"
    PORT[$name $service]=$listen
    CPU_PIDS[$name $service]="entry:$entry agent:$agent"
  done
  log "$name ready: $(for s in "${SERVICES[@]}"; do printf '%s :%s ' "$s" "${PORT[$name $s]}"; done)"
}
for t in "${TARGETS[@]}"; do [[ -z "${PAIR[$t]:-}" ]] || start_pair "$t"; done

# A range of TCP ports for a tunnel's sessions: 10 free ones in a row, below the kernel's ephemeral range.
free_range() {
  local base port busy
  for _ in $(seq 50); do
    base=$((20000 + RANDOM % 1000 * 10))
    busy=0
    for ((port = base; port < base + 10; port++)); do port_in_use "$port" && busy=1 && break; done
    ((busy)) || { echo "$base-$((base + 9))"; return 0; }
  done
  die "no 10 free ports in a row found between 20000 and 30000"
}

# start_tunnel NAME: one TunnelServer and a TunnelClient per service, from TREE[NAME]'s Release build.
start_tunnel() {
  local name="$1" tree="${TREE[$1]}" public tunnel range service target logfile pid server_pid port deadline
  read -r public tunnel <<<"$(free_ports 2)"
  range="$(free_range)"
  start_server "$name TunnelServer" "$REPORT_DIR/$name-server.log" "$(dirname "$(dll "$tree" TunnelServer)")" \
    dotnet "$(dll "$tree" TunnelServer)" --environment Development --public-url "http://127.0.0.1:$public" \
    --tunnel-url "http://127.0.0.1:$tunnel" --tcp-ports "$range"
  server_pid="$(last_pid)"
  wait_port "$name TunnelServer" "$server_pid" "$tunnel" 60 "$REPORT_DIR/$name-server.log"
  for service in "${SERVICES[@]}"; do
    target="127.0.0.1:${PORT[direct $service]}"
    logfile="$REPORT_DIR/$name-client-$service.log"
    start_server "$name TunnelClient ($service)" "$logfile" "$(dirname "$(dll "$tree" TunnelClient)")" \
      dotnet "$(dll "$tree" TunnelClient)" --environment Development --server "http://127.0.0.1:$tunnel" \
      --session "tcp-bench-$service" --tcp "$target"
    pid="$(last_pid)"
    deadline=$((SECONDS + 60))
    until port="$(grep -o "Forwarding tcp://[^ ]*:[0-9]* -> $target" "$logfile" 2>/dev/null | head -n 1 | sed -E 's/.*:([0-9]+) -> .*/\1/')" \
        && [[ -n "$port" ]]; do
      kill -0 "$pid" 2>/dev/null || die "$name's TunnelClient for $service exited (see $logfile)"
      ((SECONDS < deadline)) || die "$name's TunnelClient for $service did not log its TCP port within 60 s (see $logfile)"
      sleep 0.2
    done
    PORT[$name $service]=$port
    CPU_PIDS[$name $service]="server:$server_pid client:$pid"
  done
  log "$name ready from $tree: $(for s in "${SERVICES[@]}"; do printf '%s :%s ' "$s" "${PORT[$name $s]}"; done)"
}
for t in "${TUNNELS[@]}"; do start_tunnel "$t"; done

# ---------------------------------------------------------------------------------------------------------------------
# The runs
# ---------------------------------------------------------------------------------------------------------------------
CLK_TCK="$(getconf CLK_TCK)"
OUT="$REPORT_DIR/tool.out"

# iperf_result FILE BYTES: "MB/s MB" as the receiver counted them, from iperf3's JSON; "0 0" unless the sender sent all
# BYTES. The receiver stops counting when the sender reports its last write, so the bytes still in flight then (socket
# buffers, the tunnel's windows: a few MB) are in neither its bytes nor its seconds; less than 90 % received is a failure.
iperf_result() {
  python3 - "$1" "$2" <<'PY'
import json, sys
try:
    end = json.load(open(sys.argv[1]))["end"]
    sent, got = int(end["sum_sent"]["bytes"]), end["sum_received"]
    ok = sent >= int(sys.argv[2]) and int(got["bytes"]) >= 0.9 * sent
    print(f'{got["bytes"] / got["seconds"] / 1e6:.1f} {got["bytes"] / 1e6:.1f}' if ok else "0 0")
except (OSError, ValueError, KeyError, ZeroDivisionError):
    print("0 0")
PY
}

# run_test TEST PORT SIZE: one run, its output in OUT; sets VALUE (per second) and OPS (the requests, transactions or
# MB done), both 0 when the run failed. SIZE is the run's length: requests, seconds or bytes.
run_test() {
  local test="$1" port="$2" size="$3"
  VALUE="" OPS=""
  : >"$OUT"
  case "$test" in
    redis-set|redis-get)
      run_child "$OUT" timeout "$TOOL_TIMEOUT" redis-benchmark -q -h 127.0.0.1 -p "$port" -t "${test#redis-}" -c 50 -n "$size" || true
      VALUE="$(tr '\r' '\n' <"$OUT" | sed -nE 's/^(SET|GET): ([0-9.]+) requests per second.*/\2/p' | tail -n 1)"
      OPS="$size" ;;
    pgbench)
      run_child "$OUT" timeout "$TOOL_TIMEOUT" "$PG_BIN/pgbench" -n -S -c 10 -j "$PG_THREADS" -T "$size" \
        -h 127.0.0.1 -p "$port" -U postgres postgres || true
      VALUE="$(sed -nE 's/^tps = ([0-9.]+) \(without initial connection time\).*/\1/p' "$OUT")"
      OPS="$(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' "$OUT")" ;;
    bulk-up|bulk-down)
      local reverse=()
      [[ "$test" == bulk-down ]] && reverse=(-R)
      run_child "$OUT" timeout "$TOOL_TIMEOUT" iperf3 -c 127.0.0.1 -p "$port" -n "$size" -i 0 -J "${reverse[@]}" || true
      read -r VALUE OPS <<<"$(iperf_result "$OUT" "$size")" ;;
  esac
  if [[ -z "$VALUE" || -z "$OPS" || "$VALUE" == 0 ]]; then
    VALUE=0 OPS=0
  fi
}

size_of() {
  case "$1" in
    redis-*) echo "${2:-$REQUESTS}" ;;
    pgbench) echo "${2:-$PG_SECONDS}" ;;
    bulk-*) echo "${2:-$BYTES}" ;;
  esac
}

log "warm-up: one short run per test and target (not measured)"
for test in "${TESTS[@]}"; do
  for t in "${TARGETS[@]}"; do
    case "$test" in redis-*) warm=20000 ;; pgbench) warm=2 ;; *) warm=$((256 * 1024 * 1024)) ;; esac
    run_test "$test" "${PORT[$t $(service_of "$test")]}" "$warm"
  done
done

# switches PID: "tid switches" per thread of PID alive now (voluntary + involuntary context switches).
switches() {
  awk 'FNR == 1 { n = split(FILENAME, part, "/"); tid = part[n - 1] }
       /^(voluntary|nonvoluntary)_ctxt_switches:/ { s[tid] += $2 } END { for (t in s) print t, s[t] }' \
    "/proc/$1/task/"*/status 2>/dev/null || true
}
# switches_since BEFORE_FILE AFTER_FILE: switches of the threads alive at the end since BEFORE (new threads: all).
switches_since() { awk 'NR == FNR { b[$1] = $2; next } { d += $2 - ($1 in b ? b[$1] : 0) } END { print d + 0 }' "$1" "$2"; }

errors=0
: >"$REPORT_DIR/runs.txt"   # "test target round value ops name:pid:ticks:switches..."
SW_DIR="$REPORT_DIR/switches"
mkdir -p "$SW_DIR"
for ((round = 1; round <= ROUNDS; round++)); do
  order=("${TARGETS[@]:$(((round - 1) % ${#TARGETS[@]}))}" "${TARGETS[@]:0:$(((round - 1) % ${#TARGETS[@]}))}")
  for test in "${TESTS[@]}"; do
    service="$(service_of "$test")"
    for t in "${order[@]}"; do
      read -r -a procs <<<"${CPU_PIDS[$t $service]:-}"
      declare -A before=()
      for p in "${procs[@]}"; do
        before[$p]="$(stat_ticks "/proc/${p#*:}/stat")"
        switches "${p#*:}" >"$SW_DIR/${p#*:}.before"
      done
      run_test "$test" "${PORT[$t $service]}" "$(size_of "$test")"
      cpu=""
      for p in "${procs[@]}"; do
        switches "${p#*:}" >"$SW_DIR/${p#*:}.after"
        cpu+=" $p:$(($(stat_ticks "/proc/${p#*:}/stat") - before[$p])):$(switches_since "$SW_DIR/${p#*:}.before" "$SW_DIR/${p#*:}.after")"
      done
      unset before
      echo "$test $t $round $VALUE $OPS$cpu" >>"$REPORT_DIR/runs.txt"
      cp "$OUT" "$REPORT_DIR/last-$test-$t.out"
      if [[ "$VALUE" == 0 ]]; then
        errors=1
        warn "$test $t round $round failed (see $REPORT_DIR/last-$test-$t.out)"
      fi
      log "round $round $test $t: $VALUE/s"
    done
  done
done
rm -rf "$SW_DIR"

python3 - "$REPORT_DIR/runs.txt" "$CLK_TCK" "${TUNNELS[*]}" <<'PY' | tee "$REPORT_DIR/summary.txt"
import statistics, sys
runs, clk, tunnels = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
values, ops, ticks, switches, order = {}, {}, {}, {}, []
for line in open(runs):
    test, target, _, value, n, *procs = line.split()
    key = (test, target)
    if key not in values:
        order.append(key)
    values.setdefault(key, []).append(float(value))
    ops[key] = ops.get(key, 0) + float(n)
    for p in procs:
        name, _, t, s = p.split(":")
        ticks.setdefault(key, {})
        ticks[key][name] = ticks[key].get(name, 0) + int(t)
        switches.setdefault(key, {})
        switches[key][name] = switches[key].get(name, 0) + int(s)
unit = {"redis-set": "req/s", "redis-get": "req/s", "pgbench": "tps", "bulk-up": "MB/s", "bulk-down": "MB/s"}
med = {k: statistics.median(v) for k, v in values.items()}
targets = {target for _, target in order}
bases = [b for b in ("direct", "nginx", "nginx2", "ssh") if b in targets]
if len(tunnels) > 1 and "tunnel" in tunnels:
    bases.append("tunnel")
def ratio(test, target, base):
    b = med.get((test, base))
    return f"{med[(test, target)] / b:.3f}" if b else "-"
print(f"{'test':<10} {'target':<9} {'median':>10} {'unit':<6}" + "".join(f" {'x ' + b:>8}" for b in bases)
      + "   runs   per op (request, transaction, MB): CPU µs / context switches, of each process")
for test, target in order:
    cpu, sw = ticks.get((test, target), {}), switches.get((test, target), {})
    n = ops[(test, target)] or float("nan")
    parts = [f"{name} {t * 1e6 / clk / n:.1f}/{sw[name] / n:.2f}" for name, t in sorted(cpu.items())]
    if len(cpu) > 1:
        parts.append(f"sum {sum(cpu.values()) * 1e6 / clk / n:.1f}/{sum(sw.values()) / n:.2f}")
    print(f"{test:<10} {target:<9} {med[(test, target)]:>10,.1f} {unit[test]:<6}"
          + "".join(f" {ratio(test, target, b):>8}" for b in bases)
          + f"   {', '.join(f'{v:,.0f}' for v in values[(test, target)])}   {', '.join(parts)}")
print()
# The data-plane issue's targets: the tunnel at least as fast as ssh -R and as two nginx stream hops.
for t in [x for x in targets if x not in ("direct", "nginx", "nginx2", "ssh")]:
    for test in ("redis-get", "bulk-up", "bulk-down"):
        for base in ("ssh", "nginx2"):
            if (test, t) in med and (test, base) in med and med[(test, base)]:
                r = med[(test, t)] / med[(test, base)]
                print(f"target: {t} {test} >= {base}: {r:.3f} {'met' if r >= 1 else 'missed'}")
PY
exit "$errors"
