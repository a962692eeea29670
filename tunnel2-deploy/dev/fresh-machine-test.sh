#!/usr/bin/env bash
# Proves that the README's test command passes on a machine that has only the .NET SDK: makes a fresh Debian root file
# system (debootstrap --variant=minbase, this machine's suite and Debian source, plus what the SDK itself needs to run:
# ca-certificates, ICU, OpenSSL, GSSAPI, zlib), copies this machine's .NET SDK into /usr/share/dotnet, makes a clean
# `git clone` of the branch checked out here (committed content only, not the work tree), and runs `./test.sh` in it
# as root through chroot, with an empty environment (HOME, PATH, LANG only): no Chromium, curl or procps, no NuGet
# configuration or package cache. test.sh must install what the tests need by itself. Mounts /proc, /sys and /dev,
# and takes them down again on exit (trap), then deletes the root file system unless --keep.
#
#   tunnel2-deploy/dev/fresh-machine-test.sh [--keep] [--branch NAME] [-- ./test.sh arguments...]
#
# The log of the run inside is in the work folder it names (/tmp/tunnel2-fresh.*/test.log). Ends with one line
# "N passed, N failed" (the tests' totals from dotnet test's summary lines) and exits with test.sh's exit code.
#
# Besides the SDK, only this machine's network settings are copied in: its DNS (/etc/resolv.conf), its Debian sources,
# and the certificate authorities it added itself (/usr/local/share/ca-certificates: none on an ordinary machine; on a
# machine behind a TLS-inspecting egress proxy, that proxy's, without which restore fails with NU1301 UntrustedRoot).
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
repo=$(pwd)
keep=0
branch=$(git rev-parse --abbrev-ref HEAD)
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1; shift ;;
    --branch) branch=$2; shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "fresh-machine-test: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

log() { printf '[fresh-machine %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
give_up() { echo "fresh-machine-test: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

[ "$(id -u)" = 0 ] || give_up "needs root (debootstrap, chroot, mount)"
dotnet_root=$(dirname "$(readlink -f "$(command -v dotnet)")") || give_up "no .NET SDK here to copy in"
command -v debootstrap >/dev/null || {
  log "installing debootstrap from Debian"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap) >/dev/null 2>&1 \
    || give_up "apt-get install debootstrap failed"
}

work=$(mktemp -d /tmp/tunnel2-fresh.XXXXXX)
rootfs="$work/rootfs"

# shellcheck disable=SC2317 # called by the trap
# Stops whatever still runs inside the root file system (build servers, a test host), by process id, then unmounts.
cleanup() {
  local pid
  for pid in /proc/[0-9]*; do
    [ "$(readlink "$pid/root" 2>/dev/null)" = "$rootfs" ] && kill -9 "${pid#/proc/}" 2>/dev/null
  done
  for m in dev/shm dev/pts dev sys proc; do
    mountpoint -q "$rootfs/$m" 2>/dev/null && { umount -R "$rootfs/$m" 2>/dev/null || umount -R -l "$rootfs/$m"; }
  done
  if grep -q " $rootfs/" /proc/mounts; then
    echo "fresh-machine-test: mounts left under $rootfs; not deleting it" >&2
  elif [ "$keep" = 0 ]; then
    rm -rf "$rootfs"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- a fresh Debian ---------------------------------------------------------------------------------------------
mirror=$(grep -hoE '^URIs: *http[^ ]*debian/?$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | sed 's/^URIs: *//')
[ -n "$mirror" ] || mirror=$(grep -hoE '^deb +http[^ ]+' /etc/apt/sources.list 2>/dev/null | head -1 | awk '{print $2}')
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
# shellcheck source=/dev/null
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
icu=$(dpkg-query -W -f='${Package}\n' 'libicu[0-9]*' 2>/dev/null | head -1)
sdk_needs="ca-certificates,${icu:-libicu72},libssl3,libgssapi-krb5-2,zlib1g"
log "debootstrap --variant=minbase --include=$sdk_needs $suite $rootfs $mirror"
debootstrap --variant=minbase --include="$sdk_needs" "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
  || { tail -5 "$work/debootstrap.log"; give_up "debootstrap failed (log: $work/debootstrap.log)"; }
for absent in chromium curl procps; do
  # shellcheck disable=SC2016 # ${Status} is dpkg-query's, not the shell's
  chroot "$rootfs" dpkg-query -W -f='${Status}' "$absent" 2>/dev/null | grep -q "install ok installed" \
    && give_up "$absent is already in the fresh root file system"
done
log "fresh root file system ready: no chromium, curl or procps"

# ---- this machine's network -------------------------------------------------------------------------------------
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
printf '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n' >"$rootfs/etc/hosts"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
  chroot "$rootfs" update-ca-certificates >/dev/null 2>&1 || give_up "update-ca-certificates failed in the chroot"
fi
# Debian's sources as on this machine (the suite's updates and security too), so test.sh's apt-get sees the same.
rm -f "$rootfs/etc/apt/sources.list"
cp /etc/apt/sources.list.d/*.sources "$rootfs/etc/apt/sources.list.d/" 2>/dev/null || cp /etc/apt/sources.list "$rootfs/etc/apt/"

# ---- the .NET SDK and a clean clone -----------------------------------------------------------------------------
log "copying the .NET SDK from $dotnet_root ($(dotnet --version))"
mkdir -p "$rootfs/usr/share/dotnet"
cp -a "$dotnet_root/." "$rootfs/usr/share/dotnet/"
ln -sf /usr/share/dotnet/dotnet "$rootfs/usr/bin/dotnet"
log "git clone --branch $branch $repo (committed content only)"
git clone -q --branch "$branch" --single-branch "$repo" "$rootfs/root/tunnel2" || give_up "git clone failed"
commit=$(git -C "$rootfs/root/tunnel2" rev-parse --short HEAD)

mount -t proc proc "$rootfs/proc" || give_up "mount proc failed"
{ mount --rbind /sys "$rootfs/sys" && mount --make-rslave "$rootfs/sys"; } || give_up "mount sys failed"
{ mount --rbind /dev "$rootfs/dev" && mount --make-rslave "$rootfs/dev"; } || give_up "mount dev failed"

# ---- the README's test command, as root, in an empty environment ------------------------------------------------
log "running ./test.sh $* in the chroot at $commit (log: $work/test.log)"
started=$(date +%s)
chroot "$rootfs" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  /bin/bash -c 'cd /root/tunnel2 && ./test.sh "$@"' test.sh "$@" >"$work/test.log" 2>&1
test_exit=$?
seconds=$(($(date +%s) - started))
chroot "$rootfs" /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin dotnet build-server shutdown >/dev/null 2>&1

grep -E '^test\.sh:|Setting up (chromium|curl|procps) ' "$work/test.log" | head -5
grep -E '^(Passed|Failed)!' "$work/test.log"
grep -E '^\s+Failed [A-Za-z]' "$work/test.log" | head -20
read -r passed failed < <(grep -E '^(Passed|Failed)!' "$work/test.log" \
  | sed -E 's/.*Failed: *([0-9]+), Passed: *([0-9]+).*/\2 \1/' | awk '{p += $1; f += $2} END {print p + 0, f + 0}')
log "./test.sh exit code $test_exit after ${seconds}s; NuGet configuration the SDK made: $(ls "$rootfs/root/.nuget/NuGet/" 2>/dev/null)"
[ "$passed" -gt 0 ] || failed=$((failed + 1))
echo "${passed} passed, ${failed} failed"
exit "$test_exit"
