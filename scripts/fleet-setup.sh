#!/usr/bin/env bash
# The fleet of the database tools' fleet tests: four more PostgreSQL 15
# clusters of Debian's server on loopback (pg_createcluster; the
# extension's developer install is theirs too, as it is the same server):
#   15/fleet_a  port 5441   the coordinator of the postgres_fdw tests
#   15/fleet_b  port 5442   wal_level = logical: the publisher of the logical
#                           replication test (cli_migrate_replicated)
#   15/fleet_c  port 5443   its subscriber
#   15/fleet_d  port 5444   the member a test stops mid-run (the partial case)
# Each is made once, then brought to the test state every run: started,
# no database or role left by an earlier run, the roles uuidforge and
# uuidforge_admin (password uuidforge) as on the main cluster. Prints the
# ports last: UUIDFORGE_TEST_FLEET_PORTS=5441,5442,5443,5444.
#   scripts/fleet-setup.sh [--stop]   (--stop: stop the four clusters)
set -euo pipefail
cd "$(dirname "$0")/.."
clusters=(fleet_a:5441 fleet_b:5442 fleet_c:5443 fleet_d:5444)
say() { echo "== fleet-setup: $*"; }
if [ "${1:-}" = --stop ]; then
  for c in "${clusters[@]}"; do pg_ctlcluster 15 "${c%%:*}" stop 2>/dev/null || true; done
  exit 0
fi
ports=()
for c in "${clusters[@]}"; do
  name=${c%%:*} port=${c#*:}
  if ! pg_lsclusters -h | awk -v n="$name" '$1 == 15 && $2 == n' | grep -q .; then
    say "creating cluster 15/$name on port $port"
    pg_createcluster 15 "$name" -p "$port" -- --auth-local=peer --auth-host=scram-sha-256 >/dev/null
    # Small: four of them beside the main cluster on a small machine.
    cat >>"/etc/postgresql/15/$name/postgresql.conf" <<CONF
shared_buffers = 32MB
max_connections = 40
listen_addresses = '127.0.0.1'
CONF
  fi
  if ! pg_lsclusters -h | awk -v n="$name" '$1 == 15 && $2 == n && $4 == "online"' | grep -q .; then
    pg_ctlcluster 15 "$name" start
  fi
  q() { runuser -u postgres -- psql -p "$port" -XAtq -d postgres -c "$1"; }
  if [ "$name" = fleet_b ] && [ "$(q 'SHOW wal_level')" != logical ]; then
    say "15/$name: wal_level = logical (a publisher), restarting"
    q "ALTER SYSTEM SET wal_level = logical"
    pg_ctlcluster 15 "$name" restart
  fi
  for db in $(q "SELECT datname FROM pg_database WHERE datname LIKE 'uf\\_%' OR datname LIKE 'uuidforge\\_%'"); do
    # A subscription left by an earlier run: detached from its slot (the
    # publisher's is dropped below), then dropped with its database.
    for sub in $(runuser -u postgres -- psql -p "$port" -XAtq -d "$db" -c "SELECT subname FROM pg_subscription WHERE subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())"); do
      runuser -u postgres -- psql -p "$port" -XAtq -d "$db" -c "ALTER SUBSCRIPTION \"$sub\" DISABLE" \
        -c "ALTER SUBSCRIPTION \"$sub\" SET (slot_name = NONE)" -c "DROP SUBSCRIPTION \"$sub\""
    done
    q "DROP DATABASE \"$db\" WITH (FORCE)"
  done
  q "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name LIKE 'uf\\_%' AND NOT active" >/dev/null
  for role in uuidforge:"LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE" uuidforge_admin:"LOGIN SUPERUSER"; do
    r=${role%%:*} attrs=${role#*:}
    if [ "$(q "SELECT 1 FROM pg_roles WHERE rolname = '$r'")" = 1 ]; then
      q "ALTER ROLE $r $attrs PASSWORD 'uuidforge'"
    else
      q "CREATE ROLE $r $attrs PASSWORD 'uuidforge'"
    fi
  done
  ports+=("$port")
done
say "set: clusters 15/fleet_a..d started, no test database, roles uuidforge and uuidforge_admin"
echo "UUIDFORGE_TEST_FLEET_PORTS=$(IFS=,; echo "${ports[*]}")"
