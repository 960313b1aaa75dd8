#!/usr/bin/env bash
# The SQL edition's uuidv7() against the extension's (preloaded: server-wide
# order) and PostgreSQL 18's own, on the PostgreSQL 18 test server, in one
# run (the machines here are noisy: compare the ratios):
#   1. cost: SELECT count(f()) FROM generate_series(1, N), best of 5,
#      interleaved, the bare query subtracted; each against
#      gen_random_uuid() (target: the edition at most 3x);
#   2. order: W writers (pgbench, 4 and 16) insert single rows into a table
#      keyed by each generator; out-of-order inserts are rows whose key is
#      below a key that arrived before them (by an identity column drawn
#      right after the key), the inserts that do not go to the right edge
#      of the index (target: the edition's at most PostgreSQL 18's own with
#      4 writers).
# The server is preloaded for the run and set back afterwards
# (scripts/pg-setup.sh --pg 18 --preload, then --no-preload).
#   scripts/bench-sql-edition.sh [--short]
# --short: tiny sizes, one round (the test command runs it so that the
# benchmark keeps working; its figures mean nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
N=1000000 ROUNDS=5 ROWS=20000
if [ "$SHORT" = 1 ]; then N=2000 ROUNDS=1 ROWS=400; fi
bin=$(bench_bin)
. scripts/pg-env.sh
pg_env 18
./scripts/pg-setup.sh --pg 18 --no-build --preload >/dev/null
trap './scripts/pg-setup.sh --pg 18 --no-build --no-preload >/dev/null' EXIT
db=uuidforge_bench_sqled
psql_() { runuser -u postgres -- "$PG_BIN/psql" -h "$PG_SOCKET" -p "$PG_PORT" -X -v ON_ERROR_STOP=1 -qAt "$@"; }
psql_ -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
psql_ -d "$db" -c "CREATE SCHEMA ext" -c "CREATE EXTENSION uuidforge SCHEMA ext"
"$bin" db install-sql --sql-only --schema ed | psql_ -d "$db" >/dev/null 2>&1
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "PostgreSQL $(psql_ -d "$db" -c 'SHOW server_version'); extension server-wide: $(psql_ -d "$db" -c 'SELECT ext.uuidv7_is_server_wide()'); $cpu, $(nproc) cores"

declare -A calls=([bare]="1" [gen_random_uuid]="gen_random_uuid()" [sql_edition]="ed.uuidv7()"
                  [extension]="ext.uuidv7()" [pg18]="pg_catalog.uuidv7()")
names=(bare gen_random_uuid sql_edition extension pg18)
declare -A best
for _ in $(seq "$ROUNDS"); do
  for name in "${names[@]}"; do
    ms=$(psql_ -d "$db" -c '\timing on' -c "SELECT count(${calls[$name]}) FROM generate_series(1, $N)" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
    if [ -z "${best[$name]:-}" ] || awk -v a="$ms" -v b="${best[$name]}" 'BEGIN { exit !(a < b) }'; then
      best[$name]=$ms
    fi
  done
done
echo
echo "## 1. cost per value (SELECT count(f()) FROM generate_series(1, $N), best of $ROUNDS, bare query subtracted)"
printf '%-16s %10s %12s\n' generator "ns/value" "x gen_random_uuid"
own() { awk -v t="${best[$1]}" -v b="${best[bare]}" -v n="$N" 'BEGIN { printf "%.0f", (t - b) * 1e6 / n }'; }
base=$(own gen_random_uuid)
for name in gen_random_uuid sql_edition extension pg18; do
  v=$(own "$name")
  printf '%-16s %10s %12s\n' "$name" "$v" "$(awk -v a="$v" -v b="$base" 'BEGIN { printf "%.2f", a / b }')"
done
ratio=$(awk -v a="$(own sql_edition)" -v b="$base" 'BEGIN { printf "%.2f", a / b }')
echo "target: the SQL edition at most 3x gen_random_uuid(): $ratio $(awk -v r="$ratio" 'BEGIN { print (r <= 3 ? "ok" : "MISSED") }')"

echo
echo "## 2. out-of-order inserts ($ROWS single-row inserts per run, pgbench writers)"
printf '%-16s %8s %12s %10s\n' generator writers "out of order" share
script=$(mktemp /tmp/uuidforge-bench-XXXXXX.sql)
chmod 644 "$script"
declare -A share
for writers in 4 16; do
  for name in sql_edition extension pg18; do
    table="t_${name}_$writers"
    # The arrival order: an identity drawn right after the key (defaults
    # are evaluated in column order), as near the index insert as SQL sees.
    psql_ -d "$db" -c "CREATE TABLE $table (id uuid PRIMARY KEY DEFAULT ${calls[$name]}, seq bigint GENERATED ALWAYS AS IDENTITY, payload int)"
    echo "INSERT INTO $table (payload) VALUES (:client_id);" >"$script"
    runuser -u postgres -- "$PG_BIN/pgbench" -h "$PG_SOCKET" -p "$PG_PORT" -n -c "$writers" -j "$writers" \
      -t $((ROWS / writers)) -f "$script" "$db" >/dev/null 2>&1
    n=$(psql_ -d "$db" -c "SELECT count(*) FILTER (WHERE k < before) FROM (SELECT id::text AS k, max(id::text) OVER (ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before FROM $table) s")
    rows=$(psql_ -d "$db" -c "SELECT count(*) FROM $table")
    share[$name.$writers]=$(awk -v n="$n" -v r="$rows" 'BEGIN { printf "%.4f", n / r }')
    printf '%-16s %8s %12s %9.2f%%\n' "$name" "$writers" "$n" "$(awk -v s="${share[$name.$writers]}" 'BEGIN { print s * 100 }')"
  done
done
rm -f "$script"
verdict=$(awk -v a="${share[sql_edition.4]}" -v b="${share[pg18.4]}" 'BEGIN { print (a <= b ? "ok" : "MISSED") }')
echo "target: the SQL edition's out-of-order share with 4 writers at most PostgreSQL 18's own: ${share[sql_edition.4]} vs ${share[pg18.4]} $verdict"
psql_ -d postgres -c "DROP DATABASE $db"
