#!/usr/bin/env bash
# SQL regression tests of the extension with pg_regress against the running
# system server (scripts/pg-setup.sh installs and starts it). Each test's
# output must equal tests/regress/expected/<name>.out. Then pg_uuidv7's
# own suite against the drop-in (tests/pg_uuidv7).
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
tests=(setup generate extract bounds plausible column uuid192 find heap nulls keyed disk compat minmax)
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
[ "$status" -eq 0 ] || exit "$status"

# pg_uuidv7's own regression suite against the drop-in (tests/pg_uuidv7:
# its statements and expected output as its repository has them, MPL-2.0,
# see tests/pg_uuidv7/SOURCE). Its first file creates the extension
# pg_uuidv7; the drop-in is the schema uuidforge_pg_uuidv7 of this
# extension instead, put on the database's search_path as a user coming
# from pg_uuidv7 does. Every other file runs unmodified.
compat="$(mktemp -d /tmp/uuidforge-regress-pg_uuidv7.XXXXXX)"
chown postgres "$compat"
psql_ -d postgres \
  -c "DROP DATABASE IF EXISTS uuidforge_regress_pg_uuidv7" -c "CREATE DATABASE uuidforge_regress_pg_uuidv7"
psql_ -d uuidforge_regress_pg_uuidv7 -c "CREATE EXTENSION uuidforge"
psql_ -d postgres -c "ALTER DATABASE uuidforge_regress_pg_uuidv7 SET search_path = uuidforge_pg_uuidv7, public"
mapfile -t pg_uuidv7_tests < <(cd "$here/pg_uuidv7/sql" && ls ./*.sql | sed 's|^\./||; s|\.sql$||' | grep -v '^001_setup$')
runuser -u postgres -- "$PG_REGRESS" --use-existing --host="$PG_SOCKET" --port="$PG_PORT" --bindir="$PG_BIN" \
  --dbname=uuidforge_regress_pg_uuidv7 \
  --inputdir="$here/pg_uuidv7" --outputdir="$compat" "${pg_uuidv7_tests[@]}" || status=$?
[ "$status" -eq 0 ] || { [ -f "$compat/regression.diffs" ] && cat "$compat/regression.diffs"; }
rm -rf "$compat"
exit "$status"
