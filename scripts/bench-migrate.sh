#!/usr/bin/env bash
# Speed of `uuidforge db migrate-key` against the obvious hand-written
# single-transaction migration (scripts/bench_migrate.py), in one
# transaction and in batches under pgbench writers; figures go to
# docs/PERFORMANCE.md. The generated template database is kept.
# Usage: scripts/bench-migrate.sh [--short]   (RUNS, PARENT_ROWS, CHILD_ROWS
#        to change sizes; --short: tiny ones, one run)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
./scripts/pg-setup.sh --no-build >/dev/null
UUIDFORGE_BENCH_BIN=$(bench_bin)
export UUIDFORGE_BENCH_BIN
if [ "$SHORT" = 1 ]; then
  # Its times mean nothing: only a failed writer fails it.
  export RUNS=1 PARENT_ROWS=2000 CHILD_ROWS=6000 BATCH_SIZE=500 BENCH_SHORT=1
fi
exec python3 scripts/bench_migrate.py
