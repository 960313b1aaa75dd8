#!/usr/bin/env bash
# The key-locality lab at full size (issue 14): `uuidforge lab keys` with
# 2 000 000 rows per cell, writers 1 and 4, every counter length
# (0,4,8,12,18,26,42) and guard length (0,1,2), on the local PostgreSQL 15
# with uuidforge preloaded (so uuidv7() is the server-wide generator), and
# the uuid192 sort with and without sort support over 1 000 000 rows.
# Writes target/lab/table.md (the table and the recommendation),
# target/lab/lab.json and target/lab/svg/*.svg (a chart per measure).
# About 25 minutes on this 2-core VM; ROWS=200000 for a quick look.
# Needs the extension installed (scripts/pg-setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS="${ROWS:-2000000}"
WRITERS="${WRITERS:-1,4}"
out=target/lab
db=uuidforge_lab_bench

./scripts/pg-setup.sh --no-build --preload
cargo build --release -q -p uuidforge-cli
runuser -u postgres -- psql -Xq -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
rm -rf "$out" && mkdir -p "$out"
echo "server: PostgreSQL $(runuser -u postgres -- psql -XAtqc 'SHOW server_version'), $(nproc) cores, shared_buffers $(runuser -u postgres -- psql -XAtqc 'SHOW shared_buffers')"
target/release/uuidforge lab keys \
  --db "postgres://uuidforge_admin:uuidforge@127.0.0.1:5432/$db" \
  --rows "$ROWS" --writers "$WRITERS" \
  --svg-dir "$out/svg" --json-out "$out/lab.json" --apply | tee "$out/table.md"
runuser -u postgres -- psql -Xq -d postgres -c "DROP DATABASE $db"
echo "results in $out/ (table.md, lab.json, svg/)"
