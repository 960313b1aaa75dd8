#!/usr/bin/env bash
# The library's benchmarks against uuid, uuid7 and ulid, all in one run:
# times (criterion) with each ratio against its target, and instruction
# counts per operation (valgrind's callgrind: they do not move with other
# jobs on the machine, as times do). Every table names the CPU and the
# codecs' tier (avx512-vbmi, avx2, ssse3-bmi2, portable).
#
# Usage: scripts/bench.sh [--short] [--tier T | --every-tier] [all|codecs|generator] [criterion filter]
#   --short       each benchmark run once as a test (cargo test --benches,
#                 no optimized build) and the instruction counts of a
#                 debug build: the test command runs this so the benchmark
#                 keeps working; its figures mean nothing
#   --tier T      run at tier T (UUIDFORGE_CPU_TIER): one machine measures
#                 the lower tiers too
#   --every-tier  every tier this CPU has, one table each
set -euo pipefail
cd "$(dirname "$0")/.."
short=0 tiers=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --short) short=1; shift ;;
    --tier) tiers=("$2"); shift 2 ;;
    --every-tier) tiers=(every); shift ;;
    *) break ;;
  esac
done
benches=("${1:-all}")
[ "${1:-all}" = all ] && benches=(codecs generator)
[ "$#" -gt 0 ] && shift
criterion_args=("$@")
# The instruction counter (benches/counts.rs, a bench target without a
# harness): the executable cargo built, as its JSON messages name it.
# The short mode builds as the test command built the tests (the test
# profile, the workspace's features), so only the benchmarks compile.
. scripts/bench-common.sh
build=(build --release -p uuidforge)
[ "$short" = 1 ] && build=(test --no-run "${TEST_BUILD[@]}")
counts=$(cargo "${build[@]}" --quiet --bench counts --message-format=json |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "counts" and m.get("executable"):
        print(m["executable"])')
[ -x "$counts" ] || { echo "bench.sh: the counts benchmark was not built" >&2; exit 1; }
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
best=$("$counts" tier)
if [ "${tiers[0]:-}" = every ]; then
  tiers=()
  for t in portable ssse3-bmi2 avx2 avx512-vbmi; do
    tiers+=("$t")
    [ "$t" = "$best" ] && break
  done
fi
[ "${#tiers[@]}" = 0 ] && tiers=("$best")

for tier in "${tiers[@]}"; do
  actual=$(UUIDFORGE_CPU_TIER=$tier "$counts" tier)
  if [ "$short" = 1 ]; then
    for b in "${benches[@]}"; do
      UUIDFORGE_CPU_TIER=$tier cargo test --quiet "${TEST_BUILD[@]}" --bench "$b" -- --test >"target/bench-$b-short.log" 2>&1 \
        || { tail -n 30 "target/bench-$b-short.log"; exit 1; }
      echo "$b at tier $actual: $(grep -c '^Success' "target/bench-$b-short.log") benchmarks ran once"
    done
    continue
  fi
  home="$PWD/target/criterion-$actual"
  for b in "${benches[@]}"; do
    log="target/bench-$b-$actual.log"
    UUIDFORGE_CPU_TIER=$tier CRITERION_HOME="$home" \
      cargo bench --quiet -p uuidforge --bench "$b" -- "${criterion_args[@]}" >"$log" 2>&1 \
      || { tail -n 30 "$log"; exit 1; }
  done
  CPU="$cpu" TIER="$actual" HOME_DIR="$home" python3 scripts/bench_ratios.py
done

# Instruction counts: callgrind runs the same operations n times and 0
# times; the difference over n is the count per operation. Valgrind
# presents no AVX-512 to the program, so its tiers stop at avx2.
n=102400
[ "$short" = 1 ] && n=1024
count() {
  local tier=$1 op=$2 with without
  with=$(UUIDFORGE_CPU_TIER=$tier valgrind --tool=callgrind --callgrind-out-file=/dev/null "$counts" "$op" "$n" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
  without=$(UUIDFORGE_CPU_TIER=$tier valgrind --tool=callgrind --callgrind-out-file=/dev/null "$counts" "$op" 0 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
  python3 -c "print(f'{($with - $without) / $n:.1f}')"
}
if command -v valgrind >/dev/null; then
  printf '\ninstructions per operation (callgrind; %s; n = %s)\n' "$cpu" "$n"
  printf '%-12s %-16s %10s %10s %8s\n' tier operation uuidforge peer ratio
  counted=""
  for tier in "${tiers[@]}"; do
    [ "$tier" = avx512-vbmi ] && tier=avx2
    case " $counted " in *" $tier "*) continue ;; esac
    counted="$counted $tier"
    actual=$(UUIDFORGE_CPU_TIER=$tier valgrind -q "$counts" tier 2>/dev/null)
    for pair in format:format-uuid parse:parse-uuid base32-encode:base32-encode-ulid base32-decode:base32-decode-ulid fill:; do
      ours=${pair%%:*} peer=${pair#*:}
      a=$(count "$tier" "$ours")
      if [ -n "$peer" ]; then
        b=$(count "$tier" "$peer")
        printf '%-12s %-16s %10s %10s %8s\n' "$actual" "$ours" "$a" "$b" "$(python3 -c "print(f'{$a / $b:.3f}')")"
      else
        printf '%-12s %-16s %10s %10s %8s\n' "$actual" "$ours" "$a" - -
      fi
    done
  done
else
  echo "valgrind is not installed: no instruction counts (apt-get install valgrind)"
fi
