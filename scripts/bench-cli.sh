#!/usr/bin/env bash
# CLI throughput against the plain alternatives, measured in one run:
#   uuidforge gen -n N (v7, canonical)  vs  uuid::Uuid::now_v7 in a minimal Rust loop
#                                       vs  Python's uuid.uuid4() loop
#   uuidforge convert --to base32 over N lines
# Prints the best of 3 runs of each and the ratios.
# Usage: scripts/bench-cli.sh [--short] [N]   (--short: N = 10 000, debug
#        builds: the test command runs it so that it keeps working)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
N="${BENCH_ARGS[0]:-10000000}"
bin=$(bench_bin)
if [ "$SHORT" = 1 ]; then
  N=10000
  peer=$(test_example peer_uuid_v7)
else
  cargo build --release --quiet -p uuidforge-cli --example peer_uuid_v7
  peer=./target/release/examples/peer_uuid_v7
fi
best() { # best wall time in seconds of 3 runs of "$@"
  local best=999999
  for _ in 1 2 3; do
    local s e
    s=$(date +%s.%N); "$@"; e=$(date +%s.%N)
    best=$(python3 -c "print(min($best, $e - $s))")
  done
  echo "$best"
}
input=$(mktemp); trap 'rm -f "$input"' EXIT
"$bin" gen -n "$N" > "$input"
PY_N=$((N / 10))
t_gen=$(best sh -c "$bin gen -n $N > /dev/null")
t_peer=$(best sh -c "$peer $N > /dev/null")
t_py=$(best sh -c "python3 -c 'import sys, uuid
w = sys.stdout.write
for _ in range($PY_N): w(str(uuid.uuid4()) + \"\\n\")' > /dev/null")
t_conv=$(best sh -c "$bin convert --to base32 < $input > /dev/null")
python3 - "$N" "$t_gen" "$t_peer" "$t_py" "$PY_N" "$t_conv" <<'PY'
import sys
n, gen, peer, py, py_n, conv = int(sys.argv[1]), *map(float, sys.argv[2:5]), int(sys.argv[5]), float(sys.argv[6])
rate = lambda count, t: count / t / 1e6
print(f"uuidforge gen -n {n}:            {gen:.3f} s  {rate(n, gen):7.1f} M UUIDs/s  (target >= 20)")
print(f"uuid crate now_v7 loop, {n}:     {peer:.3f} s  {rate(n, peer):7.1f} M UUIDs/s  -> uuidforge is {peer / gen:.1f}x faster")
print(f"python uuid.uuid4() loop, {py_n}: {py:.3f} s  {rate(py_n, py):7.1f} M UUIDs/s  -> uuidforge is {rate(n, gen) / rate(py_n, py):.1f}x faster")
print(f"uuidforge convert --to base32, {n} lines: {conv:.3f} s  {rate(n, conv):7.1f} M lines/s  (target >= 10)")
PY
