#!/usr/bin/env bash
# Every test of the extension against the real PostgreSQL 15 server, in both
# modes: the SQL regression suite and the concurrency test, first with the
# library loaded per session, then with it in shared_preload_libraries
# (server-wide order through shared memory), and the checkpoint across
# restarts with the clock set back. scripts/pg-setup.sh must have
# installed the extension (scripts/test.sh does that first).
#   run.sh [15|18]   the server (default 15; scripts/pg-setup.sh --pg N first)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
major="${1:-15}"
setup() { "$here/../../../scripts/pg-setup.sh" --pg "$major" "$@"; }

echo "-- without shared_preload_libraries (per-session order)"
setup --no-build --no-preload
"$here/regress.sh" "$major"
"$here/concurrency.sh" per-session "$major"

echo "-- with shared_preload_libraries = uuidforge (server-wide order)"
setup --no-build --preload
"$here/regress.sh" "$major"
"$here/concurrency.sh" server-wide "$major"

echo "-- the checkpoint across restarts with the clock set back (own cluster)"
"$here/checkpoint.sh" "$major"
