#!/usr/bin/env bash
# Speed of the extension on the local PostgreSQL 15 server, against the
# server's own gen_random_uuid() and bigint identity, measured in one run
# (the machines here are noisy: compare the ratios, not the absolute times).
#   1. SELECT count(f()) FROM generate_series(1, 2000000) for uuidv7(),
#      gen_random_uuid() and uuidv4(); best of 5, interleaved.
#   2. 5 000 000 rows inserted in 50 batches of 100 000 into tables keyed by
#      bigint identity, gen_random_uuid(), uuidv7(), uuidv7_gen and uuidv7()
#      with a fillfactor-100 key index: time,
#      primary key size, WAL bytes.
#   3. min/max(uuid) against ORDER BY ... LIMIT 1, a sorted array_agg and
#      max(id::text), without an index and over the primary key.
# Needs the extension installed (scripts/pg-setup.sh; --preload is the
# deployment this measures best). Usage: scripts/bench-pg.sh [--short] [rows]
# --short: 20 000 calls and rows, one round (the test command runs it so
# that it keeps working).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
ROWS="${BENCH_ARGS[0]:-5000000}"
BATCH=100000
CALLS=2000000 ROUNDS=5
if [ "$SHORT" = 1 ]; then
  ROWS=20000 BATCH=10000 CALLS=20000 ROUNDS=1
fi
db=uuidforge_bench
psql_() { runuser -u postgres -- psql -X -v ON_ERROR_STOP=1 -qAt -d "$db" "$@"; }
now_ns() { date +%s%N; }

runuser -u postgres -- psql -Xq -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
psql_ -c "CREATE EXTENSION uuidforge"
echo "server: $(psql_ -c 'SHOW server_version'), shared_preload_libraries = '$(psql_ -c 'SHOW shared_preload_libraries')', server-wide uuidv7: $(psql_ -c 'SELECT uuidv7_is_server_wide()')"

echo
echo "## 1. SELECT count(f()) FROM generate_series(1, $CALLS), best of $ROUNDS"
# keep_best ARRAY KEY QUERY: runs QUERY and keeps its time in ms in
# ARRAY[KEY] when it is the first or the fastest yet.
keep_best() {
  local -n times=$1
  local ms
  ms=$(psql_ -c '\timing on' -c "$3" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
  if [ -z "${times[$2]:-}" ] || awk -v a="$ms" -v b="${times[$2]}" 'BEGIN { exit !(a < b) }'; then times[$2]=$ms; fi
}
declare -A best
for round in $(seq "$ROUNDS"); do
  for f in uuidv7 gen_random_uuid uuidv4; do
    keep_best best "$f" "SELECT count($f()) FROM generate_series(1, $CALLS)"
  done
done
printf '| function | time (ms) | per call (µs) | ratio to gen_random_uuid() |\n|---|---|---|---|\n'
for f in uuidv7 uuidv4 gen_random_uuid; do
  awk -v f="$f()" -v t="${best[$f]}" -v base="${best[gen_random_uuid]}" \
    -v n="$CALLS" 'BEGIN { printf "| %s | %.0f | %.3f | %.3f |\n", f, t, t * 1000 / n, t / base }'
done

echo
echo "## 2. $ROWS rows in batches of $BATCH"
declare -A table_def=(
  [bigint_identity]="id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
  [uuid_v4]="id uuid PRIMARY KEY DEFAULT gen_random_uuid()"
  [uuid_v7]="id uuid PRIMARY KEY DEFAULT uuidv7()"
  [uuidv7_gen_column]="id uuidv7_gen PRIMARY KEY"
  # Append-only keys never insert left of the last leaf: btree's 10% leaf
  # reserve (fillfactor 90) stays empty. Only for a single writer: with
  # concurrent writers, stragglers would split full pages in half.
  [uuid_v7_ff100]="id uuid DEFAULT uuidv7(), PRIMARY KEY (id) WITH (fillfactor = 100)"
)
order=(bigint_identity uuid_v4 uuid_v7 uuidv7_gen_column uuid_v7_ff100)
declare -A secs idx wal
batches=$(( ROWS / BATCH ))
for t in "${order[@]}"; do
  psql_ -c "CREATE TABLE $t (${table_def[$t]}, created_at timestamptz NOT NULL DEFAULT now(), payload bigint NOT NULL)"
  script="$(mktemp)"
  for _ in $(seq "$batches"); do
    echo "INSERT INTO $t (payload) SELECT g FROM generate_series(1, $BATCH) g;"
  done > "$script"
  chmod 644 "$script"
  psql_ -c "CHECKPOINT"
  lsn0=$(psql_ -c "SELECT pg_current_wal_insert_lsn()")
  start=$(now_ns)
  psql_ -f "$script"
  end=$(now_ns)
  lsn1=$(psql_ -c "SELECT pg_current_wal_insert_lsn()")
  rm -f "$script"
  secs[$t]=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
  idx[$t]=$(psql_ -c "SELECT pg_relation_size('${t}_pkey')")
  wal[$t]=$(psql_ -c "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0')")
done
printf '| key | insert time (s) | ratio to bigint | PK index (MiB) | ratio to v4 PK | WAL (MiB) |\n|---|---|---|---|---|---|\n'
for t in "${order[@]}"; do
  awk -v t="$t" -v s="${secs[$t]}" -v b="${secs[bigint_identity]}" -v i="${idx[$t]}" -v v4="${idx[uuid_v4]}" -v w="${wal[$t]}" \
    'BEGIN { printf "| %s | %.2f | %.3f | %.1f | %.3f | %.0f |\n", t, s, s / b, i / 1048576, i / v4, w / 1048576 }'
done

echo
echo "## 3. min/max of a uuid column ($ROWS rows of uuid_v4), against the SQL one writes without them; best of $ROUNDS"
# No index first (one scan), then over the primary key.
declare -A query=(
  [max_aggregate]="SELECT max(id) FROM uuid_v4"
  [order_by_desc_limit_1]="SELECT id FROM uuid_v4 ORDER BY id DESC LIMIT 1"
  [array_agg_sorted]="SELECT (array_agg(id ORDER BY id DESC))[1] FROM uuid_v4"
  [max_of_text]="SELECT max(id::text)::uuid FROM uuid_v4"
  [min_max_by_group]="SELECT payload % 100, min(id), max(id) FROM uuid_v4 GROUP BY 1"
  [window_running_max]="SELECT count(m) FROM (SELECT max(id) OVER (ORDER BY payload) AS m FROM uuid_v4) w"
)
queries=(max_aggregate order_by_desc_limit_1 array_agg_sorted max_of_text min_max_by_group window_running_max)
# The same answer from each (the extension's against plain SQL's).
[ "$(psql_ -c "${query[max_aggregate]}")" = "$(psql_ -c "${query[order_by_desc_limit_1]}")" ] &&
  [ "$(psql_ -c "${query[max_aggregate]}")" = "$(psql_ -c "${query[array_agg_sorted]}")" ] ||
  { echo "bench-pg.sh: max(id) and ORDER BY id DESC LIMIT 1 disagree" >&2; exit 1; }
declare -A qbest
for where in "no index" "primary key"; do
  [ "$where" = "primary key" ] || psql_ -c "ALTER TABLE uuid_v4 DROP CONSTRAINT uuid_v4_pkey"
  [ "$where" = "no index" ] || psql_ -c "ALTER TABLE uuid_v4 ADD PRIMARY KEY (id)"
  psql_ -c "VACUUM ANALYZE uuid_v4"
  qbest=()
  for round in $(seq "$ROUNDS"); do
    for q in "${queries[@]}"; do
      keep_best qbest "$q" "${query[$q]}"
    done
  done
  printf '\n%s:\n| query | time (ms) | ratio to max(id) |\n|---|---|---|\n' "$where"
  for q in "${queries[@]}"; do
    awk -v q="${query[$q]}" -v t="${qbest[$q]}" -v base="${qbest[max_aggregate]}" \
      'BEGIN { printf "| `%s` | %.2f | %.2f |\n", q, t, t / base }'
  done
done
runuser -u postgres -- psql -Xq -d postgres -c "DROP DATABASE $db"
