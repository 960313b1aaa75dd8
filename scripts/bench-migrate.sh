#!/usr/bin/env bash
# Speed, size after and WAL of `uuidforge db migrate-key` against the floor
# (each table written once), the hand-written migration in place and
# pg_repack of the same tables (scripts/bench_migrate.py), in one
# transaction and in batches under pgbench writers, at 10^6 and 10^7 rows
# in all; figures go to docs/PERFORMANCE.md. The generated template
# databases are kept.
# Usage: scripts/bench-migrate.sh [--short]   (RUNS; SIZES="P:C P:C", the
#        parent's rows and each child's, to change sizes; --short: tiny
#        ones, one run)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
./scripts/pg-setup.sh --no-build >/dev/null
# The peer: pg_repack rewrites the same tables online (it changes no value).
command -v pg_repack >/dev/null || {
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15-repack >/dev/null
}
UUIDFORGE_BENCH_BIN=$(bench_bin)
export UUIDFORGE_BENCH_BIN
if [ "$SHORT" = 1 ]; then
  # Its times mean nothing: only a failed writer fails it.
  export RUNS=1 SIZES=2000:6000 BATCH_SIZE=500 COPY_BATCH_SIZE=500 BENCH_SHORT=1
fi
exec python3 scripts/bench_migrate.py
