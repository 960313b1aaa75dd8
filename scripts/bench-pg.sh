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
declare -A best
for round in $(seq "$ROUNDS"); do
  for f in uuidv7 gen_random_uuid uuidv4; do
    ms=$(psql_ -c '\timing on' -c "SELECT count($f()) FROM generate_series(1, $CALLS)" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
    if [ -z "${best[$f]:-}" ] || [ "$(echo "$ms < ${best[$f]}" | awk '{print ($1 < $3)}')" = 1 ]; then best[$f]=$ms; fi
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
runuser -u postgres -- psql -Xq -d postgres -c "DROP DATABASE $db"
