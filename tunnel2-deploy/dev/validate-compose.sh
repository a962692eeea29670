#!/usr/bin/env bash
# Validates the Tunnel2 dev stack without a Docker engine (what CI calls):
#   1. docker-compose -f tunnel2-deploy/dev/docker-compose.yml config -q   (schema + interpolation)
#   2. validate_compose.py: Dockerfiles, COPY'd paths, .dockerignore, ports, health checks,
#      depends_on, ${VAR}s, the token defined once, non-root users, no SDK in the final images.
# Prints one line per check; exits 1 if any check fails. Runs from any working directory.
#
#   tunnel2-deploy/dev/validate-compose.sh
#
# If docker-compose is missing it tries `apt-get install -y docker-compose` when running as root
# (TUNNEL2_NO_INSTALL=1 forbids that); if it still is missing, step 1 is reported as skipped
# (TUNNEL2_REQUIRE_COMPOSE=1 makes that a failure). `docker compose` (v2 plugin) is used when present.
set -euo pipefail

readonly DEV_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly COMPOSE_FILE="$DEV_DIR/docker-compose.yml"
passed=0
failed=0
pass() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

can_install() {
  [[ "${TUNNEL2_NO_INSTALL:-0}" != 1 && "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1
}

apt_install() {
  echo "info installing $* with apt-get (set TUNNEL2_NO_INSTALL=1 to skip)"
  # A stale package list is the usual reason for a failed install: update once, then retry.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 && return 0
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1
}

# --- 1. docker-compose config -q --------------------------------------------------------------
compose=()
if command -v docker-compose >/dev/null 2>&1; then
  compose=(docker-compose)
elif docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
elif can_install && apt_install docker-compose && command -v docker-compose >/dev/null 2>&1; then
  compose=(docker-compose)
fi

if ((${#compose[@]})); then
  if output="$("${compose[@]}" -f "$COMPOSE_FILE" config -q 2>&1)"; then
    pass "${compose[*]} config -q accepts docker-compose.yml ($("${compose[@]}" version --short 2>/dev/null || echo '?'))"
  else
    fail "${compose[*]} config -q rejects docker-compose.yml:"
    printf '%s\n' "$output" | sed 's/^/       /'
  fi
elif [[ "${TUNNEL2_REQUIRE_COMPOSE:-0}" == 1 ]]; then
  fail "docker-compose is not installed and could not be installed (TUNNEL2_REQUIRE_COMPOSE=1)"
else
  echo "skip docker-compose config -q: docker-compose is not installed and could not be installed"
fi

# --- 2. our own checks (python3 + PyYAML; docker-compose's Debian package depends on python3-yaml) ---
python=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import yaml' >/dev/null 2>&1; then
    python="$candidate"
    break
  fi
done
if [[ -z "$python" ]] && can_install && apt_install python3-yaml && /usr/bin/python3 -c 'import yaml' >/dev/null 2>&1; then
  python=/usr/bin/python3
fi

if [[ -z "$python" ]]; then
  fail "no python3 with PyYAML found (install python3-yaml); the static checks did not run"
else
  status=0
  output="$("$python" "$DEV_DIR/validate_compose.py" 2>&1)" || status=$?
  printf '%s\n' "$output"
  passed=$((passed + $(grep -c '^ok ' <<<"$output" || true)))
  failed=$((failed + $(grep -c '^FAIL' <<<"$output" || true)))
  if ((status != 0)) && ! grep -q '^FAIL' <<<"$output"; then
    fail "validate_compose.py exited with code $status"
  fi
fi

echo "validate-compose: $passed passed, $failed failed"
((failed == 0))
