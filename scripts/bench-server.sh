#!/usr/bin/env bash
# HTTP throughput of `uuidforge serve` on loopback, measured with wrk (from
# Debian), against the issue's targets; figures go to docs/PERFORMANCE.md.
#   single-UUID requests      >= 20 000 requests/s
#   count=10000 requests      >= 2 000 000 UUIDs/s
#   no 5xx (nor any non-2xx), and memory bounded with 100 concurrent
#   count=100000 requests (peak RSS printed next to the buffered size).
# Usage: scripts/bench-server.sh [--short] [SECONDS per run, default 10]
# --short: 1 s per run, the binary the tests built, targets not enforced
# (the test command runs it so that it keeps working; its figures mean
# nothing); a non-2xx answer still fails it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
secs="${BENCH_ARGS[0]:-10}"
[ "$SHORT" = 0 ] || secs=1
command -v wrk >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
bin=$(bench_bin)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
names=$(mktemp -u /tmp/uuidforge-bench-XXXX.redb)
# Logging at info (one line per request) as in production, to /dev/null.
"$bin" serve --bind "127.0.0.1:$port" --names-db "$names" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null; rm -f "$names"' EXIT
for _ in $(seq 100); do curl -fs "$base/healthz" >/dev/null 2>&1 && break; sleep 0.1; done

rss() { awk -v k="$1:" '$1 == k { print int($2 / 1024) }' "/proc/$server/status"; }
run() { # connections, path
  wrk -t1 -c"$1" -d"${secs}s" --latency "$base$2" 2>&1
}
field() { awk -v k="$1" '$1 == k { print $2 }'; }
fail=0
check() { # label, value, target
  if awk -v v="$2" -v t="$3" 'BEGIN { exit !(v >= t) }'; then verdict=ok; else verdict=MISSED; fail=1; fi
  printf '%-34s %14.0f   target >= %-10s ratio %.2f  %s\n' "$1" "$2" "$3" "$(awk -v v="$2" -v t="$3" 'BEGIN{print v/t}')" "$verdict"
}
errors=0
non2xx() {
  if grep -E "Non-2xx|Socket errors" <<<"$1"; then errors=1; fi
}

echo "uuidforge serve on $base, wrk -t1, ${secs}s per run, $(nproc) cores"
run 16 "/api/v1/uuids" >/dev/null # warm-up
single=$(run 64 "/api/v1/uuids")
rps=$(field Requests/sec: <<<"$single")
check "single-UUID requests/s (c=64)" "$rps" 20000
non2xx "$single"

batch=$(run 8 "/api/v1/uuids?count=10000")
brps=$(field Requests/sec: <<<"$batch")
check "UUIDs/s via count=10000 (c=8)" "$(awk -v r="$brps" 'BEGIN{print r*10000}')" 2000000
non2xx "$batch"

text=$(wrk -t1 -c8 -d"${secs}s" -H 'Accept: text/plain' "$base/api/v1/uuids?count=10000" 2>&1)
printf '%-34s %14.0f\n' "  same as text/plain" "$(awk -v r="$(field Requests/sec: <<<"$text")" 'BEGIN{print r*10000}')"
non2xx "$text"

before=$(rss VmRSS)
big=$(run 100 "/api/v1/uuids?count=100000")
peak=$(rss VmHWM)
after=$(rss VmRSS)
echo "100 concurrent count=100000: $(field Requests/sec: <<<"$big") requests/s; RSS before ${before} MiB, peak ${peak} MiB, after ${after} MiB (buffered whole, 100 bodies would be ~$((100 * 3900000 / 1048576)) MiB)"
non2xx "$big"
if [ "$peak" -gt 200 ]; then echo "MISSED: peak RSS above 200 MiB"; fail=1; fi
curl -fs "$base/healthz" >/dev/null
[ "$errors" = 0 ] || exit 1
[ "$SHORT" = 1 ] || exit $fail
