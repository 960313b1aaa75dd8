#!/usr/bin/env bash
# SQL regression tests of the extension with pg_regress against the running
# system server (scripts/pg-setup.sh installs and starts it). Each test's
# output must equal tests/regress/expected/<name>.out.
#   --accept  copy the new outputs over the expected files (review the diff!)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
PG_REGRESS="$(pg_config --pkglibdir)/pgxs/src/test/regress/pg_regress"
tests=(setup generate extract bounds plausible column uuid192 find keyed)
out="$(mktemp -d /tmp/uuidforge-regress.XXXXXX)"
chown postgres "$out"
runuser -u postgres -- psql -Xq -d postgres \
  -c "DROP DATABASE IF EXISTS uuidforge_regress" -c "CREATE DATABASE uuidforge_regress"
runuser -u postgres -- psql -Xq -d uuidforge_regress -c "CREATE EXTENSION uuidforge"
status=0
runuser -u postgres -- "$PG_REGRESS" --use-existing --host=/var/run/postgresql --port=5432 \
  --dbname=uuidforge_regress \
  --inputdir="$here/regress" --outputdir="$out" "${tests[@]}" || status=$?
if [ "$status" -ne 0 ]; then
  [ -f "$out/regression.diffs" ] && cat "$out/regression.diffs"
  if [ "${1:-}" = --accept ]; then
    cp "$out"/results/*.out "$here/regress/expected/"
    echo "regress.sh: expected files replaced; review them with git diff"
  fi
fi
rm -rf "$out"
exit "$status"
