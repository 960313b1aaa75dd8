#!/usr/bin/env bash
# Fuzzing that counts, on demand: every fuzz target (the library's parse,
# base32 and uuid192; grep's documents) for RUNS inputs each (default
# 10 000 000) instead of the test command's FUZZ_SECONDS per target. Fails
# on the first crash (libFuzzer keeps the input under
# fuzz/artifacts/TARGET); prints each target's inputs, seconds and inputs per
# second for docs/PERFORMANCE.md.
#   scripts/fuzz-long.sh [TARGET...]   (default: all four)
# The library's targets run under AddressSanitizer, as in the test
# command. documents runs without it here (FUZZ_SANITIZER=address to keep
# it): it searches each input 64 times, and ASan's allocator and checks
# took four fifths of its time (20 s from the same corpus: 3 900 inputs a
# second with it, 15 900 without); the test command's short run keeps
# ASan on it. Without ASan its 10^7 inputs take about 25 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-10000000}"
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(parse base32 uuid192 documents)
summary=()
for target in "${targets[@]}"; do
  case "$target" in
    documents) sanitizer="${FUZZ_SANITIZER:-none}" ;;
    parse | base32 | uuid192) sanitizer="${FUZZ_SANITIZER:-address}" ;;
    *) echo "fuzz-long.sh: unknown target $target (expected parse, base32, uuid192 or documents)" >&2; exit 2 ;;
  esac
  log="target/fuzz-long-$target.log"
  mkdir -p target
  echo "== $target: $runs inputs (sanitizer: $sanitizer)"
  started=$SECONDS
  cargo +nightly fuzz run -s "$sanitizer" "$target" -- -runs="$runs" -print_final_stats=1 >"$log" 2>&1 \
    || { tail -n 30 "$log"; echo "fuzz-long.sh: $target FAILED (log $log)"; exit 1; }
  took=$((SECONDS - started))
  done_line=$(grep -E "^Done [0-9]+ runs" "$log" | tail -n 1)
  done_runs=$(awk '{print $2}' <<<"$done_line")
  fuzz_secs=$(awk '{print $5}' <<<"$done_line")
  [ "$done_runs" -ge "$runs" ] || { tail -n 30 "$log"; echo "fuzz-long.sh: $target ran $done_runs inputs, fewer than $runs"; exit 1; }
  summary+=("$(printf '%-10s %12s inputs in %6s s (%s s with the build; sanitizer %s): %s per second' \
    "$target" "$done_runs" "$fuzz_secs" "$took" "$sanitizer" "$(awk -v r="$done_runs" -v s="$fuzz_secs" 'BEGIN{ printf "%.0f", r / (s > 0 ? s : 1) }')")")
done
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
printf '%s\n' "${summary[@]}"
