#!/usr/bin/env bash
# Every test of the extension against the real PostgreSQL 15 server, in both
# modes: the SQL regression suite and the concurrency test, first with the
# library loaded per session, then with it in shared_preload_libraries
# (server-wide order through shared memory), and the checkpoint across
# restarts with the clock set back. scripts/pg-setup.sh must have
# installed the extension (scripts/test.sh does that first).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
setup="$here/../../../scripts/pg-setup.sh"

echo "-- without shared_preload_libraries (per-session order)"
"$setup" --no-build --no-preload
"$here/regress.sh"
"$here/concurrency.sh" per-session

echo "-- with shared_preload_libraries = uuidforge (server-wide order)"
"$setup" --no-build --preload
"$here/regress.sh"
"$here/concurrency.sh" server-wide

echo "-- the checkpoint across restarts with the clock set back (own cluster)"
"$here/checkpoint.sh"
