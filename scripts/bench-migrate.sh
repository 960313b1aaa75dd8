#!/usr/bin/env bash
# Speed of `uuidforge db migrate-key` against the obvious hand-written
# single-transaction migration (scripts/bench_migrate.py); figures go to
# docs/PERFORMANCE.md. The generated template database is kept.
# Usage: scripts/bench-migrate.sh   (RUNS, PARENT_ROWS, CHILD_ROWS to change sizes)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/pg-setup.sh --no-build >/dev/null
cargo build -q --release -p uuidforge-cli
exec python3 scripts/bench_migrate.py
