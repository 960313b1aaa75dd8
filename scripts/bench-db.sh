#!/usr/bin/env bash
# Speed of `uuidforge db` on a generated 2 GB database against the issue's
# targets and a global_search-style PL/pgSQL scan (scripts/bench_db.py);
# figures go to docs/PERFORMANCE.md. The generated databases are kept
# (uuidforge_bench, uuidforge_bench_wide); drop them to start over.
# Usage: scripts/bench-db.sh [--short]   (RUNS=5 for more runs per measure;
#        --short: tables a thousandth the size, one run)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
./scripts/pg-setup.sh --no-build >/dev/null
UUIDFORGE_BENCH_BIN=$(bench_bin)
export UUIDFORGE_BENCH_BIN
if [ "$SHORT" = 1 ]; then
  # Its figures mean nothing: a missed target does not fail it.
  export BENCH_SCALE=0.001 RUNS=1 BENCH_SHORT=1
fi
exec python3 scripts/bench_db.py
