#!/usr/bin/env bash
# Sets up the PostgreSQL extension on this machine, from nothing to a running
# server with `uuidforge` installed:
#   1. Debian packages: postgresql-server-dev-15 (headers, pg_regress), libclang,
#      faketime (the restart-with-the-clock-set-back tests of the checkpoint);
#   2. cargo-pgrx 0.18.0 (the newest pgrx that builds with the stable 1.95
#      toolchain; 0.19 needs 1.96) — skipped when already installed;
#   3. `cargo pgrx init --pg15 /usr/bin/pg_config` (the system server; nothing
#      is downloaded);
#   4. builds (release) and installs the extension into the system PostgreSQL 15;
#   5. starts the cluster 15/main if it is stopped.
# Options:
#   --preload     put uuidforge in shared_preload_libraries and restart: uuidv7()
#                 then orders values across all sessions (shared memory)
#   --no-preload  take it out again and restart (per-session order)
#   --no-build    skip steps 1–4 (only start the server, change preload)
#   --reset       bring the server to the state every test starts from, the
#                 same on a fresh machine and on a used one, and print what it
#                 found and what it set: no ALTER SYSTEM setting (so no preload),
#                 restarted (empty shared memory), no checkpoint file, no
#                 database or role an earlier test run made (uf_*, uuidforge_*,
#                 find_reader), the roles uuidforge and uuidforge_admin with
#                 their test attributes and an empty database uuidforge.
# Usable alone; scripts/test.sh calls it.
set -euo pipefail
cd "$(dirname "$0")/.."

PGRX_VERSION=0.18.0
PG_CONFIG=/usr/bin/pg_config
preload=""
build=1
reset=0
for arg in "$@"; do
  case "$arg" in
    --preload) preload=on ;;
    --no-preload) preload=off ;;
    --no-build) build=0 ;;
    --reset) reset=1 ;;
    *) echo "pg-setup.sh: unknown option '$arg' (expected --preload, --no-preload, --no-build or --reset)" >&2; exit 2 ;;
  esac
done

say() { printf '== pg-setup: %s\n' "$*"; }
as_postgres() { runuser -u postgres -- "$@"; }

if [ "$build" = 1 ]; then
  need=()
  for pkg in postgresql-server-dev-15 libclang-dev clang faketime; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
  if [ "${#need[@]}" -gt 0 ]; then
    say "installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi

  if [ "$(cargo pgrx --version 2>/dev/null)" != "cargo-pgrx $PGRX_VERSION" ]; then
    say "installing cargo-pgrx $PGRX_VERSION (about 10 minutes on 2 cores)"
    cargo install "cargo-pgrx@$PGRX_VERSION" --locked
  fi

  if ! grep -qs "^pg15 = \"$PG_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
    say "cargo pgrx init --pg15 $PG_CONFIG"
    cargo pgrx init --pg15 "$PG_CONFIG"
  fi

  say "building and installing the extension"
  version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
  rm -f "$("$PG_CONFIG" --sharedir)/extension/uuidforge--$version.sql"
  (cd crates/uuidforge-pg && cargo pgrx install --pg-config "$PG_CONFIG" --release 2>&1) \
    | grep -v '^ *Compiling' || true
  test -f "$("$PG_CONFIG" --sharedir)/extension/uuidforge--$version.sql" \
    || { echo "pg-setup.sh: the extension was not installed (see cargo pgrx's output above)" >&2; exit 1; }
fi

online() { pg_lsclusters -h | awk '$1 == 15 && $2 == "main" && $4 == "online"' | grep -q .; }
was_online=no
online && was_online=yes
if [ "$was_online" = no ]; then
  say "starting PostgreSQL 15"
  pg_ctlcluster 15 main start
fi

if [ "$reset" = 1 ]; then
  # What an earlier run (or a person) left behind, then the one state
  # every test starts from.
  q() { as_postgres psql -XAtq -d postgres -c "$1"; }
  data=$(q "SHOW data_directory")
  leftover_dbs=$(q "SELECT string_agg(datname, ' ' ORDER BY datname) FROM pg_database WHERE datname LIKE 'uf\_%' OR datname LIKE 'uuidforge\_%'")
  leftover_roles=$(q "SELECT string_agg(rolname, ' ' ORDER BY rolname) FROM pg_roles WHERE rolname LIKE 'uf\_%' OR rolname = 'find_reader'")
  auto_settings=$(q "SELECT string_agg(name || ' = ' || setting, ', ' ORDER BY name) FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf'")
  checkpoint=no
  [ -e "$data/uuidforge_checkpoint" ] && checkpoint=yes
  if [ "$was_online" = no ] && [ -z "$leftover_dbs$leftover_roles$auto_settings" ] && [ "$checkpoint" = no ]; then
    say "found: a fresh server (stopped, no ALTER SYSTEM settings, nothing left by earlier runs)"
  else
    say "found: a used server (was running: $was_online; ALTER SYSTEM: ${auto_settings:-none}; test databases: ${leftover_dbs:-none}; test roles: ${leftover_roles:-none}; checkpoint file: $checkpoint)"
  fi
  for db in $leftover_dbs; do
    as_postgres psql -Xq -d postgres -c "DROP DATABASE \"$db\" WITH (FORCE)"
  done
  for role in $leftover_roles; do
    # A role's grants live in every database; the test databases that held
    # them are gone, what remains is in postgres and uuidforge.
    for db in postgres uuidforge; do
      [ "$(q "SELECT 1 FROM pg_database WHERE datname = '$db'")" = 1 ] \
        && as_postgres psql -Xq -d "$db" -c "DROP OWNED BY \"$role\""
    done
    as_postgres psql -Xq -d postgres -c "DROP ROLE \"$role\""
  done
  as_postgres psql -Xq -d postgres -c "DROP DATABASE IF EXISTS uuidforge WITH (FORCE)"
  as_postgres psql -Xq -d postgres -c "ALTER SYSTEM RESET ALL"
  pg_ctlcluster 15 main restart
  # After the restart: a preloaded server may write it as it stops.
  rm -f "$data/uuidforge_checkpoint"
  preloaded=$(q "SHOW shared_preload_libraries")
  if [ -n "$preloaded" ]; then
    echo "pg-setup.sh: shared_preload_libraries is still '$preloaded' after ALTER SYSTEM RESET ALL: it is set in $(q "SELECT sourcefile FROM pg_settings WHERE name = 'shared_preload_libraries'"); take it out there" >&2
    exit 1
  fi
fi

if [ "$build" = 1 ] && [ "$(as_postgres psql -XAtqc "SHOW shared_preload_libraries")" = uuidforge ]; then
  # The postmaster holds the preloaded library and every backend inherits
  # it: a new build takes effect only after a restart.
  say "restarting to load the new build (preloaded)"
  pg_ctlcluster 15 main restart
fi

if [ -n "$preload" ]; then
  current=$(as_postgres psql -XAtqc "SHOW shared_preload_libraries")
  if [ "$preload" = on ] && [ "$current" != uuidforge ]; then
    say "shared_preload_libraries = uuidforge; restarting"
    as_postgres psql -Xqc "ALTER SYSTEM SET shared_preload_libraries = 'uuidforge'"
    pg_ctlcluster 15 main restart
  elif [ "$preload" = off ] && [ -n "$current" ]; then
    say "shared_preload_libraries reset; restarting"
    as_postgres psql -Xqc "ALTER SYSTEM RESET shared_preload_libraries"
    pg_ctlcluster 15 main restart
  fi
fi
# A login role and database for clients that connect over TCP with a
# password (the HTTP server's names store and its tests): local test
# credentials, not for production.
if [ "$(as_postgres psql -XAtqc "SELECT 1 FROM pg_roles WHERE rolname = 'uuidforge'")" != 1 ]; then
  say "creating role and database uuidforge (password uuidforge) for TCP clients"
  as_postgres psql -Xqc "CREATE ROLE uuidforge LOGIN PASSWORD 'uuidforge'"
elif [ "$reset" = 1 ]; then
  as_postgres psql -Xqc "ALTER ROLE uuidforge LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD 'uuidforge'" -c "ALTER ROLE uuidforge RESET ALL"
fi
# The database tools' tests build fixture databases (with the extension,
# which only a superuser may create) and roles with limited privileges:
# a local superuser for that, test credentials only.
if [ "$(as_postgres psql -XAtqc "SELECT 1 FROM pg_roles WHERE rolname = 'uuidforge_admin'")" != 1 ]; then
  say "creating superuser role uuidforge_admin (password uuidforge) for the database tools' tests"
  as_postgres psql -Xqc "CREATE ROLE uuidforge_admin LOGIN SUPERUSER PASSWORD 'uuidforge'"
elif [ "$reset" = 1 ]; then
  as_postgres psql -Xqc "ALTER ROLE uuidforge_admin LOGIN SUPERUSER PASSWORD 'uuidforge'" -c "ALTER ROLE uuidforge_admin RESET ALL"
fi
if [ "$(as_postgres psql -XAtqc "SELECT 1 FROM pg_database WHERE datname = 'uuidforge'")" != 1 ]; then
  as_postgres psql -Xqc "CREATE DATABASE uuidforge OWNER uuidforge"
fi
state="$(as_postgres psql -XAtqc "SELECT version()" | cut -d' ' -f1-2) on port $(as_postgres psql -XAtqc "SHOW port"), shared_preload_libraries = '$(as_postgres psql -XAtqc "SHOW shared_preload_libraries")'"
if [ "$reset" = 1 ]; then
  say "set: the test state: $state, no ALTER SYSTEM setting, no checkpoint file, roles uuidforge and uuidforge_admin, databases $(as_postgres psql -XAtqc "SELECT string_agg(datname, ' ' ORDER BY datname) FROM pg_database WHERE NOT datistemplate")"
else
  say "ready: $state"
fi
