#!/usr/bin/env bash
# Concurrent writers on a uuidv7_gen table, against the running server.
#   concurrency.sh per-session   the library is not preloaded
#   concurrency.sh server-wide   it is (shared memory): also checks that
#                                values increase in generation order across
#                                sessions
# Phase 1: 8 pgbench sessions insert 100 000 rows each (1 000 per statement)
#   → all 800 000 values distinct v7, each session's values increasing.
# Phase 2: 8 sessions take turns under an advisory lock, numbering their rows
#   from one sequence while they generate, so the sequence records the order
#   in which values were generated across sessions. Server-wide, the values
#   must increase in that order; per session they need not (the count of
#   inversions is printed: it shows what the check catches).
# Phase 3: the same with the pg_uuidv7 and pg_idkit drop-ins as column
#   defaults in 4 sessions (three values a row, in column order).
#   concurrency.sh MODE [15|18]   on that server (default 15)
set -euo pipefail
mode="${1:?usage: concurrency.sh per-session|server-wide [15|18]}"
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../../scripts/pg-env.sh
. "$here/../../../scripts/pg-env.sh"
pg_env "${2:-15}"
export PGHOST="$PG_SOCKET" PGPORT="$PG_PORT"
db=uuidforge_concurrency
work="$(mktemp -d /tmp/uuidforge-concurrency.XXXXXX)"
chown postgres "$work"
trap 'rm -rf "$work"' EXIT
sql() { runuser -u postgres -- "$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -qAt -d "$db" "$@"; }
fail() { echo "concurrency.sh ($mode): FAILED: $*" >&2; exit 1; }

runuser -u postgres -- "$PG_BIN/psql" -Xq -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
sql -c "CREATE EXTENSION uuidforge"
server_wide=$(sql -c "SELECT uuidv7_is_server_wide()")
case "$mode" in
  server-wide) [ "$server_wide" = t ] || fail "uuidv7_is_server_wide() is $server_wide: preload uuidforge first" ;;
  per-session) [ "$server_wide" = f ] || fail "uuidv7_is_server_wide() is $server_wide: unexpected preload" ;;
  *) echo "concurrency.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac

sql -c "CREATE TABLE bulk (id uuidv7_gen PRIMARY KEY, client int NOT NULL, n bigserial)"
generated() { sql -c "SELECT sum(value) FROM uuidforge_telemetry() WHERE metric = 'generated'"; }
generated_before=$(generated)
echo 'INSERT INTO bulk (client) SELECT :client_id FROM generate_series(1, 1000);' > "$work/bulk.sql"
start=$(date +%s%N)
runuser -u postgres -- "$PG_BIN/pgbench" -n -c 8 -j 2 -t 100 -f "$work/bulk.sql" "$db" > "$work/bulk.log" 2>&1 \
  || { cat "$work/bulk.log"; fail "pgbench phase 1"; }
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
read -r rows distinct v7 clients <<<"$(sql -F' ' -c "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE uuid_extract_version(id) = 7), count(DISTINCT client) FROM bulk")"
[ "$rows" = 800000 ] || fail "phase 1: $rows rows, expected 800000"
[ "$distinct" = 800000 ] || fail "phase 1: $distinct distinct ids of $rows"
[ "$v7" = 800000 ] || fail "phase 1: $v7 of $rows are version 7"
[ "$clients" = 8 ] || fail "phase 1: $clients sessions, expected 8"
disorder=$(sql -c "SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n) AS prev FROM bulk) s WHERE id <= prev")
[ "$disorder" = 0 ] || fail "phase 1: $disorder values not above the same session's previous value"
echo "phase 1 ($mode): 8 sessions x 100000 rows in ${elapsed_ms} ms: 800000 distinct UUIDv7, increasing within each session"
# Telemetry read from another session sees the writers' values only when
# the counters live in shared memory.
generated_after=$(generated)
counted=$((generated_after - generated_before))
if [ "$mode" = server-wide ]; then
  [ "$counted" -ge 800000 ] || fail "telemetry counted $counted of the 800000 values other sessions generated"
else
  [ "$counted" -lt 800000 ] || fail "telemetry counted $counted values of other sessions without preload"
fi
echo "telemetry ($mode): $counted values counted from another session"

# take_turns TABLE SESSIONS PHASE: SESSIONS pgbench sessions insert 10 rows
# at a time into TABLE under one advisory lock, 1 000 times each, numbering
# them from the sequence TABLE_seq (the order in which they were made).
take_turns() {
  cat > "$work/$1.sql" <<SQL
BEGIN;
SELECT pg_advisory_xact_lock(7);
INSERT INTO $1 (seq) SELECT nextval('$1_seq') FROM generate_series(1, 10);
COMMIT;
SQL
  runuser -u postgres -- "$PG_BIN/pgbench" -n -c "$2" -j 2 -t 1000 -f "$work/$1.sql" "$db" > "$work/$1.log" 2>&1 \
    || { cat "$work/$1.log"; fail "pgbench $3"; }
}
sql -c "CREATE TABLE turns (id uuidv7_gen, seq bigint NOT NULL); CREATE SEQUENCE turns_seq"
take_turns turns 8 "phase 2"
read -r rows inversions <<<"$(sql -F' ' -c "SELECT count(*), count(*) FILTER (WHERE id <= prev) FROM (SELECT id, lag(id) OVER (ORDER BY seq) AS prev FROM turns) s")"
[ "$rows" = 80000 ] || fail "phase 2: $rows rows, expected 80000"
if [ "$mode" = server-wide ]; then
  [ "$inversions" = 0 ] || fail "phase 2: $inversions values below a value generated before them in another session"
  echo "phase 2 ($mode): 80000 values from 8 sessions strictly increasing in generation order"
else
  echo "phase 2 ($mode): $inversions of 80000 values are below one another session generated before them (expected without preload)"
fi

# Phase 3: the drop-ins for pg_uuidv7 and pg_idkit as column defaults, 4
# sessions taking turns as in phase 2. pg_uuidv7 and pg_idkit order nothing
# across sessions (nor within a millisecond); the drop-ins give this
# extension's values, server-wide in order.
sql -c "CREATE TABLE dropins (a uuid DEFAULT uuidforge_pg_uuidv7.uuid_generate_v7(), b uuid DEFAULT uuidforge_pg_idkit.idkit_uuidv7_generate_uuid(), c text DEFAULT uuidforge_pg_idkit.idkit_uuidv7_generate(), seq bigint NOT NULL); CREATE SEQUENCE dropins_seq"
take_turns dropins 4 "phase 3"
read -r rows versions inversions <<<"$(sql -F' ' -c "SELECT count(*), count(*) FILTER (WHERE uuid_extract_version(a) = 7 AND uuid_extract_version(b) = 7 AND uuid_extract_version(c::uuid) = 7), count(*) FILTER (WHERE a <= prev_c::uuid OR b <= a OR c::uuid <= b) FROM (SELECT a, b, c, lag(c) OVER (ORDER BY seq) AS prev_c FROM dropins) s")"
[ "$rows" = 40000 ] || fail "phase 3: $rows rows, expected 40000"
[ "$versions" = 40000 ] || fail "phase 3: $versions of $rows rows hold three UUIDv7"
if [ "$mode" = server-wide ]; then
  [ "$inversions" = 0 ] || fail "phase 3: $inversions rows whose drop-in values are below one generated before them"
  echo "phase 3 ($mode): 40000 rows x 3 drop-in defaults (pg_uuidv7, pg_idkit) from 4 sessions strictly increasing in generation order"
else
  echo "phase 3 ($mode): $inversions of 40000 rows hold a drop-in value below one generated before it (expected without preload)"
fi
runuser -u postgres -- "$PG_BIN/psql" -Xq -d postgres -c "DROP DATABASE $db"
