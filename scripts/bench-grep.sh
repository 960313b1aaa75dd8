#!/usr/bin/env bash
# uuidforge grep against its peers, measured by hyperfine in one run:
#   1. filter a SIZE_MB NDJSON file of orders by VALUES UUIDs at a JSON
#      path: `uuidforge grep -f ids.txt --json-path '$.order.items[*].id'`
#      vs jq with an index object of the values (jq -n, inputs, select);
#   2. plain-text any-UUID search of a SIZE_MB log: `uuidforge grep`
#      vs ripgrep with the UUID regex;
#   3. one search of a small document (one record) beside a big one, by
#      format, in process (examples/search_sizes): what each search costs
#      before it reads a byte, CSV and TSV against text.
# Both pairs are first checked to select the same records. Prints the
# hyperfine tables and the ratios. Usage:
#   SIZE_MB=1000 VALUES=1000000 RUNS=3 scripts/bench-grep.sh [--short] [DIR]
# --short: 2 MB, 1 000 values, 2 runs, debug builds (the test command runs
# it so that it keeps working).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
if [ "$SHORT" = 1 ]; then
  SIZE_MB=2 VALUES=1000 RUNS=2
fi
SIZE_MB="${SIZE_MB:-1000}"
VALUES="${VALUES:-1000000}"
RUNS="${RUNS:-3}"
DIR="${BENCH_ARGS[0]:-${TMPDIR:-/tmp}/uuidforge-grep-bench}"
[ "$SHORT" = 0 ] || DIR="$DIR-short"
need=()
for tool in jq rg hyperfine; do
  command -v "$tool" >/dev/null || need+=("$([ "$tool" = rg ] && echo ripgrep || echo "$tool")")
done
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
bin=$(bench_bin)
if [ "$SHORT" = 1 ]; then
  data=$(test_example bench_data)
else
  cargo build --release --quiet -p uuidforge-grep --example bench_data
  data=./target/release/examples/bench_data
fi
mkdir -p "$DIR"
if [ ! -s "$DIR/orders.ndjson" ] || [ "$(cat "$DIR/params" 2>/dev/null)" != "$SIZE_MB $VALUES" ]; then
  "$data" "$DIR" "$SIZE_MB" "$VALUES"
  echo "$SIZE_MB $VALUES" > "$DIR/params"
fi
cd "$DIR"
# jq 1.6's INDEX builtin is quadratic (10^4 values: 2.9 s, 10^5: 295 s on
# this machine); the same index object built with reduce is linear.
jq_filter='(reduce $ids[0][] as $x ({}; .[$x] = true)) as $idx | inputs | select(any(.order.items[]?.id; $idx[.] // false))'
ours_filter="$bin grep -f ids.txt --json-path '\$.order.items[*].id' orders.ndjson"
jq_cmd="jq -c -n --slurpfile ids ids.json '$jq_filter' orders.ndjson"
rg_cmd="rg '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}' log.txt"
ours_text="$bin grep log.txt"

echo "== checking that each pair selects the same records"
sh -c "$ours_filter" | grep -o '"number":[0-9]*' > ours.numbers
sh -c "$jq_cmd" | grep -o '"number":[0-9]*' > jq.numbers
cmp -s ours.numbers jq.numbers || { echo "uuidforge and jq select different orders" >&2; exit 1; }
echo "   filter: $(wc -l < ours.numbers) orders selected by both"
cmp -s <(sh -c "$ours_text") <(sh -c "$rg_cmd") || { echo "uuidforge and rg print different lines" >&2; exit 1; }
echo "   text: $(sh -c "$rg_cmd" | wc -l) lines printed by both"

hyperfine --style basic --warmup 1 --runs "$RUNS" --export-json filter.json \
  -n uuidforge "$ours_filter > /dev/null" -n jq "$jq_cmd > /dev/null"
hyperfine --style basic --warmup 1 --runs "$RUNS" --export-json text.json \
  -n uuidforge "$ours_text > /dev/null" -n ripgrep "$rg_cmd > /dev/null"
python3 - "$SIZE_MB" "$VALUES" <<'PY'
import json, sys
size, values = sys.argv[1], int(sys.argv[2])
def means(path):
    return {r["command"]: r["mean"] for r in json.load(open(path))["results"]}
f, t = means("filter.json"), means("text.json")
print(f"filter {size} MB NDJSON by {values:,} values at a JSON path: uuidforge {f['uuidforge']:.2f} s, jq {f['jq']:.2f} s -> {f['jq'] / f['uuidforge']:.1f}x jq (target >= 10x)")
print(f"any-UUID search of {size} MB of text: uuidforge {t['uuidforge']:.2f} s, ripgrep {t['ripgrep']:.2f} s -> {t['ripgrep'] / t['uuidforge']:.2f}x ripgrep's speed (target >= 0.5x)")
PY

echo "== one search by format: a small document beside a big one (in process)"
cd - >/dev/null
if [ "$SHORT" = 1 ]; then
  "$(test_example search_sizes)" 1
else
  cargo build --release --quiet -p uuidforge-grep --example search_sizes
  ./target/release/examples/search_sizes 5
fi
