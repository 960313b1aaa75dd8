#!/usr/bin/env bash
# The key-locality lab at full size: `uuidforge lab keys` on a local server
# with uuidforge preloaded (so the extension's uuidv7() is the server-wide
# generator), and the uuid192 sort with and without sort support.
#   PG=15 (default): 2 000 000 rows per cell, writers 1 and 4, every counter
#     length (0,4,8,12,18,26,42) and guard length (0,1,2); about 25 minutes.
#   PG=18: the same cells plus PostgreSQL 18's own pg_catalog.uuidv7() (one
#     generator per backend); e.g. PG=18 WRITERS=4,16 COUNTER_BITS=18
#     GUARD_BITS=1 ROWS=1000000 compares it with the server-wide one, bigint
#     and a per-writer generator.
# ROWS, WRITERS, COUNTER_BITS, GUARD_BITS override the sizes (ROWS=200000
# for a quick look). Writes target/lab[-18]/table.md (the table and the
# recommendation), lab.json and svg/*.svg (a chart per measure).
# Needs the extension installed (scripts/pg-setup.sh [--pg 18]).
# --short: 2 000 rows, 1 writer, one counter and guard length, a debug
# build (the test command runs it so that it keeps working).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
if [ "$SHORT" = 1 ]; then
  ROWS=2000 WRITERS=1 COUNTER_BITS=18 GUARD_BITS=0
fi
. scripts/pg-env.sh
PG="${PG:-15}"
pg_env "$PG"
ROWS="${ROWS:-2000000}"
WRITERS="${WRITERS:-1,4}"
COUNTER_BITS="${COUNTER_BITS:-0,4,8,12,18,26,42}"
GUARD_BITS="${GUARD_BITS:-0,1,2}"
out=target/lab
[ "$PG" = 15 ] || out="target/lab-$PG"
db=uuidforge_lab_bench

./scripts/pg-setup.sh --pg "$PG" --no-build --preload
bin=$(bench_bin)
psql_() { runuser -u postgres -- "$PG_BIN/psql" -h "$PG_SOCKET" -p "$PG_PORT" -Xq "$@"; }
psql_ -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
rm -rf "$out" && mkdir -p "$out"
echo "server: PostgreSQL $(psql_ -Atc 'SHOW server_version'), $(nproc) cores, shared_buffers $(psql_ -Atc 'SHOW shared_buffers')"
"$bin" lab keys \
  --db "postgres://uuidforge_admin:uuidforge@127.0.0.1:$PG_PORT/$db" \
  --rows "$ROWS" --writers "$WRITERS" --counter-bits "$COUNTER_BITS" --guard-bits "$GUARD_BITS" \
  --svg-dir "$out/svg" --json-out "$out/lab.json" --apply | tee "$out/table.md"
psql_ -d postgres -c "DROP DATABASE $db"
echo "results in $out/ (table.md, lab.json, svg/)"
