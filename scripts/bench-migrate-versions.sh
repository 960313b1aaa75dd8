#!/usr/bin/env bash
# Whole `uuidforge db migrate-key customers --apply` (backup, plan,
# change, verification) by several versions, alternating on fresh copies
# of one template, in one run: what a change to the migration costs or
# saves. Prints each run and each version's mean with its ratio to the
# first version's; figures go to docs/PERFORMANCE.md.
# Usage: scripts/bench-migrate-versions.sh COMMIT... (HEAD's working tree
#        is "HEAD"); MODE="--batch-size 5000" for batches; ROUNDS (2),
#        CUSTOMERS (200000; twice as many orders).
# --short: HEAD only (the binary the tests built), 200 customers, one
# round: the test command runs it so that it keeps working.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-common.sh
bench_short "$@"
if [ "$SHORT" = 1 ]; then
  set -- HEAD
  ROUNDS=1 CUSTOMERS=200
fi
[ $# -ge 1 ] || { echo "usage: $0 [--short] COMMIT... (e.g. 5522e90 HEAD)" >&2; exit 2; }
./scripts/pg-setup.sh --no-build >/dev/null
. scripts/pg-env.sh
ROUNDS=${ROUNDS:-2}
CUSTOMERS=${CUSTOMERS:-200000}
MODE=${MODE:-}
export PGPASSWORD=uuidforge
admin="psql -X -q -h 127.0.0.1 -p ${UUIDFORGE_TEST_PGPORT:-5432} -U uuidforge_admin -d postgres"
url="postgres://uuidforge:uuidforge@127.0.0.1:${UUIDFORGE_TEST_PGPORT:-5432}"

declare -A bin
for v in "$@"; do
  if [ "$v" = HEAD ]; then
    bin[$v]=$(bench_bin)
  else
    dir=target/bench-versions/$v
    [ -d "$dir/src" ] || git worktree add -f "$dir/src" "$v" -q
    CARGO_TARGET_DIR=$PWD/$dir/target cargo build -q --release -p uuidforge-cli --manifest-path "$dir/src/Cargo.toml"
    bin[$v]=$PWD/$dir/target/release/uuidforge
  fi
done

$admin -c "DROP DATABASE IF EXISTS uf_bench_versions_tpl WITH (FORCE)" -c "CREATE DATABASE uf_bench_versions_tpl OWNER uuidforge"
psql -X -q -h 127.0.0.1 -p "${UUIDFORGE_TEST_PGPORT:-5432}" -U uuidforge -d uf_bench_versions_tpl <<SQL
CREATE TABLE customers (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text, created_at timestamptz NOT NULL);
CREATE TABLE orders (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers, total numeric);
CREATE INDEX ON orders (customer_id);
INSERT INTO customers (name, created_at) SELECT 'c' || g, now() - g * interval '1 second' FROM generate_series(1, $CUSTOMERS) g;
INSERT INTO orders (customer_id, total) SELECT 1 + g % $CUSTOMERS, g FROM generate_series(1, 2 * $CUSTOMERS) g;
ANALYZE customers, orders;
SQL
$admin -d uf_bench_versions_tpl -c "CREATE EXTENSION uuidforge"

declare -A total
for round in $(seq "$ROUNDS"); do
  for v in "$@"; do
    $admin -c "DROP DATABASE IF EXISTS uf_bench_versions WITH (FORCE)" \
      -c "CREATE DATABASE uf_bench_versions TEMPLATE uf_bench_versions_tpl OWNER uuidforge"
    work=$(mktemp -d)
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    (cd "$work" && "${bin[$v]}" db --db "$url/uf_bench_versions" migrate-key customers $MODE --apply >out.txt 2>&1) \
      || { tail -5 "$work/out.txt"; exit 1; }
    end=$(date +%s.%N)
    took=$(echo "$end - $start" | bc)
    total[$v]=$(echo "${total[$v]:-0} + $took" | bc)
    echo "round $round $v: $took s"
    rm -rf "$work"
  done
done
$admin -c "DROP DATABASE IF EXISTS uf_bench_versions WITH (FORCE)"
first=$1
for v in "$@"; do
  mean=$(echo "scale=3; ${total[$v]} / $ROUNDS" | bc)
  ratio=$(echo "scale=2; ${total[$v]} / ${total[$first]}" | bc)
  echo "$v: mean $mean s, ${ratio}x $first"
done
