#!/usr/bin/env bash
# The release as a user gets it (CI runs this): builds it with build-release.sh, then
#   1. checks SHA256SUMS and that every archive, the tool package and both .debs are there;
#   2. in a clean Debian root file system with no .NET at all (debootstrap --variant=minbase with python3, kept as a
#      tarball in the cache folder below so that later runs skip debootstrap), `apt-get install ./tunnel2_<v>_amd64.deb`,
#      checks what it installed (executables, units whose Documentation= resolves, conffiles in /etc/tunnel2, the
#      tunnel2 user), asks both executables for --version, and carries a request through the tunnel there:
#      python3 -m http.server as the backend, TunnelServer and TunnelClient as the user tunnel2, a GET from outside;
#      then `apt-get remove` leaves /etc/tunnel2 and takes the executables;
#   3. installs the .NET tool from the release folder (dotnet tool install --tool-path, on this machine) and asks it
#      for --version;
#   4. runs the linux-arm64 executables' --version under Debian's qemu-user-static (installed when missing, with the
#      arm64 C libraries of Debian's cross packages), and checks the win-x64 and osx-arm64 executables' formats (an
#      x64 PE; an arm64 Mach-O with a code signature, which Apple silicon requires).
#
#   tunnel2-deploy/release/release-test.sh [--no-build] [--output DIR]
#
# Needs root (debootstrap, chroot, mount). The base root file system is cached in $TUNNEL2_ROOTFS_CACHE
# (/var/cache/tunnel2); delete it to make a new one. Ends with one line "N passed, N failed".
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
repo=$(pwd)
out="$repo/artifacts/release"
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0; shift ;;
    --output) out=$(realpath -m "$2"); shift 2 ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "release-test: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

passed=0
failed=0
started=$SECONDS
log() { printf '[release-test %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
check() { # name, then a command that must succeed
  local name=$1; shift
  if "$@"; then log "ok: $name"; passed=$((passed + 1)); else log "NOT OK: $name"; failed=$((failed + 1)); fi
}
give_up() { log "$*"; echo "$passed passed, $((failed + 1)) failed"; exit 1; }
wait_for() { # seconds, then a command that succeeds once ready
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do [ "$SECONDS" -ge "$deadline" ] && return 1; sleep 0.2; done
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

[ "$(id -u)" = 0 ] || give_up "needs root (debootstrap, chroot, mount)"
work=$(mktemp -d /tmp/tunnel2-release-test.XXXXXX)
rootfs="$work/rootfs"
pids=()

# shellcheck disable=SC2317 # called by the trap
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  # Anything else still running inside the root file system, by process id.
  for pid in /proc/[0-9]*; do
    [ "$(readlink "$pid/root" 2>/dev/null)" = "$rootfs" ] && kill -9 "${pid#/proc/}" 2>/dev/null
  done
  for m in dev sys proc; do
    mountpoint -q "$rootfs/$m" 2>/dev/null && { umount -R "$rootfs/$m" 2>/dev/null || umount -R -l "$rootfs/$m"; }
  done
  if grep -q " $rootfs/" /proc/mounts; then
    echo "release-test: mounts left under $rootfs; not deleting $work" >&2
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- tools on this machine -----------------------------------------------------------------------------------------
missing=()
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
[ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || missing+=(libc6-arm64-cross)
[ -e /usr/aarch64-linux-gnu/lib/libstdc++.so.6 ] || missing+=(libstdc++6-arm64-cross)
command -v curl >/dev/null || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} from Debian"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}") >/dev/null 2>&1 \
    || give_up "apt-get install ${missing[*]} failed"
fi

# ---- 1. the release ------------------------------------------------------------------------------------------------
if [ "$build" = 1 ]; then
  build_started=$SECONDS
  check "build-release.sh made every artifact" bash tunnel2-deploy/release/build-release.sh --output "$out"
  log "build-release.sh took $((SECONDS - build_started)) s"
fi
version=$(dotnet msbuild src/TunnelServer -getProperty:Version 2>/dev/null | tr -d '[:space:]')
[ -n "$version" ] || give_up "could not read the version"
check "SHA256SUMS covers every artifact and matches" bash -c "cd '$out' && sha256sum --quiet -c SHA256SUMS \
  && [ \$(wc -l <SHA256SUMS) -eq \$(find . -maxdepth 1 -type f ! -name SHA256SUMS | wc -l) ]"
expected=()
for role in server client; do
  for rid in linux-x64 linux-arm64 osx-arm64; do expected+=("tunnel2-$role-$version-$rid.tar.gz"); done
  expected+=("tunnel2-$role-$version-win-x64.zip")
done
expected+=("tunnel2_${version}_amd64.deb" "tunnel2_${version}_arm64.deb")
all_there() { local f; for f in "${expected[@]}"; do [ -s "$out/$f" ] || { log "missing: $f"; return 1; }; done; }
check "the 8 archives and 2 .debs named with version $version are there" all_there
tarball_kit() { # the Linux archives carry what a host without the .deb needs (docs/deploy.md)
  local listing
  listing=$(tar -tzf "$out/tunnel2-server-$version-linux-x64.tar.gz") || return 1
  for f in TunnelServer appsettings.json deploy.md systemd/tunnel2-server.service systemd/server.env; do
    echo "$listing" | grep -qx "tunnel2-server-$version-linux-x64/$f" || { log "not in the server archive: $f"; return 1; }
  done
}
check "the linux-x64 server archive holds the executable, appsettings.json, deploy.md, the unit and server.env" tarball_kit
tool_package=$(find "$out" -maxdepth 1 -name 'Tunnel2.Client.*.nupkg' -printf '%f\n' | head -1)
check "the tool package is there ($tool_package)" test -n "$tool_package"

# ---- 2. the .deb in a clean root file system -----------------------------------------------------------------------
cache="${TUNNEL2_ROOTFS_CACHE:-/var/cache/tunnel2}"
# shellcheck source=/dev/null
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
base="$cache/rootfs-$suite-minbase-python3.tar"
if [ ! -s "$base" ]; then
  mirror=$(grep -hoE '^URIs: *http[^ ]*debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | sed 's/^URIs: *//')
  [ -n "$mirror" ] || mirror=$(grep -hoE '^deb +http[^ ]+' /etc/apt/sources.list 2>/dev/null | head -1 | awk '{print $2}')
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
  log "making the base root file system: debootstrap --variant=minbase --include=python3 $suite from $mirror (once; cached in $base)"
  mkdir -p "$cache" "$work/base"
  debootstrap --variant=minbase --include=python3 "$suite" "$work/base" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -5 "$work/debootstrap.log"; give_up "debootstrap failed"; }
  rm -rf "$work"/base/var/cache/apt/archives/*.deb
  # debootstrap can leave its target's /proc mounted (a package's script keeping it busy): never archive a live /proc.
  grep -q " $work/base/proc " /proc/mounts && { umount "$work/base/proc" 2>/dev/null || umount -l "$work/base/proc"; }
  { tar -C "$work/base" --one-file-system -cf "$base.part" . && mv "$base.part" "$base"; } || give_up "could not write $base"
  rm -rf "$work/base"
fi
mkdir -p "$rootfs"
tar -C "$rootfs" -xf "$base" || give_up "could not unpack $base"
printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' >"$rootfs/etc/hosts"
mount -t proc proc "$rootfs/proc" || give_up "mount proc failed"
{ mount --rbind /sys "$rootfs/sys" && mount --make-rslave "$rootfs/sys"; } || give_up "mount sys failed"
{ mount --rbind /dev "$rootfs/dev" && mount --make-rslave "$rootfs/dev"; } || give_up "mount dev failed"
inside() { chroot "$rootfs" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

no_dotnet() { ! inside sh -c 'command -v dotnet || ls -d /usr/share/dotnet /usr/lib/dotnet /root/.dotnet' 2>/dev/null; }
check "the root file system has no .NET (no dotnet, no /usr/share/dotnet, /usr/lib/dotnet, ~/.dotnet)" no_dotnet
deb="tunnel2_${version}_amd64.deb"
cp "$out/$deb" "$rootfs/tmp/"
apt_install() {
  inside env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "./tmp/$deb" >"$work/apt.log" 2>&1 \
    || { tail -15 "$work/apt.log"; return 1; }
}
check "apt-get install ./$deb in the root file system" apt_install
installed() {
  local f
  for f in /usr/bin/TunnelServer /usr/bin/TunnelClient /usr/bin/tunnel2 /lib/systemd/system/tunnel2-server.service \
    /lib/systemd/system/tunnel2-client@.service /etc/tunnel2/server.env /etc/tunnel2/server.json /etc/tunnel2/Caddyfile; do
    [ -e "$rootfs$f" ] || { log "not installed: $f"; return 1; }
  done
  [ "$(stat -c %a "$rootfs/etc/tunnel2/server.env")" = 600 ] || { log "server.env is not 0600"; return 1; }
  inside getent passwd tunnel2 >/dev/null || { log "no user tunnel2"; return 1; }
  # shellcheck disable=SC2016 # dpkg-query's own ${Conffiles}
  inside dpkg-query -W -f='${Conffiles}\n' tunnel2 | grep -q '/etc/tunnel2/server.env ' || { log "server.env is not a conffile"; return 1; }
}
check "it installs the executables, the units, /etc/tunnel2 (0600 .env, conffiles) and the user tunnel2" installed
docs_resolve() {
  local unit doc
  for unit in tunnel2-server.service tunnel2-client@.service; do
    doc=$(sed -n 's|^Documentation=file://||p' "$rootfs/lib/systemd/system/$unit")
    if [ -z "$doc" ] || [ ! -s "$rootfs$doc" ]; then log "$unit: Documentation=file://$doc is not installed"; return 1; fi
  done
}
check "the units' Documentation= names a file the package installs" docs_resolve

answers_version() { # executable: --version exits 0 and prints the version
  local text
  text=$(inside "$1" --version 2>&1) || { log "$1 --version exit code $?: $(echo "$text" | head -3)"; return 1; }
  echo "$text" | grep -qF "$version" || { log "$1 --version printed: $(echo "$text" | head -3)"; return 1; }
  log "  $1 --version: $(echo "$text" | head -1)"
}
check "TunnelServer --version (the .deb's, no .NET installed) prints $version" answers_version /usr/bin/TunnelServer
check "TunnelClient --version (the .deb's, no .NET installed) prints $version" answers_version /usr/bin/TunnelClient

# The tunnel: a backend, the server and the client inside the root file system (this machine's network), as tunnel2.
token="release-test-$RANDOM$RANDOM$RANDOM"
session=release-test
nonce="through the tunnel $RANDOM$RANDOM"
backend_port=$(free_port); public_port=$(free_port); tunnel_port=$(free_port)
mkdir -p "$rootfs/srv/www" && echo "$nonce" >"$rootfs/srv/www/hello.txt"
# Only in the background (`as_tunnel2 … &`): exec makes $! the program's own process id (chroot, env and setpriv
# each exec the next), so that its SIGTERM and exit code are the program's.
as_tunnel2() { exec chroot "$rootfs" /usr/bin/env -i HOME=/nonexistent LANG=C.UTF-8 PATH=/usr/bin:/bin \
  setpriv --reuid=tunnel2 --regid=tunnel2 --init-groups "$@"; }
as_tunnel2 python3 -m http.server --bind 127.0.0.1 --directory /srv/www "$backend_port" >"$work/backend.log" 2>&1 &
pids+=($!)
as_tunnel2 TunnelServer --token "$token" --public-url "http://127.0.0.1:$public_port" \
  --tunnel-url "http://127.0.0.1:$tunnel_port" >"$work/server.log" 2>&1 &
pids+=($!)
wait_for 30 curl -s -o /dev/null "http://127.0.0.1:$public_port/healthz" || log "the server did not answer /healthz within 30 s"
as_tunnel2 TunnelClient --server "http://127.0.0.1:$tunnel_port" --session "$session" --token "$token" \
  --backend "http://127.0.0.1:$backend_port" >"$work/client.log" 2>&1 &
pids+=($!)
through() { [ "$(curl -s --max-time 5 "http://127.0.0.1:$public_port/session/$session/hello.txt")" = "$nonce" ]; }
if ! wait_for 30 through; then
  log "server log:"; tail -15 "$work/server.log"; log "client log:"; tail -15 "$work/client.log"
fi
check "a GET reaches python3's http.server through the .deb's TunnelServer and TunnelClient, run as tunnel2" through
for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
stopped_clean() { # pids: the backend, TunnelServer, TunnelClient
  local i code all=0 names=(backend TunnelServer TunnelClient)
  for i in 1 2; do
    code=0; wait "${pids[$i]}" || code=$?
    log "  ${names[$i]} exited with code $code"
    [ "$code" = 0 ] || all=1
  done
  [ "$all" = 0 ]
}
check "server and client stop with exit code 0 on SIGTERM (after their drain)" stopped_clean
wait "${pids[0]}" 2>/dev/null
pids=()
removed() {
  inside env DEBIAN_FRONTEND=noninteractive apt-get remove -y -q tunnel2 >"$work/remove.log" 2>&1 || { tail -5 "$work/remove.log"; return 1; }
  [ ! -e "$rootfs/usr/lib/tunnel2/server/TunnelServer" ] && [ -s "$rootfs/etc/tunnel2/server.env" ]
}
check "apt-get remove tunnel2 takes the executables and keeps /etc/tunnel2" removed

# ---- 3. the .NET tool from the release folder ----------------------------------------------------------------------
tool_version=${tool_package#Tunnel2.Client.}; tool_version=${tool_version%.nupkg}
tool_install() {
  dotnet tool install --tool-path "$work/tool" --add-source "$out" Tunnel2.Client --version "$tool_version" >"$work/tool.log" 2>&1 \
    || { tail -5 "$work/tool.log"; return 1; }
}
check "dotnet tool install --tool-path … --add-source $(basename "$out") Tunnel2.Client" tool_install
tool_answers() {
  local text
  text=$("$work/tool/tunnel2" --version 2>&1) || { log "tunnel2 --version exit code $?: $(echo "$text" | head -3)"; return 1; }
  echo "$text" | grep -qF "$version" || { log "tunnel2 --version printed: $(echo "$text" | head -3)"; return 1; }
  log "  tunnel2 (the tool) --version: $(echo "$text" | head -1)"
}
check "the tool's tunnel2 --version prints $version" tool_answers

# ---- 4. the other targets ------------------------------------------------------------------------------------------
mkdir -p "$work/arm64"
for role in server client; do tar -C "$work/arm64" -xzf "$out/tunnel2-$role-$version-linux-arm64.tar.gz" 2>/dev/null; done
arm64_answers() { # app
  local exe text
  exe="$work/arm64/tunnel2-$(echo "${1#Tunnel}" | tr '[:upper:]' '[:lower:]')-$version-linux-arm64/$1"
  readelf -h "$exe" 2>/dev/null | grep -q 'Machine: *AArch64' || { log "$exe is not an AArch64 executable"; return 1; }
  text=$(timeout 120 qemu-aarch64-static -L /usr/aarch64-linux-gnu "$exe" --version 2>&1) \
    || { log "qemu-aarch64-static $1 --version exit code $?: $(echo "$text" | head -3)"; return 1; }
  echo "$text" | grep -qF "$version" || { log "$1 --version printed: $(echo "$text" | head -3)"; return 1; }
  log "  linux-arm64 $1 --version under qemu: $(echo "$text" | head -1)"
}
check "linux-arm64 TunnelServer --version under qemu-aarch64-static prints $version" arm64_answers TunnelServer
check "linux-arm64 TunnelClient --version under qemu-aarch64-static prints $version" arm64_answers TunnelClient
arm64_deb() {
  [ "$(dpkg-deb -f "$out/tunnel2_${version}_arm64.deb" Architecture)" = arm64 ] || return 1
  dpkg-deb -x "$out/tunnel2_${version}_arm64.deb" "$work/arm64-deb" \
    && cmp -s "$work/arm64-deb/usr/lib/tunnel2/server/TunnelServer" "$work/arm64/tunnel2-server-$version-linux-arm64/TunnelServer"
}
check "the arm64 .deb carries the same linux-arm64 TunnelServer" arm64_deb
formats() { # the executables the machine cannot run: a PE for x64 Windows, a Mach-O for arm64 macOS
  python3 - "$out" "$version" "$work/formats" <<'PY'
import io, struct, sys, tarfile, zipfile
out, version = sys.argv[1], sys.argv[2]
ok = True
for role, app in (("server", "TunnelServer"), ("client", "TunnelClient")):
    with zipfile.ZipFile(f"{out}/tunnel2-{role}-{version}-win-x64.zip") as z:
        data = z.read(f"tunnel2-{role}-{version}-win-x64/{app}.exe")
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    machine = struct.unpack_from("<H", data, pe + 4)[0]
    good = data[:2] == b"MZ" and data[pe:pe + 4] == b"PE\0\0" and machine == 0x8664
    print(f"  win-x64 {app}.exe: PE, machine 0x{machine:04x} (x64), {len(data) // 2**20} MiB: {'ok' if good else 'NOT OK'}")
    ok &= good
    with tarfile.open(f"{out}/tunnel2-{role}-{version}-osx-arm64.tar.gz") as t:
        data = t.extractfile(f"tunnel2-{role}-{version}-osx-arm64/{app}").read()
    magic, cpu, _, _, ncmds = struct.unpack_from("<IIIII", data, 0)
    commands, offset = [], 32
    for _ in range(ncmds if magic == 0xFEEDFACF else 0):
        command, size = struct.unpack_from("<II", data, offset)
        commands.append(command)
        offset += size
    signed = 0x1D in commands  # LC_CODE_SIGNATURE: Apple silicon runs only signed code (the SDK signs ad hoc)
    good = magic == 0xFEEDFACF and cpu == 0x0100000C and signed
    print(f"  osx-arm64 {app}: Mach-O 64, cpu 0x{cpu:08x} (arm64), code signature {'present' if signed else 'MISSING'}, {len(data) // 2**20} MiB: {'ok' if good else 'NOT OK'}")
    ok &= good
sys.exit(0 if ok else 1)
PY
}
check "win-x64 executables are x64 PE files, osx-arm64 ones signed arm64 Mach-O files (not run here)" formats

log "release-test took $((SECONDS - started)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
