#!/usr/bin/env bash
# Random queries by sqlsmith (Debian's package; a tool nobody here wrote)
# over a database holding the extension and tables of its types (uuid,
# uuid[], uuid192, uuidv7_gen, jsonb with UUIDs), as a role that is not a
# superuser: the run fails when the server's log says a backend ended by a
# signal (a crash), whatever the queries' own errors. Bounded: QUERIES
# queries (default 10 000), each stopped after 2 s.
#   sqlsmith.sh [15|18]   on that server (default 15)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../../../scripts/pg-env.sh
. "$here/../../../scripts/pg-env.sh"
pg_env "${1:-15}"
queries="${QUERIES:-10000}"
if ! command -v sqlsmith >/dev/null; then
  echo "== sqlsmith: installing sqlsmith (Debian)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sqlsmith >/dev/null
fi
case "$PG_MAJOR" in
  15) log=/var/log/postgresql/postgresql-15-main.log ;;
  *) log="$PG18_HOME/log/postgresql.log" ;;
esac
db=uuidforge_sqlsmith
psql_() { runuser -u postgres -- "$PG_BIN/psql" -h "$PG_SOCKET" -p "$PG_PORT" -X -v ON_ERROR_STOP=1 -q "$@"; }
psql_ -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db OWNER uuidforge"
psql_ -d "$db" -c "CREATE EXTENSION uuidforge"
PGPASSWORD=uuidforge "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U uuidforge -d "$db" -X -v ON_ERROR_STOP=1 -q <<'SQL'
CREATE TABLE keys (id uuidv7_gen PRIMARY KEY, v4 uuid, many uuid[], wide uuid192, doc jsonb, note text, at timestamptz);
INSERT INTO keys (v4, many, wide, doc, note, at)
SELECT gen_random_uuid(),
       ARRAY[uuidv7(), uuidv4(), NULL],
       uuid192(uuidv7(), g::int8),
       jsonb_build_object('id', uuidv7()::text, 'n', g),
       'see ' || uuid_to_base32(uuidv7()),
       now() - make_interval(secs => g)
  FROM generate_series(1, 200) g;
CREATE INDEX ON keys (wide);
CREATE INDEX ON keys USING gin (many);
CREATE TABLE refs (id uuid PRIMARY KEY DEFAULT uuidv7(), key_id uuid REFERENCES keys (id), wide uuid192);
INSERT INTO refs (key_id, wide) SELECT id, wide FROM keys WHERE v4 IS NOT NULL LIMIT 100;
ANALYZE keys, refs;
SQL
before=$(stat -c %s "$log")
echo "== sqlsmith: $queries queries on PostgreSQL $PG_MAJOR (database $db, role uuidforge)"
started=$SECONDS
sqlsmith --target="host=127.0.0.1 port=$PG_PORT dbname=$db user=uuidforge password=uuidforge options='-c statement_timeout=2000'" \
  --seed=42 --max-queries="$queries" --exclude-catalog >/tmp/uuidforge-sqlsmith.out 2>&1 || true
tail -n 3 /tmp/uuidforge-sqlsmith.out
crashes=$(tail -c +"$((before + 1))" "$log" | grep -E "terminated by signal|was terminated by exception" || true)
alive=$(psql_ -d "$db" -Atc "SELECT count(*) FROM keys")
psql_ -d postgres -c "DROP DATABASE $db WITH (FORCE)"
if [ -n "$crashes" ]; then
  echo "$crashes"
  echo "sqlsmith.sh: FAILED: a backend ended by a signal (see above and $log)"
  exit 1
fi
[ "$alive" = 200 ] || { echo "sqlsmith.sh: FAILED: the table holds $alive rows after the run"; exit 1; }
echo "sqlsmith.sh: $queries queries in $((SECONDS - started)) s, no backend ended by a signal"
