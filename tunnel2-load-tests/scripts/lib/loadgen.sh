# shellcheck shell=bash disable=SC2034  # variables are used by the scripts that source this
# Profiles and the open-model stage runner (h2load). Sourced after common.sh.
#
# A stage is "RATE:SECONDS": RATE requests per second offered for SECONDS, whatever the
# server does (open model). h2load gives every client (one HTTP/1.1 connection, one request
# in flight) a fixed rate with --rps, so the total offered rate is clients x rps. Requests a
# client cannot send on time wait in h2load's backlog; the report shows them as "not sent"
# and as an RPS reached below the target.

# profile_stages NAME: the stages of a profile, "RATE:SECONDS" separated by spaces.
profile_stages() {
  case "$1" in
    smoke)      echo "200:10" ;;
    moderate)   echo "100:20 200:20 300:20 400:20 500:20" ;;
    aggressive) echo "20:30 50:30 100:30 200:30 500:30 1000:30" ;;
    # Stops at the first stage that breaks the limits (STRESS_* below).
    stress)     echo "1000:15 2000:15 4000:15 6000:15 8000:15 10000:15 12000:15 15000:15 18000:15 21000:15 25000:15 30000:15" ;;
    soak)       echo "200:${LOADTEST_SOAK_SECONDS:-600}" ;;
    *) return 1 ;;
  esac
}

PROFILES="smoke moderate aggressive stress soak"

# Limits of a healthy stress stage; the knee is the last stage within all three.
STRESS_MAX_FAIL_PCT="${LOADTEST_STRESS_MAX_FAIL_PCT:-0.1}"   # failed / responses, %
STRESS_MIN_REACHED="${LOADTEST_STRESS_MIN_REACHED:-0.95}"     # RPS reached / target
STRESS_MAX_P99_MS="${LOADTEST_STRESS_MAX_P99_MS:-100}"        # p99 of 2xx responses

# Client sizing: each client is asked for at most PER_CLIENT_RPS (so it has room for
# latency up to 1/PER_CLIENT_RPS s before it falls behind), and at most MAX_CLIENTS clients.
PER_CLIENT_RPS="${LOADTEST_PER_CLIENT_RPS:-10}"
MAX_CLIENTS="${LOADTEST_MAX_CLIENTS:-200}"
# stress needs more connections: in flight = rate x latency, e.g. 20,000 RPS x 10 ms = 200, and
# with one request in flight per connection, too few clients would be the limit, not the tunnel.
STRESS_MAX_CLIENTS="${LOADTEST_STRESS_MAX_CLIENTS:-600}"
WARMUP_SECONDS="${LOADTEST_WARMUP_SECONDS:-3}"

# validate_stages "RATE:SECONDS ...": positive integers only.
validate_stages() {
  local stage
  [[ -n "$1" ]] || return 1
  for stage in $1; do
    [[ "$stage" =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] || return 1
  done
}

# stage_clients ENDPOINT RATE: number of h2load clients for a stage.
stage_clients() {
  local endpoint="$1" rate="$2"
  awk -v rate="$rate" -v per="$PER_CLIENT_RPS" -v max="$MAX_CLIENTS" \
      -v delay="$([[ "$endpoint" == delay ]] && echo "$DELAY_MS" || echo 0)" 'BEGIN {
    # A client of /delay/{ms} can do at most 1000/ms requests a second; keep it half busy.
    if (delay > 0 && 500 / delay < per) per = 500 / delay
    c = int(rate / per); if (c * per < rate) c++
    if (c > max) c = max
    if (c < 1) c = 1
    print c
  }'
}

# h2load_args ENDPOINT BODYFILE: extra arguments for the endpoint (the POST body for echo).
h2load_args() {
  if [[ "$1" == echo ]]; then
    printf '%s\n' -d "$2" -H 'Content-Type: application/json'
  fi
}

# h2load starts every client's --rps timer at the same moment, so C clients at R RPS each send
# C requests at once every 1/R s: bursts, not a steady arrival rate. A stage therefore runs
# STAGGER_GROUPS h2load processes, each with a share of the clients, started 1/(R x groups) s
# apart, so that the bursts are C/groups requests spread evenly over the period.
STAGGER_GROUPS="${LOADTEST_STAGGER_GROUPS:-10}"

# run_groups OUTDIR SECONDS GROUPS CLIENTS RPS H2LOAD_ARGS...: the staggered h2load processes of
# one stage; group g writes OUTDIR/h2load.g.txt and OUTDIR/requests.g.log. Returns the highest
# exit code of the groups. Runs in the background under run_child; TERM stops every group.
run_groups() {
  local out="$1" seconds="$2" groups="$3" clients="$4" rps="$5"
  shift 5
  local pids=() g share offset status=0 code
  trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait; exit 143' TERM
  for ((g = 0; g < groups; g++)); do
    share=$(((clients + groups - 1 - g) / groups))   # spread the remainder over the first groups
    ((share > 0)) || continue
    offset="$(awk -v r="$rps" -v n="$groups" -v g="$g" 'BEGIN { printf "%.4f", g / (r * n) }')"
    (
      sleep "$offset"
      exec timeout --kill-after=5 "$((seconds + 60))" h2load --h1 -t 1 -c "$share" --rps "$rps" -D "$seconds" \
        --log-file "$out/requests.$g.log" "$@"
    ) >"$out/h2load.$g.txt" 2>&1 &
    pids+=($!)
  done
  for g in "${!pids[@]}"; do
    code=0
    wait "${pids[$g]}" || code=$?
    ((code > status)) && status=$code
  done
  return "$status"
}

# run_stage TARGET URL ENDPOINT RATE SECONDS OUTDIR BODYFILE
# Runs one open-model stage with h2load; writes OUTDIR/{stage.json,h2load.G.txt,requests.G.log}
# (one pair per staggered group). requests.G.log is h2load's --log-file: start time (µs since
# epoch) TAB status (-1 = failed stream) TAB µs until the end of the response, one line per
# finished request.
run_stage() {
  local target="$1" url="$2" endpoint="$3" rate="$4" seconds="$5" out="$6" body="$7"
  local clients rps groups
  clients="$(stage_clients "$endpoint" "$rate")"
  rps="$(awk -v r="$rate" -v c="$clients" 'BEGIN { printf "%.6g", r / c }')"
  groups=$((STAGGER_GROUPS < clients ? STAGGER_GROUPS : clients))
  ((groups >= 1)) || groups=1
  mkdir -p "$out"
  local extra=()
  mapfile -t extra < <(h2load_args "$endpoint" "$body")
  local cmd=(h2load --h1 -t 1 -c "CLIENTS/$groups" --rps "$rps" -D "$seconds" --log-file "$out/requests.G.log" "${extra[@]}" "$url")
  python3 "$LOADREPORT" stage-meta "$out/stage.json" target="$target" endpoint="$endpoint" \
    method="$(endpoint_method "$endpoint")" url="$url" rate="$rate" seconds="$seconds" \
    clients="$clients" rps_per_client="$rps" groups="$groups" started_utc="$(date -u +%FT%TZ)" \
    command="$groups staggered groups of: $(printf '%q ' "${cmd[@]}")"
  log "$target: $rate RPS for ${seconds}s ($clients clients x $rps RPS in $groups staggered groups) $url"
  # h2load ends the run itself after -D; timeout is only a guard against a hung process.
  local status=0
  run_child "$out/groups.txt" run_groups "$out" "$seconds" "$groups" "$clients" "$rps" "${extra[@]}" "$url" || status=$?
  if ((status != 0)); then
    warn "h2load exited with code $status (see $out/h2load.*.txt)"
    echo "$status" >"$out/h2load.exit"
  fi
  return 0
}

# warm_up TARGET URL ENDPOINT RATE OUTFILE BODYFILE: WARMUP_SECONDS of load that is not
# measured (JIT, connection pools, the uplink's buffers). Output kept for reference only.
warm_up() {
  local target="$1" url="$2" endpoint="$3" rate="$4" out="$5" body="$6"
  ((WARMUP_SECONDS > 0)) || return 0
  local clients rps
  clients="$(stage_clients "$endpoint" "$rate")"
  rps="$(awk -v r="$rate" -v c="$clients" 'BEGIN { printf "%.6g", r / c }')"
  local extra=()
  mapfile -t extra < <(h2load_args "$endpoint" "$body")
  log "$target: warm-up ${WARMUP_SECONDS}s at $rate RPS (not measured)"
  run_child "$out" timeout --kill-after=5 "$((WARMUP_SECONDS + 60))" \
    h2load --h1 -t 1 -c "$clients" --rps "$rps" -D "$WARMUP_SECONDS" \
    "${extra[@]}" "$url" || warn "warm-up h2load failed (see $out)"
}
