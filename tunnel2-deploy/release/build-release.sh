#!/usr/bin/env bash
# Builds a Tunnel2 release from a clean clone, into one folder (default artifacts/release/, which git ignores):
#
#   tunnel2-server-<version>-<rid>.tar.gz / .zip   TunnelServer, self-contained, one file (+ its appsettings.json;
#                                                  Linux: + deploy.md, systemd/ with the unit and example settings)
#   tunnel2-client-<version>-<rid>.tar.gz / .zip   TunnelClient, the same
#       linux-x64    Native AOT (needs gcc or clang and zlib1g-dev here; installed from Debian when missing, as root)
#       linux-arm64  self-contained single-file (JIT): Native AOT from x64 needs an arm64 cross toolchain and sysroot
#       win-x64      self-contained single-file (JIT): Native AOT for Windows links only on Windows
#       osx-arm64    self-contained single-file (JIT): Native AOT for macOS links only on macOS; not signed
#   Tunnel2.Client.<version>.nupkg                 the .NET tool (dotnet tool install --add-source <this folder>)
#   tunnel2_<version>_amd64.deb, _arm64.deb        both executables, the systemd units, /etc/tunnel2/, the docs
#   SHA256SUMS                                     sha256sum -c SHA256SUMS checks them all
#
#   tunnel2-deploy/release/build-release.sh [--output DIR] [--rids "linux-x64 linux-arm64 win-x64 osx-arm64"]
#
# The version is the one <Version> in Directory.Build.props (dotnet msbuild -getProperty:Version). The runtime packs
# of the other targets come from the NuGet source at restore; a target whose publish fails (a pack refused, say) is
# reported and the others are still built. Exit 0 when every artifact was made, 1 otherwise (the missing ones named).
# The SDK is needed only here: nothing it builds needs .NET on the machine that runs it.
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
repo=$(pwd)
out="$repo/artifacts/release"
rids="linux-x64 linux-arm64 win-x64 osx-arm64"
while [ $# -gt 0 ]; do
  case "$1" in
    --output) out=$(realpath -m "$2"); shift 2 ;;
    --rids) rids=$2; shift 2 ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "build-release: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

log() { printf '[build-release %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
problems=()
problem() { log "NOT BUILT: $*"; problems+=("$*"); }

command -v dotnet >/dev/null || { echo "build-release: the .NET SDK (dotnet) is needed to build a release" >&2; exit 127; }
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

version=$(dotnet msbuild src/TunnelServer -getProperty:Version 2>/dev/null | tr -d '[:space:]')
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || { echo "build-release: could not read the version (got '$version')" >&2; exit 1; }
client_version=$(dotnet msbuild src/TunnelClient -getProperty:Version 2>/dev/null | tr -d '[:space:]')
[ "$client_version" = "$version" ] || log "warning: TunnelClient's Version is $client_version, not $version (Directory.Build.props)"
# Reproducible archives: every file dated at the commit.
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH
log "Tunnel2 $version ($(git rev-parse --short HEAD 2>/dev/null)) into $out; targets: $rids"

# Native AOT for linux-x64 links with a C toolchain and zlib, which the SDK does not bring.
missing=()
{ command -v clang >/dev/null || command -v gcc >/dev/null; } || missing+=(gcc libc6-dev)
[ -e /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v dpkg-deb >/dev/null || missing+=(dpkg)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  log "installing ${missing[*]} from Debian"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}") >/dev/null 2>&1 \
    || log "apt-get install ${missing[*]} failed"
fi

rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d /tmp/tunnel2-release.XXXXXX)
trap 'rm -rf "$work"' EXIT

# ---- executables ---------------------------------------------------------------------------------------------------
# publish APP RID: into $work/publish/RID/APP; only the executable and appsettings.json are kept (no symbols, and not
# appsettings.Development.json, which holds the dev token).
publish() {
  local app=$1 rid=$2 dir="$work/publish/$2/$1" kind
  local args=(-c Release -r "$rid" --nologo -v quiet -o "$dir" -p:DebugType=none)
  if [ "$rid" = linux-x64 ]; then
    kind="Native AOT"; args+=(-p:PublishAot=true)
  else
    kind="self-contained single-file"; args+=(--self-contained -p:PublishSingleFile=true -p:IncludeNativeLibrariesForSelfExtract=true)
  fi
  log "publishing $app for $rid ($kind)"
  if ! nice -n 10 dotnet publish "src/$app" "${args[@]}" >"$work/publish-$app-$rid.log" 2>&1; then
    tail -15 "$work/publish-$app-$rid.log" | sed 's/^/    /'
    grep -oE "NU1[0-9]{3}[^[]*" "$work/publish-$app-$rid.log" | sort -u | head -5 | sed 's/^/    /'
    problem "$app for $rid: dotnet publish failed (log above; a runtime pack the NuGet source refused shows as NU1xxx)"
    return 1
  fi
  local exe="$dir/$app"; [ "${rid%%-*}" = win ] && exe="$dir/$app.exe"
  [ -f "$exe" ] || { problem "$app for $rid: no $exe after publish"; return 1; }
  # Everything the executable needs is inside it; the rest (symbols, the referenced projects' XML docs, the Web SDK's
  # static-assets manifest, which nothing maps) is left out.
  local dropped
  dropped=$(find "$dir" -mindepth 1 -maxdepth 1 ! -name "$(basename "$exe")" ! -name appsettings.json -printf '%f ' -exec rm -rf {} +)
  echo "    $rid/$app: $(basename "$exe") $(du -h "$exe" | cut -f1), appsettings.json (left out: ${dropped:-nothing})"
}

# archive APP RID: tunnel2-<role>-<version>-<rid>/ with the executable, appsettings.json and a README, as .tar.gz
# (.zip for Windows); the Linux ones also with deploy.md and systemd/ (the unit and the example settings).
archive() {
  local app=$1 rid=$2 role name stage
  role=$(echo "${app#Tunnel}" | tr '[:upper:]' '[:lower:]')
  name="tunnel2-$role-$version-$rid"
  stage="$work/stage/$name"
  mkdir -p "$stage"
  cp -a "$work/publish/$rid/$app/." "$stage/"
  # Linux: what a host without the .deb needs beside the executable (docs/deploy.md, "Other Linux: the tarball").
  if [ "${rid%%-*}" = linux ]; then
    mkdir -p "$stage/systemd"
    install -m 0644 docs/deploy.md "$stage/"
    if [ "$role" = server ]; then
      install -m 0644 tunnel2-deploy/systemd/tunnel2-server.service tunnel2-deploy/systemd/examples/server.env \
        tunnel2-deploy/systemd/examples/server.json "$stage/systemd/"
    else
      install -m 0644 "tunnel2-deploy/systemd/tunnel2-client@.service" tunnel2-deploy/systemd/examples/client-demo.env "$stage/systemd/"
    fi
  fi
  cat >"$stage/README.txt" <<EOF
Tunnel2 $version, $app for $rid: one self-contained executable (no .NET needed on this machine).
Its settings: appsettings.json beside it, environment variables (${app}__Key) or the command line ($app --help).
The deploy guide (install, systemd, upgrade, rollback): deploy.md (Linux archives), docs/deploy.md in the source, or
/usr/share/doc/tunnel2/deploy.md where the .deb is installed.
EOF
  if [ "${rid%%-*}" = win ]; then
    (cd "$work/stage" && find "$name" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} + && python3 -m zipfile -c "$out/$name.zip" "$name") \
      || { problem "$name.zip: zip failed"; return 1; }
  else
    tar -C "$work/stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -cf - "$name" \
      | gzip -n >"$out/$name.tar.gz" || { problem "$name.tar.gz: tar failed"; return 1; }
  fi
}

for rid in $rids; do
  for app in TunnelServer TunnelClient; do
    publish "$app" "$rid" && archive "$app" "$rid"
  done
done

# ---- the .NET tool -------------------------------------------------------------------------------------------------
log "packing the .NET tool Tunnel2.Client"
if nice -n 10 dotnet pack src/TunnelClient -c Release --nologo -v quiet -o "$work/pack" >"$work/pack.log" 2>&1; then
  cp "$work"/pack/Tunnel2.Client.*.nupkg "$out/"
else
  tail -15 "$work/pack.log" | sed 's/^/    /'; problem "Tunnel2.Client: dotnet pack failed"
fi

# ---- Debian packages -----------------------------------------------------------------------------------------------
# deb ARCH RID: tunnel2_<version>_<arch>.deb from the linux publishes of RID.
#   /usr/lib/tunnel2/server/TunnelServer (+ appsettings.json; appsettings.Production.json -> /etc/tunnel2/server.json)
#   /usr/lib/tunnel2/client/TunnelClient (+ appsettings.json)
#   /usr/bin/TunnelServer, /usr/bin/TunnelClient, /usr/bin/tunnel2 (the tool's name for TunnelClient): symlinks
#   /lib/systemd/system/tunnel2-server.service, tunnel2-client@.service
#   /etc/tunnel2/server.env, server.json, client-demo.env, edge.env, Caddyfile   (conffiles)
#   /usr/share/doc/tunnel2/   deploy.md (the units' Documentation=), the other guides, examples/caddy.service.d/
# postinst makes the system user tunnel2 (the units' User=); an upgrade restarts the services that run (they drain).
deb() {
  local arch=$1 rid=$2 root="$work/deb-$1" deb_name="tunnel2_${version}_$1.deb" app
  for app in TunnelServer TunnelClient; do
    [ -f "$work/publish/$rid/$app/$app" ] || { problem "$deb_name: no $rid build of $app"; return 1; }
  done
  log "building $deb_name (dpkg-deb)"
  install -d "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/etc/tunnel2" \
    "$root/usr/share/doc/tunnel2/examples/caddy.service.d" "$root/usr/lib/tunnel2"
  install -d "$root/usr/lib/tunnel2/server" "$root/usr/lib/tunnel2/client"
  install -m 0755 "$work/publish/$rid/TunnelServer/TunnelServer" "$root/usr/lib/tunnel2/server/"
  install -m 0644 "$work/publish/$rid/TunnelServer/appsettings.json" "$root/usr/lib/tunnel2/server/"
  install -m 0755 "$work/publish/$rid/TunnelClient/TunnelClient" "$root/usr/lib/tunnel2/client/"
  install -m 0644 "$work/publish/$rid/TunnelClient/appsettings.json" "$root/usr/lib/tunnel2/client/"
  ln -s /etc/tunnel2/server.json "$root/usr/lib/tunnel2/server/appsettings.Production.json"
  ln -s ../lib/tunnel2/server/TunnelServer "$root/usr/bin/TunnelServer"
  ln -s ../lib/tunnel2/client/TunnelClient "$root/usr/bin/TunnelClient"
  ln -s ../lib/tunnel2/client/TunnelClient "$root/usr/bin/tunnel2"
  install -m 0644 tunnel2-deploy/systemd/tunnel2-server.service "tunnel2-deploy/systemd/tunnel2-client@.service" "$root/lib/systemd/system/"
  install -m 0600 tunnel2-deploy/systemd/examples/server.env tunnel2-deploy/systemd/examples/client-demo.env \
    tunnel2-deploy/systemd/examples/edge.env "$root/etc/tunnel2/"
  install -m 0644 tunnel2-deploy/systemd/examples/server.json "$root/etc/tunnel2/server.json"
  install -m 0644 tunnel2-deploy/edge/Caddyfile "$root/etc/tunnel2/Caddyfile"
  install -m 0644 docs/deploy.md README.md docs/configuration.md docs/running.md docs/edge.md docs/security.md docs/tcp.md \
    "$root/usr/share/doc/tunnel2/"
  install -m 0644 tunnel2-deploy/systemd/caddy.service.d/tunnel2.conf "$root/usr/share/doc/tunnel2/examples/caddy.service.d/"
  printf 'Tunnel2 %s\nSource: the Tunnel2 repository, commit %s.\n' "$version" "$(git rev-parse --short HEAD 2>/dev/null)" \
    >"$root/usr/share/doc/tunnel2/copyright"
  (cd "$root" && find etc -type f | sed 's|^|/|' | sort) >"$root/DEBIAN/conffiles"
  # The newest glibc symbol version either executable uses; OpenSSL is loaded at run time (TLS), so it is named too.
  local glibc
  glibc=$(readelf --dyn-syms -W "$root"/usr/lib/tunnel2/*/Tunnel* 2>/dev/null | grep -oE 'GLIBC_[0-9]+\.[0-9]+' | sed 's/GLIBC_//' | sort -V | tail -1)
  # A single-file (JIT) build's host links with the C++ runtime as well; a Native AOT build does not.
  local depends="libc6 (>= ${glibc:-2.34}), libssl3 | libssl3t64"
  if readelf -d "$root"/usr/lib/tunnel2/*/Tunnel* 2>/dev/null | grep -q 'NEEDED.*libstdc++'; then
    depends="$depends, libstdc++6, libgcc-s1"
  fi
  cat >"$root/DEBIAN/control" <<EOF
Package: tunnel2
Version: $version
Architecture: $arch
Maintainer: Tunnel2 developers <tunnel2@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Recommends: ca-certificates
Suggests: caddy
Section: net
Priority: optional
Homepage: https://localhost/tunnel2
Description: self-hosted HTTP and TCP tunnel (server and client)
 TunnelServer takes public HTTP requests and raw TCP connections and carries them
 over uplinks that TunnelClient dials out, to a backend next to the client.
 Both are self-contained executables: no .NET runtime is needed. The systemd
 units tunnel2-server.service and tunnel2-client@.service read /etc/tunnel2/;
 /usr/share/doc/tunnel2/deploy.md says how to configure, start and upgrade.
EOF
  cat >"$root/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
  # The services' user (the units say User=tunnel2 with DynamicUser=yes: systemd uses this static user when it exists).
  if ! getent passwd tunnel2 >/dev/null; then
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
      --comment "Tunnel2 services" tunnel2
  fi
  # server.json holds no secret, but the service must read it (the .env files are read by systemd, as root).
  chown root:tunnel2 /etc/tunnel2/server.json && chmod 0640 /etc/tunnel2/server.json
  if [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
    # An upgrade: the services that run restart on the new executables (SIGTERM drains first).
    if [ -n "$2" ]; then
      systemctl try-restart tunnel2-server.service 'tunnel2-client@*.service' || true
    fi
  fi
fi
exit 0
EOF
  cat >"$root/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
  systemctl stop tunnel2-server.service 'tunnel2-client@*.service' || true
  systemctl disable tunnel2-server.service || true
fi
exit 0
EOF
  cat >"$root/DEBIAN/postrm" <<'EOF'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload || true
fi
exit 0
EOF
  chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
  find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  dpkg-deb --root-owner-group -Zgzip --build "$root" "$out/$deb_name" >/dev/null || { problem "$deb_name: dpkg-deb failed"; return 1; }
}
case " $rids " in *" linux-x64 "*) deb amd64 linux-x64 ;; esac
case " $rids " in *" linux-arm64 "*) deb arm64 linux-arm64 ;; esac

# ---- checksums -----------------------------------------------------------------------------------------------------
mapfile -t artifacts < <(cd "$out" && find . -maxdepth 1 -type f -printf '%f\n' | sort)
(cd "$out" && sha256sum "${artifacts[@]}" >"$work/SHA256SUMS") && mv "$work/SHA256SUMS" "$out/SHA256SUMS"
log "artifacts in $out:"
(cd "$out" && find . -maxdepth 1 -type f -printf '    %10s  %f\n' | sort -k2)
if [ ${#problems[@]} -gt 0 ]; then
  log "${#problems[@]} not built:"
  printf '    %s\n' "${problems[@]}"
  exit 1
fi
log "release $version complete"
exit 0
