#!/usr/bin/env bash
# SQL regression tests of the extension with pg_regress against the running
# system server (scripts/pg-setup.sh installs and starts it). Each test's
# output must equal tests/regress/expected/<name>.out.
#   --accept  copy the new outputs over the expected files (review the diff!)
#   regress.sh [--accept] [15|18]   on that server (default 15)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
accept=""
major=15
for arg in "$@"; do
  case "$arg" in
    --accept) accept=1 ;;
    *) major="$arg" ;;
  esac
done
# shellcheck source=../../../scripts/pg-env.sh
. "$here/../../../scripts/pg-env.sh"
pg_env "$major"
PG_REGRESS="$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress"
tests=(setup generate extract bounds plausible column uuid192 find heap nulls keyed disk)
out="$(mktemp -d /tmp/uuidforge-regress.XXXXXX)"
chown postgres "$out"
psql_() { runuser -u postgres -- "$PG_BIN/psql" -h "$PG_SOCKET" -p "$PG_PORT" -Xq "$@"; }
psql_ -d postgres \
  -c "DROP DATABASE IF EXISTS uuidforge_regress" -c "CREATE DATABASE uuidforge_regress"
psql_ -d uuidforge_regress -c "CREATE EXTENSION uuidforge"
# The suite calls the extension's functions by their names. PostgreSQL 18
# has functions of the same names in pg_catalog, searched first unless the
# path places it: here the extension's schema comes first, so that the
# suite tests the extension on every version (the coexistence of the two
# is tested in column.sql and differential.sh).
psql_ -d postgres -c "ALTER DATABASE uuidforge_regress SET search_path = public, pg_catalog"
status=0
runuser -u postgres -- "$PG_REGRESS" --use-existing --host="$PG_SOCKET" --port="$PG_PORT" --bindir="$PG_BIN" \
  --dbname=uuidforge_regress \
  --inputdir="$here/regress" --outputdir="$out" "${tests[@]}" || status=$?
if [ "$status" -ne 0 ]; then
  [ -f "$out/regression.diffs" ] && cat "$out/regression.diffs"
  if [ -n "$accept" ]; then
    cp "$out"/results/*.out "$here/regress/expected/"
    echo "regress.sh: expected files replaced; review them with git diff"
  fi
fi
rm -rf "$out"
exit "$status"
