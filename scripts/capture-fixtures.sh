#!/usr/bin/env bash
# Captures the catalogs the change planners' tests plan on
# (crates/uuidforge-change/tests/planners/), from the real PostgreSQL servers
# (scripts/pg-setup.sh --reset and --pg 18 --reset first): each database of
# crates/uuidforge-change/tests/fixtures/plans/*.sql is made on 15 and on 18,
# its catalog snapshot and every answer its cases' planning passes read are
# written to NAME-pg15.json and NAME-pg18.json, then the planner tests run
# on them. A changed plan shows as a diff of golden/CATALOG/CASE.pgNN.sql:
# review it, then accept it with UUIDFORGE_ACCEPT_PLANS=1 (this script's
# --accept).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/pg-env.sh
. scripts/pg-env.sh
# The capture on 15 checks the 18 files too, which may still be the old
# ones: the run on 18 below checks both.
UUIDFORGE_CAPTURE_FIXTURES=1 cargo test -q -p uuidforge-change --test capture_catalogs >/dev/null 2>&1 || true
pg_env 18
UUIDFORGE_TEST_PGPORT="$PG_PORT" PATH="$PG_BIN:$PATH" UUIDFORGE_CAPTURE_FIXTURES=1 \
  cargo test -q -p uuidforge-change --test capture_catalogs
if [ "${1:-}" = --accept ]; then
  UUIDFORGE_ACCEPT_PLANS=1 cargo test -q -p uuidforge-change --test planners
fi
cargo test -q -p uuidforge-change --test planners
