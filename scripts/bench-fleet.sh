#!/usr/bin/env bash
# `uuidforge db find` over a fleet of three PostgreSQL 15 clusters
# (scripts/fleet-setup.sh) against each member's own `find`, in one run:
# the issue's target is the fleet at most 1.3x the slowest member alone
# (scripts/bench_fleet.py). Figures go to docs/PERFORMANCE.md. The
# generated databases (fleetbench on each member; the setup drops only test databases) are kept.
# Usage: scripts/bench-fleet.sh [--short]   (RUNS=7, ROWS=200000 per member;
#        --short: 2 000 rows, one run, the binary the tests built)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
ports=$(./scripts/fleet-setup.sh | sed -n 's/^UUIDFORGE_TEST_FLEET_PORTS=//p')
UUIDFORGE_BENCH_BIN=$(bench_bin)
export UUIDFORGE_BENCH_BIN UUIDFORGE_BENCH_FLEET_PORTS=$ports
if [ "$SHORT" = 1 ]; then
  # Its times mean nothing: a missed target does not fail it.
  export RUNS=1 ROWS=2000 BENCH_SHORT=1
fi
exec python3 scripts/bench_fleet.py
