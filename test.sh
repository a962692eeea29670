#!/usr/bin/env bash
# The test command: installs what the tests need besides the .NET SDK, then runs every test.
#
#   ./test.sh [dotnet test arguments...]
#
# Reads tests/debian-packages.txt (one Debian package a line, optionally followed by the command or path that shows it
# is there; # starts a comment). Missing packages are installed with apt-get when run as root (apt-get update first,
# only when something is missing); otherwise it stops at once with exit code 2, naming what to install. Then runs
# `dotnet test Tunnel2.sln -c Release` with any further arguments passed on (e.g. --no-build, --logger,
# --results-directory, --filter). Exit code: that of dotnet test, or 2 when a prerequisite is missing.
set -uo pipefail

usage() {
  sed -n '2,10s/^# \{0,1\}//p' "$0"
}

case "${1:-}" in
  -h | --help) usage; exit 0 ;;
esac

cd "$(dirname "$0")" || exit 2
packages_file=tests/debian-packages.txt

stop() { echo "test.sh: $*" >&2; exit 2; }

command -v dotnet >/dev/null \
  || stop "the .NET SDK is not installed (dotnet is not on PATH): install the .NET 10 SDK (https://dot.net), then run ./test.sh again"

# present PACKAGE [PROBE]: the probe (a program on PATH, not a shell builtin, or an absolute path) exists, or else dpkg has the package.
present() {
  local package=$1 probe=${2:-}
  if [ -n "$probe" ]; then
    if [ "${probe:0:1}" = / ]; then [ -x "$probe" ]; else type -P "$probe" >/dev/null; fi
    return
  fi
  command -v dpkg-query >/dev/null && [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" = "install ok installed" ]
}

missing=()
while read -r package probe _; do
  [ -z "$package" ] && continue
  # TUNNEL2_CHROMIUM names the browser to use instead of Debian's chromium.
  if [ "$package" = chromium ] && [ -n "${TUNNEL2_CHROMIUM:-}" ]; then
    [ -x "$TUNNEL2_CHROMIUM" ] || stop "TUNNEL2_CHROMIUM=$TUNNEL2_CHROMIUM is not an executable file"
    continue
  fi
  present "$package" "$probe" || missing+=("$package")
done < <(sed -e 's/#.*//' "$packages_file")

if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null \
    || stop "the tests need ${missing[*]} (Debian package names), and there is no apt-get here: install them, then run ./test.sh again"
  [ "$(id -u)" = 0 ] \
    || stop "the tests need ${missing[*]}: run ./test.sh as root to install them, or first: sudo apt-get install ${missing[*]}"
  echo "test.sh: installing ${missing[*]} (apt-get update, then apt-get install)"
  apt-get update -qq || stop "apt-get update failed; then install by hand: apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    || stop "apt-get install ${missing[*]} failed"
fi

exec dotnet test Tunnel2.sln -c Release "$@"
