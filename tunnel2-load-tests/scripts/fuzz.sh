#!/usr/bin/env bash
# Coverage-guided fuzzing of the tunnel's head parsers with AFL++ and SharpFuzz (fuzz/Tunnel2.Fuzz):
#   head           the binary head codec (request and response heads, re-encoded and read back) and the HTTP/1 head
#                  parser over one segment and over many (Tunnel2.Protocol)
#   response-head  the client's reader of its backend's response head (TunnelClient's Relay/Http1/ResponseHeadReader)
# Installs what is missing (afl++ from apt when run as root, the SharpFuzz.CommandLine dotnet tool), publishes the
# harness, instruments the parser assemblies, runs afl-fuzz for a bounded time, then prints the figures and replays
# every crash and hang it saved.
#
#   tunnel2-load-tests/scripts/fuzz.sh [--target head|response-head] [--seconds N] [--out DIR]
#
# Exit status: 0 when the run found no crash, 1 when it did, 2 on bad usage or a missing tool.
set -euo pipefail

target=head seconds=300 out=""
while (($#)); do
  case "$1" in
    --target) target="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "fuzz: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case "$target" in head|response-head) ;; *) echo "fuzz: --target is head or response-head" >&2; exit 2 ;; esac

repo="$(cd "$(dirname "$0")/../.." && pwd)"
out="${out:-/tmp/tunnel2-fuzz/$target}"
tools="${TUNNEL2_FUZZ_TOOLS:-$HOME/.cache/tunnel2-fuzz/tools}"

if ! command -v afl-fuzz >/dev/null 2>&1; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "fuzz: installing afl++"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq afl++ >/dev/null
  else
    echo "fuzz: afl-fuzz is not installed (apt-get install afl++)" >&2; exit 2
  fi
fi
if [[ ! -x "$tools/sharpfuzz" ]]; then
  echo "fuzz: installing the SharpFuzz.CommandLine tool into $tools"
  dotnet tool install --tool-path "$tools" SharpFuzz.CommandLine --version 2.3.0 >/dev/null
fi

rm -rf "$out" && mkdir -p "$out"
echo "fuzz: publishing the harness into $out/bin"
dotnet publish "$repo/fuzz/Tunnel2.Fuzz/Tunnel2.Fuzz.csproj" -c Release -o "$out/bin" --nologo -v quiet >/dev/null
# An uninstrumented copy replays the findings: instrumented code writes to AFL's shared memory, absent outside afl-fuzz.
cp -r "$out/bin" "$out/bin-plain"
# Only the parsers are instrumented: coverage of the rest of the assemblies would be noise in AFL's map.
"$tools/sharpfuzz" "$out/bin/Tunnel2.Protocol.dll" Tunnel2.Protocol.Heads Tunnel2.Protocol.Http1
if [[ $target == response-head ]]; then
  "$tools/sharpfuzz" "$out/bin/TunnelClient.dll" Tunnel2.TunnelClient.Relay.Http1
fi

echo "fuzz: afl-fuzz on '$target' for ${seconds}s (findings in $out/findings)"
export AFL_SKIP_BIN_CHECK=1 AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1
export DOTNET_TieredPGO=0 DOTNET_TC_QuickJitForLoops=1
afl-fuzz -V "$seconds" -i "$repo/fuzz/Tunnel2.Fuzz/corpus/$target" -o "$out/findings" -t 2000+ -m none \
  -- dotnet "$out/bin/Tunnel2.Fuzz.dll" "$target" >"$out/afl.log" 2>&1 || {
    echo "fuzz: afl-fuzz failed; the end of its log:" >&2; tail -30 "$out/afl.log" >&2; exit 2; }

stats="$out/findings/default/fuzzer_stats"
echo "fuzz: figures ($stats)"
grep -E '^(start_time|last_update|run_time|execs_done|execs_per_sec|corpus_count|corpus_found|bitmap_cvg|edges_found|total_edges|saved_crashes|saved_hangs|stability) ' "$stats" | sed 's/^/  /'

shopt -s nullglob
crashes=("$out"/findings/default/crashes/id:*)
hangs=("$out"/findings/default/hangs/id:*)
echo "fuzz: ${#crashes[@]} crash(es), ${#hangs[@]} hang(s)"
for file in "${crashes[@]}" "${hangs[@]}"; do
  echo "--- $file"
  od -A d -c "$file" | head -12
  DOTNET_gcServer=0 timeout 20 dotnet "$out/bin-plain/Tunnel2.Fuzz.dll" "$target" --replay "$file" | head -8 || true
done
((${#crashes[@]} == 0))
