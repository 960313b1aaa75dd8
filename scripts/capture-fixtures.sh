#!/usr/bin/env bash
# Captures the catalogs the change planners' unit tests plan on, from the
# real PostgreSQL server (scripts/pg-setup.sh first; 15 by default, or
# UUIDFORGE_TEST_PGPORT=5418 for 18): each database of
# crates/uuidforge-db/tests/fixtures/plans/*.sql is made, its catalog
# snapshot and every answer its operations' planning pass reads are written
# to the .json beside it, and the tests run on them. Review with git diff.
set -euo pipefail
cd "$(dirname "$0")/.."
UUIDFORGE_CAPTURE_FIXTURES=1 cargo test -q -p uuidforge-db --test planners -- --nocapture
