#!/usr/bin/env bash
# What the search for copies of a uuid key costs (`migrate-key` of a uuid
# key reads every uuid, text and json column of the database for its old
# keys): on Kong's schema (crates/uuidforge-cli/tests/fixtures/kong/) with
# N services and about twenty times as many rows around them (routes,
# consumers, plugins with cache keys and json configs, Kong's tags), the
# time the plan prints for the search, against two peers measured in the
# same run on the same database: a bare pass over the same tables
# (`count(*)` of each, the floor of any search), and `uuidforge db find`
# of every service key (find's own search for the same values).
# Usage: scripts/bench-copies.sh [--short]   (N services, default 20000;
#        RUNS, default 3; --short: N=500, one run)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
./scripts/pg-setup.sh --no-build >/dev/null
BIN=$(bench_bin)
N=${N:-20000}
RUNS=${RUNS:-3}
if [ "$SHORT" = 1 ]; then
  N=500 RUNS=1
fi
PORT=${UUIDFORGE_TEST_PGPORT:-5432}
DB=uf_bench_copies
ADMIN="postgres://uuidforge_admin:uuidforge@127.0.0.1:$PORT"
URL="postgres://uuidforge:uuidforge@127.0.0.1:$PORT/$DB"
FIXTURE=crates/uuidforge-cli/tests/fixtures/kong
psql -XAtq "$ADMIN/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB OWNER uuidforge"
{
  echo "SET client_min_messages = warning; SET ROLE uuidforge;"
  cat "$FIXTURE/schema.sql"
  # data.sql's rows, N services instead of 300.
  sed -e "s/generate_series(1, 300)/generate_series(1, $N)/" \
      -e "s/generate_series(1, 200)/generate_series(1, $((N * 2 / 3)))/" "$FIXTURE/data.sql"
  echo "RESET ROLE; ANALYZE;"
} | psql -XAtq -v ON_ERROR_STOP=1 "$ADMIN/$DB" >/dev/null
tables=$(psql -XAt "$URL" -c "SELECT string_agg(format('%I.%I', schemaname, tablename), ' ') FROM pg_tables WHERE schemaname = 'public'")
# Every table counted in one statement: one pass over each, one session.
bare="SELECT $(for t in $tables; do printf '(SELECT count(*) FROM %s) + ' "$t"; done) 0"
rows=$(psql -XAt "$URL" -c "SELECT sum(n_live_tup) FROM pg_stat_user_tables")
echo "== bench-copies: $N services, $rows rows in $(echo "$tables" | wc -w) tables; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
psql -XAt "$URL" -c "SELECT id FROM services" >"$work/keys.txt"
ms() { python3 -c 'import sys, time; print(int(time.time() * 1000))'; }
measure() {
  local label=$1 best_search= best_floor= best_find= search floor find start
  for run in $(seq "$RUNS"); do
    out=$(cd "$work" && "$BIN" db --db "$URL" migrate-key services --no-default --also tags.entity_id --also plugins.cache_key)
    search=$(echo "$out" | sed -n 's/.*the search for copies read [0-9]* tables in \([0-9]*\) ms.*/\1/p')
    start=$(ms)
    psql -XAtq "$URL" -c "$bare" >/dev/null
    floor=$(($(ms) - start))
    start=$(ms)
    (cd "$work" && "$BIN" db --db "$URL" find --from keys.txt --json >/dev/null 2>&1) || true
    find=$(($(ms) - start))
    echo "$label, run $run: search ${search} ms, bare pass ${floor} ms, db find ${find} ms"
    if [ -z "$best_search" ] || [ "$search" -lt "$best_search" ]; then best_search=$search; fi
    if [ -z "$best_floor" ] || [ "$floor" -lt "$best_floor" ]; then best_floor=$floor; fi
    if [ -z "$best_find" ] || [ "$find" -lt "$best_find" ]; then best_find=$find; fi
  done
  python3 - "$label" "$best_search" "$best_floor" "$best_find" <<'PY'
import sys
label = sys.argv[1]
search, floor, find = (max(1, int(x)) for x in sys.argv[2:])
print(f"{label}, best of runs: the search {search} ms = {search / floor:.2f}x a bare pass over the tables ({floor} ms: count(*) of each in one statement, psql's start included), "
      f"{search / find:.2f}x db find of every key ({find} ms, the whole command)")
PY
}
measure "without the extension (regular expressions)"
psql -XAtq "$ADMIN/$DB" -c "CREATE EXTENSION uuidforge"
measure "with the extension's token matcher"
psql -XAtq "$ADMIN/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
