#!/usr/bin/env bash
# Speed of `uuidforge db` on a generated 2 GB database against the issue's
# targets and a global_search-style PL/pgSQL scan (scripts/bench_db.py);
# figures go to docs/PERFORMANCE.md. The generated databases are kept
# (uuidforge_bench, uuidforge_bench_wide); drop them to start over.
# Usage: scripts/bench-db.sh   (RUNS=5 for more runs per measure)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/pg-setup.sh --no-build >/dev/null
cargo build -q --release -p uuidforge-cli
exec python3 scripts/bench_db.py
